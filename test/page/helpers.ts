// Shared by the page tests.

/** A HAR 1.2 of one `GET url` answered 200 with a 100-byte HTML body (synthesised: no text). */
export function oneEntryHar(url: string): object {
  return {
    log: {
      version: '1.2',
      creator: { name: 'WebInspector', version: '1' },
      entries: [
        {
          startedDateTime: '2026-01-01T00:00:00.000Z',
          time: 10,
          request: { method: 'GET', url, headers: [] },
          response: { status: 200, headers: [], content: { size: 100, mimeType: 'text/html' } },
          timings: { wait: 5 },
        },
      ],
    },
  };
}

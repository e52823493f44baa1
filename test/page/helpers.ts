// Shared by the page tests.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PageResult } from '../../src/model/index.ts';
import { h2lab } from '../helpers/cli.ts';

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

/**
 * A generated page (`page record --generate spec`) recorded into `dir/site.har` and replayed by the
 * CLI with `args` into `dir/out`, with Chromium at `chromium`; returns the replay's results.json.
 */
export async function recordAndReplay(
  dir: string,
  spec: string,
  args: string[],
  chromium: string,
): Promise<PageResult> {
  const har = join(dir, 'site.har');
  const rec = await h2lab(['page', 'record', '--generate', spec, '-o', har, '--chromium', chromium], {
    timeoutMs: 60_000,
  });
  assert.equal(rec.code, 0, rec.stderr);
  const out = join(dir, 'out');
  const r = await h2lab(['page', 'replay', har, '-q', '--out', out, '--chromium', chromium, ...args], {
    timeoutMs: 180_000,
  });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as PageResult;
}

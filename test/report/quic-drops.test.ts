// The QUIC drop sentence's rules on hand-made runs (test/h3/queue-drops.test.ts covers a real link):
// the cause is claimed only when the server's initial window was read and exceeds both TCP's and the
// link's recorded queue; a queue that could hold it, or a window no larger than TCP's, is said so.
// The answer's line names that cause, with the drops, where h3 lost.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { reanalyze } from '../../src/compare/index.ts';
import type { CompareResult, RunResult } from '../../src/model/index.ts';
import { answerLines, buildAnswer } from '../../src/report/answer.ts';
import { quicQueueDropsSentence } from '../../src/report/quic-drops.ts';

function run(queuePackets: number, initialCwndBytes?: number, queueBytes = 250_000, packetsLost = 1_700) {
  return {
    environment: { link: { profile: 'x', backend: 'relay', rttMs: 40, rateBitsPerSec: 50e6, queueBytes } },
    connections: {
      quic: {
        linkDrops: { flows: 1, lossPackets: 0, queuePackets, upPackets: 0, downPackets: queuePackets },
        server: {
          ...(initialCwndBytes !== undefined ? { packetsLost } : {}),
          perConnection: [initialCwndBytes !== undefined ? { initialCwndBytes } : {}],
        },
      },
    },
  } as unknown as RunResult;
}

test('drops with the window read: the numbers and the cause', () => {
  const s = quicQueueDropsSentence([run(1_497, 1_200_000)], 'h3', 1448);
  assert.match(s ?? '', /full queue dropped 1,497 of h3's UDP packets, 1,497 of them server → client/);
  assert.match(s ?? '', /declared 1,700 packets lost/);
  assert.match(
    s ?? '',
    /83× TCP's 10 segments \(14\.1 KiB\) on the same link and more than the link's queue/,
  );
  assert.match(s ?? '', /so its first round trip overran the queue/);
});

test('a queue that holds the window: the drops, no cause', () => {
  const s = quicQueueDropsSentence([run(40, 1_200_000, 2_000_000)], 'h3');
  assert.match(s ?? '', /does not by itself exceed the link's queue/);
  assert.doesNotMatch(s ?? '', /overran/);
});

test('no qlog: the drops, --qlog suggested, no cause', () => {
  const s = quicQueueDropsSentence([run(1_200)], 'h3');
  assert.match(s ?? '', /was not read: .*--qlog DIR/);
  assert.doesNotMatch(s ?? '', /declared|so its first round trip/);
});

test('nothing (or next to nothing) dropped: nothing said', () => {
  assert.equal(quicQueueDropsSentence([run(0, 1_200_000)], 'h3'), undefined);
  assert.equal(quicQueueDropsSentence([run(4, 1_200_000)], 'h3'), undefined);
});

/**
 * The saved lossy comparison (c=8 through 50 ms) with its h2 cells made h3 runs that lost: each at
 * half h1's throughput, twice its latency, and the link's 62.5 KB queue dropping 1,497 of its
 * packets, the server's qlog giving a 1.2 MB initial window (or none).
 */
function h3Lost(initialCwndBytes?: number): CompareResult {
  const raw = JSON.parse(
    readFileSync(new URL('../fixtures/report/lossy.json', import.meta.url), 'utf8'),
  ) as CompareResult;
  const h1 = raw.cells.find((c) => c.protocol === 'h1')!;
  for (const c of raw.cells.filter((x) => x.protocol === 'h2')) {
    c.protocol = 'h3';
    c.id = c.id.replace(/h2$/, 'h3');
    c.runs.forEach((r, i) => {
      const b = h1.runs[i]!;
      r.protocol = { requested: 'h3', negotiated: 'h3' };
      r.throughput.rps = b.throughput.rps / 2;
      for (const k of Object.keys(r.latencyMs) as Array<keyof typeof r.latencyMs>)
        if (typeof b.latencyMs[k] === 'number') (r.latencyMs[k] as number) = (b.latencyMs[k] as number) * 2;
      r.environment.link!.queueBytes = 62_500;
      const { quic } = run(1_497, initialCwndBytes).connections;
      delete r.connections.tcp;
      r.connections.quic = { ...quic!, opened: 1, perConnection: [] } as typeof r.connections.quic;
    });
  }
  raw.axes.protocols = ['h1', 'h3'];
  raw.options.protocols = ['h1', 'h3'];
  return reanalyze(raw);
}

test("the answer's line names the drops of h3's first flight where h3 loses, with the number", () => {
  const r = h3Lost(1_200_000);
  assert.ok(
    r.comparisons.every((c) => c.outcome === 'worse'),
    r.comparisons.map((c) => c.outcome).join(),
  );
  const lines = buildAnswer(r).groups.flatMap((g) => g.lines);
  assert.ok(lines.length > 0);
  for (const l of lines)
    assert.match(
      l.why,
      /the link's queue dropped 1,497 of h3's packets: its server's first flight of 1\.14 MiB \(\d+× TCP's\) overran it/,
      l.text,
    );
  // On an 80-column terminal too.
  const terminal = answerLines(buildAnswer(r), 80).join(' ').replace(/\s+/g, ' ');
  assert.match(
    terminal,
    /the link's queue dropped 1,497 of h3's packets: its server's first flight of 1\.14 MiB/,
  );
  // The verdict's paragraph says the same from the same computation.
  const v = JSON.stringify(r.verdict);
  assert.match(v, /dropped 1,497 of h3's UDP packets.*so its first round trip overran the queue/);
});

test('no cause named in the verdict (no qlog read): none on the answer line', () => {
  const r = h3Lost();
  for (const l of buildAnswer(r).groups.flatMap((g) => g.lines)) assert.doesNotMatch(l.why, /first flight/);
});

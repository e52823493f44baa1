// Statistics of the browser subsystem (no browser needed).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { burstStats, summarizeBurst } from '../../src/browser/burst.ts';
import { summarizeCancel } from '../../src/browser/cancel.ts';
import { burstUrls } from '../../src/browser/page-scripts.ts';
import { peakConcurrency } from '../../src/browser/spread.ts';
import type { BrowserRequest, CancelRun } from '../../src/model/browser.ts';

test('peakConcurrency: half-open intervals, and equals a brute-force count at every start', () => {
  assert.equal(
    peakConcurrency([
      [0, 2],
      [1, 3],
      [2, 4],
    ]),
    2,
  );
  assert.equal(
    peakConcurrency([
      [0, 1],
      [1, 2],
    ]),
    1,
  );
  assert.equal(peakConcurrency([]), 0);
  const iv = fc
    .tuple(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 1, max: 50 }))
    .map(([s, d]) => [s, s + d] as const);
  fc.assert(
    fc.property(fc.array(iv, { maxLength: 40 }), (xs) => {
      const brute = Math.max(0, ...xs.map(([s]) => xs.filter(([a, b]) => a <= s && s < b).length));
      return peakConcurrency(xs) === brute;
    }),
  );
});

test('burst URLs walk a square grid and are unique per tag', () => {
  const u = burstUrls('http://h', '/t/{x}/{y}?a=1', 5, 'r');
  assert.deepEqual(u, [
    'http://h/t/0/0?a=1&h2lab=r-0',
    'http://h/t/1/0?a=1&h2lab=r-1',
    'http://h/t/2/0?a=1&h2lab=r-2',
    'http://h/t/0/1?a=1&h2lab=r-3',
    'http://h/t/1/1?a=1&h2lab=r-4',
  ]);
  assert.equal(new Set(burstUrls('http://h', '/x', 121, 'q')).size, 121);
});

test('cancellation legs are summarised per target and server mode: median times, total counts', () => {
  const run = (
    index: number,
    mode: 'honour' | 'ignore',
    wantedMs: number,
    unwanted: number,
    abort = 60,
  ): CancelRun => ({
    target: 'https',
    index,
    serverMode: mode,
    count: 10,
    requestedAbortMs: 60,
    actualAbortMs: abort,
    issueLoopMs: 5,
    browserCanceled: 10,
    browserFailures: { 'net::ERR_ABORTED': 10 },
    completedBeforeAbort: 0,
    baselineMs: 30,
    wantedMs,
    server: {
      reachedHandler: 10,
      cancellations: { queued: 8 - unwanted },
      jobs: { unwanted },
      rstStreamByCode: { '8': 8 },
      drained: true,
    },
  });
  const s = summarizeCancel([
    run(0, 'honour', 40, 0),
    run(0, 'ignore', 400, 8),
    run(1, 'ignore', 900, 6, Number.NaN),
    run(1, 'honour', 50, 0),
    run(2, 'honour', 45, 0),
    run(2, 'ignore', 500, 7),
  ]);
  assert.deepEqual(
    s.map((x) => [x.serverMode, x.runs, x.wantedMs, x.server?.jobs.unwanted, x.actualAbortMs]),
    [
      ['honour', 3, 45, 0, 60],
      ['ignore', 3, 500, 21, 60],
    ],
  );
});

test('burst summary: the warm-up run and runs where CDP lost events are left out', () => {
  const rec = (i: number, send: number, end: number, conn: string): BrowserRequest => ({
    index: i,
    url: `u${i}`,
    startMs: 0,
    sendMs: send,
    endMs: end,
    stalledMs: send,
    wireMs: end - send,
    totalMs: end,
    protocol: 'h2',
    connectionId: conn,
    status: 200,
  });
  const page = (n: number) => ({
    issueLoopMs: 3,
    wallMs: 10,
    statuses: Array(n).fill(200),
    resourceTiming: [],
  });
  const good = [rec(0, 0, 10, 'a'), rec(1, 1, 10, 'a'), rec(2, 5, 12, 'a')];
  const run = (index: number, requests: BrowserRequest[], n = requests.length) => ({
    target: 't',
    index,
    discarded: index === 0,
    stats: burstStats(requests, page(n)),
    requests,
  });
  const runs = [run(0, [rec(0, 0, 1, 'a')]), run(1, good), run(2, good.slice(0, 1), 3)];
  assert.equal(runs[1]!.stats.peakInFlight, 3);
  assert.equal(runs[2]!.stats.cdpMissing, 2);
  const s = summarizeBurst('t', runs);
  assert.equal(s.runs, 1);
  assert.equal(s.incompleteRuns, 1);
  assert.deepEqual(s.peakInFlight, { median: 3, min: 3, max: 3 });
  assert.deepEqual(s.protocols, { h2: 3 });
  assert.equal(s.connections.median, 1);
  assert.equal(s.stalledP50Ms, 1);
});

// The burst against the fixture server with a backend pool too large to queue (every tile takes a
// fixed 80 ms): what Chromium itself does with 6 connections per host over http:// and one
// multiplexed connection over https:// (h2), as CDP reports it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { measureBrowser } from '../../src/browser/index.ts';
import { parseBrowserResult } from '../../src/model/index.ts';
import { startFixture } from '../helpers/fixture.ts';
import { chromiumMissing } from './helpers.ts';

test('burst: http:// peaks at 6 on 6 connections, h2 far above 6 on one, control back at 6', async (t) => {
  const missing = chromiumMissing();
  if (missing) return t.skip(missing);
  const srv = await startFixture({
    poolSize: 1000,
    tileMs: 80,
    tileSizeBytes: 512,
    maxConcurrentStreams: 1000,
  });
  const seen = () => Object.values(srv.metrics().requests.tiles).reduce((a, b) => a + b, 0);
  try {
    const r = await measureBrowser({
      origins: [srv.plainUrl!, srv.tlsUrl!],
      count: 30,
      runs: 2,
      cancel: false,
      trustCert: [srv.caFile!],
    });
    assert.equal(r.error, undefined);
    // On failure, show what the kept runs saw.
    t.diagnostic(
      JSON.stringify(
        r.burst.runs.map((x) => ({
          t: x.target,
          i: x.index,
          n: x.requests.length,
          p: x.stats.protocols,
          ok: x.stats.ok,
          bad: x.requests.find((q) => q.sendMs === undefined || q.failed),
        })),
      ),
    );
    const s = Object.fromEntries(r.burst.summaries.map((x) => [x.target, x]));
    assert.deepEqual(Object.keys(s).sort(), ['http', 'https', 'https-h1']);
    assert.equal(s.http!.peakInFlight.max, 6);
    assert.equal(s.http!.connections.median, 6);
    assert.deepEqual(s.http!.protocols, { 'http/1.1': 30 });
    assert.ok(s.https!.peakInFlight.median > 20, `h2 peak ${s.https!.peakInFlight.median}`);
    assert.equal(s.https!.connections.median, 1);
    assert.deepEqual(s.https!.protocols, { h2: 30 });
    assert.equal(s['https-h1']!.peakInFlight.max, 6);
    assert.deepEqual(s['https-h1']!.protocols, { 'http/1.1': 30 });
    assert.equal(r.trust.method, 'spki-pin');
    assert.equal(r.trust.secureContext, true);
    // The server saw every request of every kept run (2 runs × 3 targets × 30, each answered), and of
    // each repeated attempt what that attempt accounts for: at least its answered requests, at most
    // all it issued (a request that failed on a host network change may or may not have arrived).
    const kept = r.burst.runs.reduce((a, x) => a + x.stats.ok, 0);
    assert.equal(kept, 180);
    const again = r.burst.repeated ?? [];
    const againOk = again.reduce((a, x) => a + x.stats.ok, 0);
    const againIssued = 30 * again.length;
    assert.equal(again.length, r.warnings.filter((w) => w.includes('was repeated')).length);
    const n = seen();
    assert.ok(
      n >= kept + againOk && n <= kept + againIssued,
      `server saw ${n}: kept runs ${kept}, repeated attempts ${againOk} answered of ${againIssued}`,
    );
    for (const x of Object.values(s)) {
      // The time on the wire agrees within a millisecond; the start may differ by the time the page's
      // main thread spent issuing fetch() calls (reported as a warning, not a failure).
      const w = x.resourceTimingWireMaxDiffMs;
      assert.ok(w !== undefined && w <= 1, `RT wire diff ${w}`);
    }
    parseBrowserResult(JSON.parse(JSON.stringify(r)));
    console.log(r.findings.join('\n'));
  } finally {
    await srv.close();
  }
});

test("burstRepeat: a burst the caller's policy rejects is run again, at most `retries` times, and the attempts are kept apart and counted", async (t) => {
  const missing = chromiumMissing();
  if (missing) return t.skip(missing);
  const srv = await startFixture({ poolSize: 100, tileMs: 5, tileSizeBytes: 256, maxConcurrentStreams: 100 });
  const seen = () => Object.values(srv.metrics().requests.tiles).reduce((a, b) => a + b, 0);
  try {
    const asked: number[] = [];
    const r = await measureBrowser(
      {
        origins: [srv.plainUrl!, srv.tlsUrl!],
        count: 10,
        runs: 2,
        cancel: false,
        control: false,
        trustCert: [srv.caFile!],
      },
      // Rejects every attempt: each burst runs once and is repeated once, then kept as it is.
      { burstRepeat: { retries: 1, repeat: (run) => asked.push(run.index) > 0 } },
    );
    assert.equal(r.error, undefined);
    assert.equal(r.burst.runs.length, 4, 'one kept run a burst');
    assert.equal(r.burst.repeated?.length, 4, 'one repeated attempt a burst');
    assert.deepEqual(asked, [0, 0, 1, 1], 'asked about each attempt but the last');
    assert.equal(
      r.warnings.filter((w) =>
        /burst \d was repeated because the caller’s burstRepeat policy rejected it/.test(w),
      ).length,
      4,
    );
    // The server saw both attempts of every burst: the repeated ones are real runs, not data.
    assert.equal(seen(), 2 * 2 * 2 * 10);
    for (const s of r.burst.summaries)
      assert.equal(s.runs, 1, `${s.target}: the discarded run and the kept one`);
    parseBrowserResult(JSON.parse(JSON.stringify(r)));
  } finally {
    await srv.close();
  }
});

/**
 * Misbehaving servers are counted in the right failure class and the run goes on to its end.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runLoad } from '../../src/load/index.ts';
import { startMisbehaving } from '../helpers/misbehaving.ts';
import { startTestServer } from '../helpers/servers.ts';

test('resets-stream: RST_STREAM is a reset, REFUSED_STREAM a refused stream', async () => {
  const s = await startMisbehaving('resets-stream');
  try {
    for (const protocol of ['h2', 'h2-pool'] as const) {
      const r = await runLoad({ url: `${s.url}/`, protocol, requests: 50, concurrency: 5 }).done;
      assert.equal(r.counts.total, 50);
      assert.deepEqual(r.counts.byFailure, { reset: 50 }, protocol);
      assert.equal(r.error?.code, 'H2LAB_ERR_ERROR_RATE');
    }
    const refused = await runLoad({ url: `${s.url}/refuse`, protocol: 'h2', requests: 20, concurrency: 4 })
      .done;
    // REFUSED_STREAM is retried (RFC 9113 §8.7), twice; a server that always refuses still fails them.
    assert.deepEqual(refused.counts.byFailure, { 'refused-stream': 20 });
    assert.equal(refused.counts.retried, 20);
    assert.equal(s.streams, 50 * 2 + 20 * 3, 'each refused request reached the server three times');
  } finally {
    await s.close();
  }
});

test('goaway-after-n: streams above the last id are sent again on a new session, as browsers do', async () => {
  const s = await startMisbehaving('goaway-after-n', 10);
  try {
    const r = await runLoad({
      url: `${s.url}/`,
      protocol: 'h2',
      requests: 100,
      concurrency: 4,
      maxErrorRate: 0.5,
    }).done;
    assert.equal(r.counts.total, 100);
    assert.equal(r.counts.ok + (r.counts.byFailure.goaway ?? 0), 100, JSON.stringify(r.counts));
    assert.ok((r.counts.retried ?? 0) > 0, 'some streams were refused by GOAWAY and retried');
    assert.ok(r.counts.ok >= 95, `${r.counts.ok} ok: retries carried the refused ones`);
    // Every request the server processed is one the client counts as ok: nothing is counted twice.
    assert.equal(s.processed, r.counts.ok, 'the server answered exactly the ok requests');
    assert.ok(r.connections.opened >= 10, `${r.connections.opened} sessions`);
    assert.ok(
      r.warnings.some((w) => /refused .* unprocessed/.test(w)),
      r.warnings.join(' | '),
    );
    assert.equal(r.error, undefined);
  } finally {
    await s.close();
  }
});

test('closes-after-headers: h2 and h1 count a reset and the partial body', async () => {
  const s = await startMisbehaving('closes-after-headers');
  try {
    const r = await runLoad({ url: `${s.url}/`, protocol: 'h2', requests: 10, concurrency: 1 }).done;
    assert.deepEqual(r.counts.byFailure, { reset: 10 });
  } finally {
    await s.close();
  }
  const h1 = await startTestServer('h1');
  try {
    // The h1 test server's /status route is fine; closing mid-body is exercised with the fixture
    // server's /reset?after=headers in fixture-server.test.ts. Here: a server that closes idle
    // keep-alive connections is not a failure.
    const r = await runLoad({ url: `${h1.url}/`, protocol: 'h1', requests: 20, connections: 2 }).done;
    assert.equal(r.counts.ok, 20);
  } finally {
    await h1.close();
  }
});

test('never-responds: every request times out, the run ends on time and fails', async () => {
  const s = await startMisbehaving('never-responds');
  try {
    const t0 = performance.now();
    const r = await runLoad({ url: `${s.url}/`, protocol: 'h2', requests: 6, concurrency: 3, timeoutMs: 300 })
      .done;
    assert.ok(performance.now() - t0 < 3000);
    assert.deepEqual(r.counts.byFailure, { timeout: 6 });
    assert.equal(r.error?.code, 'H2LAB_ERR_ERROR_RATE');
  } finally {
    await s.close();
  }
});

test('tiny-window: uploads flow through a 1 KiB window, and the 2-stream cap queues requests in the client', async () => {
  const s = await startMisbehaving('tiny-window');
  try {
    const r = await runLoad({
      url: `${s.url}/`,
      protocol: 'h2',
      method: 'POST',
      bodySizeBytes: 64 * 1024,
      requests: 20,
      concurrency: 8,
    }).done;
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.equal(r.counts.ok, 20);
    assert.equal(r.throughput.bytesOut, 20 * 64 * 1024);
    assert.equal(r.connections.serverMaxConcurrentStreams, 2);
    assert.ok((r.connections.peakStreamsPerConnection ?? 99) <= 2);
    assert.ok((r.connections.streamCapHits ?? 0) > 0, 'requests waited at the cap');
    assert.ok(r.clientQueueMs.max > 0);
    assert.ok(r.warnings.some((w) => w.includes('SETTINGS_MAX_CONCURRENT_STREAMS (2)')));
  } finally {
    await s.close();
  }
});

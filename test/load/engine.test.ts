/**
 * The engine against real loopback servers: exact counts (client = server), stopping, and the
 * coordinated-omission check of the open loop.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runLoad } from '../../src/load/index.ts';
import { startTestServer } from '../helpers/servers.ts';

for (const protocol of ['h1', 'h2', 'h2-pool'] as const) {
  test(`${protocol}: --requests 600 sends exactly 600 requests and counts every byte the server sent`, async () => {
    const server = await startTestServer(protocol === 'h1' ? 'h1' : 'h2c');
    try {
      const r = await runLoad({
        url: `${server.url}/bytes/{100..199}`,
        protocol,
        requests: 600,
        concurrency: 12,
        connections: 3,
      }).done;
      assert.equal(r.error, undefined, JSON.stringify(r.error));
      assert.equal(r.counts.total, 600);
      assert.equal(r.counts.ok, 600);
      assert.equal(server.seen.requests, 600, 'the server saw exactly what the client counted');
      assert.equal(r.throughput.bytesIn, server.seen.bytesOut);
      // Paths cycle 100..199 six times: 6 × (100 + … + 199) bytes.
      assert.equal(r.throughput.bytesIn, 6 * 14_950);
      assert.equal(r.latencyMs.count, 600);
      assert.ok(r.throughput.rps > 0);
      assert.ok(r.connections.peakInFlight <= 12);
      assert.equal(r.protocol.negotiated, protocol === 'h1' ? 'http/1.1' : 'h2c');
      if (protocol !== 'h1') assert.equal(r.transport.window?.preset, 'browser');
    } finally {
      await server.close();
    }
  });
}

test('--duration bounds the run, warm-up requests are counted apart and reach the server', async () => {
  const server = await startTestServer('h2c');
  try {
    const t0 = performance.now();
    const r = await runLoad({
      url: `${server.url}/`,
      protocol: 'h2',
      durationMs: 800,
      warmupMs: 300,
      concurrency: 4,
    }).done;
    const wall = performance.now() - t0;
    assert.equal(r.error, undefined);
    assert.ok(wall < 3000, `run took ${wall} ms`);
    assert.ok(Math.abs(r.durationMs - 800) < 200, `measured ${r.durationMs} ms`);
    const warm = (r.counts as { warmup?: number }).warmup ?? 0;
    assert.ok(warm > 0, 'some requests fell in the warm-up');
    assert.equal(server.seen.requests, r.counts.total + warm);
    // client.cpu covers the measured period only, cpuSeconds the whole run from connect:
    // the first, as CPU seconds, is a part of the second (5 ms of slack for the two clocks' grain).
    const measuredCpuS = (r.client.cpu * r.durationMs) / 1000;
    assert.ok(r.client.cpuSeconds !== undefined && r.client.cpuSeconds > 0, 'cpuSeconds recorded');
    assert.ok(
      measuredCpuS > 0 && measuredCpuS <= r.client.cpuSeconds + 0.005,
      `measured-period CPU ${measuredCpuS} s within the run's ${r.client.cpuSeconds} s`,
    );
  } finally {
    await server.close();
  }
});

test('stop() resolves done with what was measured and H2LAB_ERR_INTERRUPTED', async () => {
  const server = await startTestServer('h1');
  try {
    const run = runLoad({
      url: `${server.url}/delay/20`,
      protocol: 'h1',
      durationMs: 60_000,
      concurrency: 4,
    });
    setTimeout(() => run.stop(), 400);
    const t0 = performance.now();
    const r = await run.done;
    assert.ok(performance.now() - t0 < 5000);
    assert.equal(r.error?.code, 'H2LAB_ERR_INTERRUPTED');
    assert.ok(r.counts.ok > 10, `measured ${r.counts.ok} before the stop`);
  } finally {
    await server.close();
  }
});

test('open loop: a 1 s server stall shows in the corrected percentiles, not in the uncorrected ones', async () => {
  const server = await startTestServer('h1');
  try {
    // One connection at 50 req/s: while the server stalls, requests queue in the client. Timing
    // from the actual send hides that wait (coordinated omission); timing from the intended send
    // does not.
    setTimeout(() => server.stallFor(1000), 1000);
    const r = await runLoad({
      url: `${server.url}/`,
      protocol: 'h1',
      connections: 1,
      rateRps: 50,
      durationMs: 3000,
    }).done;
    assert.equal(r.error, undefined);
    assert.equal(r.schedule.mode, 'open');
    const c = r.latencyMs;
    const u = r.latencyUncorrectedMs!;
    // ~50 of ~150 requests were due during the stall, waiting 1000 ms down to 0 ms.
    assert.ok(c.p90 > 500, `corrected p90 ${c.p90} ms shows the stall`);
    assert.ok(c.max > 850 && c.max < 1500, `corrected max ${c.max} ms ≈ the stall`);
    assert.ok(u.p90 < 100, `uncorrected p90 ${u.p90} ms hides it`);
    assert.ok((r.counts.late ?? 0) >= 30, `${r.counts.late} requests counted late`);
    assert.ok(Math.abs(r.counts.total - 150) <= 3, `${r.counts.total} requests at 50/s for 3 s`);
  } finally {
    await server.close();
  }
});

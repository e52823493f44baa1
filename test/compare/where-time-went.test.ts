// Where the time went, against the real fixture server: with more requests in flight than HTTP/1.1
// connections, h1 queues in the client; h2 sends everything and the queue appears at the server's
// backend pool (read from its /metrics). The verdict must say that the queue moved.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runComparison } from '../../src/compare/run.ts';
import { FIXTURE_ROUTES } from '../../src/compare/workloads.ts';

test('tiles at concurrency 32: h1 queues in the client, h2 at the backend pool, and the verdict says so', async () => {
  // 20 ms tiles: the pool (8 workers) is the bottleneck by far, whatever else runs on the machine.
  const c = await runComparison(
    {
      protocols: ['h1', 'h2'],
      concurrency: [32],
      workloads: [{ id: 'tiles', label: 'tiles', paths: FIXTURE_ROUTES.tiles(64), kind: 'backend' }],
      runs: 2,
      warmupRuns: 0,
      durationMs: 400,
    },
    { fixture: { tileMs: 20, tileHeavyFraction: 0 } },
  );
  const r = await c.done;
  assert.equal(r.status, 'complete');
  const h1 = r.cells.find((x) => x.protocol === 'h1')!.stats!;
  const h2 = r.cells.find((x) => x.protocol === 'h2')!.stats!;
  // The server saw the pool (8 workers) and, for h1, at most 6 requests at once (6 connections).
  assert.equal(h1.serverPoolSize, 8);
  assert.ok((h1.serverPeakInFlight ?? 99) <= 6, `h1 server peak ${h1.serverPeakInFlight}`);
  assert.ok((h2.serverPeakInFlight ?? 0) > 8, `h2 server peak ${h2.serverPeakInFlight}`);
  const b1 = h1.breakdownMs;
  const b2 = h2.breakdownMs;
  assert.ok(b1.clientQueue > 2 * b2.clientQueue, `client queue h1 ${b1.clientQueue} vs h2 ${b2.clientQueue}`);
  assert.ok(
    (b2.serverQueue ?? 0) > 2 * (b1.serverQueue ?? 0) + 0.5,
    `server queue h2 ${b2.serverQueue} vs h1 ${b1.serverQueue}`,
  );
  assert.match(
    r.verdict!.workloads[0]!.paragraphs.join(' '),
    /the queue moved to the backend pool \(8 workers\)/,
  );
});

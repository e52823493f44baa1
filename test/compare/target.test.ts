// runComparison against a fixture target the caller started (RunComparisonHooks.target): the cells
// drive that server, its metrics (reset before each run) give each run's server view, and the
// comparison leaves it running.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runComparison } from '../../src/compare/index.ts';
import { startFixtureTarget } from '../../src/server/index.ts';

test('an injected target is driven, read around each run, and not closed', async () => {
  const target = await startFixtureTarget({ poolSize: 2 }, 'thread');
  try {
    const c = await runComparison(
      {
        protocols: ['h1', 'h2'],
        concurrency: [2],
        runs: 3,
        requests: 20,
        workloads: [{ id: 'small', label: '1 KiB', paths: ['/bytes/1024'] }],
      },
      { target },
    );
    assert.equal(c.target.url, `${target.tlsUrl}/`);
    const r = await c.done;
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    for (const cell of r.cells) {
      assert.equal(cell.status, 'done', `${cell.id}: ${cell.note}`);
      for (const run of cell.runs) assert.equal(run.server?.requests, run.counts.total, cell.id);
    }
    // Owned, so reset before each run: the counters hold the last run's 20 requests only.
    const after = await target.metrics.read();
    assert.equal(after.requests.bytes['http/1.1'] + after.requests.bytes.h2, 20);
    // Still serving: the comparison did not close what it was given.
    const res = await fetch(`${target.plainUrl}/bytes/10`);
    assert.equal((await res.arrayBuffer()).byteLength, 10);
  } finally {
    await target.close();
  }
});

/**
 * A comparison's workload headers and its h2-pool policy reach every run: the headers are in each
 * run's resolved options (the load engine sends them), the policy is the one the run's transport used.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runComparison } from '../../src/compare/index.ts';
import { baselineStrategy, multiplexedStrategy } from '../../src/transport/index.ts';
import { testHome } from '../helpers/fixture.ts';

test('workload headers and --h2-pool-policy first-free are carried into every run', async () => {
  testHome();
  const pool = multiplexedStrategy('pool')!;
  const headers = { 'x-h2lab-trace': 'a'.repeat(200), 'x-h2lab-tenant': 'echo' };
  const c = await runComparison({
    protocols: [baselineStrategy().name, pool.name],
    concurrency: [4],
    runs: 2,
    warmupRuns: 0,
    requests: 40,
    h2PoolSessions: 4,
    h2PoolPolicy: 'first-free',
    workloads: [
      { id: 'echo', label: 'echo 1 KiB', paths: ['/echo'], method: 'POST', bodySizeBytes: 1024, headers },
    ],
  });
  const r = await c.done;
  assert.equal(r.status, 'complete', JSON.stringify(r.error));
  assert.equal(r.options.h2PoolPolicy, 'first-free');
  for (const cell of r.cells) {
    assert.equal(cell.runs.length, 2);
    for (const run of cell.runs) {
      assert.equal(run.counts.failed, 0, JSON.stringify(run.counts));
      assert.deepEqual(run.options.headers, headers);
      // Echoed: the 1 KiB bodies came back.
      assert.equal(run.throughput.bytesIn, run.counts.ok * 1024);
      if (cell.protocol === pool.name) assert.equal(run.transport.policy, 'first-free');
    }
  }
});

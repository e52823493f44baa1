// reanalyze(result): a saved comparison's statistics, comparisons and verdict computed again from its
// runs (what `h2lab report results.json --min-effect X` does), from synthetic runs with a known 3×.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compare, reanalyze, syntheticRunner } from '../../src/compare/index.ts';

const workloads = [{ id: 'small', label: 'small responses', paths: ['/a'], kind: 'interactive' as const }];

test('the same settings give the same outcomes; a larger --min-effect undoes the win; the input is kept', async () => {
  const saved = await compare(
    { protocols: ['h1', 'h2'], concurrency: [8], workloads, runs: 5 },
    {
      target: { url: 'http://127.0.0.1:1/', embedded: false },
      runCell: syntheticRunner({
        h1: { latencyMs: 12, runNoise: 0.05 },
        h2: { latencyMs: 4, runNoise: 0.05 },
      }),
    },
  ).done;
  const rps = (r: typeof saved) => r.comparisons.find((c) => c.metric === 'rps')!;
  assert.equal(rps(saved).outcome, 'better');
  const frozen = JSON.stringify(saved);

  const same = reanalyze(JSON.parse(frozen));
  assert.deepEqual(
    same.comparisons.map((c) => [c.metric, c.outcome]),
    saved.comparisons.map((c) => [c.metric, c.outcome]),
  );
  assert.deepEqual(
    same.verdict!.recommendations.map((x) => x.strategy),
    saved.verdict!.recommendations.map((x) => x.strategy),
  );

  // A 3× difference is below a smallest effect of 500%: no longer a win, nor a recommendation.
  const strict = reanalyze(saved, { minEffect: 5 });
  assert.notEqual(rps(strict).outcome, 'better');
  assert.equal(strict.options.minEffect, 5);
  assert.ok(strict.verdict!.recommendations.every((x) => x.strategy === null));
  assert.equal(JSON.stringify(saved), frozen, 'the given result is not changed');
});

// `--budget` in the engine, against synthetic runners with known answers: a difference the planned
// runs leave undecided is decided by further interleaved runs that stop once it is, and a difference
// too small for the budget is reported still undecided when the budget is spent.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planBudget } from '../../src/compare/budget.ts';
import { compare } from '../../src/compare/engine.ts';
import { syntheticRunner } from '../../src/compare/synthetic.ts';
import { compareResultSchema } from '../../src/model/compare.ts';
import { buildVerdict } from '../../src/report/index.ts';

const target = { url: 'http://127.0.0.1:1/', embedded: false };
const workloads = [{ id: 'small', label: 'small responses', paths: ['/a'], kind: 'interactive' as const }];

test('planBudget holds every look to alpha over the most looks the budget allows', () => {
  const p = planBudget({ budgetMs: 60_000, runMs: 1_000, runs: 5, confidence: 0.95 });
  assert.equal(p.looks, 31);
  assert.equal(p.maxRuns, 35);
  assert.ok(Math.abs(p.alpha - 0.05 / 31) < 1e-12);
  assert.equal(planBudget({ budgetMs: 500, runMs: 1_000, runs: 5, confidence: 0.95 }).looks, 1);
});

test('the budget decides a cell the planned runs left undecided, and stops once decided', async () => {
  const runs: string[] = [];
  const inner = syntheticRunner({ h1: { latencyMs: 10, delayMs: 10 }, h2: { latencyMs: 13, delayMs: 10 } });
  const h = compare(
    { protocols: ['h1', 'h2'], concurrency: [1], workloads, runs: 3, durationMs: 100, budgetMs: 4_000 },
    {
      target,
      runCell: (cell, ctx) => {
        runs.push(`${cell.protocol}#${ctx.run}`);
        return inner(cell, ctx);
      },
    },
  );
  const r = await h.done;
  compareResultSchema.parse(r);
  const b = r.budget;
  assert.ok(b, 'the result records the budget');
  assert.equal(b.stoppedBy, 'decided');
  assert.deepEqual(b.undecided, []);
  assert.equal(b.nominalConfidence, 0.95);
  assert.ok(b.looks > 1, `looks ${b.looks}`);
  assert.ok(Math.abs(b.alpha - 0.05 / b.looks) < 1e-12);
  assert.equal(r.options.confidence, 1 - b.alpha);
  const extra = b.extraRuns['small/c1/loopback/h2'] ?? 0;
  assert.ok(extra > 0, 'extra runs were made');
  assert.equal(b.extraRuns['small/c1/loopback/h1'], extra, 'the baseline ran as often');
  assert.ok(3 + extra < b.maxRuns, `stopped early: ${3 + extra} of at most ${b.maxRuns} runs`);
  // Interleaved: after the planned runs the sides alternate, never two runs of one side in a row twice.
  const tail = runs.slice(6);
  for (let k = 0; k + 1 < tail.length; k += 2)
    assert.notEqual(tail[k]!.split('#')[0], tail[k + 1]!.split('#')[0]);
  for (const c of r.comparisons) assert.notEqual(c.outcome, 'undecided', `${c.metric}: ${c.outcome}`);
  assert.ok(r.comparisons.some((c) => c.outcome === 'worse'));
  // The settings line names the budget, the extra runs and the corrected alpha.
  const text = JSON.stringify(buildVerdict(r));
  assert.match(text, /--budget 4s/);
  assert.match(text, new RegExp(`${extra} extra runs?`));
});

test('a budget spent with the cell still undecided says so', async () => {
  const h = compare(
    {
      protocols: ['h1', 'h2'],
      concurrency: [1],
      workloads,
      runs: 3,
      durationMs: 100,
      budgetMs: 300,
    },
    {
      target,
      runCell: syntheticRunner({
        h1: { latencyMs: 10, delayMs: 20, runNoise: 0.3 },
        h2: { latencyMs: 10.8, delayMs: 20, runNoise: 0.3 },
      }),
    },
  );
  const r = await h.done;
  compareResultSchema.parse(r);
  const b = r.budget;
  assert.ok(b);
  assert.equal(b.stoppedBy, 'budget');
  assert.deepEqual(b.undecided, ['small/c1/loopback/h2']);
  assert.ok((b.extraRuns['small/c1/loopback/h2'] ?? 0) > 0);
  // A run starts only when its expected length still fits; it may overrun by its own variation.
  assert.ok(b.spentMs < 600, `spent ${b.spentMs} ms of 300`);
  assert.ok(r.comparisons.some((c) => c.outcome === 'undecided'));
  assert.match(JSON.stringify(buildVerdict(r)), /budget spent/);
});

/**
 * `compare --expect`: the grammar (compact and in words), the checks made before any run, and the
 * judgement on known answers from the synthetic runner (an injected 3×, the same transport twice).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compare, evaluateConditions, expectationsFailed, parseCondition } from '../../src/compare/index.ts';
import { syntheticRunner } from '../../src/compare/synthetic.ts';
import type { CompareResult } from '../../src/model/index.ts';

const target = { url: 'http://127.0.0.1:1/', embedded: false };
const workloads = [{ id: 'small', label: 'small responses', paths: ['/a'] }];

test('compact conditions compare values; the relation follows the metric direction', () => {
  assert.deepEqual(parseCondition('h2<=h1:p99@64'), {
    text: 'h2<=h1:p99@64',
    candidate: 'h2',
    relation: 'not-worse',
    reference: 'h1',
    metric: 'latencyP99Ms',
    level: 64,
  });
  assert.equal(parseCondition('h2>=h1:rps').relation, 'not-worse');
  assert.equal(parseCondition('h2 > h1:rps').relation, 'better');
  assert.equal(parseCondition('h2<h1:p50').relation, 'better');
  assert.equal(parseCondition('h2<h1:rps').relation, 'worse');
  assert.equal(parseCondition('h2>=h1:p99').relation, 'not-better');
  assert.equal(parseCondition('h2~h1:time').metric, 'burstCompletionMs');
  assert.equal(parseCondition('h2-pool<=h1:p99@8/tiles').workload, 'tiles');
});

test('conditions in words read as the issue wrote them', () => {
  const c = parseCondition('h2 not worse than h1 on p99 at c=64');
  assert.equal(c.relation, 'not-worse');
  assert.equal(c.level, 64);
  assert.equal(parseCondition('H2 is better than h1 on rps at 500 req/s for small').workload, 'small');
  assert.equal(parseCondition('h2 same as h1 on p50').relation, 'same');
});

test('a condition that is not one is a usage error naming it and the accepted forms', () => {
  for (const bad of ['h2 beats h1', 'h2<=h1', 'h2<=h1:p95', 'h2<=h2:p99', 'h2 <= h1 p99']) {
    assert.throws(
      () => parseCondition(bad),
      (e: Error & { code?: string; exitCode?: number }) =>
        e.code === 'H2LAB_ERR_COMPARE_BAD_EXPECT' &&
        e.exitCode === 2 &&
        e.message.includes(JSON.stringify(bad)) &&
        e.message.includes('h2<=h1:p99@64') &&
        e.message.includes('not worse than'),
      bad,
    );
  }
});

test('conditions are checked against the matrix before the first run', () => {
  let ran = 0;
  const runCell = syntheticRunner({}, { latencyMs: 5 });
  const start = (expect: string[]) =>
    compare(
      { protocols: ['h1', 'h2', 'h2-pool'], concurrency: [1, 8], workloads, runs: 3, expect },
      {
        target,
        runCell: (cell, ctx) => {
          ran++;
          return runCell(cell, ctx);
        },
      },
    );
  const bad: Array<[string, RegExp]> = [
    ['h3<=h1:p99', /h3 is not among --protocols h1,h2,h2-pool/],
    ['h2<=h2-pool:p99', /name it on one side/],
    ['h2<=h1:p99@64', /no cell at 64 \(the levels: 1, 8\)/],
    ['h2<=h1:p99@8/tiles', /no workload tiles/],
    ['h2<=h1:time', /burst workloads only/],
  ];
  for (const [cond, why] of bad) {
    assert.throws(
      () => start([cond]),
      (e: Error & { code?: string }) => e.code === 'H2LAB_ERR_COMPARE_BAD_EXPECT' && why.test(e.message),
      cond,
    );
  }
  assert.equal(ran, 0);
});

async function run(profiles: Parameters<typeof syntheticRunner>[0], expect: string[], runs = 6) {
  return compare(
    { protocols: ['h1', 'h2'], concurrency: [8], workloads, runs, expect, seed: 3 },
    { target, runCell: syntheticRunner(profiles) },
  ).done;
}

const byCondition = (r: CompareResult) =>
  Object.fromEntries(r.expectations!.map((e) => [e.condition, e.status]));

test('an injected 3x: better and not-worse are met, the opposite fails, either side may be the baseline', async () => {
  const r = await run({ h1: { latencyMs: 12, runNoise: 0.05 }, h2: { latencyMs: 4, runNoise: 0.05 } }, [
    'h2>h1:rps',
    'h2<=h1:p99@8',
    'h2 not worse than h1 on p50',
    'h1>=h2:p50',
    'h1>h2:rps',
    'h2~h1:rps',
  ]);
  assert.deepEqual(byCondition(r), {
    'h2>h1:rps': 'met',
    'h2<=h1:p99@8': 'met',
    'h2 not worse than h1 on p50': 'met',
    'h1>=h2:p50': 'met',
    'h1>h2:rps': 'failed',
    'h2~h1:rps': 'failed',
  });
  const check = r.expectations![0]!.checks[0]!;
  assert.equal(check.concurrency, 8);
  assert.equal(check.outcome, 'better');
  assert.ok(check.interval!.ratio > 2.5 && check.interval!.lo > 1, JSON.stringify(check.interval));
  // Written into the result, and the CLI's gate counts the failed ones.
  assert.deepEqual(
    expectationsFailed(r.expectations!, 'pass').map((e) => e.condition),
    ['h1>h2:rps', 'h2~h1:rps'],
  );
});

test('the same transport twice: "same" is met, "better" fails; two kept runs leave "not worse" undecided or met, never failed', async () => {
  const same = { latencyMs: 8, runNoise: 0.01 };
  const r = await run({ h1: same, h2: same }, ['h2~h1:rps', 'h2>h1:rps', 'h2<=h1:p99'], 6);
  assert.equal(byCondition(r)['h2~h1:rps'], 'met');
  assert.equal(byCondition(r)['h2>h1:rps'], 'failed');
  assert.notEqual(byCondition(r)['h2<=h1:p99'], 'failed');
  const noisy = await run(
    { h1: { latencyMs: 8, runNoise: 0.4 }, h2: { latencyMs: 8, runNoise: 0.4 } },
    ['h2<=h1:p99'],
    3,
  );
  const e = noisy.expectations![0]!;
  assert.notEqual(e.status, 'failed', e.reason);
  // Undecided does not fail by default; --expect-undecided fail makes it.
  if (e.status === 'undecided') {
    assert.equal(expectationsFailed(noisy.expectations!, 'pass').length, 0);
    assert.equal(expectationsFailed(noisy.expectations!, 'fail').length, 1);
  }
});

test('a condition on a cell with no measurement fails, naming why', async () => {
  const r = await run({ h1: { latencyMs: 5 }, h2: { latencyMs: 5, notOffered: true } }, ['h2<=h1:p99'], 3);
  const e = r.expectations![0]!;
  assert.equal(e.status, 'failed');
  assert.match(e.reason, /not measured \(.*h2 not-offered/);
  // Re-evaluating a saved result gives the same answer.
  assert.equal(evaluateConditions([parseCondition('h2<=h1:p99')], r, 0.05)[0]!.status, 'failed');
});

/**
 * A comparison's plan: the engine's run order as fixed slots, each cell's load options and their
 * split, sealed by a hash; and every refusal named with its flag (and the cell, when one is too small).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { prepareMatrix, resolveCompareOptions, runOrder } from '../../src/compare/index.ts';
import { isH2labError } from '../../src/core/index.ts';
import { checkPlan, planCompareShards } from '../../src/shard/index.ts';

const url = 'https://127.0.0.1:9/bytes/64';
const at = { startAtEpochMs: 1e12 };

function code(f: () => unknown): { code: string; message: string } {
  try {
    f();
  } catch (err) {
    assert.ok(isH2labError(err), String(err));
    return { code: err.code, message: err.message };
  }
  assert.fail('no error');
}

test('slots follow the engine’s order (strategies alternating round by round), seeds per round, fixed times', () => {
  const input = { url, concurrency: [8, 32], runs: 3, durationMs: 2000, runWarmupMs: 500, seed: 4 };
  const p = planCompareShards(input, { shards: 3, ...at, slotGapMs: 700 });
  assert.equal(p.kind, 'h2lab.compare-plan');
  assert.equal(p.slotMs, 500 + 2000 + 700);
  const options = resolveCompareOptions({ ...input, workloads: [{ id: 'url', label: url, paths: [url] }] });
  const { cells } = prepareMatrix(options);
  assert.deepEqual(
    p.cells.map((c) => c.id),
    cells.map((c) => c.id),
  );
  assert.deepEqual(
    p.slots.map((s) => [s.cell, s.round]),
    runOrder(cells, 3),
  );
  assert.equal(p.slots.length, 2 * 3 * 3, '2 levels × 3 strategies × 3 rounds');
  p.slots.forEach((s, k) => {
    assert.equal(s.atMs, k * p.slotMs);
    assert.equal(s.seed, 4 + s.round);
  });
  // The first group alternates h1 h2 h2-pool, round after round.
  assert.deepEqual(
    p.slots.slice(0, 6).map((s) => p.cells[s.cell]!.id.split('/').pop()),
    ['h1', 'h2', 'h2-pool', 'h1', 'h2', 'h2-pool'],
  );
  // Deterministic and sealed.
  assert.equal(planCompareShards(input, { shards: 3, ...at, slotGapMs: 700 }).hash, p.hash);
  assert.notEqual(
    planCompareShards({ ...input, seed: 5 }, { shards: 3, ...at, slotGapMs: 700 }).hash,
    p.hash,
  );
  assert.deepEqual(checkPlan(JSON.parse(JSON.stringify(p))), p);
  assert.equal(
    code(() => checkPlan({ ...p, slotMs: p.slotMs + 1 })).code,
    'H2LAB_ERR_PLAN_INVALID',
    'a changed slot breaks the hash',
  );
});

test('each cell is split as a load run: concurrency and pools divided, h2’s one session per shard', () => {
  const p = planCompareShards(
    { url, concurrency: [8], h1Connections: 6, h2PoolSessions: 4, durationMs: 1000 },
    { shards: 3, ...at },
  );
  const byProtocol = Object.fromEntries(p.cells.map((c) => [c.id.split('/').pop(), c]));
  assert.deepEqual(byProtocol.h1!.split.concurrency, [3, 3, 2]);
  assert.deepEqual(byProtocol.h1!.split.connections, [2, 2, 2]);
  assert.deepEqual(byProtocol.h2!.split.connections, [1, 1, 1], 'a fixed count is per shard');
  assert.deepEqual(byProtocol['h2-pool']!.split.connections, [2, 1, 1]);
  assert.equal(byProtocol.h1!.options.seed, undefined, 'the seed is the round’s');
  assert.equal(byProtocol.h1!.options.durationMs, 1000);
  // Open loop: the rate whole, arrivals by index.
  const r = planCompareShards({ url, rateRps: [600], durationMs: 1000 }, { shards: 2, ...at });
  for (const c of r.cells) {
    assert.equal(c.split.mode, 'open');
    assert.equal(c.split.rateRps, 600);
  }
});

test('what cannot be sharded is refused with its flag, before anything runs', () => {
  const n = { shards: 2, ...at };
  const refused = (input: Parameters<typeof planCompareShards>[0]) => code(() => planCompareShards(input, n));
  assert.match(
    refused({}).message,
    /^url cannot be split into shards: every shard would start its own embedded/,
  );
  assert.equal(refused({}).code, 'H2LAB_ERR_SHARD_UNSUPPORTED');
  assert.match(refused({ url, requests: 100 }).message, /^--requests cannot be split.*use --duration/);
  assert.match(refused({ url, burst: [16] }).message, /^--burst cannot be split/);
  assert.match(refused({ url, links: { rttMs: [50] } }).message, /^--net cannot be split/);
  assert.match(refused({ url, metricsUrl: 'http://127.0.0.1:9/metrics' }).message, /^--metrics-url cannot/);
  const small = refused({ url, concurrency: [1, 8] });
  assert.equal(small.code, 'H2LAB_ERR_SHARD_TOO_SMALL');
  assert.match(
    small.message,
    /^--concurrency 1 cannot be split into 2 shards .*\(cell url\/c1\/loopback\/h1\)$/,
  );
  const pool = code(() =>
    planCompareShards({ url, concurrency: [8], h1Connections: 2 }, { shards: 3, ...at }),
  );
  assert.match(pool.message, /^--h1-connections 2 cannot be split into 3 shards/);
  const sessions = code(() =>
    planCompareShards({ url, concurrency: [8], h2PoolSessions: 2 }, { shards: 3, ...at }),
  );
  assert.match(sessions.message, /^--h2-sessions 2 cannot be split into 3 shards.*h2-pool\)$/);
  assert.match(
    code(() => planCompareShards({ url }, { ...n, slotGapMs: -1 })).message,
    /^--slot-gap -1 ms is not valid/,
  );
});

/**
 * The plan: deterministic, sealed by its hash, closed-loop integers split with none below one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isH2labError } from '../../src/core/index.ts';
import { checkPlan, planShards } from '../../src/shard/index.ts';

const url = 'http://127.0.0.1:9/bytes/64';

test('the same options, shard count and start give the same plan and hash', () => {
  const a = planShards({ url, rateRps: 900, durationMs: 5000, seed: 3 }, { shards: 4, startAtEpochMs: 1e12 });
  const b = planShards({ seed: 3, durationMs: 5000, rateRps: 900, url }, { shards: 4, startAtEpochMs: 1e12 });
  assert.equal(a.hash, b.hash);
  assert.equal(a.runId, b.runId);
  assert.notEqual(
    a.hash,
    planShards({ url, rateRps: 900, durationMs: 5000, seed: 4 }, { shards: 4, startAtEpochMs: 1e12 }).hash,
  );
  assert.deepEqual(a.histogram, { unit: 'us', lowestUs: 1, highestUs: 3_600_000_000, significantDigits: 3 });
  assert.equal(a.split.mode, 'open');
  // Open loop: every shard has the whole run's rate and its index; the arrivals decide the share.
  for (const [i, s] of a.shardOptions.entries()) {
    assert.equal(s.rateRps, 900);
    assert.deepEqual(s.shard, { index: i, count: 4 });
  }
  assert.deepEqual(checkPlan(JSON.parse(JSON.stringify(a))), a);
});

test('closed loop: concurrency, connections and requests split as evenly as integers go', () => {
  const p = planShards(
    { url, protocol: 'h1', concurrency: 10, connections: 7, requests: 1001 },
    { shards: 3, startAtEpochMs: 1e12 },
  );
  assert.deepEqual(p.split.concurrency, [4, 3, 3]);
  assert.deepEqual(p.split.connections, [3, 2, 2]);
  assert.deepEqual(p.split.requests, [334, 334, 333]);
  assert.deepEqual(
    p.shardOptions.map((s) => [s.concurrency, s.connections, s.requests]),
    [
      [4, 3, 334],
      [3, 2, 334],
      [3, 2, 333],
    ],
  );
  // A fixed count (h2: one session) is per shard.
  assert.deepEqual(
    planShards({ url, protocol: 'h2', concurrency: 8 }, { shards: 4, startAtEpochMs: 1e12 }).split
      .connections,
    [1, 1, 1, 1],
  );
});

test('refused: below one per shard, a burst, an embedded target, an edited plan', () => {
  const code = (f: () => unknown): string | undefined => {
    try {
      f();
    } catch (err) {
      if (isH2labError(err)) return `${err.code} ${err.details.option ?? ''}`.trim();
      throw err;
    }
    return undefined;
  };
  const at = { startAtEpochMs: 1e12 };
  assert.equal(
    code(() => planShards({ url, protocol: 'h1', concurrency: 2, connections: 4 }, { shards: 3, ...at })),
    'H2LAB_ERR_SHARD_TOO_SMALL --concurrency',
  );
  assert.equal(
    code(() => planShards({ url, protocol: 'h1', concurrency: 4, connections: 2 }, { shards: 3, ...at })),
    'H2LAB_ERR_SHARD_TOO_SMALL --connections',
  );
  assert.equal(
    code(() => planShards({ url, protocol: 'h2', concurrency: 4, requests: 2 }, { shards: 3, ...at })),
    'H2LAB_ERR_SHARD_TOO_SMALL --requests',
  );
  assert.equal(
    code(() => planShards({ url, protocol: 'h1', connections: 2, rateRps: 10 }, { shards: 3, ...at })),
    'H2LAB_ERR_SHARD_TOO_SMALL --connections',
  );
  assert.equal(
    code(() => planShards({ url, burst: 10 }, { shards: 2, ...at })),
    'H2LAB_ERR_SHARD_UNSUPPORTED --burst',
  );
  assert.equal(
    code(() => planShards({ rateRps: 10 }, { shards: 2, ...at })),
    'H2LAB_ERR_SHARD_UNSUPPORTED url',
  );
  assert.equal(
    code(() => planShards({ url, rateRps: 10 }, { shards: 2, runId: 'Not_A_Label', ...at })),
    'H2LAB_ERR_INVALID_OPTION runId',
  );
  const p = planShards({ url, rateRps: 10 }, { shards: 2, ...at });
  assert.equal(
    code(() => checkPlan({ ...p, startAtEpochMs: p.startAtEpochMs + 1 })),
    'H2LAB_ERR_PLAN_INVALID',
  );
  assert.equal(
    code(() => checkPlan({ ...p, kind: 'nope' })),
    'H2LAB_ERR_PLAN_INVALID',
  );
});

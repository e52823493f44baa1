/**
 * Shard output through the collector: chunk lines under 16 KiB, a digest under 4 KiB, every chunk
 * checked; missing, duplicated and damaged shards named. The results are real: three shards of one
 * plan run in this process against the fixture server on loopback.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { before, test } from 'node:test';
import { isH2labError } from '../../src/core/index.ts';
import type { ShardResult } from '../../src/model/index.ts';
import {
  CHUNK_PAYLOAD_CHARS,
  encodeShardOutput,
  mergeShards,
  planShards,
  runShard,
  ShardCollector,
} from '../../src/shard/index.ts';
import { startFixture } from '../helpers/fixture.ts';

let shards: ShardResult[] = [];
let runId = '';

before(async () => {
  const srv = await startFixture({ tls: false });
  try {
    const plan = planShards(
      { url: `${srv.plainUrl}/bytes/64`, protocol: 'h1', connections: 3, rateRps: 400, requests: 30 },
      { shards: 3, startAtEpochMs: Date.now() + 400 },
    );
    runId = plan.runId;
    shards = await Promise.all([0, 1, 2].map((i) => runShard(plan, i)));
  } finally {
    await srv.close();
  }
});

const failure = (f: () => unknown): { code: string; message: string } => {
  try {
    f();
  } catch (err) {
    if (isH2labError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  return { code: 'none', message: '' };
};

/** A shard result big enough for several chunks: incompressible text in its warnings. */
const big = (s: ShardResult): ShardResult => ({
  ...s,
  result: { ...s.result, warnings: [...s.result.warnings, randomBytes(30_000).toString('base64')] },
});

test('lines under 16 KiB, digest under 4 KiB; shuffled, interleaved with noise and another run: merged', () => {
  const outs = shards.map((s) => encodeShardOutput(big(s)));
  for (const o of outs) {
    assert.ok(o.lines.length >= 3, `${o.lines.length} chunks`);
    for (const l of o.lines)
      assert.ok(Buffer.byteLength(l) < 16 * 1024 && l.length > CHUNK_PAYLOAD_CHARS / 2);
    assert.ok(Buffer.byteLength(JSON.stringify(o.digest)) <= 4096);
  }
  const other = encodeShardOutput({ ...shards[0]!, runId: 'another-run' });
  const lines = [...outs.flatMap((o) => o.lines), ...other.lines, 'npm notice: noise', ''].reverse();
  const c = new ShardCollector(runId, 3);
  for (const l of lines) c.addLine(l);
  for (const o of outs) c.addDigest(JSON.stringify(o.digest));
  c.addDigest(JSON.stringify(other.digest));
  const got = c.results();
  assert.deepEqual(
    got.map((s) => s.index),
    [0, 1, 2],
  );
  const m = mergeShards(got as ShardResult[]);
  assert.equal(m.result.counts.total, 30);
  assert.deepEqual(
    m.perShard.map((r) => r.total),
    [10, 10, 10],
  );
});

test('a missing shard, a chunk twice, a damaged chunk, a lost chunk: refused and named', () => {
  const outs = shards.map((s) => encodeShardOutput(big(s)));
  const feed = (mutate: (lines: string[][]) => void, digests = [0, 1, 2]): ReturnType<typeof failure> => {
    const lines = outs.map((o) => [...o.lines]);
    mutate(lines);
    const c = new ShardCollector(runId, 3);
    for (const l of lines.flat()) c.addLine(l);
    for (const i of digests) c.addDigest(outs[i]!.digest);
    return failure(() => c.results());
  };
  const missing = feed((l) => l[1]!.splice(0), [0, 2]);
  assert.equal(missing.code, 'H2LAB_ERR_SHARD_MISSING');
  assert.match(missing.message, /shard 1 of 3 missing/);
  const twice = feed((l) => l[2]!.push(l[2]![1]!));
  assert.equal(twice.code, 'H2LAB_ERR_SHARD_DUPLICATE');
  assert.match(twice.message, /shard 2: chunk 2\/\d+ came twice/);
  const damaged = feed((l) => {
    l[0]![1] = l[0]![1]!.replace(/.$/, (ch) => (ch === 'A' ? 'B' : 'A'));
  });
  assert.equal(damaged.code, 'H2LAB_ERR_SHARD_CORRUPT');
  assert.match(damaged.message, /shard 0: chunk 2\/\d+ does not match its checksum/);
  const lost = feed((l) => l[1]!.splice(1, 1));
  assert.equal(lost.code, 'H2LAB_ERR_SHARD_CORRUPT');
  assert.match(lost.message, /shard 1: chunk 2 of \d+ missing/);
  const noDigest = feed(() => {}, [0, 1]);
  assert.match(noDigest.message, /shard 2: no digest/);
});

test('merge refuses another plan, other histogram settings, a duplicate and a gap; names a slow shard', () => {
  assert.equal(
    failure(() => mergeShards([shards[0]!, { ...shards[1]!, planHash: 'x'.repeat(64) }, shards[2]!])).code,
    'H2LAB_ERR_SHARD_MISMATCH',
  );
  const coarse = { ...shards[1]!.result.histograms.latency, significantDigits: 2 };
  const other = {
    ...shards[1]!,
    result: { ...shards[1]!.result, histograms: { ...shards[1]!.result.histograms, latency: coarse } },
  };
  assert.equal(failure(() => mergeShards([shards[0]!, other, shards[2]!])).code, 'H2LAB_ERR_SHARD_MISMATCH');
  assert.equal(
    failure(() => mergeShards([shards[0]!, shards[0]!, shards[2]!])).code,
    'H2LAB_ERR_SHARD_DUPLICATE',
  );
  assert.match(failure(() => mergeShards([shards[0]!, shards[2]!])).message, /shard 1 of 3 missing/);
  const p50 = shards[0]!.result.latencyMs.p50;
  const slow = {
    ...shards[2]!,
    result: { ...shards[2]!.result, latencyMs: { ...shards[2]!.result.latencyMs, p50: p50 * 5 + 5 } },
  };
  const m = mergeShards([shards[0]!, shards[1]!, slow]);
  assert.deepEqual(m.slowShards, [2]);
  assert.ok(m.warnings.some((w) => w.startsWith('shard 2 is much slower')));
  assert.equal(m.clock.reference, 'none', 'no --clock-url: no reference clock, and the result says so');
});

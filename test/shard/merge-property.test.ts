/**
 * merge(shards) == run(1) for the same seeded arrivals. The arrivals come from the load engine's own
 * schedule (src/load/arrivals.ts) and each shard keeps its residue class, exactly as LoadShare does;
 * every arrival gets a latency (and now and then a failure or a 5xx) from a seeded function of its
 * index, so one process and N shards record the same samples; the real SampleStats records them and
 * the real merge adds the shards' tallies. Counts, rates and every summary (latency, ttfb, client
 * queue, connect, TLS, connection age) must be identical, and the merged result must hold every field
 * the single run's has.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { createRng } from '../../src/core/index.ts';
import {
  arrivalTimes,
  emptyTally,
  ownArrivals,
  type ResolvedLoadOptions,
  type RunTally,
  resolveLoadOptions,
  SampleStats,
  shipTally,
  toRunResult,
} from '../../src/load/index.ts';
import type { RunResult, Sample, ShardResult } from '../../src/model/index.ts';
import { mergeShards } from '../../src/shard/index.ts';

interface Case {
  seed: number;
  rateRps: number;
  arrivals: 'even' | 'poisson';
  requests: number;
  warmupMs: number;
  shards: number;
}

/** The samples one share records: the schedule's arrivals k ≡ index (mod count) within the limit. */
function samplesOf(c: Case, index: number, count: number): Sample[] {
  const out: Sample[] = [];
  for (const a of ownArrivals(
    arrivalTimes(c.rateRps, c.arrivals, createRng(c.seed)),
    index,
    count,
    c.warmupMs,
  )) {
    if (!(a.t < c.warmupMs || a.measuredBefore < c.requests)) break;
    const r = createRng(c.seed * 7919 + a.k);
    const latency = 0.05 + r.exponential(4) + (r.next() < 0.01 ? 900 : 0);
    const fail = r.next() < 0.03;
    const status = r.next() < 0.05 ? 503 : 200;
    out.push({
      seq: a.k,
      intendedMs: a.t,
      queuedMs: a.t,
      sentMs: a.t + r.next() * 0.2,
      endMs: a.t + latency,
      ...(fail ? {} : { headersMs: a.t + latency * 0.8, status }),
      connectionId: a.k % 4,
      newConnection: a.k < 4,
      bytesIn: fail ? 0 : 64,
      bytesOut: 0,
      ...(fail ? { error: 'reset' as const } : {}),
      ...(a.t < c.warmupMs ? { warmup: true } : {}),
    } as Sample);
  }
  return out;
}

const OPTIONS = (c: Case): ResolvedLoadOptions =>
  resolveLoadOptions({
    url: 'http://127.0.0.1:1/',
    protocol: 'h1',
    rateRps: c.rateRps,
    requests: c.requests,
    seed: c.seed,
    warmupMs: c.warmupMs,
  });

/** The tally of recorded samples, as a part makes it (the transport's statistics left empty). */
function tallyOf(stats: SampleStats): RunTally {
  return {
    ...emptyTally(),
    counts: stats.counts,
    histograms: stats.h,
    negotiated: 'http/1.1',
    measureStartMs: 0,
    measureEndMs: 1000,
  };
}

/** The result the engine's builder makes of a tally, over the measured window of the case. */
function resultOf(tally: RunTally, c: Case): RunResult {
  return toRunResult(tally, {
    options: OPTIONS(c),
    target: { url: 'http://127.0.0.1:1/', embedded: false },
    environment: {
      h2labVersion: '0',
      node: process.version,
      platform: 'test',
      cpus: 1,
      startedAt: '2026-01-01T00:00:00.000Z',
    },
  });
}

function record(samples: Sample[]): SampleStats {
  const s = new SampleStats(true, 5);
  for (const x of samples) s.add(x);
  return s;
}

/** Every key path of a JSON value's objects (array items by their first element's keys). */
function keyPaths(v: unknown, at = ''): string[] {
  if (Array.isArray(v)) return v.length > 0 ? keyPaths(v[0], `${at}[]`) : [];
  if (v === null || typeof v !== 'object') return [];
  return Object.entries(v).flatMap(([k, x]) => [`${at}.${k}`, ...keyPaths(x, `${at}.${k}`)]);
}

test('merge(shards) == run(1): counts, rates and every summary identical; every field of the run present', () => {
  fc.assert(
    fc.property(
      fc.record({
        seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        rateRps: fc.double({ min: 10, max: 20_000, noNaN: true }),
        arrivals: fc.constantFrom('even' as const, 'poisson' as const),
        requests: fc.integer({ min: 1, max: 600 }),
        warmupMs: fc.constantFrom(0, 5, 40),
        shards: fc.integer({ min: 1, max: 7 }),
      }),
      (c) => {
        const one = resultOf(tallyOf(record(samplesOf(c, 0, 1))), c);
        const shards: ShardResult[] = Array.from({ length: c.shards }, (_, i) => {
          const tally = tallyOf(record(samplesOf(c, i, c.shards)));
          return {
            kind: 'h2lab.shard',
            version: 2,
            runId: 'prop',
            planHash: 'p',
            index: i,
            count: c.shards,
            clock: { source: 'coordinator', offsetMs: 0, rttMs: 0.1, samples: 1 },
            barrier: { startAtEpochMs: 0, reachedAtEpochMs: 0, releasedAtEpochMs: 0, lagMs: 0 },
            result: resultOf(tally, c),
            tally: shipTally(tally),
          };
        });
        const m = mergeShards(shards).result;
        assert.equal(m.counts.total, c.requests, 'the limit holds over the whole run');
        assert.deepEqual(
          { ...m.counts, byStatus: { ...m.counts.byStatus }, byFailure: { ...m.counts.byFailure } },
          { ...one.counts, byStatus: { ...one.counts.byStatus }, byFailure: { ...one.counts.byFailure } },
        );
        assert.deepEqual(m.throughput, one.throughput, 'the same rates over the same window');
        for (const k of [
          'latencyMs',
          'ttfbMs',
          'latencyUncorrectedMs',
          'clientQueueMs',
          'connectionAge',
        ] as const) {
          assert.deepEqual(m[k], one[k], `${k} identical`);
        }
        assert.deepEqual(m.connections.connectMs, one.connections.connectMs, 'connectMs identical');
        assert.deepEqual(m.connections.tlsMs, one.connections.tlsMs, 'tlsMs identical');
        assert.deepEqual(m.histograms, one.histograms, 'the encoded histograms identical');
        const missing = keyPaths(one).filter((k) => !keyPaths(m).includes(k));
        assert.deepEqual(missing, [], `the merged result lacks ${missing.join(', ')}`);
      },
    ),
    { numRuns: 50, seed: 16 },
  );
});

/**
 * merge(shards) == run(1) for the same seeded arrivals. The arrivals come from the load engine's own
 * schedule (src/load/arrivals.ts) and each shard keeps its residue class, exactly as LoadPart does;
 * every arrival gets a latency (and now and then a failure or a 5xx) from a seeded function of its
 * index, so one process and N shards record the same samples; the real SampleStats records them and
 * the real merge adds the shards. Counts must be equal and every percentile within the histogram's
 * precision (3 significant digits).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { createRng } from '../../src/core/index.ts';
import {
  arrivalTimes,
  encodeHistogram,
  HISTOGRAM_SETTINGS,
  ownArrivals,
  SampleStats,
  summarizeHistogram,
} from '../../src/load/index.ts';
import { type RunResult, runResultSchema, type Sample, type ShardResult } from '../../src/model/index.ts';
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

/** A RunResult of recorded samples, the fields the merge reads filled from the real statistics. */
function resultOf(stats: SampleStats, c: Case): RunResult {
  const h = stats.h;
  const n = stats.counts;
  return runResultSchema.parse({
    kind: 'h2lab.run',
    version: 1,
    options: { rateRps: c.rateRps, requests: c.requests, seed: c.seed },
    environment: {
      h2labVersion: '0',
      node: process.version,
      platform: 'test',
      cpus: 1,
      startedAt: '2026-01-01T00:00:00.000Z',
    },
    target: { url: 'http://127.0.0.1:1/', embedded: false },
    transport: { name: 'h1', connections: 1 },
    protocol: { requested: 'http/1.1', negotiated: 'http/1.1' },
    schedule: { mode: 'open', rateRps: c.rateRps, arrivals: c.arrivals },
    durationMs: 1000,
    warmupMs: c.warmupMs,
    counts: {
      total: n.total,
      ok: n.ok,
      failed: n.failed,
      byStatus: n.byStatus,
      byFailure: n.byFailure,
      late: n.late,
      attempts: n.attempts,
      ...(n.warmup ? { warmup: n.warmup } : {}),
    },
    throughput: { rps: 0, bytesPerSec: 0, bytesIn: n.bytesIn, bytesOut: n.bytesOut },
    latencyMs: summarizeHistogram(h.latency),
    latencyUncorrectedMs: summarizeHistogram(h.latencyUncorrected),
    ttfbMs: summarizeHistogram(h.ttfb),
    clientQueueMs: summarizeHistogram(h.clientQueue),
    histograms: {
      latency: encodeHistogram(h.latency),
      ttfb: encodeHistogram(h.ttfb),
      latencyUncorrected: encodeHistogram(h.latencyUncorrected),
    },
    connections: { opened: 1, peakInFlight: 1, requestsPerConnection: { mean: 1, max: 1 } },
    client: { eventLoopUtilization: 0, cpu: 0, workers: 1, saturated: false },
    warnings: [],
  });
}

function record(samples: Sample[]): SampleStats {
  const s = new SampleStats(true, 5);
  for (const x of samples) s.add(x);
  return s;
}

const within = (a: number, b: number): boolean =>
  // 3 significant digits: a bucket is 0.1 % wide; 1 µs at the bottom of the range.
  Math.abs(a - b) <= Math.max(Math.abs(b) * 10 ** -HISTOGRAM_SETTINGS.significantDigits, 0.001);

test('merge(shards) == run(1): counts equal, every percentile within the histogram precision', () => {
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
        const one = resultOf(record(samplesOf(c, 0, 1)), c);
        const shards: ShardResult[] = Array.from({ length: c.shards }, (_, i) => ({
          kind: 'h2lab.shard',
          version: 1,
          runId: 'prop',
          planHash: 'p',
          index: i,
          count: c.shards,
          clock: { source: 'coordinator', offsetMs: 0, rttMs: 0.1, samples: 1 },
          barrier: { startAtEpochMs: 0, reachedAtEpochMs: 0, releasedAtEpochMs: 0, lagMs: 0 },
          result: resultOf(record(samplesOf(c, i, c.shards)), c),
        }));
        const m = mergeShards(shards).result;
        assert.equal(m.counts.total, c.requests, 'the limit holds over the whole run');
        assert.deepEqual(
          { ...m.counts, byStatus: { ...m.counts.byStatus }, byFailure: { ...m.counts.byFailure } },
          { ...one.counts, byStatus: { ...one.counts.byStatus }, byFailure: { ...one.counts.byFailure } },
        );
        assert.equal(m.throughput.bytesIn, one.throughput.bytesIn);
        for (const k of ['latencyMs', 'ttfbMs', 'latencyUncorrectedMs'] as const) {
          for (const q of ['p50', 'p90', 'p99', 'p999', 'min', 'max', 'mean'] as const) {
            assert.ok(within(m[k]![q], one[k]![q]), `${k}.${q}: merged ${m[k]![q]} vs one ${one[k]![q]}`);
          }
          assert.equal(m[k]!.count, one[k]!.count);
        }
      },
    ),
    { numRuns: 50, seed: 16 },
  );
});

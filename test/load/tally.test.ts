/**
 * The tally's merge (src/load/tally.ts): associative, with the empty tally as its identity, and the
 * merge of a split run's tallies equal to the whole run's tally — for counts, every histogram and the
 * transport's statistics, through the encoded form threads and shard files carry.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { createRng } from '../../src/core/index.ts';
import {
  decodeTally,
  emptyTally,
  encodeTally,
  mergeAll,
  mergeTallies,
  type RunTally,
  SampleStats,
  summarizeHistogram,
} from '../../src/load/index.ts';
import type { Sample } from '../../src/model/index.ts';
import type { TransportStats } from '../../src/transport/index.ts';

/** `n` seeded samples: latencies, failures, statuses, new connections with connect and TLS times. */
function samples(seed: number, n: number): Sample[] {
  const r = createRng(seed);
  return Array.from({ length: n }, (_, k) => {
    const t = k * 3 + r.next();
    const latency = 0.05 + r.exponential(5);
    const fail = r.next() < 0.05;
    const fresh = r.next() < 0.2;
    return {
      seq: k,
      intendedMs: t,
      queuedMs: t,
      sentMs: t + r.next(),
      endMs: t + latency,
      ...(fail
        ? { error: 'reset' as const }
        : { headersMs: t + latency * 0.7, status: r.next() < 0.1 ? 503 : 200 }),
      connectionId: k % 5,
      newConnection: fresh,
      ...(fresh ? { connectMs: r.exponential(1), tlsMs: r.exponential(2) } : {}),
      bytesIn: fail ? 0 : 100 + Math.floor(r.next() * 5000),
      bytesOut: 20,
      ...(r.next() < 0.05 ? { retries: 1 } : {}),
    } as Sample;
  });
}

/** Transport statistics as a part's transport might report them. */
function transportOf(seed: number): TransportStats {
  const r = createRng(seed);
  const connections = 1 + Math.floor(r.next() * 4);
  const requests = connections * (1 + Math.floor(r.next() * 50));
  return {
    opened: connections,
    inFlight: 0,
    peakInFlight: 1 + Math.floor(r.next() * 20),
    peakStreamsPerConnection: 1 + Math.floor(r.next() * 20),
    capHits: Math.floor(r.next() * 5),
    ...(r.next() < 0.7 ? { serverMaxConcurrentStreams: 50 + Math.floor(r.next() * 100) } : {}),
    requestsPerConnection: { mean: requests / connections, max: requests, connections, requests },
    lifetimes: {
      connections: Array.from({ length: 40 }, (_, i) => ({
        id: i,
        openedMs: seed + i,
        lastActiveMs: seed + i + 1,
        closedMs: seed + i + 1,
        requests: 1,
        closedBy: 'run-end' as const,
      })),
      omitted: Math.floor(r.next() * 3),
    },
    outages: { periods: [{ startMs: seed * 10, endMs: seed * 10 + 5, failedRequests: 1 }], omitted: 0 },
  };
}

function tallyOf(seed: number, xs: Sample[]): RunTally {
  const stats = new SampleStats(false, 5);
  for (const s of xs) stats.add(s);
  return {
    ...emptyTally(),
    counts: stats.counts,
    histograms: stats.h,
    transport: transportOf(seed),
    negotiated: 'h2',
    measureStartMs: seed,
    measureEndMs: seed + 1000,
    processes: {
      [`p${seed % 2}`]: {
        threads: 1,
        eventLoopUtilization: (seed % 10) / 10,
        measuredCpu: { us: seed * 1000, wallMs: 1000 },
      },
    },
  };
}

/** A tally as plain data to compare: histograms by their summaries and counts. */
function view(t: RunTally): unknown {
  return {
    ...t,
    histograms: Object.fromEntries(Object.entries(t.histograms).map(([k, h]) => [k, summarizeHistogram(h)])),
  };
}

test('merge is associative, the empty tally is its identity, and encoding loses nothing', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 1, max: 10_000 }), { minLength: 3, maxLength: 3 }), (seeds) => {
      const [a, b, c] = seeds.map((s) => tallyOf(s, samples(s, 1 + (s % 200)))) as [
        RunTally,
        RunTally,
        RunTally,
      ];
      for (const overlap of ['concurrent', 'sequential'] as const) {
        const left = mergeTallies(mergeTallies(a, b, overlap), c, overlap);
        const right = mergeTallies(a, mergeTallies(b, c, overlap), overlap);
        assert.deepEqual(view(left), view(right), `(a+b)+c = a+(b+c), ${overlap}`);
      }
      assert.deepEqual(
        view(mergeTallies(emptyTally(), a)),
        view(mergeTallies(a, emptyTally())),
        'identity both sides',
      );
      assert.deepEqual(
        view(decodeTally(JSON.parse(JSON.stringify(encodeTally(a))))),
        view(a),
        'through JSON',
      );
    }),
    { numRuns: 30, seed: 27 },
  );
});

test('the merge of a split run equals the whole: counts and every histogram', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), fc.integer({ min: 1, max: 6 }), (seed, parts) => {
      const all = samples(seed, 300);
      const whole = tallyOf(seed, all);
      const split = Array.from({ length: parts }, (_, i) =>
        tallyOf(
          seed,
          all.filter((s) => s.seq % parts === i),
        ),
      );
      const merged = mergeAll(split.map((t) => decodeTally(encodeTally(t))));
      assert.deepEqual(merged.counts, whole.counts, 'counts');
      for (const [k, h] of Object.entries(whole.histograms)) {
        assert.deepEqual(
          summarizeHistogram(merged.histograms[k as keyof typeof whole.histograms]),
          summarizeHistogram(h),
          `${k} histogram`,
        );
      }
    }),
    { numRuns: 30, seed: 27 },
  );
});

test('in-flight peaks add for concurrent parts and take the highest for sequential ones', () => {
  const a = tallyOf(1, samples(1, 10));
  const b = tallyOf(2, samples(2, 10));
  const pa = a.transport.peakInFlight;
  const pb = b.transport.peakInFlight;
  assert.equal(mergeTallies(a, b, 'concurrent').transport.peakInFlight, pa + pb, 'threads and shards: a sum');
  assert.equal(
    mergeTallies(a, b, 'sequential').transport.peakInFlight,
    Math.max(pa, pb),
    'bursts: the highest',
  );
  const lifetimes = mergeTallies(a, b).transport.lifetimes!;
  assert.equal(lifetimes.connections.length, 64, 'the log stays bounded');
  assert.equal(
    lifetimes.omitted,
    a.transport.lifetimes!.omitted + b.transport.lifetimes!.omitted + 16,
    'what the bound drops is counted',
  );
});

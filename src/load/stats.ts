/**
 * Samples → statistics. Every latency goes into an HdrHistogram in integer microseconds (1 µs to 1 h,
 * 3 significant digits: values are exact to 0.1 %), so worker threads and runs merge exactly by
 * adding histograms.
 */
import type * as Hdr from 'hdr-histogram-js';
import { lazyModule } from '../core/index.ts';
import type { EncodedHistogram, FailureClass, LatencySummaryMs, RunResult, Sample } from '../model/index.ts';

/** Loaded on the first histogram (src/core/lazy-module.ts). */
const hdr = lazyModule<typeof Hdr>('hdr-histogram-js');

export const HIST_LOWEST_US = 1;
export const HIST_HIGHEST_US = 3_600_000_000;
export const HIST_DIGITS = 3;

/** The settings of every histogram h2lab records; shards of one plan must share them to be added. */
export const HISTOGRAM_SETTINGS = Object.freeze({
  unit: 'us' as const,
  lowestUs: HIST_LOWEST_US,
  highestUs: HIST_HIGHEST_US,
  significantDigits: HIST_DIGITS,
});

/** A fresh histogram with h2lab's fixed range. */
export function newHistogram(): Hdr.Histogram {
  return hdr().build({
    lowestDiscernibleValue: HIST_LOWEST_US,
    highestTrackableValue: HIST_HIGHEST_US,
    numberOfSignificantValueDigits: HIST_DIGITS,
    autoResize: false,
  });
}

/** Records a duration given in ms (clamped into the histogram's range). */
export function recordMs(h: Hdr.Histogram, ms: number): void {
  let us = Math.round(ms * 1000);
  if (us < HIST_LOWEST_US) us = HIST_LOWEST_US;
  else if (us > HIST_HIGHEST_US) us = HIST_HIGHEST_US;
  h.recordValue(us);
}

/** p50/p90/p99/p99.9/max/min/mean in ms. An empty histogram gives zeros with count 0. */
export function summarizeHistogram(h: Hdr.Histogram): LatencySummaryMs {
  const n = h.totalCount;
  if (n === 0) return { p50: 0, p90: 0, p99: 0, p999: 0, max: 0, min: 0, mean: 0, count: 0 };
  const ms = (us: number): number => Math.round(us) / 1000;
  return {
    p50: ms(h.getValueAtPercentile(50)),
    p90: ms(h.getValueAtPercentile(90)),
    p99: ms(h.getValueAtPercentile(99)),
    p999: ms(h.getValueAtPercentile(99.9)),
    max: ms(h.maxValue),
    min: ms(h.minNonZeroValue),
    mean: Math.round(h.mean) / 1000,
    count: n,
  };
}

/** Serializes a histogram for results and for crossing worker threads. */
export function encodeHistogram(h: Hdr.Histogram): EncodedHistogram {
  return {
    unit: 'us',
    lowestUs: HIST_LOWEST_US,
    highestUs: HIST_HIGHEST_US,
    significantDigits: HIST_DIGITS,
    base64: hdr().encodeIntoCompressedBase64(h),
  };
}

/** The inverse of {@link encodeHistogram}. */
export function decodeHistogram(e: EncodedHistogram): Hdr.Histogram {
  const h = newHistogram();
  h.add(hdr().decodeFromCompressedBase64(e.base64));
  return h;
}

/**
 * The largest response body whose end is expected right behind its headers, bytes: three segments,
 * well inside any initial congestion window (RFC 6928: 10), so on a link of at least 1 Mbit/s it
 * trails the headers by less than 40 ms unless a segment was held back (Nagle, docs/design.md).
 */
export const SMALL_BODY_BYTES = 4096;

/** The histograms a run keeps. The `…New`/`…Warm` ones split requests by their connection's age. */
export const HISTOGRAM_NAMES = [
  'latency',
  'latencyUncorrected',
  'ttfb',
  'clientQueue',
  'connect',
  'tls',
  'ttfbNew',
  'ttfbWarm',
  'responseNew',
  'responseWarm',
  'bodyGapNew',
  'bodyGapWarm',
] as const;
export type HistogramName = (typeof HISTOGRAM_NAMES)[number];

/** Counters of one run (or one worker's share), additive across workers. */
export interface Counts {
  total: number;
  ok: number;
  failed: number;
  warmup: number;
  late: number;
  retried: number;
  /** Attempts: each request once, plus each of its retries. */
  attempts: number;
  /** Attempts that ended as goaway (never processed by the server, RFC 9113 §6.8). */
  unprocessed: number;
  bytesIn: number;
  bytesOut: number;
  byStatus: Record<string, number>;
  byFailure: Partial<Record<FailureClass, number>>;
}

/** All counters at zero. */
export function emptyCounts(): Counts {
  return {
    total: 0,
    ok: 0,
    failed: 0,
    warmup: 0,
    late: 0,
    retried: 0,
    attempts: 0,
    unprocessed: 0,
    bytesIn: 0,
    bytesOut: 0,
    byStatus: {},
    byFailure: {},
  };
}

/** Accumulates samples of the measured period. */
export class SampleStats {
  readonly h: Record<HistogramName, Hdr.Histogram>;
  readonly counts: Counts = emptyCounts();
  /** Open loop: latency is measured from the intended send time. */
  private readonly openLoop: boolean;
  private readonly lateToleranceMs: number;
  /** End of the last measured sample, ms. */
  lastEndMs = 0;
  /** The earliest send of any sample, warm-up included, ms (Infinity before the first). */
  firstSentMs = Number.POSITIVE_INFINITY;

  constructor(openLoop: boolean, lateToleranceMs: number) {
    this.openLoop = openLoop;
    this.lateToleranceMs = lateToleranceMs;
    this.h = {
      latency: newHistogram(),
      latencyUncorrected: newHistogram(),
      ttfb: newHistogram(),
      clientQueue: newHistogram(),
      connect: newHistogram(),
      tls: newHistogram(),
      ttfbNew: newHistogram(),
      ttfbWarm: newHistogram(),
      responseNew: newHistogram(),
      responseWarm: newHistogram(),
      bodyGapNew: newHistogram(),
      bodyGapWarm: newHistogram(),
    };
  }

  /**
   * Adds one sample. Latency is recorded for every request that got a response (any status);
   * transport failures are counted by class but kept out of the latency figures.
   */
  add(s: Sample): void {
    if (s.sentMs < this.firstSentMs) this.firstSentMs = s.sentMs;
    if (s.warmup) {
      this.counts.warmup++;
      return;
    }
    const c = this.counts;
    c.total++;
    c.bytesIn += s.bytesIn;
    c.bytesOut += s.bytesOut;
    if (s.endMs > this.lastEndMs) this.lastEndMs = s.endMs;
    if (s.newConnection) {
      if (s.connectMs !== undefined) recordMs(this.h.connect, s.connectMs);
      if (s.tlsMs !== undefined) recordMs(this.h.tls, s.tlsMs);
    }
    if (this.openLoop && s.sentMs - s.intendedMs > this.lateToleranceMs) c.late++;
    if (s.retries) c.retried++;
    c.attempts += 1 + (s.retries ?? 0);
    c.unprocessed += s.unprocessed ?? 0;
    recordMs(this.h.clientQueue, s.sentMs - s.queuedMs);
    if (s.error !== undefined) {
      c.failed++;
      c.byFailure[s.error] = (c.byFailure[s.error] ?? 0) + 1;
      return;
    }
    const status = s.status ?? 0;
    c.byStatus[status] = (c.byStatus[status] ?? 0) + 1;
    if (status >= 400) c.failed++;
    else c.ok++;
    if (this.openLoop) {
      recordMs(this.h.latency, s.endMs - s.intendedMs);
      recordMs(this.h.latencyUncorrected, s.endMs - s.sentMs);
    } else {
      recordMs(this.h.latency, s.endMs - s.queuedMs);
    }
    if (s.headersMs === undefined) return;
    recordMs(this.h.ttfb, s.headersMs - s.sentMs);
    // From the send, after any connection setup: first responses on new connections vs warm ones.
    const h = this.h;
    const fresh = s.newConnection;
    recordMs(fresh ? h.ttfbNew : h.ttfbWarm, s.headersMs - s.sentMs);
    recordMs(fresh ? h.responseNew : h.responseWarm, s.endMs - s.sentMs);
    if (s.bytesIn > 0 && s.bytesIn <= SMALL_BODY_BYTES) {
      recordMs(fresh ? h.bodyGapNew : h.bodyGapWarm, s.endMs - s.headersMs);
    }
  }
}

/** The `counts` section of a RunResult from counters (`late` only in an open loop). */
export function countsSection(c: Counts, open: boolean): RunResult['counts'] {
  return {
    total: c.total,
    ok: c.ok,
    failed: c.failed,
    byStatus: c.byStatus,
    byFailure: c.byFailure,
    ...(open ? { late: c.late } : {}),
    ...(c.warmup > 0 ? { warmup: c.warmup } : {}),
    ...(c.retried > 0 ? { retried: c.retried } : {}),
    attempts: c.attempts,
    ...(c.unprocessed > 0 ? { unprocessed: c.unprocessed } : {}),
  };
}

/** Counters read back from a RunResult (its counts and byte totals), to add results exactly. */
export function countsOfResult(r: RunResult): Counts {
  const c = r.counts;
  return {
    total: c.total,
    ok: c.ok,
    failed: c.failed,
    warmup: c.warmup ?? 0,
    late: c.late ?? 0,
    retried: c.retried ?? 0,
    attempts: c.attempts ?? 0,
    unprocessed: c.unprocessed ?? 0,
    bytesIn: r.throughput.bytesIn,
    bytesOut: r.throughput.bytesOut,
    byStatus: { ...c.byStatus },
    byFailure: { ...c.byFailure },
  };
}

/** Adds `b`'s counters into `a`. */
export function addCounts(a: Counts, b: Counts): void {
  a.total += b.total;
  a.ok += b.ok;
  a.failed += b.failed;
  a.warmup += b.warmup;
  a.late += b.late;
  a.retried += b.retried;
  a.attempts += b.attempts;
  a.unprocessed += b.unprocessed;
  a.bytesIn += b.bytesIn;
  a.bytesOut += b.bytesOut;
  for (const [k, v] of Object.entries(b.byStatus)) a.byStatus[k] = (a.byStatus[k] ?? 0) + v;
  for (const [k, v] of Object.entries(b.byFailure) as Array<[FailureClass, number]>) {
    a.byFailure[k] = (a.byFailure[k] ?? 0) + v;
  }
}

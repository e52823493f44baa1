/**
 * Samples → statistics. Every latency goes into an HdrHistogram in integer microseconds (1 µs to 1 h,
 * 3 significant digits: values are exact to 0.1 %), so worker threads and runs merge exactly by
 * adding histograms.
 */
import type * as Hdr from 'hdr-histogram-js';
import { hdrHistogram } from '../core/index.ts';
import type { EncodedHistogram, FailureClass, LatencySummaryMs, RunResult, Sample } from '../model/index.ts';

/** Loaded on the first histogram (src/core/lazy-module.ts). */
const hdr = hdrHistogram;

const HIST_LOWEST_US = 1;
const HIST_HIGHEST_US = 3_600_000_000;
const HIST_DIGITS = 3;

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
function recordMs(h: Hdr.Histogram | UsRecorder, ms: number): void {
  let us = Math.round(ms * 1000);
  if (us < HIST_LOWEST_US) us = HIST_LOWEST_US;
  else if (us > HIST_HIGHEST_US) us = HIST_HIGHEST_US;
  if (h instanceof UsRecorder) h.record(us);
  else h.recordValue(us);
}

/*
 * HdrHistogram's layout for h2lab's fixed settings (1 µs … 1 h, 3 significant digits): 2048
 * sub-buckets (the smallest power of two ≥ 2 × 10^3), of which the upper half is new in each
 * bucket; bucket k holds values < 2048 · 2^k at a resolution of 2^k µs. A value v ≥ 1 lies in bucket
 * max(0, floor(log2 v) − 10) at sub-bucket v >> bucket, and its count at index
 * (bucket + 1) · 1024 + sub-bucket − 1024.
 */
const SUB_BUCKET_HALF_MAGNITUDE = 10;
const SUB_BUCKET_HALF = 1 << SUB_BUCKET_HALF_MAGNITUDE;
/** The highest bucket h2lab's range reaches (HIST_HIGHEST_US < 2^32, so clz32 sees all of it). */
const TOP_BUCKET = 31 - Math.clz32(HIST_HIGHEST_US) - SUB_BUCKET_HALF_MAGNITUDE;
const COUNTS_LENGTH = (TOP_BUCKET + 2) << SUB_BUCKET_HALF_MAGNITUDE;

/**
 * Counts of integer microseconds in HdrHistogram's layout, recorded with integer arithmetic: the
 * bucket from the value's leading zeros and the sub-bucket by a shift. hdr-histogram-js computes
 * `floor(log2(v))` and `2^k` in floating point for every value it records, about 3 % of the CPU of
 * a run at 100k requests/s (six values a request). {@link toHistogram} hands the counts to
 * an hdr-histogram-js histogram, which encodes, merges and reads percentiles as before: the result is
 * the histogram recording each value would have made (values in one bucket are equivalent in it).
 */
export class UsRecorder {
  private counts: Float64Array | undefined;
  private lo = COUNTS_LENGTH;
  private hi = -1;

  /** Records `us`, an integer in [HIST_LOWEST_US, HIST_HIGHEST_US]. */
  record(us: number): void {
    let bucket = 31 - Math.clz32(us) - SUB_BUCKET_HALF_MAGNITUDE;
    if (bucket < 0) bucket = 0;
    const i = ((bucket + 1) << SUB_BUCKET_HALF_MAGNITUDE) + (us >>> bucket) - SUB_BUCKET_HALF;
    // Allocated on the first value: connect and tls stay empty in most runs.
    if (this.counts === undefined) this.counts = new Float64Array(COUNTS_LENGTH);
    this.counts[i]!++;
    if (i < this.lo) this.lo = i;
    if (i > this.hi) this.hi = i;
  }

  /**
   * An hdr-histogram-js histogram (h2lab's settings) holding these counts, copied index by index (the
   * layouts are the same: test/load/recorder.test.ts) — the form a histogram decoded from its
   * encoding has, whose maximum and minimum are those of their buckets.
   */
  toHistogram(): Hdr.Histogram {
    const h = newHistogram() as Hdr.JsHistogram;
    const c = this.counts;
    if (!c) return h;
    let total = 0;
    for (let i = this.lo; i <= this.hi; i++) {
      const n = c[i]!;
      if (n === 0) continue;
      h.addToCountAtIndex(i, n);
      total += n;
    }
    // What establishInternalTackingValues() would find, without walking the counts again: the total,
    // the highest value equivalent to the last index and the lowest of the first.
    h.setTotalCount(total);
    h.maxValue = lowestAtIndex(this.hi) + unitAtIndex(this.hi) - 1;
    h.minNonZeroValue = lowestAtIndex(this.lo);
    return h;
  }
}

/** The width of index `i`'s bucket in {@link UsRecorder}'s layout, µs. */
function unitAtIndex(i: number): number {
  const bucket = (i >> SUB_BUCKET_HALF_MAGNITUDE) - 1;
  return bucket < 0 ? 1 : 2 ** bucket;
}

/** The lowest value counted at index `i` of {@link UsRecorder}'s layout, µs. */
function lowestAtIndex(i: number): number {
  const bucket = (i >> SUB_BUCKET_HALF_MAGNITUDE) - 1;
  return bucket < 0 ? i : ((i & (SUB_BUCKET_HALF - 1)) + SUB_BUCKET_HALF) * 2 ** bucket;
}

/** p50/p90/p99/p99.9/max/min/mean in ms. An empty histogram gives zeros with count 0. */
export function summarizeHistogram(h: Hdr.Histogram): LatencySummaryMs {
  const n = h.totalCount;
  if (n === 0) return { p50: 0, p90: 0, p99: 0, p999: 0, max: 0, min: 0, mean: 0, count: 0 };
  const ms = (us: number): number => Math.round(us) / 1000;
  const j = h as Hdr.JsHistogram;
  const [p50, p90, p99, p999, mean] =
    j.countsArrayLength === COUNTS_LENGTH &&
    j.unitMagnitude === 0 &&
    j.subBucketHalfCountMagnitude === SUB_BUCKET_HALF_MAGNITUDE &&
    typeof j.getCountAtIndex === 'function'
      ? onePassSummary(j, n)
      : [
          h.getValueAtPercentile(50),
          h.getValueAtPercentile(90),
          h.getValueAtPercentile(99),
          h.getValueAtPercentile(99.9),
          h.mean,
        ];
  return {
    p50: ms(p50!),
    p90: ms(p90!),
    p99: ms(p99!),
    p999: ms(p999!),
    max: ms(h.maxValue),
    min: ms(h.minNonZeroValue),
    mean: Math.round(mean!) / 1000,
    count: n,
  };
}

/** The percentiles a summary reports, ascending. */
const SUMMARY_PERCENTILES = [50, 90, 99, 99.9] as const;

/**
 * p50, p90, p99, p99.9 and the mean of a histogram in h2lab's layout, in one pass over its counts that
 * stops at the last one. hdr-histogram-js walks the whole counts array once per percentile and once
 * more, through an iterator object per step, for the mean: at the end of a short run, still
 * interpreted, that was half of the run's CPU from connect (87 of 177 ms for 5,000 requests; issue
 * 29). The rules are the library's, to the bit (test/load/recorder.test.ts): a percentile is the
 * highest value equivalent to the first index whose running count reaches
 * max(1, ⌈p/100 · total − ulp⌉); the mean sums each index's median equivalent value times its count.
 */
function onePassSummary(h: Hdr.JsHistogram, total: number): number[] {
  const targets = SUMMARY_PERCENTILES.map((p) => {
    const fp = (p / 100) * total;
    return Math.max(Math.ceil(fp - 2 ** (Math.floor(Math.log2(fp)) - 52)), 1);
  });
  const out = [0, 0, 0, 0, 0];
  let next = 0;
  let running = 0;
  let sum = 0;
  for (let i = 0; i < COUNTS_LENGTH && running < total; i++) {
    const c = h.getCountAtIndex(i);
    if (c === 0) continue;
    running += c;
    const unit = unitAtIndex(i);
    const lowest = lowestAtIndex(i);
    sum += (lowest + Math.floor(unit / 2)) * c;
    while (next < targets.length && running >= targets[next]!) out[next++] = lowest + unit - 1;
  }
  out[4] = sum / total;
  return out;
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
const SMALL_BODY_BYTES = 4096;

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
  /** Responses whose header block the transport measured, and its bytes (Sample.headerBytesIn). */
  headerResponses: number;
  headerBytesIn: number;
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
    headerResponses: 0,
    headerBytesIn: 0,
    byStatus: {},
    byFailure: {},
  };
}

/** Accumulates samples of the measured period. */
export class SampleStats {
  private readonly rec: Record<HistogramName, UsRecorder>;
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
    this.rec = {
      latency: new UsRecorder(),
      latencyUncorrected: new UsRecorder(),
      ttfb: new UsRecorder(),
      clientQueue: new UsRecorder(),
      connect: new UsRecorder(),
      tls: new UsRecorder(),
      ttfbNew: new UsRecorder(),
      ttfbWarm: new UsRecorder(),
      responseNew: new UsRecorder(),
      responseWarm: new UsRecorder(),
      bodyGapNew: new UsRecorder(),
      bodyGapWarm: new UsRecorder(),
    };
  }

  /** The histograms of what was recorded, built afresh on every read (read them once, at the end). */
  get h(): Record<HistogramName, Hdr.Histogram> {
    const out = {} as Record<HistogramName, Hdr.Histogram>;
    for (const k of HISTOGRAM_NAMES) out[k] = this.rec[k].toHistogram();
    return out;
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
    if (s.headerBytesIn !== undefined) {
      c.headerResponses++;
      c.headerBytesIn += s.headerBytesIn;
    }
    if (s.endMs > this.lastEndMs) this.lastEndMs = s.endMs;
    if (s.newConnection) {
      if (s.connectMs !== undefined) recordMs(this.rec.connect, s.connectMs);
      if (s.tlsMs !== undefined) recordMs(this.rec.tls, s.tlsMs);
    }
    if (this.openLoop && s.sentMs - s.intendedMs > this.lateToleranceMs) c.late++;
    if (s.retries) c.retried++;
    c.attempts += 1 + (s.retries ?? 0);
    c.unprocessed += s.unprocessed ?? 0;
    recordMs(this.rec.clientQueue, s.sentMs - s.queuedMs);
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
      recordMs(this.rec.latency, s.endMs - s.intendedMs);
      recordMs(this.rec.latencyUncorrected, s.endMs - s.sentMs);
    } else {
      recordMs(this.rec.latency, s.endMs - s.queuedMs);
    }
    if (s.headersMs === undefined) return;
    recordMs(this.rec.ttfb, s.headersMs - s.sentMs);
    // From the send, after any connection setup: first responses on new connections vs warm ones.
    const h = this.rec;
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
  a.headerResponses += b.headerResponses;
  a.headerBytesIn += b.headerBytesIn;
  for (const [k, v] of Object.entries(b.byStatus)) a.byStatus[k] = (a.byStatus[k] ?? 0) + v;
  for (const [k, v] of Object.entries(b.byFailure) as Array<[FailureClass, number]>) {
    a.byFailure[k] = (a.byFailure[k] ?? 0) + v;
  }
}

/**
 * The descriptive figures of a browser run's few values: their spread (p50/p90/min/max), the peak of
 * requests in flight, a tally of labels. Bursts are small (about a hundred requests), so percentiles
 * are exact (nearest rank on the sorted values) rather than read from a histogram — not the load
 * engine's histograms (src/load) nor the inference across runs (src/compare/inference.ts).
 */
import { quantileNearestRank } from '../core/index.ts';
import type { Spread } from '../model/index.ts';

/** p50/p90 (nearest rank)/min/max of `values`. */
export function spread(values: readonly number[]): Spread {
  return {
    p50: quantileNearestRank(values, 0.5),
    p90: quantileNearestRank(values, 0.9),
    min: values.length ? Math.min(...values) : Number.NaN,
    max: values.length ? Math.max(...values) : Number.NaN,
    count: values.length,
  };
}

/**
 * Peak number of intervals open at once. Intervals are half-open `[start, end)`: a request that ends
 * exactly when another starts does not overlap it (a keep-alive connection handing over).
 *
 * @example peakConcurrency([[0, 2], [1, 3], [2, 4]]) === 2
 */
export function peakConcurrency(intervals: ReadonlyArray<readonly [number, number]>): number {
  const events: Array<[number, number]> = [];
  for (const [s, e] of intervals) {
    if (!(e > s)) continue;
    events.push([s, 1], [e, -1]);
  }
  // Ends sort before starts at the same instant (half-open intervals).
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let cur = 0;
  let peak = 0;
  for (const [, d] of events) {
    cur += d;
    if (cur > peak) peak = cur;
  }
  return peak;
}

/** Counts of each value. */
export function tally(values: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

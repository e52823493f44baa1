/**
 * Quantiles of small lists of numbers, each under the name of its definition. Two are needed, and a
 * number changes with the choice, so no function here is called plain `quantile`:
 *
 * - **nearest rank** returns a value that was observed (the smallest with at least q·n values at or
 *   below it). Browser bursts (about a hundred requests) report these: a p90 is one request's time.
 * - **linear interpolation** between order statistics (type 7, the default of R and NumPy) is smooth
 *   in the data. Statistics across runs (compare, the load engine's burst medians, TCP summaries) use it;
 *   its median of an even count is the mean of the two middle values.
 *
 * Histograms of a whole run are read by hdr-histogram-js, not here.
 */

function sorted(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/**
 * Nearest-rank q-quantile (0 ≤ q ≤ 1): the smallest value with at least q·n values at or below it
 * (q = 0 gives the minimum). NaN for an empty list.
 *
 * @example quantileNearestRank([1, 2, 3, 4], 0.5) // 2
 */
export function quantileNearestRank(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const s = sorted(values);
  const rank = Math.max(1, Math.ceil(q * s.length));
  return s[Math.min(rank, s.length) - 1]!;
}

/**
 * Nearest-rank median: the lower of the two middle values for an even count. NaN for an empty list.
 *
 * @example medianNearestRank([1, 2, 3, 4]) // 2
 */
export function medianNearestRank(values: readonly number[]): number {
  return quantileNearestRank(values, 0.5);
}

/**
 * The q-quantile (q clamped to [0, 1]) by linear interpolation between order statistics (type 7).
 * NaN for an empty list.
 *
 * @example quantileInterpolated([1, 2, 3, 4], 0.5) // 2.5
 */
export function quantileInterpolated(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const s = sorted(values);
  const pos = (s.length - 1) * Math.min(1, Math.max(0, q));
  const lo = Math.floor(pos);
  const a = s[lo]!;
  const b = s[Math.ceil(pos)]!;
  return a + (b - a) * (pos - lo);
}

/**
 * Interpolated median: the mean of the two middle values for an even count. NaN for an empty list.
 *
 * @example medianInterpolated([1, 2, 3, 4]) // 2.5
 */
export function medianInterpolated(values: readonly number[]): number {
  return quantileInterpolated(values, 0.5);
}

/**
 * Inference across repeated runs: medians with min–max, the ratio of a strategy to a baseline with a
 * percentile-bootstrap confidence interval, the rank test, the outcome a ratio is classified as and
 * the runs a decision needs.
 *
 * Why the bootstrap: a comparison has few runs (default 4 kept of 5) whose distribution is unknown
 * and often skewed (a run that met a GC pause, a noisy neighbour). Resampling the runs makes no
 * normality assumption and gives an interval for a ratio of medians directly; its weakness with very
 * few runs (the interval is too narrow) is why a minimum effect size is also required before a
 * difference is called a win (see {@link classifyRatio}).
 */
import {
  createRng,
  medianInterpolated as median,
  minRunsForRankTest,
  quantileInterpolated,
  type Rng,
} from '../core/index.ts';

export { minRunsForRankTest };

/** Median, extremes and count of a list of numbers. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  n: number;
}

/** Median (interpolated), min, max and count. Non-finite values are ignored. */
export function summarize(values: readonly number[]): Summary {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, n: 0 };
  return { median: median(finite), min: Math.min(...finite), max: Math.max(...finite), n: finite.length };
}

/** A ratio with its confidence interval. */
export interface RatioInterval {
  /** median(candidate) / median(baseline). */
  ratio: number;
  /** Lower and upper bounds of the interval. */
  lo: number;
  hi: number;
  /** Confidence level of the interval, e.g. 0.95. */
  confidence: number;
  /** Runs on each side. */
  n: { candidate: number; baseline: number };
}

/** Options of {@link bootstrapRatio}. */
export interface BootstrapOptions {
  /** Resamples drawn. Default 2000: the 2.5th/97.5th percentiles then move by < 1% between seeds. */
  iterations?: number;
  /** Confidence level. Default 0.95. */
  confidence?: number;
  /** Seed of the resampling, so a report re-rendered from the same file says the same thing. Default 1. */
  seed?: number;
  /** Or an explicit generator (wins over `seed`). */
  rng?: Rng;
}

function resampledMedian(values: readonly number[], rng: Rng, scratch: number[]): number {
  const n = values.length;
  // Draw and insertion-sort in one pass: runs are few (typically 4–10), and this loop is the whole
  // cost of an interval (2000 resamples × 2 sides × every comparison, after every run).
  for (let i = 0; i < n; i++) {
    const v = values[Math.floor(rng.next() * n)]!;
    let j = i - 1;
    while (j >= 0 && scratch[j]! > v) {
      scratch[j + 1] = scratch[j]!;
      j--;
    }
    scratch[j + 1] = v;
  }
  const mid = (n - 1) / 2;
  const lo = Math.floor(mid);
  return lo === mid ? scratch[lo]! : (scratch[lo]! + scratch[lo + 1]!) / 2;
}

/**
 * Ratio of medians `candidate / baseline` with a percentile-bootstrap interval: both sides are
 * resampled independently (they are independent runs), the ratio of the resampled medians is
 * collected, and its (1−c)/2 and (1+c)/2 quantiles are the bounds.
 *
 * The interval always contains the point estimate (it is widened to it if resampling did not reach
 * it), and with one run per side it collapses to the point: the caller must treat n < 2 as
 * insufficient. Returns NaN bounds when either side is empty or the baseline median is 0.
 *
 * @example bootstrapRatio([210, 200, 205], [100, 102, 98]).ratio // ≈ 2.05
 */
export function bootstrapRatio(
  candidate: readonly number[],
  baseline: readonly number[],
  options: BootstrapOptions = {},
): RatioInterval {
  const confidence = options.confidence ?? 0.95;
  const iterations = options.iterations ?? 2000;
  const a = candidate.filter(Number.isFinite);
  const b = baseline.filter(Number.isFinite);
  const n = { candidate: a.length, baseline: b.length };
  const ratio = median(a) / median(b);
  if (a.length === 0 || b.length === 0 || !Number.isFinite(ratio)) {
    return { ratio: Number.NaN, lo: Number.NaN, hi: Number.NaN, confidence, n };
  }
  const rng = options.rng ?? createRng(options.seed ?? 1);
  const sa: number[] = new Array(a.length);
  const sb: number[] = new Array(b.length);
  const ratios: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const mb = resampledMedian(b, rng, sb);
    if (mb === 0) continue;
    ratios.push(resampledMedian(a, rng, sa) / mb);
  }
  ratios.sort((x, y) => x - y);
  if (ratios.length === 0) return { ratio, lo: ratio, hi: ratio, confidence, n };
  const lo = Math.min(ratio, quantileInterpolated(ratios, (1 - confidence) / 2));
  const hi = Math.max(ratio, quantileInterpolated(ratios, (1 + confidence) / 2));
  return { ratio, lo, hi, confidence, n };
}

/**
 * Two-sided p-value of the Mann–Whitney U test (Wilcoxon rank-sum) that two samples come from the
 * same distribution. Exact (the distribution of U by counting arrangements) when n1·n2 ≤ 2500,
 * normal approximation with continuity correction above. Ties count ½. Why this test: it needs no
 * distribution, and with the few runs a comparison has it says plainly what can be claimed — with 4
 * runs a side the smallest possible p is 2/70 ≈ 0.029, reached only when every run of one side beats
 * every run of the other.
 *
 * @example mannWhitneyP([5, 6, 7, 8], [1, 2, 3, 4]) // 0.0286
 */
export function mannWhitneyP(a: readonly number[], b: readonly number[]): number {
  const n1 = a.length;
  const n2 = b.length;
  if (n1 === 0 || n2 === 0) return 1;
  let u = 0;
  for (const x of a) for (const y of b) u += x > y ? 1 : x === y ? 0.5 : 0;
  const max = n1 * n2;
  if (max <= 2500) {
    // counts[k] = arrangements of n1 + n2 ranks in which U = k, built up one element at a time:
    // f(i, j) = f(i-1, j) shifted by j (the i-th of a is above all j of b) + f(i, j-1).
    let prev: Float64Array[] = Array.from({ length: n2 + 1 }, () => new Float64Array(max + 1));
    for (let j = 0; j <= n2; j++) prev[j]![0] = 1;
    for (let i = 1; i <= n1; i++) {
      const cur: Float64Array[] = Array.from({ length: n2 + 1 }, () => new Float64Array(max + 1));
      cur[0]![0] = 1;
      for (let j = 1; j <= n2; j++) {
        const c = cur[j]!;
        const up = prev[j]!;
        const left = cur[j - 1]!;
        for (let k = 0; k <= i * j; k++) c[k] = (k >= j ? up[k - j]! : 0) + left[k]!;
      }
      prev = cur;
    }
    const counts = prev[n2]!;
    let total = 0;
    let below = 0;
    let above = 0;
    for (let k = 0; k <= max; k++) {
      total += counts[k]!;
      if (k <= u) below += counts[k]!;
      if (k >= u) above += counts[k]!;
    }
    return Math.min(1, (2 * Math.min(below, above)) / total);
  }
  const mean = max / 2;
  const sd = Math.sqrt((n1 * n2 * (n1 + n2 + 1)) / 12);
  const z = (Math.abs(u - mean) - 0.5) / sd;
  return Math.min(1, 2 * (1 - normalCdf(Math.max(0, z))));
}

/** Standard normal CDF (Abramowitz–Stegun 26.2.17, |error| < 7.5e-8). */
function normalCdf(z: number): number {
  const t = 1 / (1 + 0.2316419 * Math.abs(z));
  const d = 0.3989422804014327 * Math.exp((-z * z) / 2);
  const p =
    d * t * (0.31938153 + t * (-0.356563782 + t * (1.781477937 + t * (-1.821255978 + t * 1.330274429))));
  return z >= 0 ? 1 - p : p;
}

/**
 * What a ratio says, in the direction of the metric (higher-is-better or lower-is-better):
 * - `better` / `worse`: a difference of at least the minimum effect that the runs show (the interval
 *   excludes 1 and the rank test rejects "same distribution");
 * - `no-clear-difference`: the difference observed is smaller than the minimum effect (the estimate
 *   lies inside ±minEffect): whatever separates them is below what a user should act on;
 * - `undecided`: the runs cannot tell — a difference as large as the one observed may or may not be
 *   there (too few runs, or too much spread). Never read as "no difference";
 * - `insufficient`: fewer runs than any statistic needs.
 */
export type Outcome = 'better' | 'worse' | 'no-clear-difference' | 'undecided' | 'insufficient';

/** Options of {@link classifyRatio}. */
export interface ClassifyOptions {
  /** Whether a larger value of the metric is better (throughput) or worse (latency). */
  higherIsBetter: boolean;
  /**
   * The smallest relative difference called a difference at all, as a fraction. Default 0.05 (5%):
   * on a shared 2-core machine back-to-back identical runs differ by a few percent, so a smaller
   * effect is not something a user should act on even when the interval excludes 1.
   */
  minEffect?: number;
  /** Fewest runs per side for a verdict. Default 2. */
  minRuns?: number;
  /**
   * Mann–Whitney p-value of the same runs ({@link mannWhitneyP}). When given, a difference is clear
   * only if it is also below 1 − confidence: the bootstrap interval alone is too narrow with few runs.
   */
  pValue?: number;
  /** Confidence level the p-value is held to (alpha = 1 − confidence). Default 0.95. */
  confidence?: number;
}

/** The default minimum effect size (5%). */
export const DEFAULT_MIN_EFFECT = 0.05;

/**
 * Classifies a ratio interval (see {@link Outcome}). A difference is called when the interval excludes
 * 1, the rank test (if its p-value is given) rejects "same distribution" at 1 − confidence, and the
 * estimate is at least `minEffect` away from 1 (symmetric in log space: 1.05× and 1/1.05× are the same
 * size). A smaller estimate is "no clear difference"; a larger one without that evidence is
 * "undecided" — say how many runs would tell ({@link runsNeeded}), never "keep the baseline".
 */
export function classifyRatio(interval: RatioInterval, options: ClassifyOptions): Outcome {
  const minRuns = options.minRuns ?? 2;
  const minEffect = options.minEffect ?? DEFAULT_MIN_EFFECT;
  if (interval.n.candidate < minRuns || interval.n.baseline < minRuns || !Number.isFinite(interval.ratio)) {
    return 'insufficient';
  }
  const band = Math.log(1 + minEffect);
  const small = Math.abs(Math.log(interval.ratio)) < band;
  const excludesOne = !(interval.lo <= 1 && interval.hi >= 1);
  const rankAgrees = options.pValue === undefined || options.pValue < 1 - (options.confidence ?? 0.95);
  const significant = excludesOne && rankAgrees;
  if (small) return 'no-clear-difference';
  if (!significant) return 'undecided';
  const higher = interval.ratio > 1;
  return higher === options.higherIsBetter ? 'better' : 'worse';
}

/** Inverse standard normal CDF (Acklam's rational approximation, |relative error| < 1.2e-9). */
function normalQuantile(p: number): number {
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716,
    2.506628277459239,
  ];
  const b = [
    -54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572,
  ];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const q = Math.min(Math.max(p, 1e-12), 1 - 1e-12);
  if (q < 0.02425 || q > 1 - 0.02425) {
    const t = Math.sqrt(-2 * Math.log(q < 0.5 ? q : 1 - q));
    const x =
      (((((c[0]! * t + c[1]!) * t + c[2]!) * t + c[3]!) * t + c[4]!) * t + c[5]!) /
      ((((d[0]! * t + d[1]!) * t + d[2]!) * t + d[3]!) * t + 1);
    return q < 0.5 ? x : -x;
  }
  const r = q - 0.5;
  const s = r * r;
  return (
    ((((((a[0]! * s + a[1]!) * s + a[2]!) * s + a[3]!) * s + a[4]!) * s + a[5]!) * r) /
    (((((b[0]! * s + b[1]!) * s + b[2]!) * s + b[3]!) * s + b[4]!) * s + 1)
  );
}

/** Options of {@link runsNeeded}. */
export interface RunsNeededOptions {
  /** Confidence the test is held to (alpha = 1 − confidence). Default 0.95. */
  confidence?: number;
  /** Smallest effect worth detecting, as a fraction; the target effect is never below it. Default 0.05. */
  minEffect?: number;
  /** Power: the chance the runs show the effect when it is real. Default 0.8. */
  power?: number;
  /** Upper bound of the answer. Default 1000. */
  max?: number;
}

/**
 * Kept runs per side that would show a difference of the size observed, from the observed spread:
 * the two-sample normal approximation on log values, n = 2·(z₁₋α/₂ + z_power)²·s²/d², divided by the
 * rank test's asymptotic efficiency (3/π) because the rank test is what must pass, and never fewer
 * than {@link minRunsForRankTest}. `d` is the observed |log ratio of medians| (at least
 * log(1 + minEffect)), `s²` the pooled variance of the log values, and never as few as the runs
 * given (they did not tell). An estimate, as the spread of a few runs is itself uncertain: the
 * report calls it "about".
 *
 * @example runsNeeded([30, 31, 29], [10, 10.5, 9.5]) // 4: every run of one side beats the other's
 */
export function runsNeeded(
  candidate: readonly number[],
  baseline: readonly number[],
  options: RunsNeededOptions = {},
): number {
  const alpha = 1 - (options.confidence ?? 0.95);
  const floor = minRunsForRankTest(alpha);
  const max = options.max ?? 1000;
  const la = candidate.filter((x) => x > 0 && Number.isFinite(x)).map(Math.log);
  const lb = baseline.filter((x) => x > 0 && Number.isFinite(x)).map(Math.log);
  if (la.length === 0 || lb.length === 0) return floor;
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const ss = (xs: number[]) => {
    const m = mean(xs);
    return xs.reduce((s, x) => s + (x - m) ** 2, 0);
  };
  const dof = la.length + lb.length - 2;
  const variance = dof > 0 ? (ss(la) + ss(lb)) / dof : 0;
  const d = Math.max(
    Math.abs(Math.log(median(candidate) / median(baseline))),
    Math.log(1 + (options.minEffect ?? DEFAULT_MIN_EFFECT)),
  );
  const z = normalQuantile(1 - alpha / 2) + normalQuantile(options.power ?? 0.8);
  const n = (2 * z * z * variance) / (d * d) / (3 / Math.PI);
  // Asked of runs that could not tell: the answer is more than they had. When their spread says they
  // should have told (power is 0.8, not 1; the effect sat at the threshold), "about 4 runs would tell"
  // after 4 runs would contradict itself (issue #31), so it is one more than were kept.
  const have = Math.min(la.length, lb.length);
  return Math.min(max, Math.max(floor, have + 1, Math.ceil(n)));
}

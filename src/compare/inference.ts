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
interface Summary {
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
interface BootstrapOptions {
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
 * What a ratio says, in the direction of the metric (higher-is-better or lower-is-better). The one
 * decision rule of h2lab: every sentence (answer, verdict, recommendation, studies, page) words this
 * outcome and none decides again. docs/usage.md ("How a difference is decided") states it for users.
 * - `better` / `worse`: a difference of at least the minimum effect that the runs show — the rank test
 *   rejects "same distribution" at 1 − confidence, and the interval excludes 1 or every run of one
 *   side beats every run of the other (then one outlier's pull on the interval does not undo it);
 * - `no-clear-difference`: the whole interval lies within ±minEffect: the runs bound the difference
 *   below what a user should act on;
 * - `undecided`: anything else — the runs allow a difference of at least the minimum effect without
 *   showing one. Never read as "no difference"; {@link runsNeeded} says what would tell;
 * - `insufficient`: fewer runs than any statistic needs.
 */
export type Outcome = 'better' | 'worse' | 'no-clear-difference' | 'undecided' | 'insufficient';

/** Options of {@link classifyRatio}. */
interface ClassifyOptions {
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
  /**
   * Every run of one side beyond every run of the other ({@link separation}): with a p-value below
   * 1 − confidence this decides the cell whatever the interval's width.
   */
  separated?: boolean;
  /** Confidence level the p-value is held to (alpha = 1 − confidence). Default 0.95. */
  confidence?: number;
}

/** The default minimum effect size (5%). */
export const DEFAULT_MIN_EFFECT = 0.05;

/** True when `ratio` lies within ±minEffect of 1, symmetric in log space (1.05× and 1/1.05×). */
export function withinMinEffect(ratio: number, minEffect: number = DEFAULT_MIN_EFFECT): boolean {
  return Math.abs(Math.log(ratio)) <= Math.log(1 + minEffect) + 1e-12;
}

/**
 * Classifies a ratio interval (see {@link Outcome}): `better`/`worse` when the estimate is at least
 * `minEffect` away from 1 and the runs show it (the rank test, if its p-value is given, rejects at
 * 1 − confidence, and the interval excludes 1 or the runs are separated); `no-clear-difference` only
 * when both bounds lie within ±minEffect; otherwise `undecided`.
 *
 * @example classifyRatio({ ratio: 1.04, lo: 0.34, hi: 1.1, confidence: 0.95, n: { candidate: 4, baseline: 4 } }, { higherIsBetter: true }) // 'undecided'
 */
export function classifyRatio(interval: RatioInterval, options: ClassifyOptions): Outcome {
  const minRuns = options.minRuns ?? 2;
  const minEffect = options.minEffect ?? DEFAULT_MIN_EFFECT;
  if (interval.n.candidate < minRuns || interval.n.baseline < minRuns || !Number.isFinite(interval.ratio)) {
    return 'insufficient';
  }
  const large = !withinMinEffect(interval.ratio, minEffect);
  const excludesOne = !(interval.lo <= 1 && interval.hi >= 1);
  const rankAgrees = options.pValue === undefined || options.pValue < 1 - (options.confidence ?? 0.95);
  if (large && rankAgrees && (excludesOne || options.separated === true)) {
    return interval.ratio > 1 === options.higherIsBetter ? 'better' : 'worse';
  }
  if (withinMinEffect(interval.lo, minEffect) && withinMinEffect(interval.hi, minEffect)) {
    return 'no-clear-difference';
  }
  return 'undecided';
}

/**
 * Whether every run of one side beats every run of the other: `above` when every candidate value is
 * larger than every baseline value, `below` when every one is smaller, else undefined. This is the
 * arrangement at which the exact rank test reaches its smallest p (2 / C(2n, n) with n a side).
 */
export function separation(
  candidate: readonly number[],
  baseline: readonly number[],
): 'above' | 'below' | undefined {
  const a = candidate.filter(Number.isFinite);
  const b = baseline.filter(Number.isFinite);
  if (a.length === 0 || b.length === 0) return undefined;
  if (Math.min(...a) > Math.max(...b)) return 'above';
  if (Math.max(...a) < Math.min(...b)) return 'below';
  return undefined;
}

/** What {@link decide} says of two samples. */
interface Decided {
  interval: RatioInterval;
  pValue: number;
  outcome: Outcome;
  /** For an undecided outcome: about how many kept runs a side would decide it, when that can be said. */
  runsNeeded?: number;
}

/** Options of {@link decide}. */
interface DecideOptions {
  higherIsBetter: boolean;
  minEffect?: number;
  confidence?: number;
  /**
   * Some run of either side was too short for its link (src/compare/run-length.ts): the outcome is
   * undecided whatever the numbers, and more runs of that length would not tell (no runsNeeded).
   */
  runsTooShort?: boolean;
}

/**
 * The decision rule applied to two samples and their interval (the one entry every report and study
 * goes through): the rank test, the separation, {@link classifyRatio}, and for an undecided outcome
 * {@link runsNeeded}. Runs too short for their link (`runsTooShort`) decide nothing.
 */
export function decide(
  candidate: readonly number[],
  baseline: readonly number[],
  interval: RatioInterval,
  options: DecideOptions,
): Decided {
  const pValue = mannWhitneyP(candidate, baseline);
  const confidence = options.confidence ?? interval.confidence;
  const outcome = classifyRatio(interval, {
    higherIsBetter: options.higherIsBetter,
    minEffect: options.minEffect ?? DEFAULT_MIN_EFFECT,
    pValue,
    separated: separation(candidate, baseline) !== undefined,
    confidence,
  });
  if (options.runsTooShort && outcome !== 'insufficient') return { interval, pValue, outcome: 'undecided' };
  if (outcome !== 'undecided') return { interval, pValue, outcome };
  const need = runsNeeded(candidate, baseline, { confidence, minEffect: options.minEffect });
  return { interval, pValue, outcome, ...(need === undefined ? {} : { runsNeeded: need }) };
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
interface RunsNeededOptions {
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
 * About how many kept runs per side would decide an undecided comparison, from a spread one outlier
 * cannot inflate, or undefined when no honest number can be given.
 * - Every run of one side already beats every run of the other: the runs the exact rank test needs
 *   to reach its alpha with that arrangement ({@link minRunsForRankTest}).
 * - Otherwise the two-sample normal approximation on log values, n = 2·(z₁₋α/₂ + z_power)²·s²/d²,
 *   divided by the rank test's asymptotic efficiency (3/π), where `s` is the pooled median absolute
 *   deviation of the log values from their side's median (× 1.4826, the normal's scale) — a robust
 *   scale, so one slow run does not turn 4 runs into "about 129" — and `d` is what must be shown:
 *   the observed |log ratio| (at least log(1 + minEffect)) for a difference, or, where the estimate
 *   lies inside ±minEffect, the room left between it and the band's edge for the interval to fit in.
 * Never fewer than the runs given plus one (they did not tell) nor than the rank test's minimum;
 * undefined above `max` (the runs would not be worth making) or when the estimate sits on the band's
 * edge. An estimate: the report calls it "about".
 *
 * @example runsNeeded([30, 31, 29], [10, 10.5, 9.5]) // 4: every run of one side beats the other's
 */
export function runsNeeded(
  candidate: readonly number[],
  baseline: readonly number[],
  options: RunsNeededOptions = {},
): number | undefined {
  const alpha = 1 - (options.confidence ?? 0.95);
  const floor = minRunsForRankTest(alpha);
  const max = options.max ?? 1000;
  const la = candidate.filter((x) => x > 0 && Number.isFinite(x)).map(Math.log);
  const lb = baseline.filter((x) => x > 0 && Number.isFinite(x)).map(Math.log);
  const have = Math.min(la.length, lb.length);
  const least = Math.max(floor, have + 1);
  if (la.length === 0 || lb.length === 0) return floor;
  const band = Math.log(1 + (options.minEffect ?? DEFAULT_MIN_EFFECT));
  const observed = Math.abs(median(la) - median(lb));
  if (observed >= band && separation(la, lb) !== undefined) return least;
  const deviations = [la, lb].flatMap((xs) => {
    const m = median(xs);
    return xs.map((x) => Math.abs(x - m));
  });
  const s = 1.4826 * median(deviations);
  const d = observed >= band ? observed : band - observed;
  if (d <= 1e-9) return undefined;
  const z = normalQuantile(1 - alpha / 2) + normalQuantile(options.power ?? 0.8);
  const n = Math.ceil((2 * z * z * s * s) / (d * d) / (3 / Math.PI));
  if (n > max) return undefined;
  return Math.max(least, n);
}

/**
 * The three kinds of claim a study's sentences make, each decided in one place from the numbers the
 * sentence prints, so the words cannot disagree with the figure beside them:
 *
 *   direction   faster, slower, the same, or undecided: the outcome of compare's decision rule
 *               (`decide` in src/compare/inference.ts: the interval, the rank test and the minimum
 *               effect, over the runs), never the interval alone;
 *   agreement   whether this run's ratio agrees with a report's: the same direction, and within a
 *               tolerance that is smaller than the report's effect (a band that contains 1 cannot
 *               test a claim of +11%);
 *   mechanism   whether a mechanism's prediction accounts for a measured figure: within a stated
 *               tolerance and, for a ratio, on the same side of 1.
 *
 * Ratios are rounded once ({@link ratio2}); the sentence, the table cell and the evidence then carry
 * the same two decimals.
 */
import { bootstrapRatio, DEFAULT_MIN_EFFECT, decide, type Outcome } from '../compare/index.ts';
import { minRunsForRankTest } from '../core/index.ts';

/**
 * A comparison as compare's decision rule left it: the ratio with its interval (and the runs a side
 * behind it), the outcome, and for an undecided one the runs that would tell. compare's `Comparison`
 * and a study's `SampleComparison` are both one.
 */
export interface ClaimDecision {
  interval: { ratio: number; lo: number; hi: number; n?: { candidate: number; baseline: number } };
  outcome: Outcome;
  runsNeeded?: number | undefined;
}

/**
 * Which way a decision went: the ratio `above` or `below` 1 by at least the minimum effect,
 * `same` (the whole interval within ±min-effect: compare's "no clear difference"), or `undecided`
 * (the runs allow a difference without showing one, or are too few).
 */
export type Direction = 'above' | 'below' | 'same' | 'undecided';

/**
 * The direction a decision shows. `better`/`worse` lie on the ratio's side of 1 whatever the metric
 * (compare calls a ratio above 1 better exactly when higher is better).
 *
 * @example direction({ interval: { ratio: 0.36, lo: 0.19, hi: 0.74 }, outcome: 'worse' }) // 'below'
 */
export function direction(d: Pick<ClaimDecision, 'interval' | 'outcome'>): Direction {
  switch (d.outcome) {
    case 'better':
    case 'worse':
      return d.interval.ratio > 1 ? 'above' : 'below';
    case 'no-clear-difference':
      return 'same';
    default:
      return 'undecided';
  }
}

/**
 * compare's decision rule over two lists of run values (`higherIsBetter` as compare reads it): the
 * bootstrap interval of median(candidate) / median(baseline) and {@link decide}'s outcome. Undefined
 * when either side has no finite value.
 *
 * @example decideRuns([100, 102, 99, 101], [50, 51, 49, 52], { higherIsBetter: true }).outcome // 'better'
 */
export function decideRuns(
  candidate: readonly number[],
  baseline: readonly number[],
  o: { higherIsBetter: boolean; seed?: number; minEffect?: number; confidence?: number },
): ClaimDecision | undefined {
  const interval = bootstrapRatio(candidate, baseline, {
    seed: o.seed ?? 1,
    confidence: o.confidence ?? 0.95,
  });
  if (!Number.isFinite(interval.ratio)) return undefined;
  const { outcome, runsNeeded } = decide(candidate, baseline, interval, {
    higherIsBetter: o.higherIsBetter,
    minEffect: o.minEffect ?? DEFAULT_MIN_EFFECT,
  });
  return { interval, outcome, ...(runsNeeded === undefined ? {} : { runsNeeded }) };
}

/** A ratio rounded once to two decimals: the number every sentence and cell of it prints. */
export function ratio2(x: number): number {
  return Math.round(x * 100) / 100;
}

/**
 * What would decide an undecided comparison, no more than the method can say: with fewer kept runs a
 * side than the rank test can ever decide with, that minimum (an estimate from so few runs would be
 * a guess); else compare's `runsNeeded` as "about N"; else that the spread gives no estimate.
 *
 * @example wouldTell({ interval: { ratio: 1.3, lo: 0.9, hi: 1.8, n: { candidate: 2, baseline: 2 } }, outcome: 'undecided', runsNeeded: 22 })
 * // "2 kept runs a side; the rank test decides nothing with fewer than 4"
 */
export function wouldTell(d: ClaimDecision, ev?: Recorder, key = ''): string {
  const n = (k: string, v: number) => (ev ? ev.n(`${key}${k}`, v) : String(v));
  const floor = minRunsForRankTest(0.05);
  const sides = d.interval.n;
  const kept = sides ? Math.min(sides.candidate, sides.baseline) : undefined;
  if (d.outcome === 'insufficient' || (kept !== undefined && kept < 2))
    return `${kept === undefined ? 'too few' : n('KeptRuns', kept)} kept run${kept === 1 ? '' : 's'} a side: no spread to decide from`;
  if (kept !== undefined && kept < floor)
    return `${n('KeptRuns', kept)} kept runs a side; the rank test decides nothing with fewer than ${n('RankTestRuns', floor)}`;
  if (d.runsNeeded !== undefined) return `about ${n('RunsNeeded', d.runsNeeded)} runs a side would tell`;
  return 'the spread gives no estimate of the runs that would tell';
}

/** Records a figure under a name and returns it formatted (a finding's `Evidence`). */
interface Recorder {
  n(key: string, v: number): string;
}

/** Words for each direction; `size` is the ratio (above 1) or its inverse (below 1), one decimal. */
interface DirectionWords {
  above: (size: string) => string;
  below: (size: string) => string;
  /** compare's "no clear difference": the whole interval within ±min-effect. */
  same: string;
  /** Said with {@link wouldTell} after it. */
  undecided: string;
}

/**
 * A decision in words, the size inverted below 1 so it reads "2.8× slower" for 0.36×, then the ratio
 * and its interval; an undecided one says what would tell ({@link wouldTell}).
 *
 * @example directionText({ interval: { ratio: 0.36, lo: 0.19, hi: 0.74 }, outcome: 'worse' }, { above: (s) => `${s} faster`, below: (s) => `${s} slower`, same: 'the same', undecided: 'undecided' })
 * // "2.8× slower (0.36×, interval 0.19–0.74)"
 */
export function directionText(d: ClaimDecision, words: DirectionWords, ev?: Recorder, key = ''): string {
  const i = d.interval;
  const detail = `${i.ratio.toFixed(2)}×, interval ${i.lo.toFixed(2)}–${i.hi.toFixed(2)}`;
  switch (direction(d)) {
    case 'above':
      return `${words.above(`${i.ratio.toFixed(1)}×`)} (${detail})`;
    case 'below':
      return `${words.below(`${(1 / i.ratio).toFixed(1)}×`)} (${detail})`;
    case 'same':
      return `${words.same} (${detail})`;
    case 'undecided':
      return `${words.undecided} (${detail}; ${wouldTell(d, ev, key)})`;
  }
}

/**
 * What a sentence says of a figure that has no runs behind it (a report's one number, a single
 * run): it decides no direction, and says why.
 */
export const NO_RUNS = 'one figure, no runs to decide a difference from';

/**
 * Whether a sentence's direction words match the decision: every `said` direction must be the
 * decision's. Returns the problem in words, or undefined.
 *
 * @example directionProblem('both fixes', 'same', { interval: { ratio: 0.36, lo: 0.19, hi: 0.74 }, outcome: 'worse' })
 * // 'both fixes: the words say same, the runs decided below (0.36×, 0.19–0.74, worse)'
 */
export function directionProblem(what: string, said: Direction, d: ClaimDecision): string | undefined {
  const side = direction(d);
  if (side === said) return undefined;
  const i = d.interval;
  return `${what}: the words say ${said}, the runs decided ${side} (${i.ratio.toFixed(2)}×, ${i.lo.toFixed(2)}–${i.hi.toFixed(2)}, ${d.outcome})`;
}

/** A report's ratio this close to 1 claims no difference. */
const NO_EFFECT = 0.05;

/**
 * The tolerance a report's ratio can be judged with: the stated one, but never more than half the
 * report's effect (|ln reference| / 2), so the band around it never reaches 1 and a run that went the
 * other way cannot agree. A reference within {@link NO_EFFECT} of 1 (a claim of no difference) keeps
 * the stated tolerance.
 *
 * @example toleranceFor(1.112, 0.2) // 0.053: "+11%" cannot be judged with ±20%
 */
export function toleranceFor(reference: number, tolerance: number): number {
  const effect = Math.abs(Math.log(reference));
  if (effect < Math.log(1 + NO_EFFECT)) return tolerance;
  return Math.min(tolerance, Math.expm1(effect / 2));
}

/** Whether a decision is compare's "no clear difference": the whole interval within ±min-effect. */
export function noDifference(d: Pick<ClaimDecision, 'interval' | 'outcome'>): boolean {
  return direction(d) === 'same';
}

/** The outcome of {@link agreement}. */
interface Agreement {
  verdict: 'agrees' | 'differs';
  /** The tolerance used (see {@link toleranceFor}). */
  tolerance: number;
  /** Whether the run went the report's way (undefined: the report claims no difference). */
  sameDirection?: boolean;
}

/**
 * Whether this run's ratio agrees with the report's: the same side of 1 (a report of no difference:
 * this run within the tolerance of 1 too), and within {@link toleranceFor} of it.
 *
 * @example agreement(1.112, 0.95, 0.2) // { verdict: 'differs', tolerance: 0.053, sameDirection: false }
 */
export function agreement(reference: number, value: number, tolerance: number): Agreement {
  const tol = toleranceFor(reference, tolerance);
  const within = Math.abs(value / reference - 1) <= tol;
  if (Math.abs(Math.log(reference)) < Math.log(1 + NO_EFFECT))
    return { verdict: within ? 'agrees' : 'differs', tolerance: tol };
  const sameDirection = value > 1 === reference > 1 && value !== 1;
  return { verdict: sameDirection && within ? 'agrees' : 'differs', tolerance: tol, sameDirection };
}

/**
 * Whether a mechanism's prediction accounts for a measured figure: within `tolerance` (a fraction) of
 * it, and, for ratios (`ratio: true`), on the same side of 1 unless both are within
 * {@link NO_EFFECT} of it.
 *
 * @example accounts(0.66, 0.83, { tolerance: 0.2, ratio: true }) // false: 26% apart
 */
export function accounts(
  predicted: number,
  measured: number,
  o: { tolerance: number; ratio?: boolean },
): boolean {
  if (!Number.isFinite(predicted) || !Number.isFinite(measured) || measured === 0) return false;
  if (Math.abs(predicted / measured - 1) > o.tolerance) return false;
  if (!o.ratio) return true;
  const flat = (x: number) => Math.abs(x - 1) <= NO_EFFECT;
  if (flat(predicted) && flat(measured)) return true;
  return predicted > 1 === measured > 1;
}

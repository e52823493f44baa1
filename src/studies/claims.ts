/**
 * The three kinds of claim a study's sentences make, each decided in one place from the numbers the
 * sentence prints, so the words cannot disagree with the figure beside them:
 *
 *   direction   which side of 1 a ratio's interval lies ("faster", "slower", "no difference the runs
 *               could show"), from the interval and nothing else;
 *   agreement   whether this run's ratio agrees with a report's: the same direction, and within a
 *               tolerance that is smaller than the report's effect (a band that contains 1 cannot
 *               test a claim of +11%);
 *   mechanism   whether a mechanism's prediction accounts for a measured figure: within a stated
 *               tolerance and, for a ratio, on the same side of 1.
 *
 * Ratios are rounded once ({@link ratio2}); the sentence, the table cell and the evidence then carry
 * the same two decimals. compare has its own decision rule for its outcomes; these helpers take an
 * interval or two figures so that rule can stand behind them.
 */

/** A ratio with its interval (a bootstrap interval, or a comparison's). */
interface Interval {
  ratio: number;
  lo: number;
  hi: number;
  /**
   * The side compare's decision rule (`decide`: interval, rank test, minimum effect) chose, where the
   * runs behind the interval are at hand; it then stands in place of the interval's own side.
   */
  decided?: Direction;
}

/** Which side of 1 an interval lies: `above` (lo > 1), `below` (hi < 1), else `either`. */
export type Direction = 'above' | 'below' | 'either';

/**
 * The direction an interval shows: it excludes 1 on one side, or it does not.
 *
 * @example direction({ ratio: 0.36, lo: 0.19, hi: 0.74 }) // 'below'
 */
export function direction(i: Pick<Interval, 'lo' | 'hi' | 'decided'>): Direction {
  if (i.decided) return i.decided;
  if (i.lo > 1) return 'above';
  if (i.hi < 1) return 'below';
  return 'either';
}

/** A ratio rounded once to two decimals: the number every sentence and cell of it prints. */
export function ratio2(x: number): number {
  return Math.round(x * 100) / 100;
}

/** Words for a ratio's direction; `size` is the ratio (above 1) or its inverse (below 1), one decimal. */
interface DirectionWords {
  above: (size: string) => string;
  below: (size: string) => string;
  either: string;
}

/**
 * A ratio's interval in words, the size inverted below 1 so it reads "2.8× slower" for 0.36×; an
 * interval that contains 1 gives `either` with the interval.
 *
 * @example directionText({ ratio: 0.36, lo: 0.19, hi: 0.74 }, { above: (s) => `${s} faster`, below: (s) => `${s} slower`, either: 'no difference the runs could show' })
 * // "2.8× slower (0.36×, interval 0.19–0.74)"
 */
export function directionText(i: Interval, words: DirectionWords): string {
  const detail = `${i.ratio.toFixed(2)}×, interval ${i.lo.toFixed(2)}–${i.hi.toFixed(2)}`;
  switch (direction(i)) {
    case 'above':
      return `${words.above(`${i.ratio.toFixed(1)}×`)} (${detail})`;
    case 'below':
      return `${words.below(`${(1 / i.ratio).toFixed(1)}×`)} (${detail})`;
    case 'either':
      return `${words.either} (${detail})`;
  }
}

/** A report's ratio this close to 1 claims no difference. */
export const NO_EFFECT = 0.05;

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

/**
 * Whether an interval shows no difference worth the name: it contains 1, or lies wholly within
 * {@link NO_EFFECT} of it (0.97–1.00 is a tie, though it excludes 1).
 */
export function noDifference(i: Pick<Interval, 'lo' | 'hi'>): boolean {
  return direction(i) === 'either' || (i.lo >= 1 / (1 + NO_EFFECT) && i.hi <= 1 + NO_EFFECT);
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

/**
 * The open-loop schedule as one sequence of intended send times, and the share of it that one part
 * sends. A run split over shards (src/shard) generates the *whole* run's sequence in every shard, from
 * the same seed, and each keeps the arrivals of its own index: together they send exactly the arrivals
 * a single process would, at the same intended times (after k6's execution segments, which scale a
 * schedule by rational segments; with N equal shares that is every N-th arrival).
 *
 *   global:   a0  a1  a2  a3  a4  a5  a6 …     (k / R, or exponential gaps from the seed)
 *   shard 0:  a0          a3          a6 …     k mod 3 = 0
 *   shard 1:      a1          a4       …     k mod 3 = 1
 */
import type { Rng } from '../core/index.ts';

/**
 * The intended send times of an open-loop run, ms after its origin: even (k · 1000 / rate) or Poisson
 * (exponential gaps with mean 1000 / rate, drawn from `rng`). Unbounded: the caller stops reading.
 * @example const t = arrivalTimes(100, 'even', createRng(1)); t.next().value // 0
 */
export function* arrivalTimes(rateRps: number, kind: 'even' | 'poisson', rng: Rng): Generator<number> {
  const gapMs = 1000 / rateRps;
  const poisson = kind === 'poisson';
  let t = poisson ? rng.exponential(gapMs) : 0;
  for (;;) {
    yield t;
    t += poisson ? rng.exponential(gapMs) : gapMs;
  }
}

/** One arrival of a part's share. */
export interface OwnArrival {
  /** Intended send time, ms after the run's origin. */
  t: number;
  /** Index in the whole run's sequence (0-based). */
  k: number;
  /**
   * How many arrivals of the whole run fell at or after the end of the warm-up before this one: a
   * `requests` limit applies to the whole run's measured arrivals, so every share stops at the same one.
   */
  measuredBefore: number;
}

/**
 * The arrivals k with k mod `count` = `index` of the sequence `times`, in order (count 1: all of them).
 * @example [...take(ownArrivals(arrivalTimes(10, 'even', rng), 1, 2, 0), 2)].map((a) => a.k) // [1, 3]
 */
export function* ownArrivals(
  times: Iterator<number>,
  index: number,
  count: number,
  warmupEndMs: number,
): Generator<OwnArrival> {
  let measured = 0;
  for (let k = 0; ; k++) {
    const t = times.next().value as number;
    if (k % count === index) yield { t, k, measuredBefore: measured };
    if (t >= warmupEndMs) measured++;
  }
}

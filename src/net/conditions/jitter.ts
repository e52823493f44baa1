/**
 * Jitter: a random extra delay, uniform in [0, 2·jitterMs]. The profile builder takes jitterMs off
 * the constant delay stage before it, so the one-way delay is uniform in [D − J, D + J] with mean D,
 * like tc-netem's `delay D J`.
 *
 * Without `reorder` a packet never overtakes the one before it (a real path is mostly one queue): its
 * departure is pushed to at least the previous departure. With `reorder` each packet keeps its own
 * draw, so later packets may leave first; this stage is then the last one in the direction.
 */
import type { Rng } from '../../core/index.ts';
import type { LinkCondition } from './types.ts';

export interface JitterOptions {
  /** Half the spread, ms: the extra delay is uniform in [0, 2·jitterMs]. */
  jitterMs: number;
  /** Let packets overtake each other (default false). */
  reorder?: boolean;
}

export function jitter(opts: JitterOptions, rng: Rng): LinkCondition {
  const spread = 2 * opts.jitterMs;
  const reorder = opts.reorder ?? false;
  let last = Number.NEGATIVE_INFINITY;
  return {
    kind: 'jitter',
    admit(_size, atMs) {
      const t = atMs + rng.next() * spread;
      if (reorder) return t;
      last = Math.max(t, last);
      return last;
    },
  };
}

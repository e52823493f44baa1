/**
 * Jitter: a random extra delay, uniform in [0, 2·jitterMs]. The profile builder takes jitterMs off
 * the constant delay stage before it, so the one-way delay is uniform in [D − J, D + J] with mean D,
 * like tc-netem's `delay D J`.
 *
 * Without `reorder` a packet never overtakes the one before it (a real path is mostly one queue): its
 * departure is pushed to at least the previous departure. With `reorder` each packet keeps its own
 * draw, so later packets may leave first; this stage is then the last one in the direction.
 *
 * Keys: `jitterMs` (`--jitter`, at most rtt/2), `reorder` (`--reorder`). Stage: variation, last.
 */
import type { Rng } from '../../core/index.ts';
import { defineCondition, type LinkCondition, STAGE } from './types.ts';

interface JitterOptions {
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

export const jitterCondition = defineCondition({
  kind: 'jitter',
  stage: STAGE.variation,
  keys: {
    jitterMs: {
      type: 'number',
      min: 0,
      default: 0,
      doc: 'One-way delay varies uniformly by ±jitterMs around rttMs/2 (≤ rttMs/2).',
      flag: 'jitter',
      grammar: 'duration',
      arg: 'duration',
      help: 'one-way delay varies uniformly by ± this (≤ rtt/2)',
      axisTag: (v) => (v === 0 ? undefined : `jitter${v}ms`),
      asksForLink: true,
    },
    reorder: {
      type: 'boolean',
      default: false,
      doc: 'Let jittered packets overtake each other (default false: jitter without reordering).',
      flag: 'reorder',
      grammar: 'bool',
      help: 'let jittered packets overtake each other',
    },
  },
  direction: (own) => ({ jitterMs: own.jitterMs, reorder: own.reorder }),
  check: (own, spec) =>
    own.jitterMs <= (spec.rttMs as number) / 2
      ? undefined
      : {
          message: 'jitterMs must not exceed half of rttMs (a one-way delay cannot be negative)',
          path: 'jitterMs',
        },
  build: (d, rng) => (d.jitterMs > 0 ? jitter({ jitterMs: d.jitterMs, reorder: d.reorder }, rng) : undefined),
});

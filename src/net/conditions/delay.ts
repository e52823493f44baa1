/**
 * Constant one-way propagation delay (half the round-trip time when both directions are equal).
 * Key: `rttMs` (`--rtt`). Stage: propagation, after the bottleneck.
 */
import { defineCondition, type LinkCondition, STAGE } from './types.ts';

/** @param delayMs one-way delay in milliseconds (≥ 0). */
export function delay(delayMs: number): LinkCondition {
  return { kind: 'delay', admit: (_size, atMs) => atMs + delayMs };
}

export const delayCondition = defineCondition({
  kind: 'delay',
  stage: STAGE.propagation,
  keys: {
    rttMs: {
      type: 'number',
      min: 0,
      max: 10_000,
      default: 0,
      doc: 'Round-trip propagation delay, ms; each direction gets half.',
      flag: 'rtt',
      grammar: 'duration',
      arg: 'duration',
      help: 'round-trip delay of the link, e.g. 100ms',
      axisTag: (v) => `rtt${v}ms`,
      asksForLink: true,
    },
  },
  direction: (own) => ({ delayMs: own.rttMs / 2 }),
  // Jitter's spread is taken off the constant delay (jitter.ts), so the mean one-way delay stays D.
  build: (d) => (d.delayMs - d.jitterMs > 0 ? delay(d.delayMs - d.jitterMs) : undefined),
});

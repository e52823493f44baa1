/**
 * Constant one-way propagation delay (half the round-trip time when both directions are equal).
 */
import type { LinkCondition } from './types.ts';

/** @param delayMs one-way delay in milliseconds (≥ 0). */
export function delay(delayMs: number): LinkCondition {
  return { kind: 'delay', admit: (_size, atMs) => atMs + delayMs };
}

/**
 * Independent (i.i.d., Bernoulli) packet loss: each packet is lost with probability `loss`.
 */
import type { Rng } from '../../core/index.ts';
import { DROP, type LinkCondition } from './types.ts';

/** @param loss probability in [0, 1] that a packet is lost. */
export function loss(lossProbability: number, rng: Rng): LinkCondition {
  return {
    kind: 'loss',
    dropReason: 'loss',
    admit: (_size, atMs) => (rng.next() < lossProbability ? DROP : atMs),
  };
}

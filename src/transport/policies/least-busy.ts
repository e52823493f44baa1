import { type Choice, leastBusyOf, type PickContext } from './policy.ts';

/**
 * `least-busy` (h2-pool's default, and `h2`'s with K = 1): K connections opened before the run; each
 * request on the one with the fewest requests in flight.
 */
export function leastBusy(p: PickContext): Choice {
  return p.canOpen ? 'open' : leastBusyOf(p.conns);
}

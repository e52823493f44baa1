import { type Choice, firstIdle, leastBusyOf, type PickContext } from './policy.ts';

/**
 * `first-free` (`h1`'s, and the echo study's "take a free client or create one"): a connection with
 * nothing in flight, else a new one up to K, else the least busy.
 */
export function firstFree(p: PickContext): Choice {
  return firstIdle(p.conns) ?? (p.canOpen ? 'open' : leastBusyOf(p.conns));
}

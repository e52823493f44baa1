/**
 * What a pool policy is: a function from the pool's connections to the one a request goes on. The
 * pool (../pool.ts) keeps the connections and the waiters and asks the policy its name selects
 * (./index.ts) at every request and every time a slot frees; a policy only chooses, it opens and
 * closes nothing. One file per policy, the file name its `--policy` value.
 */
import type { PoolConn } from '../pool-conn.ts';

/** What a policy sees when it chooses. */
export interface PickContext {
  /** The connections that take new requests, in the order they were opened. */
  readonly conns: readonly PoolConn[];
  /** One more connection may be opened now (fewer than K open or opening, no backoff pending). */
  canOpen: boolean;
  /** A position the policy keeps between choices (round-robin's next turn), 0 at the start. */
  cursor: number;
}

/** A connection to send on, `open` (a new connection, which the request rides), or undefined (wait). */
export type Choice = PoolConn | 'open' | undefined;

/** A pool policy: never a connection that is unusable or full ({@link hasRoom}). */
export type Policy = (p: PickContext) => Choice;

/** The connection takes new requests and has a free slot. */
export const hasRoom = (c: PoolConn): boolean => c.usable() && c.inFlight < c.capacity();

/** The connection with room and the fewest requests in flight (the first of equals), if any. */
export function leastBusyOf(conns: readonly PoolConn[]): PoolConn | undefined {
  let best: PoolConn | undefined;
  for (const c of conns) {
    if (hasRoom(c) && (best === undefined || c.inFlight < best.inFlight)) best = c;
  }
  return best;
}

/** The first connection with room and nothing in flight, if any. */
export function firstIdle(conns: readonly PoolConn[]): PoolConn | undefined {
  for (const c of conns) if (c.inFlight === 0 && hasRoom(c)) return c;
  return undefined;
}

/**
 * The pool policies by name: how a pool chooses the connection for a request. The policy changes
 * the result, so its name is part of every result (`--policy`); adding one is a file here, its name in
 * POOL_POLICIES (../presets.ts) and a row below.
 */
import type { PoolPolicy } from '../presets.ts';
import { firstFree } from './first-free.ts';
import { lease } from './lease.ts';
import { leastBusy } from './least-busy.ts';
import type { Policy } from './policy.ts';
import { roundRobin } from './round-robin.ts';

export type { Choice, PickContext, Policy } from './policy.ts';

/** Every policy, by its `--policy` name. */
export const POLICIES: Readonly<Record<PoolPolicy, Policy>> = Object.freeze({
  'least-busy': leastBusy,
  'round-robin': roundRobin,
  'first-free': firstFree,
  lease,
});

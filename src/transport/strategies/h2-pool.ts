/**
 * `h2-pool`: K independent HTTP/2 sessions, each request sent on the session a named policy chooses
 * (least-busy, round-robin, first-free). What it declares is src/transport/descriptors.ts; the pool
 * is src/transport/h2-pool.ts.
 */
import { H2_POOL } from '../descriptors.ts';
import { createH2Pool } from '../h2-pool.ts';
import type { Strategy } from '../strategy.ts';

export const h2Pool: Strategy = {
  ...H2_POOL,
  create: (b) =>
    createH2Pool({
      name: b.name,
      target: b.target,
      authority: b.authority,
      window: b.window,
      client: b.h2Client,
      pool: b.pool,
      sessions: b.connections,
      policy: b.policy,
    }),
};

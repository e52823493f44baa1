/**
 * `h3-pool`: K independent HTTP/3 connections, each request sent on the one a named policy chooses,
 * as `h2-pool` does with HTTP/2 sessions. What it declares is src/transport/descriptors.ts; the
 * connections are src/transport/h3-conn.ts.
 */
import { H3_POOL } from '../descriptors.ts';
import { createH3 } from '../h3-conn.ts';
import type { Strategy } from '../strategy.ts';

export const h3Pool: Strategy = {
  ...H3_POOL,
  create: (b) =>
    createH3({
      name: b.name,
      target: b.target,
      authority: b.authority,
      window: b.window,
      pool: b.pool,
      connections: b.connections,
      policy: b.policy,
    }),
};

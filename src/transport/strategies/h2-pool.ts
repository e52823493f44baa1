/**
 * `h2-pool`: K independent HTTP/2 sessions, each request sent on the session a named policy chooses
 * (least-busy, round-robin, first-free). The pool is src/transport/h2-pool.ts.
 */
import { createH2Pool } from '../h2-pool.ts';
import type { Strategy } from '../strategy.ts';

export const h2Pool: Strategy = {
  name: 'h2-pool',
  http: 'HTTP/2',
  requests: { tls: 'h2', cleartext: 'h2c' },
  http2: true,
  multiplexed: true,
  connections: { unit: 'session', default: 4, policy: true },
  summary: 'pool of HTTP/2 sessions',
  describe: (size) => `up to ${size} HTTP/2 sessions`,
  colour: '#009e73',
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

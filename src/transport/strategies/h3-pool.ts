/**
 * `h3-pool`: K independent HTTP/3 connections, each request sent on the one a named policy chooses,
 * as `h2-pool` does with HTTP/2 sessions (src/transport/h3-conn.ts).
 */
import { BINDING_FACTS } from '../../h3/index.ts';
import { createH3 } from '../h3-conn.ts';
import type { Strategy } from '../strategy.ts';

export const h3Pool: Strategy = {
  name: 'h3-pool',
  http: 'HTTP/3',
  requests: { tls: 'h3', cleartext: 'h3' },
  http2: false,
  multiplexed: true,
  connections: { unit: 'connection', default: 4, policy: true },
  summary: 'pool of HTTP/3 connections (QUIC)',
  describe: (size) => `up to ${size} HTTP/3 connections over QUIC`,
  colour: '#56b4e9',
  quic: BINDING_FACTS,
  optIn: true,
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

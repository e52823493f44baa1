/**
 * `h1`: a pool of N keep-alive HTTP/1.1 connections, one request in flight on each — what browsers
 * (six per host) and most clients do. The connection machinery is src/transport/h1-pool.ts.
 */
import { createH1Pool } from '../h1-pool.ts';
import type { Strategy } from '../strategy.ts';

export const h1: Strategy = {
  name: 'h1',
  http: 'HTTP/1.1',
  // Offer only http/1.1 over TLS: offering h2 too would let the server pick it.
  requests: { tls: 'http/1.1', cleartext: 'http/1.1' },
  http2: false,
  multiplexed: false,
  // Six: the browsers' per-host limit.
  connections: { unit: 'connection', default: 6 },
  summary: 'HTTP/1.1 connection pool',
  describe: (size) =>
    size === 'concurrency'
      ? 'HTTP/1.1, one connection per request in flight'
      : `HTTP/1.1, up to ${size} connections`,
  colour: '#e69f00',
  // What HTTP/2 has to beat: the protocol every server and client already speaks.
  baseline: true,
  create: (b) =>
    createH1Pool({
      name: b.name,
      target: b.target,
      authority: b.authority,
      pool: { ...b.pool, size: b.connections },
    }),
};

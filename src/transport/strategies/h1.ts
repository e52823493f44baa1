/**
 * `h1`: a pool of N keep-alive HTTP/1.1 connections, one request in flight on each — what browsers
 * (six per host) and most clients do. What it declares is src/transport/descriptors.ts; the connection
 * machinery is src/transport/h1-pool.ts.
 */
import { H1 } from '../descriptors.ts';
import { createH1Pool } from '../h1-pool.ts';
import type { Strategy } from '../strategy.ts';

export const h1: Strategy = {
  ...H1,
  create: (b) =>
    createH1Pool({
      name: b.name,
      target: b.target,
      authority: b.authority,
      pool: { ...b.pool, size: b.connections },
    }),
};

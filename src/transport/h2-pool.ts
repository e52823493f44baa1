/**
 * `h2-pool`: K independent HTTP/2 sessions, each request sent on the session a **named policy**
 * chooses (the policy changes the result, so it is part of every result):
 *
 * - `least-busy` (default): K sessions opened at the start; the one with the fewest streams in flight.
 * - `round-robin`: K sessions opened at the start; each in turn (skipping full ones).
 * - `first-free`: a session with no stream in flight, else open a new one up to K, else the least busy
 *   — the "take a free client or create one" pool of the echo study.
 * - `lease`: K sessions opened at the start, each carrying one stream at a time (a request waits for
 *   an idle session) — a client library's pool that leases an HTTP/2 connection per exchange.
 */

import type { H2Options } from './h2-connect.ts';
import { openH2Conn } from './h2-session.ts';
import { PoolTransport } from './pool.ts';
import type { PoolPolicy } from './presets.ts';

/** Options of the `h2-pool` transport. */
interface H2PoolOptions extends H2Options {
  /** K: sessions. */
  sessions: number;
  policy: PoolPolicy;
}

/** Creates the `h2-pool` transport. */
export function createH2Pool(opts: H2PoolOptions): PoolTransport {
  return new PoolTransport(
    {
      ...opts.pool,
      name: opts.name,
      requested: opts.target.tls ? 'h2' : 'h2c',
      policy: opts.policy,
      size: opts.sessions,
      openAtStart: opts.policy === 'first-free' ? 1 : opts.sessions,
    },
    (id, onClose, beforeRun) => openH2Conn(id, opts, onClose, beforeRun),
  );
}

/**
 * `h2`: one HTTP/2 session; concurrency becomes streams on it, capped by the server's
 * SETTINGS_MAX_CONCURRENT_STREAMS (RFC 9113 §5.1.2). Requests beyond the cap wait in the client and
 * the wait is counted (`capHits`). After a GOAWAY (RFC 9113 §6.8) the session takes no new streams and
 * a new one is opened, as browsers do.
 *
 * A session is h2lab's own HTTP/2 client (`h2-wire-conn.ts`, the default) or node:http2
 * (`h2-node-conn.ts`), chosen by {@link H2Options.client}; `h2-pool` is a pool of the same sessions.
 */
import type { H2Options } from './h2-connect.ts';
import { openNodeH2Conn } from './h2-node-conn.ts';
import { openWireH2Conn } from './h2-wire-conn.ts';
import { PoolTransport } from './pool.ts';
import type { PoolConn } from './pool-conn.ts';

/** Creates the `h2` transport: one session, reopened after GOAWAY or close. */
export function createH2Session(opts: H2Options): PoolTransport {
  return new PoolTransport(
    {
      ...opts.pool,
      name: opts.name,
      requested: opts.target.tls ? 'h2' : 'h2c',
      policy: 'least-busy',
      size: 1,
      openAtStart: 1,
    },
    (id, onClose, beforeRun) => openH2Conn(id, opts, onClose, beforeRun),
  );
}

/** Opens one HTTP/2 session with the implementation the options name. */
export function openH2Conn(
  id: number,
  opts: H2Options,
  onClose: (c: PoolConn) => void,
  beforeRun = true,
): Promise<PoolConn> {
  return opts.client === 'node'
    ? openNodeH2Conn(id, opts, onClose)
    : openWireH2Conn(id, opts, onClose, beforeRun);
}

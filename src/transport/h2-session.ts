/**
 * `h2`: one HTTP/2 session; concurrency becomes streams on it, capped by the server's
 * SETTINGS_MAX_CONCURRENT_STREAMS (RFC 9113 §5.1.2). Requests beyond the cap wait in the client and
 * the wait is counted (`capHits`). After a GOAWAY (RFC 9113 §6.8) the session takes no new streams and
 * a new one is opened, as browsers do.
 *
 * A session is h2lab's own HTTP/2 client (`h2-wire.ts`, the default) or node:http2 (`h2-node.ts`),
 * chosen by {@link H2Options.client}; `h2-pool` is a pool of the same sessions.
 */
import { H2labError } from '../errors.ts';
import { type Connected, type ConnectTarget, connectTimed } from './connect.ts';
import { openNodeH2Conn } from './h2-node.ts';
import { openWireH2Conn } from './h2-wire.ts';
import { type PoolConn, type PoolSettings, PoolTransport } from './pool.ts';
import type { WireProtocol } from './types.ts';

/** The flow-control windows this client advertises (RFC 9113 §6.9.2). */
export interface WindowSizes {
  /** SETTINGS_INITIAL_WINDOW_SIZE: each stream's receive window, bytes. */
  streamWindowBytes: number;
  /** The connection's receive window (raised with WINDOW_UPDATE on stream 0), bytes. */
  connectionWindowBytes: number;
}

/** Which HTTP/2 client implementation carries the sessions. */
export type H2ClientImpl = 'h2lab' | 'node';

/** Options of an HTTP/2 session transport. */
export interface H2Options {
  target: ConnectTarget;
  /** `host:port` for `:authority`. */
  authority: string;
  window: WindowSizes;
  /** Default `h2lab` (h2lab's own client); `node` uses node:http2. */
  client?: H2ClientImpl;
  pool: Omit<PoolSettings, 'name' | 'requested' | 'policy' | 'openAtStart' | 'size'>;
}

/** Creates the `h2` transport: one session, reopened after GOAWAY or close. */
export function createH2Session(opts: H2Options): PoolTransport {
  return new PoolTransport(
    {
      ...opts.pool,
      name: 'h2',
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

/**
 * Connects for HTTP/2: TCP, then for https a TLS handshake offering h2 and http/1.1 (so a server
 * without h2 says so instead of failing the handshake). Rejects with H2LAB_ERR_PROTOCOL_MISMATCH when
 * ALPN chose anything but h2.
 */
export async function connectH2(opts: H2Options): Promise<Connected> {
  const t = opts.target;
  const c = await connectTimed(t, t.tls ? ['h2', 'http/1.1'] : [], opts.pool.now);
  if (t.tls && c.alpn !== 'h2') {
    c.socket.destroy();
    throw protocolMismatch(
      'h2',
      c.alpn === false ? 'http/1.1 (no ALPN protocol selected)' : String(c.alpn),
      opts.authority,
    );
  }
  return c;
}

/** The largest window (RFC 9113 §6.9.1) and the initial one (§6.9.2), bytes. */
export { DEFAULT_WINDOW_BYTES as DEFAULT_WINDOW, MAX_WINDOW_BYTES as MAX_WINDOW } from '../h2/frames.ts';

/** H2LAB_ERR_PROTOCOL_MISMATCH for a server that would not speak HTTP/2. */
export function protocolMismatch(requested: WireProtocol, negotiated: string, authority: string): H2labError {
  return new H2labError(
    'H2LAB_ERR_PROTOCOL_MISMATCH',
    `requested ${requested} but the server negotiated ${negotiated} at ${authority}: use --protocol h1 to measure HTTP/1.1, or enable HTTP/2 on the server`,
    { requested, negotiated: negotiated.split(' ')[0], target: authority },
  );
}

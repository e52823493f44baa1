/**
 * What every HTTP/2 session needs whichever client carries it (h2lab's own in `h2-wire-conn.ts`, or
 * node:http2 in `h2-node-conn.ts`): its options, the connect step with ALPN, the protocol assertion.
 */
import { H2labError } from '../core/index.ts';
import type { WireProtocol } from '../model/index.ts';
import { type Connected, type ConnectTarget, connectTimed, type ReadSink } from './connect.ts';
import type { PoolSettings } from './pool-conn.ts';
import type { H2ClientImpl } from './presets.ts';

/** The flow-control windows this client advertises (RFC 9113 §6.9.2). */
export interface WindowSizes {
  /** SETTINGS_INITIAL_WINDOW_SIZE: each stream's receive window, bytes. */
  streamWindowBytes: number;
  /** The connection's receive window (raised with WINDOW_UPDATE on stream 0), bytes. */
  connectionWindowBytes: number;
}

/** Options of an HTTP/2 session transport. */
export interface H2Options {
  /** The strategy's registry key, reported as the transport's name. */
  name: string;
  target: ConnectTarget;
  /** `host:port` for `:authority`. */
  authority: string;
  window: WindowSizes;
  /** Default `h2lab` (h2lab's own client); `node` uses node:http2. */
  client?: H2ClientImpl;
  pool: Omit<PoolSettings, 'name' | 'requested' | 'policy' | 'openAtStart' | 'size'>;
}

/**
 * Connects for HTTP/2: TCP, then for https a TLS handshake offering h2 and http/1.1 (so a server
 * without h2 says so instead of failing the handshake). Rejects with H2LAB_ERR_PROTOCOL_MISMATCH when
 * ALPN chose anything but h2. With `sink`, a cleartext socket reads into the shared buffer
 * (connect.ts) and its bytes go to the sink's reader: only for a client that reads through it.
 */
export async function connectH2(opts: H2Options, sink?: ReadSink): Promise<Connected> {
  const t = opts.target;
  const c = await connectTimed(t, t.tls ? ['h2', 'http/1.1'] : [], opts.pool.now, sink);
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
export { DEFAULT_WINDOW_BYTES as DEFAULT_WINDOW, MAX_WINDOW_BYTES as MAX_WINDOW } from '../h2/index.ts';

/** H2LAB_ERR_PROTOCOL_MISMATCH for a server that would not speak HTTP/2. */
export function protocolMismatch(requested: WireProtocol, negotiated: string, authority: string): H2labError {
  return new H2labError(
    'H2LAB_ERR_PROTOCOL_MISMATCH',
    `requested ${requested} but the server negotiated ${negotiated} at ${authority}: use --protocol h1 to measure HTTP/1.1, or enable HTTP/2 on the server`,
    { requested, negotiated: negotiated.split(' ')[0], target: authority },
  );
}

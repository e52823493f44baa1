/**
 * The transports' public face: the strategy registry (`registry.ts`; one file per strategy in
 * `strategies/`), `createTransport(name, opts)` that builds a registered strategy behind one
 * {@link Transport} interface, and the flow-control window presets every result records.
 */
import { isIP } from 'node:net';
import { invalidOption } from '../core/index.ts';
import type { StrategyName, WindowInfo } from '../model/index.ts';
import { TcpLog } from '../net/index.ts';
import { type ConnectTarget, secureContextFor } from './connect.ts';
import { DEFAULT_WINDOW, MAX_WINDOW } from './h2-connect.ts';
import type { PoolPolicy } from './presets.ts';
import { DEFAULT_WINDOW_PRESET, type H2ClientImpl, type WindowPreset } from './presets.ts';
import { getStrategy, provideBuiltIns } from './registry.ts';
import { h1 } from './strategies/h1.ts';
import { h2 } from './strategies/h2.ts';
import { h2Pool } from './strategies/h2-pool.ts';
import { h3 } from './strategies/h3.ts';
import { h3Pool } from './strategies/h3-pool.ts';
import type { Transport } from './types.ts';

export { MAX_GOAWAY_RETRIES, MAX_RETRIES } from './attempt.ts';
// The light face's names (the registry, the descriptors' types, the named choices), loaded with it.
export {
  baselineStrategy,
  DEFAULT_STRATEGY,
  DEFAULT_WINDOW_PRESET,
  findStrategy,
  getStrategy,
  H2_CLIENTS,
  type H2ClientImpl,
  isBuiltInStrategy,
  listStrategies,
  multiplexedStrategy,
  POOL_POLICIES,
  type PoolPolicy,
  registerStrategy,
  requestedWire,
  type Strategy,
  type StrategyBuild,
  strategyLabel,
  strategyNames,
  usesQuic,
  WINDOW_PRESETS,
} from './meta.ts';
export { setupFailureError } from './setup-errors.ts';
export { type StreamWaitCause, streamWaitCause, streamWaitWords } from './stream-wait.ts';
export { isTargetGone, RECONNECT_BACKOFF } from './supervisor.ts';

export { LIFETIMES_KEPT, OUTAGES_KEPT } from './types.ts';

/**
 * The windows behind each preset, bytes (stream, connection):
 * - `node`: what node:http2 advertises by default — the RFC 9113 §6.9.2 initial 65,535 for both.
 * - `browser`: what Chromium advertises — 6 MiB per stream (SETTINGS_INITIAL_WINDOW_SIZE) and 15 MiB
 *   for the connection (kSpdyStreamMaxRecvWindowSize / kSpdySessionMaxRecvWindowSize in
 *   net/http/http_network_session.cc).
 * - `max`: 2^31-1 for both, the RFC 9113 §6.9.1 ceiling — flow control effectively off, like h2load
 *   (2^30-1 by default) and oha.
 */
const WINDOW_SIZES: Record<Exclude<WindowPreset, 'custom'>, { stream: number; connection: number }> = {
  node: { stream: DEFAULT_WINDOW, connection: DEFAULT_WINDOW },
  browser: { stream: 6 * 1024 * 1024, connection: 15 * 1024 * 1024 },
  max: { stream: MAX_WINDOW, connection: MAX_WINDOW },
};

/**
 * Resolves a preset and optional explicit sizes into the windows to advertise. Explicit sizes
 * override the preset's and make it `custom`.
 */
export function resolveWindow(
  preset: WindowPreset,
  streamBytes?: number,
  connectionBytes?: number,
): WindowInfo {
  const base = WINDOW_SIZES[preset === 'custom' ? DEFAULT_WINDOW_PRESET : preset];
  const custom = preset === 'custom' || streamBytes !== undefined || connectionBytes !== undefined;
  const stream = streamBytes ?? base.stream;
  const connection = connectionBytes ?? Math.max(base.connection, stream);
  for (const [opt, v] of [
    ['--stream-window', stream],
    ['--connection-window', connection],
  ] as const) {
    if (!Number.isInteger(v) || v < 1 || v > MAX_WINDOW) {
      throw invalidOption(opt, v, `use a size from 1 byte to ${MAX_WINDOW} bytes (2^31-1, RFC 9113 §6.9.1)`);
    }
  }
  return { preset: custom ? 'custom' : preset, streamWindowBytes: stream, connectionWindowBytes: connection };
}

/** What every transport needs. */
export interface TransportOptions {
  /** The target's origin: `http://host:port` (h2 = h2c prior knowledge) or `https://host:port` (ALPN). */
  url: string | URL;
  /** Connections (h1) or sessions (h2-pool); ignored by a strategy with a fixed count (h2: one session). */
  connections: number;
  /** h2-pool: how a session is chosen. Default `least-busy`. */
  policy?: PoolPolicy;
  /** HTTP/2 client implementation; default `h2lab` (h2lab's own; `node` = node:http2). */
  h2Client?: H2ClientImpl;
  /** HTTP/2 windows; default the {@link DEFAULT_WINDOW_PRESET} preset. */
  window?: WindowInfo;
  /** TLS material (PEM text) and verification. */
  tls?: {
    ca?: string;
    cert?: string;
    key?: string;
    insecure?: boolean;
    servername?: string;
    /** Append every TLS connection's secrets to this NSS key log (`SSLKEYLOGFILE` format). */
    keyLogFile?: string;
  };
  /** h2lab's HTTP/2 client logs every frame in and out to this file, one JSON line each. */
  framesFile?: string;
  /** The HTTP/3 client writes one qlog file per QUIC connection into this directory. */
  qlogDir?: string;
  /**
   * Dial this address instead of the URL's host; the URL still gives the port, the authority, SNI and
   * the name the certificate must carry (curl's `--connect-to`). How a run reaches a server through
   * an emulated link's gateway (src/net/gateway.ts).
   */
  connectTo?: string;
  /** Per-request timeout, ms. Default 30,000. */
  timeoutMs?: number;
  /** Connection attempt timeout (TCP + TLS + first SETTINGS), ms. Default 10,000. */
  connectTimeoutMs?: number;
  /** Close pooled connections idle this long, ms; 0 = never (default). */
  idleTimeoutMs?: number;
  /** Retire pooled connections this old, ms; 0 = never (default). */
  maxAgeMs?: number;
  /** Take the target for gone after every connection attempt failed this long, ms. Default 5,000. */
  reconnectGiveUpMs?: number;
  /** The run's clock, ms. Default `performance.now()`. */
  now?: () => number;
  /**
   * Open no connection in `open()`: each is opened by the request that needs it (h1 up to
   * `connections`, h2 one session), so setup falls inside the caller's timed period. Default false.
   * `open()` then asserts nothing; a protocol mismatch surfaces as a failed request.
   */
  connectOnDemand?: boolean;
}

/**
 * Builds a transport by registry key. Throws H2LAB_ERR_INVALID_OPTION for a name not registered.
 * @example
 * const t = createTransport('h2', { url: 'https://127.0.0.1:8443', connections: 1, tls: { insecure: true } });
 * await t.open();
 * const sample = await t.request({ method: 'GET', path: '/bytes/1024' }, { seq: 0, intendedMs: 0, queuedMs: 0 });
 * await t.close();
 */
export function createTransport(name: StrategyName, opts: TransportOptions): Transport {
  const strategy = getStrategy(name);
  const url = typeof opts.url === 'string' ? new URL(opts.url) : opts.url;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalidOption('URL', url.href, 'use an http:// or https:// URL');
  }
  const isTls = url.protocol === 'https:';
  const port = Number(url.port) || (isTls ? 443 : 80);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const tcp = new TcpLog('client');
  const dialled = opts.connectTo?.replace(/^\[(.*)\]$/, '$1');
  // Through a gateway the URL's host still names the server: SNI (never an IP, RFC 6066 §3) and the
  // certificate's name come from it, not from the address dialled.
  const named = dialled !== undefined && dialled !== host;
  const target: ConnectTarget = {
    host: dialled ?? host,
    port,
    ...(named && !opts.tls?.servername && !isIP(host) ? { servername: host } : {}),
    ...(named ? { verifyHost: host } : {}),
    tls: isTls,
    connectTimeoutMs: opts.connectTimeoutMs ?? 10_000,
    tcp,
    ...(opts.tls?.servername ? { servername: opts.tls.servername } : {}),
    ...(opts.tls?.ca ? { ca: opts.tls.ca } : {}),
    ...(opts.tls?.cert ? { cert: opts.tls.cert, key: opts.tls.key } : {}),
    ...(opts.tls?.insecure ? { insecure: true } : {}),
    ...(opts.tls?.keyLogFile ? { keyLogFile: opts.tls.keyLogFile } : {}),
    ...(opts.framesFile ? { framesFile: opts.framesFile } : {}),
    ...(opts.qlogDir ? { qlogDir: opts.qlogDir } : {}),
  };
  // The TLS context (trust roots, client certificate) is built now, not inside a timed handshake.
  if (isTls) secureContextFor(target);
  const authority = url.host;
  const pool = {
    timeoutMs: opts.timeoutMs ?? 30_000,
    idleTimeoutMs: opts.idleTimeoutMs ?? 0,
    maxAgeMs: opts.maxAgeMs ?? 0,
    ...(opts.reconnectGiveUpMs !== undefined ? { giveUpMs: opts.reconnectGiveUpMs } : {}),
    now: opts.now ?? (() => performance.now()),
    ...(opts.connectOnDemand ? { onDemand: true } : {}),
    tcp,
  };
  const window = opts.window ?? resolveWindow(DEFAULT_WINDOW_PRESET);
  return strategy.create({
    name: strategy.name,
    target,
    authority,
    pool,
    connections: strategy.connections.fixed ?? opts.connections,
    policy: opts.policy ?? 'least-busy',
    window: {
      streamWindowBytes: window.streamWindowBytes,
      connectionWindowBytes: window.connectionWindowBytes,
    },
    h2Client: opts.h2Client ?? 'h2lab',
  });
}
export type { Transport, TransportStats } from './types.ts';

// The built-ins' implementations, handed to the registry as the transports load: the registry itself
// loads only their descriptors (src/transport/meta.ts, for the flags' help).
provideBuiltIns([h1, h2, h2Pool, h3, h3Pool]);

/**
 * The HTTP/3 binding behind one thin interface. No Node release ships a usable `node:quic` (it is
 * compiled out of release builds; Node 20 rejects `--experimental-quic`), so HTTP/3 comes from the
 * optional dependency `@currentspace/http3` (Rust: quiche + BoringSSL, a prebuilt N-API module inside
 * the package), pinned to one version and loaded here only, by a dynamic import, the first time
 * something asks for HTTP/3. Everything else in h2lab sees {@link H3Binding}: when a Node release
 * has `process.features.quic`, an implementation of this interface over `node:quic` replaces
 * {@link loadBinding}'s import and nothing else changes (docs/performance.md,
 * "HTTP/3 (src/h3, strategies h3 and h3-pool, the fixture's QUIC listener)").
 *
 * What the binding does not do, and how this file copes (each checked on this machine):
 * - its `request()` and `requestAsync()` both throw `StreamLimit` once the peer's
 *   `initial_max_streams_bidi` (RFC 9000 §18.2) is used up — the awaiting variant waits only for flow
 *   control — so {@link H3Connection.request} returns `'stream-limit'` and the caller waits for a
 *   stream to end;
 * - its server always binds an HTTP/2 fallback on the same TCP port as the UDP one, which would
 *   collide with the fixture's own TLS listener (HTTP/3 is advertised on the TLS port, RFC 9114
 *   §3.1.1): the fallback is replaced by an inert stand-in (`noFallback`);
 * - its metrics (per connection, on either end: packets and bytes sent and received, smoothed RTT,
 *   congestion window, handshake time) have no packets lost or retransmitted and no bytes in flight:
 *   those come from the connection's qlog where one is written (src/h3/qlog.ts);
 * - it has neither a setter nor a getter for quiche's congestion controller (`set_cc_algorithm_name`,
 *   `cc_algorithm`): what runs is quiche's default, CUBIC, recorded with its source as
 *   {@link H3Binding.congestionControlSource}; the binding raises quiche's initial window to 1000
 *   packets, which the qlog shows (`initialCwndBytes`);
 * - its `keylog` option turns on quiche's key logging but gives the connection no writer
 *   (`Connection::set_keylog`), so no key is ever written, on either end: the native runtime left
 *   the key log file empty and emitted no `keylog` event; its wasm client runtime emits
 *   CLIENT_HANDSHAKE_TRAFFIC_SECRET alone, not the traffic secrets that decrypt a request. h2lab
 *   passes none.
 */
import { EventEmitter } from 'node:events';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { H2labError } from '../core/index.ts';
import type { QuicConnectionInfo } from '../model/index.ts';

/** The npm package and the exact version package.json pins (`h3Binding`, installed by scripts/install-h3.mjs). */
export const H3_PACKAGE = '@currentspace/http3';
const H3_PACKAGE_VERSION = '0.9.0';

/**
 * The script that installs the binding (the package's postinstall), by its absolute path: it ships
 * in the package as in a clone, two folders above this module in `src/` and in `dist/` alike, so a
 * user of an installed h2lab can run it as it is named.
 */
const H3_INSTALL_SCRIPT = fileURLToPath(new URL('../../scripts/install-h3.mjs', import.meta.url));

/**
 * Environment variable naming the module to load instead of {@link H3_PACKAGE}: a way to run with a
 * patched build, and the tests' way to make loading really fail (a module that does not exist) so
 * the not-offered path is exercised without a mock.
 */
export const H3_BINDING_ENV = 'H2LAB_H3_BINDING';

/** How to open one client connection. */
interface H3ConnectOptions {
  host: string;
  /** UDP port. */
  port: number;
  /** SNI and certificate name (default `host`; omitted for IP literals). */
  servername?: string;
  /** Extra trusted CA (PEM). */
  ca?: string;
  insecure?: boolean;
  /** Give up on the handshake after this long, ms. */
  timeoutMs: number;
  /** Per-stream receive window, bytes (QUIC initial_max_stream_data_bidi_local). */
  streamWindowBytes?: number;
  /** Connection receive window, bytes (QUIC initial_max_data). */
  connectionWindowBytes?: number;
  /** The binding writes the connection's qlog (JSON-SEQ) into this directory, one file each. */
  qlogDir?: string;
}

/** Callbacks of one request's response. Exactly one of `end` or `error` is called last. */
interface H3ResponseHandler {
  headers(status: number): void;
  data(bytes: number): void;
  end(): void;
  error(err: Error): void;
}

/** One client QUIC connection carrying HTTP/3. */
export interface H3Connection {
  /** ALPN the handshake chose. */
  readonly alpn: string;
  /**
   * Opens a request stream: `headers` are the pseudo-headers and fields, `body` the whole request
   * body. `'stream-limit'`: the peer allows no more streams now (retry when one ends).
   */
  request(
    headers: Record<string, string>,
    body: Uint8Array | undefined,
    h: H3ResponseHandler,
  ): { cancel(): void } | 'stream-limit';
  facts(): QuicConnectionInfo | undefined;
  /** The client's UDP port (what the server and the link see), when the binding tells it. */
  readonly localPort: number | undefined;
  /** `cb` runs once when the connection is closed, by either side. */
  onClose(cb: (reason: string) => void): void;
  close(): Promise<void>;
}

/** One request on the server side. */
export interface H3ServerStream {
  readonly headers: Record<string, string | string[]>;
  /** The request body (readable) and the response body (writable). */
  readonly duplex: Duplex;
  respond(headers: Record<string, string>, endStream: boolean): void;
  respondWithBody(headers: Record<string, string>, body: Buffer | string): void;
  /** Resets the stream with an HTTP/3 error code (RFC 9114 §8.1). */
  reset(code: number): void;
  /** Closes the whole QUIC connection this stream is on. */
  closeConnection(code: number): void;
}

/** One QUIC connection a listener accepted, as its server sees it. */
export interface H3ServerConnection {
  readonly remoteAddress: string;
  readonly remotePort: number;
  /**
   * The server's reading of the connection — the sender's of a download: its congestion window,
   * smoothed RTT, packets and bytes it sent — taken now while open, else the last one taken (each
   * stream's end takes one).
   */
  facts(): QuicConnectionInfo | undefined;
  /** The file the binding writes this connection's qlog to, when the listener was given a `qlogDir`. */
  readonly qlogPath: string | undefined;
}

/** A listening HTTP/3 server. */
export interface H3Listener {
  /** The UDP port. */
  readonly port: number;
  /** Connections whose handshake completed and that are still open. */
  openConnections(): number;
  close(): Promise<void>;
}

/** How to listen. */
interface H3ListenOptions {
  host: string;
  /** UDP port (0 = a free one). */
  port: number;
  certPem: string;
  keyPem: string;
  /** initial_max_streams_bidi granted to each client. */
  maxStreams: number;
  /** Idle timeout, ms. */
  idleTimeoutMs: number;
  onConnection(c: H3ServerConnection): void;
  onConnectionClose(c: H3ServerConnection): void;
  /**
   * Address validation by a Retry packet before every handshake (RFC 9000 §8.1.2): one more round
   * trip per connection. Default false — what deployed servers do outside an attack — where the
   * binding's own default is true (measured through a 100 ms link: QUIC setup 205 ms with it, like
   * TCP + TLS; 105 ms without).
   */
  retry?: boolean;
  /**
   * The binding writes each connection's qlog (JSON-SEQ, the server's vantage point) into this
   * directory, one file each, named `server-<connection id>.qlog`.
   */
  qlogDir?: string;
}

/** The HTTP/3 implementation h2lab uses. */
interface H3Binding {
  /** What it is, for results: package and version, or `node:quic`. */
  readonly id: string;
  /**
   * The QUIC congestion controller it runs, lower case (`cubic`). QUIC's congestion control is in
   * user space: the kernel's `--cc` pins TCP only.
   */
  readonly congestionControl: string;
  /** How {@link congestionControl} is known: read from the stack, or whose documented default it is. */
  readonly congestionControlSource: string;
  /** Opens a connection and completes the handshake; rejects with an Error naming why. */
  connect(o: H3ConnectOptions): Promise<H3Connection>;
  listen(o: H3ListenOptions, onStream: (s: H3ServerStream) => void): Promise<H3Listener>;
}

/**
 * What a result records about the binding before it is loaded: its id and the congestion controller
 * it runs. The binding can neither set nor read the controller, so the name is its documented
 * default and the source says so.
 */
export const BINDING_FACTS = Object.freeze({
  binding: `${H3_PACKAGE}@${H3_PACKAGE_VERSION}`,
  congestionControl: 'cubic',
  congestionControlSource:
    'not readable from the binding (no setter or getter): the binding\'s documented default, quiche 0.29\'s Config default, which the binding keeps ("Keep CUBIC (default)", its docs), starting it at 1000 packets',
});

let loading: Promise<H3Binding> | undefined;
let failure: string | undefined;

/**
 * The binding, loaded on first call (a dynamic import). Rejects with H2LAB_ERR_H3_UNAVAILABLE whose
 * `details.reason` is the loader's own words; the reason is kept, so every later call fails the same
 * way at once ({@link h3UnavailableReason}).
 */
export function loadBinding(): Promise<H3Binding> {
  loading ??= importBinding().catch((err: unknown) => {
    failure = err instanceof Error ? err.message.split('\n')[0]! : String(err);
    throw unavailable(failure);
  });
  return loading;
}

/** The H2LAB_ERR_H3_UNAVAILABLE error for a load that failed with `reason`. */
export function unavailable(reason: string): H2labError {
  const spec = process.env[H3_BINDING_ENV];
  return new H2labError(
    'H2LAB_ERR_H3_UNAVAILABLE',
    `HTTP/3 is not available: ${spec ? `${H3_BINDING_ENV}=${spec}` : `${H3_PACKAGE}@${H3_PACKAGE_VERSION}`} did not load (${reason}); install it with \`node ${H3_INSTALL_SCRIPT}\` (what npm's install of h2lab runs)${spec ? ` or unset ${H3_BINDING_ENV}` : ''}, or leave h3 out of --protocols`,
    { reason, module: spec ?? H3_PACKAGE },
  );
}

// The subset of @currentspace/http3's API this file uses (its own types are not imported: the
// package is optional, and a type-check must pass without it).
interface CsMetrics {
  packetsIn: number;
  packetsOut: number;
  bytesIn: number;
  bytesOut: number;
  handshakeTimeMs: number;
  rttMs: number;
  cwnd: number;
  /** The native layer's only (its JS `getMetrics` drops it): the path MTU quiche sends at. */
  pmtu?: number;
}
/**
 * One reading of the binding's metrics as h2lab records it; the path MTU of the `previous` reading
 * stands when the native layer is gone (a connection read as it closes).
 */
function factsOf(x: CsMetrics, previous?: QuicConnectionInfo): QuicConnectionInfo {
  const pmtu = x.pmtu || previous?.pmtuBytes;
  return {
    handshakeMs: x.handshakeTimeMs,
    rttMs: x.rttMs,
    cwndBytes: x.cwnd,
    packetsSent: x.packetsOut,
    packetsReceived: x.packetsIn,
    bytesSent: x.bytesOut,
    bytesReceived: x.bytesIn,
    ...(pmtu ? { pmtuBytes: pmtu } : {}),
  };
}

/**
 * The native layer's reading, which has the path MTU the JS layer leaves out; the JS layer's when
 * the native one cannot be reached (the pinned version's `_eventLoop` and `_connHandle`).
 */
function nativeMetrics(s: {
  getMetrics(): CsMetrics | null;
  _eventLoop?: { getSessionMetrics?(handle?: number): CsMetrics } | null;
  _connHandle?: number;
}): CsMetrics | null {
  const js = s.getMetrics();
  try {
    const pmtu = s._eventLoop?.getSessionMetrics?.(s._connHandle)?.pmtu;
    return js && pmtu ? { ...js, pmtu } : js;
  } catch {
    return js;
  }
}
interface CsSession extends EventEmitter {
  remoteAddress?: string;
  remotePort?: number;
  getMetrics(): CsMetrics | null;
  _eventLoop?: { getSessionMetrics?(handle?: number): CsMetrics } | null;
  _connHandle?: number;
  /** The server session's qlog file (the native layer's `getQlogPath`), null without a qlogDir. */
  exportQlog?(): string | null;
}
interface CsStream extends Duplex {
  respond(h: Record<string, string>, o?: { endStream?: boolean }): void;
  respondWithBody(h: Record<string, string>, body: Buffer | string): void;
  close(code?: number): void;
  session?: CsSession & { close(code?: number): Promise<void> };
  /** The pinned version's server streams carry their connection's handle, not the session. */
  _connHandle?: number;
}
interface CsClientSession extends EventEmitter {
  alpnProtocol: string;
  request(h: Record<string, string>, o?: { endStream?: boolean }): CsStream;
  getMetrics(): CsMetrics | null;
  close(): Promise<void>;
  destroy(): Promise<void>;
  /** The pinned version's event loop; its worker knows the local UDP address. */
  _eventLoop?: {
    worker?: { localAddress?(): { port: number } };
    getSessionMetrics?(handle?: number): CsMetrics;
  } | null;
}
interface CsServer extends EventEmitter {
  /** The pinned version's sessions by connection handle. */
  _sessions?: Map<number, CsSession & { close(code?: number): Promise<void> }>;
  listen(port: number, host: string): unknown;
  address(): { port: number } | null;
  close(): Promise<void>;
}
interface CsModule {
  connectAsync(authority: string, o: Record<string, unknown>): Promise<CsClientSession>;
  createSecureServer(
    o: Record<string, unknown>,
    onStream: (s: CsStream, h: Record<string, string>) => void,
  ): CsServer;
}

async function importBinding(): Promise<H3Binding> {
  const spec = process.env[H3_BINDING_ENV] || H3_PACKAGE;
  const mod = (await import(spec)) as CsModule & { default?: CsModule };
  const m: CsModule = typeof mod.connectAsync === 'function' ? mod : mod.default!;
  if (typeof m?.connectAsync !== 'function' || typeof m.createSecureServer !== 'function') {
    throw new Error(`${spec} has no connectAsync/createSecureServer: not the expected HTTP/3 binding`);
  }
  return {
    id: BINDING_FACTS.binding,
    congestionControl: BINDING_FACTS.congestionControl,
    congestionControlSource: BINDING_FACTS.congestionControlSource,
    connect: (o) => connect(m, o),
    listen: (o, onStream) => listen(m, o, onStream),
  };
}

/**
 * The name the certificate is checked against. The binding checks DNS names only (BoringSSL's host
 * check): an IP address in SNI never matches the certificate's IP SAN, and the handshake fails. For an
 * IP address h2lab therefore checks the chain and the name `localhost` unless `servername` names
 * another: h2lab's own certificates (the development set, and the link's) carry it, and no public CA
 * issues it, so against a public server this accepts only a certificate of a CA the user trusts.
 */
function verifiedName(o: Pick<H3ConnectOptions, 'host' | 'servername'>): string {
  return o.servername ?? (isIP(o.host) ? 'localhost' : o.host);
}

const isStreamLimit = (err: unknown) => err instanceof Error && /StreamLimit/.test(err.message);

async function connect(m: CsModule, o: H3ConnectOptions): Promise<H3Connection> {
  const s = await m.connectAsync(`${o.host.includes(':') ? `[${o.host}]` : o.host}:${o.port}`, {
    ...(o.ca ? { ca: o.ca } : {}),
    rejectUnauthorized: !o.insecure,
    servername: verifiedName(o),
    connectTimeoutMs: o.timeoutMs,
    ...(o.streamWindowBytes ? { initialMaxStreamDataBidiLocal: o.streamWindowBytes } : {}),
    ...(o.connectionWindowBytes ? { initialMaxData: o.connectionWindowBytes } : {}),
    // The binding polls metrics on this interval; the facts are read at the end, so rarely.
    metricsIntervalMs: 1000,
    ...(o.qlogDir ? { qlogDir: o.qlogDir } : {}),
  });
  const closers: Array<(reason: string) => void> = [];
  let closed: string | undefined;
  const fireClose = (reason: string) => {
    if (closed !== undefined) return;
    closed = reason;
    for (const cb of closers.splice(0)) cb(reason);
  };
  s.on('close', (info: { errorCode?: number; reason?: string } | undefined) =>
    fireClose(info?.reason || `closed (code ${info?.errorCode ?? 0})`),
  );
  s.on('error', (err: Error) => fireClose(err.message));
  s.on('goaway', () => fireClose('GOAWAY'));
  let lastFacts: QuicConnectionInfo | undefined;
  const facts = (): QuicConnectionInfo | undefined => {
    const x = nativeMetrics(s);
    if (!x) return lastFacts;
    lastFacts = factsOf(x, lastFacts);
    return lastFacts;
  };
  let localPort: number | undefined;
  try {
    localPort = s._eventLoop?.worker?.localAddress?.().port;
  } catch {
    localPort = undefined;
  }
  return {
    alpn: s.alpnProtocol,
    localPort,
    request(headers, body, h) {
      let st: CsStream;
      try {
        st = s.request(headers, { endStream: body === undefined || body.length === 0 });
      } catch (err) {
        if (isStreamLimit(err)) return 'stream-limit';
        queueMicrotask(() => h.error(err as Error));
        return { cancel() {} };
      }
      let done = false;
      st.on('response', (rh: Record<string, string>) => h.headers(Number(rh[':status'])));
      st.on('data', (d: Buffer) => h.data(d.length));
      st.on('end', () => {
        if (!done) {
          done = true;
          h.end();
        }
      });
      st.on('error', (err: Error) => {
        if (!done) {
          done = true;
          h.error(err);
        }
      });
      st.on('close', () => {
        if (!done) {
          done = true;
          h.error(new Error('stream closed before the response ended'));
        }
      });
      if (body && body.length > 0) st.end(body);
      return {
        cancel() {
          done = true;
          st.close(0x10c); // H3_REQUEST_CANCELLED (RFC 9114 §8.1)
        },
      };
    },
    facts,
    onClose(cb) {
      if (closed !== undefined) cb(closed);
      else closers.push(cb);
    },
    async close() {
      facts();
      await s.close().catch(() => s.destroy());
      fireClose('closed by h2lab');
    },
  };
}

/**
 * The binding's server binds a node:http2 fallback on the UDP port's number over TCP; this stands
 * in for it so the fixture's own TLS listener can own that TCP port (HTTP/3 on the TLS port, as
 * Alt-Svc `h3=":PORT"` says). It relies on the pinned version's `_createH2Server` (checked by
 * test/h3/binding.test.ts: the fixture's TLS port and h3 port are the same number there).
 */
function noFallback(): EventEmitter {
  const e = new EventEmitter() as EventEmitter & Record<string, unknown>;
  e.listen = (_port: number, _host: string, cb: () => void) => {
    setImmediate(cb);
    return e;
  };
  e.close = (cb?: (err?: Error) => void) => cb?.();
  e.unref = () => e;
  return e;
}

async function listen(
  m: CsModule,
  o: H3ListenOptions,
  onStream: (s: H3ServerStream) => void,
): Promise<H3Listener> {
  let open = 0;
  const conns = new WeakMap<CsSession, H3ServerConnection>();
  const serverConn = (session: CsSession): H3ServerConnection => {
    let c = conns.get(session);
    if (!c) {
      let last: QuicConnectionInfo | undefined;
      let qlogPath: string | undefined;
      if (o.qlogDir) {
        try {
          qlogPath = session.exportQlog?.() ?? undefined;
        } catch {
          qlogPath = undefined;
        }
      }
      c = {
        remoteAddress: session.remoteAddress ?? '',
        remotePort: session.remotePort ?? 0,
        qlogPath,
        facts: () => {
          try {
            const x = nativeMetrics(session);
            if (x) last = factsOf(x, last);
          } catch {
            // closed: the last reading stands
          }
          return last;
        },
      };
      conns.set(session, c);
    }
    return c;
  };
  const server = m.createSecureServer(
    {
      key: o.keyPem,
      cert: o.certPem,
      initialMaxStreamsBidi: o.maxStreams,
      maxIdleTimeoutMs: o.idleTimeoutMs,
      metricsIntervalMs: 60_000,
      disableRetry: o.retry !== true,
      ...(o.qlogDir ? { qlogDir: o.qlogDir } : {}),
    },
    (st, headers) => {
      // The server's reading of its connection at each stream's end: the binding's handle may be
      // gone by the time the connection's close is seen.
      const session = () =>
        st.session ?? (st._connHandle !== undefined ? server._sessions?.get(st._connHandle) : undefined);
      st.once('close', () => {
        const ss = session();
        if (ss) serverConn(ss).facts();
      });
      onStream({
        headers,
        duplex: st,
        respond: (h, endStream) => st.respond(h, { endStream }),
        respondWithBody: (h, body) => st.respondWithBody(h, body),
        reset: (code) => st.close(code),
        closeConnection: (code) =>
          void session()
            ?.close(code)
            .catch(() => {}),
      });
    },
  );
  Object.defineProperty(server, '_createH2Server', { value: noFallback });
  server.on('session', (session: CsSession) => {
    open++;
    const c = serverConn(session);
    o.onConnection(c);
    session.once('close', () => {
      open--;
      o.onConnectionClose(c);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.once('listening', () => {
      server.off('error', reject);
      resolve();
    });
    try {
      server.listen(o.port, o.host);
    } catch (err) {
      reject(err);
    }
  });
  server.on('error', () => {});
  return {
    port: server.address()?.port ?? o.port,
    openConnections: () => open,
    close: () => server.close(),
  };
}

/**
 * `startServer`: the listeners, the protocol dispatch and shutdown.
 *
 *   plain port (net) ──sniff first bytes──▶ "PRI * HTTP/2.0…" ──▶ http2 server (h2c)
 *                                   └──────▶ anything else  ──▶ http server (HTTP/1.1)
 *   TLS port (tls) ──ALPN──▶ h2 ──▶ http2 server   │   http/1.1 (or no ALPN) ──▶ http server
 *
 * One http server and one http2 server serve both listeners: they never listen themselves, sockets
 * are handed to them with `emit('connection', socket)`. The routes see one {@link Exchange} per
 * request, whatever the protocol.
 */
import { rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import {
  createServer as createH2Server,
  type Http2Server,
  constants as h2c,
  type IncomingHttpHeaders,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { cpus as osCpus } from 'node:os';
import type { Duplex } from 'node:stream';
import { createServer as createTlsServer, type TLSSocket, type Server as TlsServer } from 'node:tls';
import {
  appendKeyLog,
  type ErrorCode,
  H2labError,
  invalidOption,
  isH2labError,
  unknownOptionError,
} from '../core/index.ts';
import type { H3Listener } from '../h3/index.ts';
import type { WireProtocol } from '../model/index.ts';
import { ensureDevCertificates, loadTlsFiles } from '../tls/index.ts';
import { BackendPool } from './backend-pool.ts';
import { H1Exchange, H2Exchange, kServerReset, sessionSockets } from './exchange.ts';
import { type GuardCounts, H2Guard, headerListBytes, refuseH1 } from './guard.ts';
import { startH3Listener } from './h3.ts';
import { type ListenerName, type MetricsSnapshot, ServerMetrics } from './metrics.ts';
import { type ServerOptions, type ServerOptionsInput, ServerOptionsSchema } from './options.ts';
import { CpuRenderer, renderCpuList } from './render-cpu.ts';
import { Router } from './routes.ts';

/** RFC 9113 §3.4: the client connection preface starts with these 24 octets. */
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

/** A running fixture server. */
export interface RunningServer {
  /** e.g. `http://127.0.0.1:38211`; undefined when the plain listener is disabled. */
  plainUrl?: string;
  /** e.g. `https://127.0.0.1:38212`; undefined when the TLS listener is disabled. */
  tlsUrl?: string;
  /** The Unix domain socket path also serving the plain protocols (`--unix-socket`), when given. */
  unixSocket?: string;
  /**
   * HTTP/3 (`--h3`): `https://host:PORT` where PORT is the UDP port (the TLS port's number unless
   * `--h3-port` chose another). Undefined when HTTP/3 was not asked for or could not start.
   */
  h3Url?: string;
  /** HTTP/3 was asked for but is not served: why (H2LAB_ERR_H3_UNAVAILABLE's message). */
  h3Unavailable?: string;
  /** The CA that signed the server certificate, when known (always with the development CA). */
  caPem?: string;
  /** Path of that CA's PEM file, when it is a file (the development CA, or `--ca` … no: only the dev CA). */
  caFile?: string;
  /** The server certificate in use (PEM). A browser pins its SPKI hash. */
  certPem: string;
  /** True when the development CA and certificate are in use (no `--cert`). */
  devCertificates: boolean;
  /** The resolved options. */
  options: ServerOptions;
  /** The same numbers as `GET /metrics?format=json`. */
  metrics(): MetricsSnapshot;
  /** Same as `POST /metrics/reset`. */
  resetMetrics(): void;
  /**
   * Says that this server runs on the thread of its client (startFixtureTarget's in-process
   * placement): its metrics then leave out its CPU and event-loop figures (`loop`), which would be
   * the client's too.
   */
  shareThread(): void;
  /** What the hostile-peer guard did: sessions ended for abuse, stalled sessions, skipped handlers. */
  guardCounts(): GuardCounts;
  /**
   * Stops accepting, lets in-flight requests finish for up to `graceMs` (default: the `graceMs`
   * option), sends GOAWAY to HTTP/2 sessions, then destroys what is left. Resolves when every socket
   * is closed.
   */
  close(graceMs?: number): Promise<void>;
}

/**
 * Parses options with the schema; zod issues become H2LAB_ERR_INVALID_OPTION naming the option. A
 * cross-field rule of the schema (src/server/options.ts) says in its issue's `params` the code it
 * throws, or the resolved value it names.
 */
export function resolveServerOptions(input: ServerOptionsInput = {}): ServerOptions {
  const r = ServerOptionsSchema.safeParse(input);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const unknown = unknownOptionError(issue, 'startServer', Object.keys(ServerOptionsSchema.shape));
  if (unknown) throw unknown;
  const rule = issue.code === 'custom' ? (issue.params as { code?: ErrorCode; value?: unknown }) : undefined;
  if (rule?.code !== undefined) throw new H2labError(rule.code, issue.message, {});
  const key = String(issue.path[0] ?? '');
  const meta = (ServerOptionsSchema.shape as Record<string, { meta(): unknown }>)[key]?.meta() as
    | { flag?: string }
    | undefined;
  const value = rule && 'value' in rule ? rule.value : (input as Record<string, unknown>)[key];
  throw invalidOption(`--${meta?.flag ?? key}`, value, issue.message);
}

/**
 * Starts the fixture server, in named steps: options (cross-field rules in the schema), TLS material,
 * the backend pool, the HTTP/1.1 and HTTP/2 servers, the listeners, and a closer.
 *
 * @example
 * const srv = await startServer({ port: 0, tlsPort: 0 });
 * await fetch(`${srv.plainUrl}/bytes/1KiB`);
 * await srv.close();
 */
export async function startServer(input: ServerOptionsInput = {}): Promise<RunningServer> {
  const opts = resolveServerOptions(input);
  // TLS material first: a bad file must fail before anything listens.
  const tls = await loadCertificates(opts);
  const pool: { p?: BackendPool } = {};
  const metrics = new ServerMetrics(() => ({
    size: opts.poolSize,
    busy: pool.p?.busy ?? 0,
    queued: pool.p?.queued ?? 0,
  }));
  const renderer = await startRenderer(opts);
  pool.p = new BackendPool(opts.poolSize, opts.ignoreCancel, metrics, renderer);
  const core: ServerCore = {
    opts,
    metrics,
    router: new Router(opts, metrics, pool.p),
    guard: new H2Guard(opts),
    sockets: new Set(),
    sessions: new Set(),
    altSvc: {},
    closing: false,
    handingOver: undefined,
  };
  const h1 = createH1(core);
  const h2 = createH2(core);
  const accept = connectionHandlers(core, h1, h2);
  const listening = await openListeners(core, tls, accept, renderer);
  return {
    ...listening.urls,
    ...(tls.caPem !== undefined ? { caPem: tls.caPem } : {}),
    ...(tls.caFile !== undefined ? { caFile: tls.caFile } : {}),
    certPem: tls.certPem ?? '',
    devCertificates: tls.dev && opts.tls,
    options: opts,
    metrics: () => metrics.snapshot(),
    resetMetrics: () => metrics.reset(),
    shareThread: () => metrics.shareThread(),
    guardCounts: () => structuredClone(core.guard.counts),
    close: closer(core, h1, listening, () => {
      pool.p?.clear();
      return renderer?.close();
    }),
  };
}

/** What the protocol servers and the listeners share while the server runs. */
interface ServerCore {
  readonly opts: ServerOptions;
  readonly metrics: ServerMetrics;
  readonly router: Router;
  readonly guard: H2Guard;
  /** Every TCP socket (and TLS socket) open, for shutdown. */
  readonly sockets: Set<Socket>;
  readonly sessions: Set<ServerHttp2Session>;
  /** `Alt-Svc` of the TLS listener's responses, once HTTP/3 listens. */
  readonly altSvc: { value?: string };
  closing: boolean;
  /** The socket being handed to the http2 server: its 'session' event fires synchronously. */
  handingOver: Socket | undefined;
}

/** The certificate and key the TLS and QUIC listeners use, and where they came from. */
interface TlsMaterial {
  files: ReturnType<typeof loadTlsFiles>;
  certPem: string | undefined;
  keyPem: string | undefined;
  caPem: string | undefined;
  caFile: string | undefined;
  /** No `--cert`: the development CA's certificate. */
  dev: boolean;
  /** HTTP/3 asked for (`--h3` or `--h3-port`). */
  h3: boolean;
}

/** Reads `--cert/--key/--ca`, or makes the development certificates when TLS or QUIC needs one. */
async function loadCertificates(opts: ServerOptions): Promise<TlsMaterial> {
  const files = loadTlsFiles({ cert: opts.cert, key: opts.key, ca: opts.ca });
  const h3 = opts.h3 || opts.h3Port !== undefined;
  const own = { files, certPem: files.certPem, keyPem: files.keyPem, dev: files.certPem === undefined, h3 };
  if ((opts.tls || h3) && (own.certPem === undefined || own.keyPem === undefined)) {
    const d = await ensureDevCertificates();
    return { ...own, certPem: d.serverPem, keyPem: d.serverKeyPem, caPem: d.caPem, caFile: d.caFile };
  }
  return { ...own, caPem: undefined, caFile: undefined };
}

/** `--tile-render cpu`: one pinned thread per worker, started (and pinned) before anything listens. */
async function startRenderer(opts: ServerOptions): Promise<CpuRenderer | undefined> {
  if (opts.tileRender !== 'cpu') return undefined;
  const renderer = new CpuRenderer(opts.poolSize, renderCpuList(opts.renderCores ?? osCpus().length));
  try {
    await renderer.ready;
  } catch (err) {
    await renderer.close();
    throw err;
  }
  return renderer;
}

/** The HTTP/1.1 server: never listens itself, sockets are handed to it. */
function createH1(core: ServerCore): HttpServer {
  const { opts } = core;
  const refusedSockets = new WeakSet<Duplex>();
  const h1: HttpServer = createHttpServer(
    // Explicit: Node's TLS fallback path otherwise keeps idle keep-alive connections open (server-notes).
    {
      keepAliveTimeout: opts.keepAliveTimeoutMs,
      headersTimeout: opts.headersTimeoutMs,
      // Node's default (300 s) was replaced by 0 here once; a dripped body then never ended.
      requestTimeout: opts.requestTimeoutMs,
      // How often Node checks both timeouts (default 30 s, far coarser than a short timeout).
      connectionsCheckingInterval: Math.max(
        50,
        Math.min(1000, Math.min(opts.headersTimeoutMs, opts.requestTimeoutMs || Infinity) / 4),
      ),
    },
    (req, res) => {
      const refused = refuseH1(req.rawHeaders);
      if (refused !== undefined) {
        // 400 and close before reading the body: what follows may be another request to a proxy.
        res.shouldKeepAlive = false;
        refusedSockets.add(req.socket);
        res.once('finish', () => req.socket.destroy());
        res.writeHead(400, { 'content-type': 'text/plain', connection: 'close' });
        res.end(`${refused}\n`);
        return;
      }
      if (core.closing) res.shouldKeepAlive = false;
      if (core.altSvc.value && (req.socket as TLSSocket).encrypted)
        res.setHeader('alt-svc', core.altSvc.value);
      core.router.handle(new H1Exchange(req, res));
    },
  );
  h1.keepAliveTimeout = opts.keepAliveTimeoutMs;
  // This server never listens (sockets are handed to it), but Node starts its connection tracking —
  // which enforces headersTimeout and lets closeIdleConnections() work — on 'listening'.
  h1.emit('listening');
  h1.on('clientError', (_err, socket) => {
    // llhttp may still fail on the body of a request refused above: it has its answer already.
    if (socket.writable && !refusedSockets.has(socket))
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    else socket.destroy();
  });
  return h1;
}

/**
 * Node's per-session memory cap (`maxSessionMemory`, in units of 10^6 bytes) sized from the receive
 * windows this server advertises. Node counts the request bodies it holds for streams whose readers
 * are paused against the cap, and a session over it stops reading its socket without resuming: with
 * Node's 10 MB default beside a 15 MiB connection window, an echo of 32 uploads of 1 MiB on one
 * session stopped after 10 responses and never moved again (docs/reliability.md, "Session memory
 * and receive windows"). Twice the connection window plus Node's 10 MB keeps the bodies the windows
 * allow inside the cap; the windows stay the bound a peer can push.
 */
function sessionMemoryMB(opts: Pick<ServerOptions, 'connectionWindowSizeBytes'>): number {
  return 10 + Math.ceil((2 * opts.connectionWindowSizeBytes) / 1e6);
}

/** The HTTP/2 server: its sessions adopted by the guard, its streams routed through it. */
function createH2(core: ServerCore): Http2Server {
  const { opts, guard } = core;
  const h2: Http2Server = createH2Server({
    maxSessionMemory: sessionMemoryMB(opts),
    // Node advertises no limits by default (server-notes): say them in the first SETTINGS frame.
    settings: {
      maxConcurrentStreams: opts.maxConcurrentStreams,
      initialWindowSize: opts.initialWindowSizeBytes,
      maxHeaderListSize: opts.maxHeaderListSizeBytes,
    },
    maxHeaderListPairs: 256,
    // nghttp2's own rapid-reset limit (nghttp2_option_set_stream_reset_rate_limit) follows the guard's
    // bucket at twice its size: the guard answers a paced attack first with ENHANCE_YOUR_CALM, and
    // nghttp2 stops a flood inside the read that carries it where Node passes the setting on (Node 24
    // does; at the default it is nghttp2's own 1000). Node 20 ignores it (docs/reliability.md).
    ...(opts.h2MaxResets > 0
      ? {
          streamResetBurst: opts.h2MaxResets,
          streamResetRate: Math.max(1, Math.round(opts.h2MaxResets / 10)),
        }
      : {}),
  });
  const onStream = streamHandler(core);
  h2.on('session', (session: ServerHttp2Session) => {
    core.sessions.add(session);
    if (core.handingOver) {
      guard.adopt(session, core.handingOver);
      sessionSockets.set(session, core.handingOver);
    }
    session.on(
      'stream',
      (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number, rawHeaders: string[]) =>
        onStream(session, stream, headers, flags, rawHeaders),
    );
    session.on('close', () => core.sessions.delete(session));
    session.on('error', () => session.destroy());
    // RFC 9113 §6.9.2: SETTINGS cannot change the connection window, only WINDOW_UPDATE on stream 0.
    if (opts.connectionWindowSizeBytes > 65_535) session.setLocalWindowSize(opts.connectionWindowSizeBytes);
    if (opts.h2IdleTimeoutMs > 0) {
      // The server is the only party that can bound an idle session's life for every client:
      // GOAWAY(NO_ERROR) then close; a peer that keeps streams hung open is cut after the grace.
      session.setTimeout(opts.h2IdleTimeoutMs, () => guard.shut(session, opts.graceMs));
    }
    // nghttp2 sends GOAWAY on its own for protocol errors and floods but Node leaves the socket open
    // (server-notes); close it ourselves. The guard finds the cases that emit no event.
    session.on('frameError', () => guard.shut(session, 100));
  });
  h2.on('sessionError', () => {});
  return h2;
}

/**
 * One HTTP/2 stream: counted, its header list held to the advertised limit, then started through the
 * guard. Listened on the session, not the server: Node emits 'stream' after the HEADERS callback, and
 * a stream reset in the same bytes has lost its `session` by then.
 */
function streamHandler(
  core: ServerCore,
): (
  session: ServerHttp2Session,
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  flags: number,
  rawHeaders: string[],
) => void {
  const { opts, metrics, guard, router, altSvc } = core;
  function onStreamClose(this: ServerHttp2Stream): void {
    metrics.streamsOpen--;
    const code = this.rstCode;
    // A non-zero code we did not send ourselves came from the peer's RST_STREAM (RFC 9113 §6.4).
    if (
      code !== undefined &&
      code !== h2c.NGHTTP2_NO_ERROR &&
      !(this as unknown as Record<symbol, unknown>)[kServerReset]
    ) {
      metrics.rst(code);
    }
  }
  return (session, stream, headers, flags, rawHeaders) => {
    metrics.streamsOpen++;
    stream.on('close', onStreamClose); // 'close' fires once; `on` avoids a wrapper per stream
    // A peer that goes away abruptly (a browser closing its socket: ECONNRESET) errors the stream;
    // without a listener that error would end the process. 'close' above still counts it.
    stream.on('error', ignore);
    const listBytes = headerListBytes(rawHeaders);
    if (listBytes > opts.maxHeaderListSizeBytes) {
      // Node applies the advertised MAX_HEADER_LIST_SIZE only once the client acknowledged our
      // SETTINGS (RFC 9113 §6.5.3): a first flight's list reaches us whatever its size. Refuse it as
      // nghttp2 does after the ACK (RST_STREAM ENHANCE_YOUR_CALM); the guard counts it as refused.
      (stream as unknown as Record<symbol, boolean>)[kServerReset] = true;
      stream.close(h2c.NGHTTP2_ENHANCE_YOUR_CALM);
      guard.refuseHeaderList(session, stream);
      return;
    }
    const proto: WireProtocol = session.alpnProtocol === 'h2' ? 'h2' : 'h2c';
    const extra = altSvc.value && session.alpnProtocol === 'h2' ? { 'alt-svc': altSvc.value } : undefined;
    const hasBody = (flags & h2c.NGHTTP2_FLAG_END_STREAM) === 0;
    guard.startStream(session, stream, listBytes, hasBody, () =>
      router.handle(new H2Exchange(stream, headers, proto, extra)),
    );
  };
}

/** How accepted sockets reach the protocol servers, counted per listener and protocol. */
interface ConnectionHandlers {
  /** The plain listener's (and the Unix socket's): sniff the preface, h2c or HTTP/1.1. */
  onPlain(socket: Socket): void;
  /** The TLS listener's raw TCP socket, tracked for shutdown and the handshake timeout. */
  onTlsConnection(raw: Socket): void;
  /** The TLS listener's socket once ALPN has chosen. */
  onSecure(socket: TLSSocket): void;
}

function connectionHandlers(core: ServerCore, h1: HttpServer, h2: Http2Server): ConnectionHandlers {
  const { opts, metrics, sockets } = core;
  const handshakeTimers = new WeakMap<Socket, NodeJS.Timeout>();
  const track = (socket: Socket, listener: ListenerName): ((p: WireProtocol) => void) => {
    sockets.add(socket);
    metrics.tcp.watch(socket);
    let proto: WireProtocol | 'unknown' = 'unknown';
    socket.on('close', () => {
      sockets.delete(socket);
      if (proto === 'unknown') metrics.connectionsTotal[listener].unknown++;
      else metrics.connectionsOpen[listener][proto]--;
    });
    socket.on('error', () => {});
    return (p) => {
      proto = p;
      metrics.connectionsTotal[listener][p]++;
      metrics.connectionsOpen[listener][p]++;
    };
  };
  const handOver = (isH2: boolean, socket: Socket): void => {
    if (!isH2) return void h1.emit('connection', socket);
    core.handingOver = socket;
    try {
      h2.emit('connection', socket);
    } finally {
      core.handingOver = undefined;
    }
  };
  return {
    onPlain(socket) {
      const setProto = track(socket, 'plain');
      if (core.closing) return void socket.destroy();
      sniffPreface(socket, opts.prefaceTimeoutMs, (isH2) => {
        setProto(isH2 ? 'h2c' : 'http/1.1');
        handOver(isH2, socket);
      });
    },
    onTlsConnection(raw) {
      // Nagle off on the TCP socket under TLS too, as on the plain listener: a response written as
      // head then body (HTTP/1.1) would otherwise hold its second segment until the client's delayed
      // ACK, one extra round trip on a delayed link that h1 paid and h2 (one busy connection) hid.
      raw.setNoDelay(true);
      sockets.add(raw);
      raw.on('close', () => sockets.delete(raw));
      raw.on('error', () => {});
      if (opts.prefaceTimeoutMs > 0) {
        // A real handshake timeout: from the TCP connection to the end of the TLS handshake.
        const t = setTimeout(() => raw.destroy(), opts.prefaceTimeoutMs);
        handshakeTimers.set(raw, t);
        raw.once('close', () => clearTimeout(t));
      }
    },
    onSecure(socket) {
      const raw = (socket as unknown as { _parent?: Socket })._parent;
      if (raw) clearTimeout(handshakeTimers.get(raw));
      const isH2 = socket.alpnProtocol === 'h2';
      track(socket, 'tls')(isH2 ? 'h2' : 'http/1.1');
      if (core.closing) return void socket.destroy();
      // `request`: a client may come without a certificate, but one it sends must verify against --ca.
      if (opts.clientAuth === 'request' && !socket.authorized && socket.getPeerCertificate()?.raw) {
        return void socket.destroy();
      }
      handOver(isH2, socket);
    },
  };
}

/**
 * Reads a plain connection's first bytes until they tell the HTTP/2 preface from anything else, puts
 * them back and calls `decided`; a connection silent for `timeoutMs` (0 = never) is closed.
 */
function sniffPreface(socket: Socket, timeoutMs: number, decided: (isH2: boolean) => void): void {
  socket.setNoDelay(true);
  let buf: Buffer | undefined;
  const timer = setTimeout(() => socket.destroy(), timeoutMs || 2 ** 31 - 1);
  const onReadable = (): void => {
    let c: Buffer | null;
    // biome-ignore lint/suspicious/noAssignInExpressions: the read loop idiom
    while ((c = socket.read() as Buffer | null) !== null) buf = buf ? Buffer.concat([buf, c]) : c;
    if (!buf) return;
    const n = Math.min(buf.length, PREFACE.length);
    const isH2 = buf.compare(PREFACE, 0, n, 0, n) === 0;
    if (isH2 && buf.length < PREFACE.length) return; // a prefix of the preface: wait for the rest
    socket.removeListener('readable', onReadable);
    socket.removeListener('end', onEnd);
    clearTimeout(timer);
    socket.unshift(buf);
    decided(isH2);
  };
  const onEnd = (): void => {
    clearTimeout(timer);
    socket.destroy();
  };
  socket.on('readable', onReadable);
  socket.on('end', onEnd);
}

/** The listeners that opened and where they listen. */
interface Listening {
  servers: Array<NetServer | TlsServer>;
  h3Listener: H3Listener | undefined;
  urls: Pick<RunningServer, 'plainUrl' | 'tlsUrl' | 'unixSocket' | 'h3Url' | 'h3Unavailable'>;
}

/** Opens the plain, Unix-socket, TLS and QUIC listeners asked for; on a failure closes what opened. */
async function openListeners(
  core: ServerCore,
  tls: TlsMaterial,
  accept: ConnectionHandlers,
  renderer: CpuRenderer | undefined,
): Promise<Listening> {
  const { opts } = core;
  const listening: Listening = { servers: [], h3Listener: undefined, urls: {} };
  const { servers, urls } = listening;
  const hostInUrl = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  try {
    if (opts.plain) {
      const s = createNetServer({ pauseOnConnect: false }, accept.onPlain);
      servers.push(s);
      const port = await listen(s, opts.host, opts.port, '--port');
      urls.plainUrl = `http://${hostInUrl}:${port}`;
    }
    if (opts.unixSocket) {
      // The same handler as the plain port: what a reverse proxy on the same host reaches by path.
      const s = createNetServer({ pauseOnConnect: false }, accept.onPlain);
      servers.push(s);
      rmSync(opts.unixSocket, { force: true });
      await listenPath(s, opts.unixSocket);
      urls.unixSocket = opts.unixSocket;
    }
    if (opts.tls) {
      const s = createTlsListener(opts, tls, core.metrics, accept);
      servers.push(s);
      const port = await listen(s, opts.host, opts.tlsPort, '--tls-port');
      urls.tlsUrl = `https://${hostInUrl}:${port}`;
    }
    if (tls.h3) await openH3(core, tls, listening, hostInUrl);
  } catch (err) {
    await renderer?.close();
    await Promise.all(servers.map((s) => new Promise<void>((r) => (s.listening ? s.close(() => r()) : r()))));
    await listening.h3Listener?.close();
    throw err;
  }
  return listening;
}

/** The TLS listener: h2 or http/1.1 by ALPN; a connection is counted once ALPN has chosen. */
function createTlsListener(
  opts: ServerOptions,
  tls: TlsMaterial,
  metrics: ServerMetrics,
  accept: ConnectionHandlers,
): TlsServer {
  const s = createTlsServer({
    cert: tls.certPem,
    key: tls.keyPem,
    ALPNProtocols: ['h2', 'http/1.1'],
    // Node 20's own handshakeTimeout only emits tlsClientError and leaves the socket open.
    handshakeTimeout: opts.prefaceTimeoutMs || undefined,
    ...(tls.files.caPem ? { ca: tls.files.caPem } : {}),
    requestCert: opts.clientAuth !== 'none',
    rejectUnauthorized: opts.clientAuth === 'require',
  });
  s.on('connection', accept.onTlsConnection);
  s.on('secureConnection', accept.onSecure);
  const keyLogFile = opts.keyLogFile;
  if (keyLogFile !== undefined) s.on('keylog', (line) => appendKeyLog(keyLogFile, line));
  s.on('tlsClientError', () => {
    metrics.connectionsTotal.tls.unknown++;
  });
  return s;
}

/**
 * HTTP/3 on the TLS port's number (or `--h3-port`), advertised by Alt-Svc. Without the binding the
 * server runs on and says why; a port that cannot be bound fails the start.
 */
async function openH3(
  core: ServerCore,
  tls: TlsMaterial,
  listening: Listening,
  hostInUrl: string,
): Promise<void> {
  const { opts } = core;
  const { urls } = listening;
  const tlsPort = urls.tlsUrl ? Number(new URL(urls.tlsUrl).port) : 0;
  try {
    const h3Listener = await startH3Listener(
      opts,
      opts.h3Port ?? tlsPort,
      { certPem: tls.certPem!, keyPem: tls.keyPem! },
      core.router,
      core.metrics,
    );
    listening.h3Listener = h3Listener;
    urls.h3Url = `https://${hostInUrl}:${h3Listener.port}`;
    // RFC 7838 §3: the TLS listener's responses advertise the UDP port (same host).
    core.altSvc.value = `h3=":${h3Listener.port}"; ma=86400`;
  } catch (err) {
    if (!isH2labError(err, 'H2LAB_ERR_H3_UNAVAILABLE')) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new H2labError(
        'H2LAB_ERR_LISTEN',
        `--h3-port ${opts.h3Port ?? tlsPort} on --host ${opts.host}: cannot listen for HTTP/3 (${reason}); choose another --h3-port or 0 for a free one`,
        { option: '--h3-port', port: opts.h3Port ?? tlsPort, host: opts.host, reason },
      );
    }
    urls.h3Unavailable = err.message;
  }
}

/**
 * `close(graceMs)`: stop accepting, GOAWAY to HTTP/2 sessions, let requests in flight finish for the
 * grace, then destroy what is left; `release` frees the backend pool and the renderer last.
 */
function closer(
  core: ServerCore,
  h1: HttpServer,
  listening: Listening,
  release: () => Promise<void> | undefined,
): (graceMs?: number) => Promise<void> {
  const { sockets } = core;
  return async (graceMs = core.opts.graceMs) => {
    if (core.closing) return waitEmpty(sockets, 0);
    core.closing = true;
    for (const s of listening.servers) s.close();
    const h3Closed = listening.h3Listener?.close().catch(() => {});
    for (const session of core.sessions) core.guard.shut(session, graceMs);
    h1.close(); // closes idle keep-alive connections and stops the timeout checker
    // Requests in flight finish; their keep-alive connections close as they go idle.
    const idle = setInterval(() => h1.closeIdleConnections(), 25);
    const deadline = setTimeout(() => {
      for (const s of sockets) s.destroy();
    }, graceMs);
    try {
      await waitEmpty(sockets, graceMs + 1000);
      await h3Closed;
    } finally {
      clearInterval(idle);
      clearTimeout(deadline);
      core.guard.stop();
      await release();
    }
  };
}

function listenPath(server: NetServer, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new H2labError(
          'H2LAB_ERR_LISTEN',
          `--unix-socket ${path}: cannot listen (${err.code ?? err.message}); choose a path in a writable directory`,
          { option: '--unix-socket', value: path },
        ),
      ),
    );
    server.listen({ path }, () => resolve());
  });
}

/** Shared no-op listener (one function, not a closure per stream). */
function ignore(): void {}

async function waitEmpty(sockets: Set<Socket>, maxMs: number): Promise<void> {
  const until = performance.now() + maxMs;
  while (sockets.size > 0 && performance.now() < until) await new Promise((r) => setTimeout(r, 10));
  for (const s of sockets) s.destroy();
}

function listen(server: NetServer, host: string, port: number, option: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') {
        reject(
          new H2labError(
            'H2LAB_ERR_PORT_IN_USE',
            `${option} ${port}: the port is already in use on ${host}; stop the other process, choose another ${option}, or use 0 for a free port`,
            { option, port, host },
          ),
        );
      } else {
        reject(
          new H2labError(
            'H2LAB_ERR_LISTEN',
            `${option} ${port} on --host ${host}: cannot listen (${err.code ?? err.message}); check --host, use a port ≥ 1024 or the needed privilege`,
            { option, port, host, reason: err.code },
          ),
        );
      }
    };
    server.once('error', onError);
    server.listen({ host, port }, () => {
      server.removeListener('error', onError);
      const a = server.address();
      resolve(typeof a === 'object' && a ? a.port : port);
    });
  });
}

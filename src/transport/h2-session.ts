/**
 * `h2`: one HTTP/2 session; concurrency becomes streams on it, capped by the server's
 * SETTINGS_MAX_CONCURRENT_STREAMS (RFC 9113 §5.1.2). Requests beyond the cap wait in the client and
 * the wait is counted (`streamCapHits`). After a GOAWAY (RFC 9113 §6.8) the session takes no new
 * streams and a new one is opened, as browsers do.
 *
 * The session class here is shared with `h2-pool` (a pool of these).
 */
import http2 from 'node:http2';
import net from 'node:net';
import { H2labError } from '../errors.ts';
import { ConnectError, type ConnectTarget, connectTimed } from './connect.ts';
import { type PoolConn, type PoolSettings, PoolTransport } from './pool.ts';
import type { FailureClass, RequestSpec, Sample, WireProtocol } from './types.ts';

/** The flow-control windows this client advertises (RFC 9113 §6.9.2). */
export interface WindowSizes {
  /** SETTINGS_INITIAL_WINDOW_SIZE: each stream's receive window, bytes. */
  streamWindowBytes: number;
  /** The connection's receive window (raised with WINDOW_UPDATE on stream 0), bytes. */
  connectionWindowBytes: number;
}

/** Options of an HTTP/2 session transport. */
export interface H2Options {
  target: ConnectTarget;
  /** `host:port` for `:authority`. */
  authority: string;
  window: WindowSizes;
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
    (id, onClose) => openH2Conn(id, opts, onClose),
  );
}

/** The largest value of a 31-bit window (RFC 9113 §6.9.1). */
export const MAX_WINDOW = 2 ** 31 - 1;
/** The RFC 9113 §6.9.2 default window for streams and the connection. */
export const DEFAULT_WINDOW = 65_535;
/** What "no limit announced" looks like through node's remoteSettings (we set it so, below). */
const UNLIMITED_STREAMS = 2 ** 32 - 1;

/**
 * Opens one session: TCP (+TLS with ALPN h2), the connection preface, then waits for the server's
 * SETTINGS before any request, so the stream limit is known. Rejects with H2LAB_ERR_PROTOCOL_MISMATCH
 * when the server chose HTTP/1.1 in ALPN or answered the h2c preface in HTTP/1.1.
 */
export async function openH2Conn(
  id: number,
  opts: H2Options,
  onClose: (c: PoolConn) => void,
): Promise<H2Conn> {
  const now = opts.pool.now;
  const t = opts.target;
  const requested: WireProtocol = t.tls ? 'h2' : 'h2c';
  // Offer http/1.1 too, so that a server without h2 says so instead of failing the handshake.
  const c = await connectTimed(t, t.tls ? ['h2', 'http/1.1'] : [], now);
  if (t.tls && c.alpn !== 'h2') {
    c.socket.destroy();
    throw mismatch(
      requested,
      c.alpn === false ? 'http/1.1 (no ALPN protocol selected)' : String(c.alpn),
      opts,
    );
  }
  const settings: http2.Settings = {
    enablePush: false,
    initialWindowSize: Math.min(opts.window.streamWindowBytes, MAX_WINDOW),
  };
  const session = http2.connect(`${t.tls ? 'https' : 'http'}://${opts.authority}`, {
    createConnection: () => c.socket,
    settings,
    // RFC 9113 §5.1.2: no limit until the server announces one (node assumes 100 otherwise).
    peerMaxConcurrentStreams: UNLIMITED_STREAMS,
    // Megabytes; node's 10 MB default makes the client refuse streams under load with large windows.
    maxSessionMemory: 1024,
  });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`no SETTINGS from the server within ${t.connectTimeoutMs} ms`));
      }, t.connectTimeoutMs);
      session.once('remoteSettings', () => {
        clearTimeout(timer);
        resolve();
      });
      session.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      session.once('close', () => {
        clearTimeout(timer);
        reject(new Error('session closed before the server sent SETTINGS'));
      });
    });
  } catch (err) {
    session.destroy();
    if (!t.tls) {
      const line = await sniffHttp1(t);
      if (line)
        throw mismatch(requested, `http/1.1 (the server answered the h2c preface with "${line}")`, opts);
    }
    const e = err as Error & { code?: string };
    throw new ConnectError('reset', `${e.code ?? ''} ${e.message}`.trim(), e.code);
  }
  session.removeAllListeners('error');
  session.removeAllListeners('close');
  if (opts.window.connectionWindowBytes > DEFAULT_WINDOW) {
    session.setLocalWindowSize(Math.min(opts.window.connectionWindowBytes, MAX_WINDOW));
  }
  return new H2Conn(id, session, c.socket, opts, requested, c.connectMs, c.tlsMs, onClose);
}

function mismatch(requested: WireProtocol, negotiated: string, opts: H2Options): H2labError {
  return new H2labError(
    'H2LAB_ERR_PROTOCOL_MISMATCH',
    `requested ${requested} but the server negotiated ${negotiated} at ${opts.authority}: use --protocol h1 to measure HTTP/1.1, or enable HTTP/2 on the server`,
    { requested, negotiated: negotiated.split(' ')[0], target: opts.authority },
  );
}

/**
 * Sends the h2c preface on a fresh connection and reads the first bytes: a server that only speaks
 * HTTP/1.1 answers with a status line (usually 400). Returns that line, or undefined.
 */
function sniffHttp1(t: ConnectTarget): Promise<string | undefined> {
  return new Promise((resolve) => {
    const s = net.connect({ host: t.host, port: t.port });
    const done = (v: string | undefined): void => {
      clearTimeout(timer);
      s.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => done(undefined), Math.min(2000, t.connectTimeoutMs));
    s.on('connect', () => {
      // Preface + an empty SETTINGS frame (RFC 9113 §3.4).
      s.write(
        Buffer.concat([
          Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1'),
          Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]),
        ]),
      );
    });
    s.once('data', (b: Buffer) => {
      const text = b.toString('latin1');
      done(text.startsWith('HTTP/') ? text.split('\r\n')[0] : undefined);
    });
    s.on('error', () => done(undefined));
    s.on('close', () => done(undefined));
  });
}

interface Active {
  stream: http2.ClientHttp2Stream;
  sample: Sample;
  resolve: (s: Sample) => void;
  ended: boolean;
  failure?: FailureClass;
  detail?: string;
}

const { NGHTTP2_REFUSED_STREAM, NGHTTP2_CANCEL, NGHTTP2_NO_ERROR } = http2.constants;

/** One HTTP/2 session in a pool. */
export class H2Conn implements PoolConn {
  readonly id: number;
  inFlight = 0;
  requests = 0;
  peakStreams = 0;
  readonly createdMs: number;
  lastActiveMs: number;
  readonly connectMs: number;
  readonly tlsMs: number | undefined;
  readonly protocol: WireProtocol;
  private readonly session: http2.ClientHttp2Session;
  /** Our own reference: node's session.socket proxy refuses destroy() on TLS sockets. */
  private readonly socket: net.Socket;
  private readonly now: () => number;
  private readonly onClose: (c: PoolConn) => void;
  private readonly active = new Set<Active>();
  private readonly scheme: string;
  private readonly authority: string;
  private goawayLastStream = -1;
  private dead = false;
  private notified = false;
  /**
   * The server's stream limit, cached: `session.remoteSettings` builds a fresh object in C++ on every
   * read, far too slow to consult per request. Updated on every SETTINGS frame.
   */
  private maxStreams: number;

  constructor(
    id: number,
    session: http2.ClientHttp2Session,
    socket: net.Socket,
    opts: H2Options,
    protocol: WireProtocol,
    connectMs: number,
    tlsMs: number | undefined,
    onClose: (c: PoolConn) => void,
  ) {
    this.id = id;
    this.session = session;
    this.socket = socket;
    this.now = opts.pool.now;
    this.createdMs = this.now();
    this.lastActiveMs = this.createdMs;
    this.connectMs = connectMs;
    this.tlsMs = tlsMs;
    this.protocol = protocol;
    this.onClose = onClose;
    this.scheme = opts.target.tls ? 'https' : 'http';
    this.authority = opts.authority;
    this.maxStreams = session.remoteSettings.maxConcurrentStreams ?? UNLIMITED_STREAMS;
    session.on('remoteSettings', (st: http2.Settings) => {
      this.maxStreams = st.maxConcurrentStreams ?? UNLIMITED_STREAMS;
    });
    session.on('goaway', (_code: number, lastStreamID: number) => {
      this.goawayLastStream = lastStreamID;
      if (this.active.size === 0) this.close();
    });
    session.on('error', () => {
      this.dead = true;
    });
    session.on('close', () => this.closed());
  }

  usable(): boolean {
    return !this.dead && this.goawayLastStream < 0 && !this.session.closed && !this.session.destroyed;
  }

  capacity(): number {
    return this.maxStreams;
  }

  announcedLimit(): number | undefined {
    return this.maxStreams >= UNLIMITED_STREAMS ? undefined : this.maxStreams;
  }

  send(spec: RequestSpec, sample: Sample): Promise<Sample> {
    return new Promise((resolve) => {
      const headers: http2.OutgoingHttpHeaders = {
        ':method': spec.method,
        ':path': spec.path,
        ':scheme': this.scheme,
        ':authority': this.authority,
        ...spec.headers,
      };
      const body = spec.body && spec.body.length > 0 ? spec.body : undefined;
      if (body) headers['content-length'] = body.length;
      sample.sentMs = this.now();
      let stream: http2.ClientHttp2Stream;
      try {
        stream = this.session.request(headers, { endStream: body === undefined });
      } catch (err) {
        const e = err as Error & { code?: string };
        sample.error = this.goawayLastStream >= 0 ? 'goaway' : 'reset';
        sample.errorDetail = e.code ?? e.message;
        sample.endMs = this.now();
        resolve(sample);
        return;
      }
      const a: Active = { stream, sample, resolve, ended: false };
      this.active.add(a);
      stream.on('response', (h) => {
        sample.headersMs = this.now();
        sample.status = Number(h[':status']);
      });
      stream.on('data', (chunk: Buffer) => {
        sample.bytesIn += chunk.length;
      });
      stream.on('end', () => {
        a.ended = true;
      });
      stream.on('error', (err: Error & { code?: string }) => {
        if (a.failure === undefined) {
          a.failure = this.classify(stream, err);
          a.detail = err.code ? `${err.code}: ${err.message}` : err.message;
        }
      });
      stream.on('close', () => {
        if (a.failure === undefined && (stream.rstCode !== NGHTTP2_NO_ERROR || !a.ended)) {
          a.failure = this.classify(stream, undefined);
          a.detail = `stream closed with code ${stream.rstCode}${a.ended ? '' : ' before the response ended'}`;
        }
        this.settle(a, a.failure, a.detail);
      });
      if (body) {
        stream.end(body);
        sample.bytesOut = body.length;
      }
    });
  }

  expire(nowMs: number, timeoutMs: number): void {
    for (const a of this.active) {
      if (nowMs - a.sample.sentMs >= timeoutMs && a.failure === undefined) {
        a.failure = 'timeout';
        a.detail = `no complete response within ${timeoutMs} ms`;
        // RST_STREAM(CANCEL), RFC 9113 §8.7: the server can stop working on it.
        a.stream.close(NGHTTP2_CANCEL);
      }
    }
  }

  close(): void {
    for (const a of this.active) {
      if (a.failure === undefined) {
        a.failure = 'aborted';
        a.detail = 'session closed by the client';
      }
    }
    this.dead = true;
    this.session.destroy();
    // Do not wait for the session's 'close' event: after a GOAWAY node may never emit it (seen on
    // Node 20 when destroy() follows its own graceful close), and the pool must not wait on a ghost.
    this.closed();
  }

  private closed(): void {
    this.dead = true;
    for (const a of [...this.active]) {
      if (a.failure === undefined) a.stream.close(NGHTTP2_CANCEL);
      this.settle(a, a.failure ?? 'reset', a.detail ?? 'session closed');
    }
    if (this.notified) return;
    this.notified = true;
    this.socket.destroy();
    this.onClose(this);
  }

  private classify(
    stream: http2.ClientHttp2Stream,
    err: (Error & { code?: string }) | undefined,
  ): FailureClass {
    if (err?.code === 'ERR_HTTP2_GOAWAY_SESSION') return 'goaway';
    const id = stream.id ?? Number.MAX_SAFE_INTEGER;
    // Streams above the GOAWAY's last-stream-id were never processed (RFC 9113 §6.8).
    if (this.goawayLastStream >= 0 && id > this.goawayLastStream) return 'goaway';
    if (stream.rstCode === NGHTTP2_REFUSED_STREAM) return 'refused-stream';
    if (err?.code === 'ERR_HTTP2_STREAM_ERROR' || (stream.rstCode ?? 0) !== 0) return 'reset';
    if (this.goawayLastStream >= 0) return 'goaway';
    return 'reset';
  }

  private settle(a: Active, failure: FailureClass | undefined, detail: string | undefined): void {
    if (!this.active.delete(a)) return;
    this.requests++;
    const s = a.sample;
    s.endMs = this.now();
    if (a.stream.id !== undefined) s.streamId = a.stream.id;
    if (failure) {
      s.error = failure;
      if (detail) s.errorDetail = detail;
    }
    a.resolve(s);
  }
}

/**
 * An HTTP/2 connection of the `h2` and `h2-pool` transports on `node:http2` (`--h2-client node`):
 * the reference implementation h2lab's own client is checked against, and a second opinion when a
 * result looks surprising. Node's client costs several times the CPU per request of h2lab's own
 * (docs/performance.md), so at high request rates it measures itself; the result says which was used.
 */
import http2 from 'node:http2';
import net from 'node:net';
import { Slots, type Slotted } from '../core/index.ts';
import { UNLIMITED_STREAMS } from '../h2/index.ts';
import type { FailureClass, RequestSpec, Sample, WireProtocol } from '../model/index.ts';
import { ConnectError, type ConnectTarget, endedFailure } from './connect.ts';
import { connectH2, DEFAULT_WINDOW, type H2Options, MAX_WINDOW, protocolMismatch } from './h2-connect.ts';
import { type PoolConn, PoolConnBase } from './pool-conn.ts';

/**
 * Opens one session: TCP (+TLS with ALPN h2), the connection preface, then waits for the server's
 * SETTINGS before any request, so the stream limit is known. Rejects with H2LAB_ERR_PROTOCOL_MISMATCH
 * when the server chose HTTP/1.1 in ALPN or answered the h2c preface in HTTP/1.1.
 */
export async function openNodeH2Conn(
  id: number,
  opts: H2Options,
  onClose: (c: PoolConn) => void,
): Promise<H2Conn> {
  const t = opts.target;
  const requested: WireProtocol = t.tls ? 'h2' : 'h2c';
  const c = await connectH2(opts);
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
      c.socket.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  } catch (err) {
    session.destroy();
    // A session that never started does not always destroy the socket it was given (a TLS alert
    // before its SETTINGS left one open fd per attempt).
    c.socket.destroy();
    if (!t.tls) {
      const line = await sniffHttp1(t);
      if (line)
        throw protocolMismatch(
          requested,
          `http/1.1 (the server answered the h2c preface with "${line}")`,
          opts.authority,
        );
    }
    const e = err as Error & { code?: string };
    throw new ConnectError(endedFailure(e), `${e.code ?? ''} ${e.message}`.trim(), e.code);
  }
  session.removeAllListeners('error');
  session.removeAllListeners('close');
  if (opts.window.connectionWindowBytes > DEFAULT_WINDOW) {
    session.setLocalWindowSize(Math.min(opts.window.connectionWindowBytes, MAX_WINDOW));
  }
  const conn = new H2Conn(id, session, c.socket, opts, requested, c.connectMs, c.tlsMs, onClose);
  conn.tlsVersion = c.tlsVersion;
  return conn;
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

/** How long a cancelled stream may take to close before its session is taken for broken, ms. */
const STUCK_STREAM_MS = 1000;

interface Active extends Slotted {
  stream: http2.ClientHttp2Stream;
  sample: Sample;
  resolve: (s: Sample) => void;
  ended: boolean;
  /** When the timeout cancelled it (the pool's clock), while its close is awaited. */
  expiredMs?: number;
  failure?: FailureClass;
  detail?: string;
}

const { NGHTTP2_REFUSED_STREAM, NGHTTP2_CANCEL, NGHTTP2_NO_ERROR } = http2.constants;
/** The HEADERS frame type (RFC 9113 §6.2), as node:http2's 'frameError' names it. */
const HEADERS_FRAME = 0x1;

/** One HTTP/2 session in a pool. */
class H2Conn extends PoolConnBase implements PoolConn {
  private readonly session: http2.ClientHttp2Session;
  /** Our own reference: node's session.socket proxy refuses destroy() on TLS sockets. */
  private readonly socket: net.Socket;
  private readonly active = new Slots<Active>();
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
    super(id, protocol, opts.pool.now, connectMs, tlsMs, onClose);
    this.session = session;
    this.socket = socket;
    this.scheme = opts.target.tls ? 'https' : 'http';
    this.authority = opts.authority;
    this.maxStreams = session.remoteSettings.maxConcurrentStreams ?? UNLIMITED_STREAMS;
    session.on('remoteSettings', (st: http2.Settings) => {
      this.maxStreams = st.maxConcurrentStreams ?? UNLIMITED_STREAMS;
    });
    session.on('goaway', (code: number, lastStreamID: number) => {
      this.goawayAtMs ??= this.now();
      this.goawayCode ??= code;
      this.goawayLastStream = lastStreamID;
      if (this.active.size === 0) this.close();
    });
    session.on('error', (err: Error & { code?: string }) => {
      // The session is over (an invalid HPACK block is COMPRESSION_ERROR, a socket error a reset):
      // its streams end now, in the class that says why. Node may never emit 'close' after it, and
      // requests left pending kept nothing alive: the process exited 13 with nothing written.
      this.dead = true;
      const cls: FailureClass = /^ERR_HTTP2_(SESSION_)?ERROR$/.test(err.code ?? '') ? 'protocol' : 'reset';
      for (const a of this.active) {
        if (a.failure !== undefined) continue;
        a.failure = cls;
        a.detail = `the session ended: ${err.code ? `${err.code}: ` : ''}${err.message}`;
      }
      this.closed();
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
      const a: Active = { stream, sample, resolve, ended: false, slot: -1 };
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
      stream.on('frameError', (type: number) => {
        if (type !== HEADERS_FRAME || a.failure !== undefined) return;
        // nghttp2 did not send the request's HEADERS: the session takes no new stream. It is closing
        // — a GOAWAY received, or one it sent for a connection error node:http2 need not report (an
        // invalid HPACK block). It closes the stream as REFUSED_STREAM; kept in use, the session
        // failed every later request without a frame on the wire (1,988 of 2,000 in one run). The
        // server never saw this one: unprocessed, retried on another session.
        a.failure = 'goaway';
        a.detail = 'node:http2 did not send the request: its session takes no new streams';
        this.retire();
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
        a.expiredMs = nowMs;
        // RST_STREAM(CANCEL), RFC 9113 §8.7: the server can stop working on it.
        a.stream.close(NGHTTP2_CANCEL);
      } else if (a.expiredMs !== undefined && nowMs - a.expiredMs >= STUCK_STREAM_MS) {
        // Cancelled and still not closed: node's session is broken without saying so (after an
        // invalid HPACK block it sends GOAWAY(COMPRESSION_ERROR) and emits nothing, its streams
        // never close). Its requests end here and the pool opens another session.
        a.detail = `${a.detail}; the stream did not close ${STUCK_STREAM_MS} ms after its RST_STREAM(CANCEL): the session was taken for broken (node:http2 reported nothing)`;
        this.close();
        return;
      }
    }
  }

  /** Takes no more requests; closes once those it has ended. */
  private retire(): void {
    this.dead = true;
    if (this.active.size === 0) this.close();
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
    for (const a of this.active.toArray()) {
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
    if (this.dead && this.active.size === 0 && !this.notified) this.close();
  }
}

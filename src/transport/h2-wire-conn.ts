/**
 * An HTTP/2 connection of the `h2` and `h2-pool` transports on h2lab's own client session
 * (`src/h2/session.ts`) — the default (`--h2-client h2lab`). The `node` alternative is in
 * `h2-node-conn.ts`; both present the same {@link PoolConn}.
 */

import { type H2labError, Slots, type Slotted, VERSION } from '../core/index.ts';
import {
  FrameLog,
  H2ClientSession,
  H2Code,
  H2SetupError,
  type H2Stream,
  RequestEncoder,
  type StreamEndReason,
  type StreamHandler,
  UNLIMITED_STREAMS,
} from '../h2/index.ts';
import type { FailureClass, RequestSpec, Sample, WireProtocol } from '../model/index.ts';
import { ConnectError, endedFailure, ReadSink } from './connect.ts';
import type { H2Options } from './h2-connect.ts';
import { connectH2, protocolMismatch } from './h2-connect.ts';
import { type PoolConn, PoolConnBase } from './pool-conn.ts';
import type { ConnectionFacts } from './pool-stats.ts';

/**
 * Streams a session opens before the server's SETTINGS have said its limit. RFC 9113 §6.5.2 starts
 * SETTINGS_MAX_CONCURRENT_STREAMS unlimited and recommends servers allow at least 100; staying at 100
 * means a server that allows fewer refuses few streams (they are retried), and one that allows more
 * gets the rest as soon as its SETTINGS arrive ({@link PoolConn.onLimitsChanged}).
 */
export const PROVISIONAL_STREAMS = 100;

/**
 * Opens one session: TCP (+TLS with ALPN h2) and the preface. A session a request is waiting for
 * (`beforeRun` false: opened on demand, its setup inside the timed period) is handed over at once:
 * RFC 9113 §3.4 lets a client send frames right after its preface, as browsers, h2load and curl do —
 * waiting for the server's SETTINGS cost every fresh session one round trip that an HTTP/1.1
 * connection does not pay (bench/referee.ts measured it over TLS: 64 × 10 KiB at RTT 200 ms, 1.88 s
 * against h2load's 1.65 s; over h2c 1.08–1.13× h2load's burst). Over TLS, ALPN has already shown that
 * the server speaks h2. Over h2c (prior knowledge) its first bytes are the only proof, and they come
 * after the requests: a server that answers in HTTP/1.1 fails those requests `protocol-mismatch`,
 * and the connection's {@link WireH2Conn.mismatch} is the error the run stops with. A session opened
 * before the run waits for the SETTINGS, so it is warm when the clock starts (a request written in
 * the same flight as the handshake's end got its first response headers one round trip late from the
 * fixture, Node's TLS server, though the burst completed as soon), and a mismatch rejects it with
 * H2LAB_ERR_PROTOCOL_MISMATCH — as does HTTP/1.1 chosen in ALPN.
 */
export async function openWireH2Conn(
  id: number,
  opts: H2Options,
  onClose: (c: PoolConn) => void,
  beforeRun = true,
): Promise<WireH2Conn> {
  const t = opts.target;
  const requested: WireProtocol = t.tls ? 'h2' : 'h2c';
  // h2c reads into the shared buffer (connect.ts); the session copies what it keeps.
  const sink = t.tls ? undefined : new ReadSink();
  const c = await connectH2(opts, sink);
  c.socket.removeAllListeners('error');
  c.socket.removeAllListeners('close');
  const session = new H2ClientSession(c.socket, {
    ...(sink ? { reads: sink } : {}),
    streamWindowBytes: opts.window.streamWindowBytes,
    connectionWindowBytes: opts.window.connectionWindowBytes,
    // The TCP handshake is this connection's round trip: a WINDOW_UPDATE takes half of it to arrive.
    rttMs: c.connectMs,
    ...(t.framesFile ? { frameLog: new FrameLog(t.framesFile, id) } : {}),
  });
  if (!beforeRun) {
    // No SETTINGS within the timeout, or first bytes that are not HTTP/2, end the session and its
    // streams (these say why: WireH2Conn.settle).
    session.ready(t.connectTimeoutMs).catch(() => {});
    const conn = new WireH2Conn(id, session, opts, requested, c.connectMs, c.tlsMs, onClose, false);
    conn.tlsVersion = c.tlsVersion;
    return conn;
  }
  try {
    await session.ready(t.connectTimeoutMs);
  } catch (err) {
    session.destroy();
    const e = err as H2SetupError;
    const mismatch = e instanceof H2SetupError ? setupMismatch(e, requested, opts.authority) : undefined;
    if (mismatch) throw mismatch;
    throw new ConnectError(
      e instanceof H2SetupError && e.kind === 'timeout' ? 'timeout' : endedFailure(session.socketError),
      e.message,
      session.socketError?.code,
    );
  }
  const conn = new WireH2Conn(id, session, opts, requested, c.connectMs, c.tlsMs, onClose, true);
  conn.tlsVersion = c.tlsVersion;
  return conn;
}

/** The mismatch a session's first bytes show: HTTP/1.1, or something that is not HTTP/2. */
function setupMismatch(e: H2SetupError, requested: WireProtocol, authority: string): H2labError | undefined {
  if (e.kind === 'http1') {
    return protocolMismatch(
      requested,
      `http/1.1 (the server answered the h2c preface with "${e.statusLine}")`,
      authority,
    );
  }
  if (e.kind === 'protocol') {
    // It answered, but not in HTTP/2 (an HTTP/0.9-style error page, a TLS alert, ...).
    return protocolMismatch(
      requested,
      `something that is not HTTP/2 (the server answered the preface with "${e.statusLine ?? ''}…")`,
      authority,
    );
  }
  return undefined;
}

/** One request on the wire: the stream's events become the sample. */
class Req implements StreamHandler, Slotted {
  stream: H2Stream | undefined;
  slot = -1;
  timedOut = false;
  constructor(
    readonly conn: WireH2Conn,
    readonly sample: Sample,
    readonly resolve: (s: Sample) => void,
    readonly bodyless: boolean,
  ) {}

  onHeaders(status: number, _headers: unknown, blockBytes: number): void {
    this.sample.headersMs = this.conn.now();
    this.sample.status = status;
    this.sample.headerBytesIn = blockBytes;
  }

  onData(bytes: number): void {
    this.sample.bytesIn += bytes;
  }

  onEnd(reason: StreamEndReason, code: number, detail: string | undefined): void {
    this.conn.settle(this, reason, code, detail);
  }
}

/** Connection-specific fields: malformed in HTTP/2 (RFC 9113 §8.2.2) and HTTP/3 (RFC 9114 §4.2). */
export const CONNECTION_FIELDS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
]);

/** One HTTP/2 session in a pool, on h2lab's own client. */
class WireH2Conn extends PoolConnBase implements PoolConn {
  private readonly session: H2ClientSession;
  private readonly active = new Slots<Req>();
  private readonly encoder: RequestEncoder;
  private lastHeaders: Record<string, string> | undefined;
  private lastHeadersKey = '';
  private extra: Array<readonly [string, string]> = [];
  private hostOverride: string | undefined;
  private notified = false;
  /** Set by close(): streams it ends were aborted by the client, not reset by the server. */
  private closing = false;
  /** The server's SETTINGS have arrived (its stream limit is known). */
  private settingsKnown: boolean;
  private readonly authority: string;
  private mismatchFound: H2labError | undefined;

  constructor(
    id: number,
    session: H2ClientSession,
    opts: H2Options,
    protocol: WireProtocol,
    connectMs: number,
    tlsMs: number | undefined,
    onClose: (c: PoolConn) => void,
    settingsKnown: boolean,
  ) {
    super(id, protocol, opts.pool.now, connectMs, tlsMs, onClose);
    this.session = session;
    this.settingsKnown = settingsKnown;
    session.onSettings = () => {
      this.settingsKnown = true;
      this.onLimitsChanged?.();
    };
    this.authority = opts.authority;
    this.encoder = new RequestEncoder(opts.target.tls ? 'https' : 'http', opts.authority, `h2lab/${VERSION}`);
    session.onGoaway = (_last, code) => {
      this.goawayAtMs ??= this.now();
      this.goawayCode ??= code;
      // Streams at or below the last id still complete; with none left, the session is done.
      if (this.active.size === 0) this.close();
    };
    session.onClose = () => this.closed();
  }

  usable(): boolean {
    return this.session.usable();
  }

  capacity(): number {
    const m = this.session.maxConcurrentStreams;
    return this.settingsKnown ? m : Math.min(m, PROVISIONAL_STREAMS);
  }

  announcedLimit(): number | undefined {
    if (!this.settingsKnown) return undefined;
    const m = this.session.maxConcurrentStreams;
    return m >= UNLIMITED_STREAMS ? undefined : m;
  }

  send(spec: RequestSpec, sample: Sample): Promise<Sample> {
    return new Promise((resolve) => this.sendCb(spec, sample, resolve));
  }

  /**
   * Sends with a callback: `done` runs from the session's frame handling when the stream ends (or
   * at once when the session refuses the stream), with no promise in between.
   */
  sendCb(spec: RequestSpec, sample: Sample, done: (s: Sample) => void): void {
    const body = spec.body && spec.body.length > 0 ? spec.body : undefined;
    const block = this.blockFor(spec, body?.length);
    const r = new Req(this, sample, done, spec.method === 'HEAD');
    sample.sentMs = this.now();
    this.active.add(r);
    try {
      r.stream = this.session.request(block, body, r);
    } catch (err) {
      this.settle(
        r,
        this.session.goawayLastStream >= 0 ? 'goaway' : 'connection',
        -1,
        (err as Error).message,
      );
      return;
    }
    if (body) sample.bytesOut = body.length;
  }

  expire(nowMs: number, timeoutMs: number): void {
    for (const r of this.active) {
      if (nowMs - r.sample.sentMs >= timeoutMs && !r.timedOut && r.stream) {
        r.timedOut = true;
        // RST_STREAM(CANCEL), RFC 9113 §8.7: the server can stop working on it.
        this.session.cancel(r.stream, H2Code.CANCEL);
      }
    }
  }

  close(): void {
    this.closing = true;
    this.session.close();
    this.closed();
  }

  facts(): ConnectionFacts {
    return { flowStalls: this.session.flowStalls() };
  }

  mismatch(): H2labError | undefined {
    const e = this.session.setupError;
    if (e && !this.mismatchFound) this.mismatchFound = setupMismatch(e, this.protocol, this.authority);
    return this.mismatchFound;
  }

  /** Ends a request: classifies the stream's end into the sample and resolves it. */
  settle(r: Req, reason: StreamEndReason, code: number, detail: string | undefined): void {
    if (!this.active.delete(r)) return;
    this.requests++;
    const s = r.sample;
    s.endMs = this.now();
    if (r.stream) s.streamId = r.stream.id;
    const mismatch = reason === 'connection' ? this.mismatch() : undefined;
    const failure = mismatch
      ? 'protocol-mismatch'
      : this.closing && reason === 'connection'
        ? 'aborted'
        : classify(r, reason, code, this.session.socketError);
    if (failure) {
      s.error = failure;
      s.errorDetail = mismatch
        ? mismatch.message
        : r.timedOut
          ? `no complete response within the timeout`
          : (detail ?? reason);
    }
    r.resolve(s);
  }

  private closed(): void {
    if (this.notified) return;
    this.notified = true;
    // Requests still here were never handed to the session (the session ends its own streams).
    for (const r of [...this.active]) this.settle(r, 'connection', -1, 'session closed');
    this.onClose(this);
  }

  /** The HPACK block for a request, encoded once per distinct request on this connection. */
  private blockFor(spec: RequestSpec, bodyLength: number | undefined): Buffer {
    let key = `${spec.method} ${spec.path}`;
    if (bodyLength !== undefined) key += `\0${bodyLength}`;
    const h = spec.headers;
    if (h && h !== this.lastHeaders) {
      // The engine passes the same headers object with every request: convert it once.
      this.lastHeaders = h;
      this.lastHeadersKey = JSON.stringify(h);
      this.extra = [];
      this.hostOverride = undefined;
      for (const k in h) {
        const name = k.toLowerCase();
        // Connection-specific fields are malformed in HTTP/2 (RFC 9113 §8.2.2); Host becomes :authority.
        if (CONNECTION_FIELDS.has(name)) continue;
        if (name === 'host') this.hostOverride = h[k]!;
        else this.extra.push([name, h[k]!]);
      }
    }
    if (h) key += `\0${this.lastHeadersKey}`;
    const extra = h ? this.extra : [];
    const fields =
      bodyLength === undefined ? extra : [...extra, ['content-length', String(bodyLength)] as const];
    return this.encoder.encode(
      key,
      spec.method,
      spec.path,
      fields,
      this.session.peerHeaderTableSize,
      h ? this.hostOverride : undefined,
    );
  }
}

function classify(
  r: Req,
  reason: StreamEndReason,
  code: number,
  socketError: Error | undefined,
): FailureClass | undefined {
  if (r.timedOut) return 'timeout';
  switch (reason) {
    case 'end':
      return undefined;
    case 'reset':
      return code === H2Code.REFUSED_STREAM ? 'refused-stream' : 'reset';
    case 'goaway':
      return 'goaway';
    case 'cancel':
      return 'aborted';
    case 'malformed':
    case 'protocol':
      return 'protocol';
    default:
      // The connection ended under a stream the server had taken (at or below any GOAWAY's last id),
      // or a TLS alert ended it (a client certificate refused after the handshake: endedFailure).
      return endedFailure(socketError);
  }
}

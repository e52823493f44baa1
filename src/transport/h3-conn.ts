/**
 * HTTP/3 connections for the `h3` and `h3-pool` strategies: one QUIC connection (src/h3's binding)
 * as a {@link PoolConn}, so the pool, its policies, timeouts, retries and statistics are the same
 * ones HTTP/1.1 and HTTP/2 use.
 *
 * The strict assertion: the handshake must choose ALPN `h3` (RFC 9114 §3.1), else
 * H2LAB_ERR_PROTOCOL_MISMATCH. There is no fallback to TCP: a server that does not answer on UDP
 * is a failed connection, and `compare` reports the cell as not offered.
 *
 * Streams. The peer's initial_max_streams_bidi (RFC 9000 §4.6) is not exposed by the binding, and
 * opening beyond it throws; a connection carries {@link PROVISIONAL_H3_STREAMS} at first, and when a
 * request meets the limit the limit is learned as the streams then open, the request waits on this
 * connection for the next stream to end (the server's MAX_STREAMS follows it) and the wait counts as
 * a cap hit, as a request waiting at HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS does.
 */
import { H2labError, Slots, type Slotted, VERSION } from '../core/index.ts';
import { type H3Connection, loadBinding, unavailable } from '../h3/index.ts';
import type { QuicConnectionInfo, RequestSpec, Sample } from '../model/index.ts';
import { ConnectError, type ConnectTarget } from './connect.ts';
import { CONNECTION_FIELDS } from './h2-wire-conn.ts';
import { PoolTransport } from './pool.ts';
import { type PoolConn, PoolConnBase, type PoolSettings } from './pool-conn.ts';
import type { ConnectionFacts } from './pool-stats.ts';
import type { PoolPolicy } from './presets.ts';

/**
 * Streams a QUIC connection carries until the peer's limit is learned: quiche's and Chromium's
 * default initial_max_streams_bidi, and the floor RFC 9113 §6.5.2 recommends for HTTP/2.
 */
const PROVISIONAL_H3_STREAMS = 100;

/** Options of an HTTP/3 transport. */
interface H3Options {
  name: string;
  target: ConnectTarget;
  /** `host:port` for `:authority`. */
  authority: string;
  /** Receive windows, bytes: QUIC initial_max_stream_data_bidi_local and initial_max_data. */
  window: { streamWindowBytes: number; connectionWindowBytes: number };
  pool: Omit<PoolSettings, 'name' | 'requested' | 'policy' | 'openAtStart' | 'size'>;
  /** Connections: 1 for `h3`, K for `h3-pool`. */
  connections: number;
  policy: PoolPolicy;
}

/** Creates an HTTP/3 transport of `opts.connections` QUIC connections. */
export function createH3(opts: H3Options): PoolTransport {
  if (!opts.target.tls) {
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `${opts.name} needs an https:// URL: HTTP/3 runs over QUIC, which is always encrypted (RFC 9001); use https://${opts.authority}`,
      { option: 'url', value: `http://${opts.authority}` },
    );
  }
  return new PoolTransport(
    {
      ...opts.pool,
      name: opts.name,
      requested: 'h3',
      policy: opts.policy,
      size: opts.connections,
      openAtStart: opts.policy === 'first-free' ? 1 : opts.connections,
    },
    (id, onClose) => openH3Conn(id, opts, onClose),
  );
}

async function openH3Conn(id: number, opts: H3Options, onClose: (c: PoolConn) => void): Promise<PoolConn> {
  // Not a connect failure: without the binding nothing can be measured (the cell is not offered).
  const binding = await loadBinding().catch((err: unknown) => {
    throw err instanceof H2labError ? err : unavailable(String(err));
  });
  const t = opts.target;
  const started = opts.pool.now();
  const how = {
    host: t.host,
    port: t.port,
    ...(t.servername ? { servername: t.servername } : {}),
    ...(t.ca ? { ca: t.ca } : {}),
    ...(t.insecure ? { insecure: true } : {}),
    timeoutMs: t.connectTimeoutMs,
    streamWindowBytes: opts.window.streamWindowBytes,
    connectionWindowBytes: opts.window.connectionWindowBytes,
    ...(t.qlogDir ? { qlogDir: t.qlogDir } : {}),
  };
  let c: H3Connection;
  try {
    c = await binding.connect(how);
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    // The binding's words: "timed out" for a handshake that never completed (nothing on UDP there).
    if (/time/i.test(msg)) throw new ConnectError('timeout', `QUIC handshake: ${msg}`);
    // It says only that the session closed, also when its client rejected the certificate: one
    // handshake without verification tells the two apart, so the error names --ca / -k as h2's does.
    if (!t.insecure) {
      const unverified = await binding
        .connect({ ...how, insecure: true, qlogDir: undefined })
        .catch(() => undefined);
      if (unverified) {
        await unverified.close();
        throw new ConnectError(
          'tls',
          `QUIC handshake: the server's certificate is not trusted (${msg}; the same handshake without verification completes)`,
        );
      }
    }
    throw new ConnectError('connect', `QUIC handshake: ${msg}`);
  }
  if (c.alpn !== 'h3') {
    await c.close();
    throw new H2labError(
      'H2LAB_ERR_PROTOCOL_MISMATCH',
      `requested h3 but the server negotiated ${c.alpn || 'nothing'} at ${opts.authority}: use --protocol h2 to measure HTTP/2, or enable HTTP/3 on the server`,
      { requested: 'h3', negotiated: c.alpn || 'none', target: opts.authority },
    );
  }
  // QUIC has no separate transport handshake: connect time is 0 and the whole QUIC + TLS 1.3
  // handshake (RFC 9001 §4) is the TLS time, so a result compares it with TCP + TLS.
  const conn = new H3Conn(id, c, opts, 0, opts.pool.now() - started, onClose);
  conn.tlsVersion = 'TLSv1.3';
  return conn;
}

interface Req extends Slotted {
  spec: RequestSpec;
  sample: Sample;
  resolve: (s: Sample) => void;
  cancel?: () => void;
  timedOut: boolean;
  done: boolean;
}

class H3Conn extends PoolConnBase implements PoolConn {
  private readonly active = new Slots<Req>();
  /** Requests that met the peer's stream limit, in order. */
  private readonly blocked: Req[] = [];
  private learnedLimit: number | undefined;
  private closing = false;
  private isClosed = false;
  private reading: QuicConnectionInfo | undefined;
  private readonly base: Record<string, string>;

  constructor(
    id: number,
    private readonly c: H3Connection,
    opts: H3Options,
    connectMs: number,
    tlsMs: number,
    onClose: (c: PoolConn) => void,
  ) {
    super(id, 'h3', opts.pool.now, connectMs, tlsMs, onClose);
    this.base = { ':scheme': 'https', ':authority': opts.authority, 'user-agent': `h2lab/${VERSION}` };
    c.onClose((reason) => this.closed(reason));
  }

  usable(): boolean {
    return !this.isClosed && !this.closing;
  }

  capacity(): number {
    return this.learnedLimit ?? PROVISIONAL_H3_STREAMS;
  }

  announcedLimit(): number | undefined {
    return this.learnedLimit;
  }

  facts(): ConnectionFacts {
    this.takeReading();
    const port = this.c.localPort;
    return this.reading
      ? { quic: port !== undefined ? { ...this.reading, clientPort: port } : this.reading }
      : {};
  }

  /** The binding's reading of the connection, taken while it is open (the last one stays after). */
  private takeReading(): void {
    if (!this.isClosed) this.reading = this.c.facts() ?? this.reading;
  }

  send(spec: RequestSpec, sample: Sample): Promise<Sample> {
    return new Promise((resolve) => {
      const r: Req = { spec, sample, resolve, timedOut: false, done: false, slot: -1 };
      this.active.add(r);
      this.start(r);
    });
  }

  private start(r: Req): void {
    const { spec, sample } = r;
    const body = spec.body && spec.body.length > 0 ? spec.body : undefined;
    const h: Record<string, string> = { ':method': spec.method, ':path': spec.path, ...this.base };
    if (spec.headers) {
      for (const k in spec.headers) {
        const name = k.toLowerCase();
        // Connection-specific fields are malformed in HTTP/3 (RFC 9114 §4.2); Host is :authority.
        if (name === 'host') h[':authority'] = spec.headers[k]!;
        else if (!CONNECTION_FIELDS.has(name)) h[name] = spec.headers[k]!;
      }
    }
    if (body) h['content-length'] = String(body.length);
    sample.sentMs = this.now();
    const handle = this.c.request(h, body, {
      headers: (status) => {
        sample.headersMs = this.now();
        sample.status = status;
      },
      data: (n) => {
        sample.bytesIn += n;
      },
      end: () => this.settle(r),
      error: (err) => this.settle(r, err.message),
    });
    if (handle === 'stream-limit') {
      // Learned: the peer allows at least the streams open now. QUIC's limit counts streams opened
      // (RFC 9000 §4.6), and the credit of streams that ended comes back in MAX_STREAMS frames, so
      // a refusal can come with fewer open than the limit (8 of 20 seen in CI, when quick responses
      // ended before their credit returned): the most open at any refusal is the estimate, a lower
      // bound that only rises. Wait on this connection for one to end.
      this.learnedLimit = Math.max(this.learnedLimit ?? 1, this.active.size - this.blocked.length - 1);
      this.blocked.push(r);
      this.onLimitsChanged?.();
      return;
    }
    r.cancel = handle.cancel;
    if (body) sample.bytesOut = body.length;
  }

  expire(nowMs: number, timeoutMs: number): void {
    for (const r of this.active) {
      if (!r.timedOut && nowMs - r.sample.sentMs >= timeoutMs) {
        r.timedOut = true;
        r.cancel?.();
        this.settle(r, 'no complete response within the timeout');
      }
    }
  }

  close(): void {
    if (this.isClosed) return;
    this.closing = true;
    this.takeReading();
    void this.c.close();
    this.closed('closed by h2lab');
  }

  private settle(r: Req, error?: string): void {
    if (r.done) return;
    r.done = true;
    this.active.delete(r);
    const bi = this.blocked.indexOf(r);
    if (bi >= 0) this.blocked.splice(bi, 1);
    this.requests++;
    const s = r.sample;
    s.endMs = this.now();
    if (r.timedOut) {
      s.error = 'timeout';
      s.errorDetail = 'no complete response within the timeout';
    } else if (error !== undefined) {
      s.error = this.closing ? 'aborted' : 'reset';
      s.errorDetail = error;
    }
    r.resolve(s);
    // A stream ended: the peer's MAX_STREAMS follows; the oldest blocked request tries again.
    const next = this.blocked.shift();
    if (next && !this.isClosed) queueMicrotask(() => this.start(next));
  }

  private closed(reason: string): void {
    if (this.isClosed) return;
    this.takeReading();
    this.isClosed = true;
    for (const r of this.active.toArray()) this.settle(r, `connection closed: ${reason}`);
    this.onClose(this);
  }
}

/**
 * `h1`: a pool of N keep-alive HTTP/1.1 connections, one request in flight on each — what browsers
 * (six per host) and most clients do.
 *
 * The connection is a lean client on `net.Socket` with a minimal response parser rather than
 * `node:http`'s Agent: the stock client costs ~2× the CPU per request (docs/performance.md, "Load
 * engine (src/load) and transports (src/transport)"), and a load generator that is its own bottleneck measures itself. It parses exactly what a
 * response needs to be delimited (RFC 9112 §6.3): status line, Content-Length, Transfer-Encoding:
 * chunked, Connection: close, and bodies that end with the connection.
 */
import type net from 'node:net';
import { VERSION } from '../core/index.ts';
import type { FailureClass, RequestSpec, Sample, WireProtocol } from '../model/index.ts';
import { type ConnectTarget, connectTimed, endedFailure, ReadSink, wireFromAlpn } from './connect.ts';
import { PoolTransport } from './pool.ts';
import { type PoolConn, PoolConnBase, type PoolSettings } from './pool-conn.ts';

/** Options of the `h1` transport. */
interface H1Options {
  /** The strategy's registry key, reported as the transport's name. */
  name: string;
  target: ConnectTarget;
  /** `host:port` for the Host header. */
  authority: string;
  pool: Omit<PoolSettings, 'name' | 'requested' | 'policy' | 'openAtStart'>;
}

/** Creates the `h1` transport: `pool.size` connections, opened on demand, one request each. */
export function createH1Pool(opts: H1Options): PoolTransport {
  const now = opts.pool.now;
  return new PoolTransport(
    {
      ...opts.pool,
      name: opts.name,
      requested: 'http/1.1',
      policy: 'first-free',
      openAtStart: opts.pool.size,
    },
    async (id, onClose) => {
      // Offer only http/1.1: offering h2 too would let the server pick it.
      // Cleartext sockets read into a shared buffer (connect.ts): the parser copies what it keeps.
      const sink = new ReadSink();
      const c = await connectTimed(opts.target, ['http/1.1'], now, sink);
      const conn = new H1Conn(
        id,
        c.socket,
        opts.authority,
        now,
        c.connectMs,
        c.tlsMs,
        onClose,
        wireFromAlpn(c.alpn),
        opts.target.tls ? undefined : sink,
      );
      conn.tlsVersion = c.tlsVersion;
      return conn;
    },
  );
}

const CR = 13;
const LF = 10;
const MAX_HEAD_BYTES = 64 * 1024;

enum Body {
  None = 0,
  Length = 1,
  Chunked = 2,
  UntilClose = 3,
}

enum Chunk {
  Size = 0,
  Ext = 1,
  SizeLf = 2,
  Data = 3,
  DataCr = 4,
  DataLf = 5,
  TrailerStart = 6,
  TrailerLine = 7,
  FinalLf = 8,
}

/** One HTTP/1.1 keep-alive connection; one request at a time (no pipelining). */
class H1Conn extends PoolConnBase implements PoolConn {
  private readonly socket: net.Socket;
  private readonly hostLine: string;
  private keepAlive = true;
  private dead = false;
  // The request in progress.
  private sample: Sample | undefined;
  private resolve: ((s: Sample) => void) | undefined;
  private isHead = false;
  private head: Buffer | undefined;
  private bodyMode: Body = Body.None;
  private remaining = 0;
  private chunkState: Chunk = Chunk.Size;
  private chunkSize = 0;
  private expectedLength = -1;

  constructor(
    id: number,
    socket: net.Socket,
    authority: string,
    now: () => number,
    connectMs: number,
    tlsMs: number | undefined,
    onClose: (c: PoolConn) => void,
    alpn: WireProtocol | 'none',
    sink: ReadSink | undefined,
  ) {
    super(id, 'http/1.1', now, connectMs, tlsMs, onClose);
    this.socket = socket;
    this.hostLine = ` HTTP/1.1\r\nhost: ${authority}\r\nuser-agent: h2lab/${VERSION}\r\n`;
    if (alpn !== 'http/1.1') this.keepAlive = false;
    socket.removeAllListeners('error');
    socket.removeAllListeners('close');
    if (sink) sink.attach((b) => this.onData(b));
    else socket.on('data', (b: Buffer) => this.onData(b));
    socket.on('error', (err: Error & { code?: string }) => this.onEnd(err));
    socket.on('close', () => this.onEnd(undefined));
  }

  usable(): boolean {
    return !this.dead && this.keepAlive;
  }

  capacity(): number {
    return 1;
  }

  announcedLimit(): number | undefined {
    return undefined;
  }

  send(spec: RequestSpec, sample: Sample): Promise<Sample> {
    return new Promise((resolve) => this.sendCb(spec, sample, resolve));
  }

  /** The request path as callbacks: no promise per request between the socket and the pool. */
  sendCb(spec: RequestSpec, sample: Sample, done: (s: Sample) => void): void {
    this.sample = sample;
    this.resolve = done;
    this.isHead = spec.method === 'HEAD';
    this.head = undefined;
    let text = spec.method + ' ' + spec.path + this.hostLine;
    if (spec.headers) for (const k in spec.headers) text += k + ': ' + spec.headers[k] + '\r\n';
    const body = spec.body;
    sample.sentMs = this.now();
    if (body && body.length > 0) {
      text += 'content-length: ' + body.length + '\r\n\r\n';
      this.socket.cork();
      this.socket.write(text, 'latin1');
      this.socket.write(body);
      this.socket.uncork();
      sample.bytesOut = body.length;
    } else {
      this.socket.write(text + '\r\n', 'latin1');
    }
  }

  expire(nowMs: number, timeoutMs: number): void {
    const s = this.sample;
    if (s && nowMs - s.sentMs >= timeoutMs) {
      this.finish('timeout', `no complete response within ${timeoutMs} ms`);
      this.destroy();
    }
  }

  close(): void {
    if (this.sample) this.finish('aborted', 'connection closed by the client');
    this.destroy();
  }

  private destroy(): void {
    this.keepAlive = false;
    if (!this.dead) {
      this.dead = true;
      this.socket.destroy();
      this.onClose(this);
    }
  }

  private onEnd(err: (Error & { code?: string }) | undefined): void {
    if (this.sample) {
      if (this.sample.headersMs !== undefined && this.bodyMode === Body.UntilClose && !err) {
        this.finish(undefined, undefined);
      } else {
        const where =
          this.sample.headersMs === undefined
            ? 'before the response headers'
            : `after the headers, ${this.sample.bytesIn} of ${this.expectedLength >= 0 ? this.expectedLength : '?'} body bytes`;
        this.finish(
          endedFailure(err),
          `${err ? (err.code ?? err.message) : 'connection closed by the server'} ${where}`,
        );
      }
    }
    this.destroy();
  }

  private finish(error: FailureClass | undefined, detail: string | undefined): void {
    const sample = this.sample;
    const resolve = this.resolve;
    if (!sample || !resolve) return;
    this.sample = undefined;
    this.resolve = undefined;
    this.head = undefined;
    this.bodyMode = Body.None;
    this.requests++;
    sample.endMs = this.now();
    if (error) {
      sample.error = error;
      if (detail) sample.errorDetail = detail;
      this.keepAlive = false;
    }
    resolve(sample);
  }

  private onData(chunk: Buffer): void {
    const sample = this.sample;
    if (!sample) {
      // Bytes nobody asked for: the connection is out of step, never reuse it.
      this.destroy();
      return;
    }
    if (sample.headersMs === undefined) {
      this.parseHead(chunk, sample);
      return;
    }
    this.onBody(chunk, 0, sample);
  }

  private parseHead(chunk: Buffer, sample: Sample): void {
    const buf = this.head ? Buffer.concat([this.head, chunk]) : chunk;
    // Reject a peer that does not answer in HTTP/1.x (an h2-only port answers with binary frames).
    if (buf.length >= 5 && !startsWithHttp(buf)) {
      this.finish('protocol-mismatch', `the server did not answer in HTTP/1.1 (first bytes ${hex(buf)})`);
      this.destroy();
      return;
    }
    const scan = scanHead(buf);
    const end = scan.end;
    // The cap holds whether the head came in pieces or in one read.
    if (end < 0 ? buf.length > MAX_HEAD_BYTES : end + 4 > MAX_HEAD_BYTES) {
      this.finish('protocol', `response head larger than ${MAX_HEAD_BYTES} bytes`);
      this.destroy();
      return;
    }
    if (end < 0) {
      // A copy: `chunk` may be a view of the shared read buffer (connect.ts).
      this.head = buf === chunk ? Buffer.from(chunk) : buf;
      return;
    }
    this.head = undefined;
    // Read as bytes, not as a string: the head is parsed once per response.
    const status = end >= 12 ? (buf[9]! - 48) * 100 + (buf[10]! - 48) * 10 + (buf[11]! - 48) : -1;
    if (!(status >= 100 && status < 600)) {
      const line = buf.toString('latin1', 0, Math.min(end, 40));
      this.finish('protocol', `malformed status line ${JSON.stringify(line)}`);
      this.destroy();
      return;
    }
    if (status < 200 && status !== 101) {
      // 1xx interim responses (RFC 9110 §15.2) precede the real one.
      if (buf.length > end + 4) this.parseHead(buf.subarray(end + 4), sample);
      return;
    }
    const { length, chunked, ka } = scan;
    if (!ka) this.keepAlive = false;
    sample.headersMs = this.now();
    sample.status = status;
    sample.headerBytesIn = end + 4;
    this.expectedLength = length;
    if (this.isHead || status === 204 || status === 304) this.bodyMode = Body.None;
    else if (chunked) {
      this.bodyMode = Body.Chunked;
      this.chunkState = Chunk.Size;
      this.chunkSize = 0;
    } else if (length >= 0) {
      this.bodyMode = Body.Length;
      this.remaining = length;
    } else {
      this.bodyMode = Body.UntilClose;
      this.keepAlive = false;
    }
    if (this.bodyMode === Body.None || (this.bodyMode === Body.Length && this.remaining === 0)) {
      this.complete(buf.length > end + 4);
      return;
    }
    if (buf.length > end + 4) this.onBody(buf, end + 4, sample);
  }

  private onBody(b: Buffer, from: number, sample: Sample): void {
    switch (this.bodyMode) {
      case Body.Length: {
        const avail = b.length - from;
        const take = Math.min(avail, this.remaining);
        sample.bytesIn += take;
        this.remaining -= take;
        if (this.remaining === 0) this.complete(avail > take);
        return;
      }
      case Body.UntilClose:
        sample.bytesIn += b.length - from;
        return;
      case Body.Chunked:
        this.onChunked(b, from, sample);
        return;
      default:
        this.destroy();
    }
  }

  /** RFC 9112 §7.1: size in hex, optional extensions, CRLF, data, CRLF … 0 CRLF, trailers, CRLF. */
  private onChunked(b: Buffer, from: number, sample: Sample): void {
    let i = from;
    const n = b.length;
    while (i < n) {
      switch (this.chunkState) {
        case Chunk.Size: {
          const c = b[i++]!;
          const v =
            c >= 48 && c <= 57 ? c - 48 : (c | 0x20) >= 97 && (c | 0x20) <= 102 ? (c | 0x20) - 87 : -1;
          if (v >= 0) this.chunkSize = this.chunkSize * 16 + v;
          else if (c === CR) this.chunkState = Chunk.SizeLf;
          else if (c === LF) this.afterSize();
          else this.chunkState = Chunk.Ext;
          break;
        }
        case Chunk.Ext:
          if (b[i++] === LF) this.afterSize();
          break;
        case Chunk.SizeLf:
          i++;
          this.afterSize();
          break;
        case Chunk.Data: {
          const avail = n - i;
          const take = Math.min(avail, this.remaining);
          sample.bytesIn += take;
          this.remaining -= take;
          i += take;
          if (this.remaining === 0) this.chunkState = Chunk.DataCr;
          break;
        }
        case Chunk.DataCr:
          this.chunkState = b[i++] === CR ? Chunk.DataLf : Chunk.Size;
          break;
        case Chunk.DataLf:
          i++;
          this.chunkState = Chunk.Size;
          this.chunkSize = 0;
          break;
        case Chunk.TrailerStart: {
          const c = b[i++]!;
          if (c === CR) this.chunkState = Chunk.FinalLf;
          else if (c === LF) {
            this.complete(i < n);
            return;
          } else this.chunkState = Chunk.TrailerLine;
          break;
        }
        case Chunk.TrailerLine:
          if (b[i++] === LF) this.chunkState = Chunk.TrailerStart;
          break;
        case Chunk.FinalLf:
          i++;
          this.complete(i < n);
          return;
      }
    }
  }

  private afterSize(): void {
    if (this.chunkSize === 0) this.chunkState = Chunk.TrailerStart;
    else {
      this.remaining = this.chunkSize;
      this.chunkState = Chunk.Data;
    }
  }

  private complete(extraBytes: boolean): void {
    // Bytes after a complete response on a non-pipelined connection mean we are out of step.
    if (extraBytes) this.keepAlive = false;
    this.finish(undefined, undefined);
    if (!this.keepAlive) this.destroy();
  }
}

/** Whether the bytes begin `HTTP/`. */
function startsWithHttp(b: Buffer): boolean {
  return b[0] === 72 && b[1] === 84 && b[2] === 84 && b[3] === 80 && b[4] === 47;
}

/** Whether the `name.length` bytes at `at` are `name` (lower case) in any case. */
function nameIs(b: Buffer, at: number, len: number, name: string): boolean {
  if (len !== name.length) return false;
  for (let k = 0; k < len; k++) if ((b[at + k]! | 0x20) !== name.charCodeAt(k)) return false;
  return true;
}

/** What one pass over a response head found (see {@link scanHead}). */
interface HeadScan {
  /** Where the head's terminating CRLF CRLF starts, or -1 while it has not arrived. */
  end: number;
  /** Content-Length, or -1 without one. */
  length: number;
  chunked: boolean;
  /** Whether the connection may be reused after this response. */
  ka: boolean;
}

/** The one scan object: a head is scanned and read before the next one is (one thread, no await). */
const SCAN: HeadScan = { end: -1, length: -1, chunked: false, ka: true };

/**
 * One pass over the lines of a head: where it ends and what delimits the body (RFC 9112 §6.3). Lines
 * end in CRLF; the head ends at the first empty line. A head still arriving leaves `end` at -1.
 */
function scanHead(b: Buffer): HeadScan {
  const out = SCAN;
  out.end = -1;
  out.length = -1;
  out.chunked = false;
  out.ka = b[7] !== 48; // HTTP/1.0 closes unless it says keep-alive
  const n = b.length;
  let i = b.indexOf(LF) + 1;
  while (i > 0 && i < n) {
    if (b[i] === CR) {
      if (i + 1 < n && b[i + 1] === LF && b[i - 1] === LF && b[i - 2] === CR) out.end = i - 2;
      return out;
    }
    let e = i;
    while (e < n && b[e] !== CR) e++;
    if (e + 1 >= n) return out;
    const c = b[i]! | 0x20;
    if (c === 0x63 /* c */ || c === 0x74 /* t */) {
      let colon = i;
      while (colon < e && b[colon] !== 58) colon++;
      const len = colon - i;
      if (colon < e) {
        if (nameIs(b, i, len, 'content-length')) out.length = decimalAt(b, colon + 1, e);
        else if (nameIs(b, i, len, 'transfer-encoding'))
          out.chunked = endsWithToken(b, colon + 1, e, 'chunked');
        else if (nameIs(b, i, len, 'connection')) {
          if (hasToken(b, colon + 1, e, 'close')) out.ka = false;
          else if (hasToken(b, colon + 1, e, 'keep-alive')) out.ka = true;
        }
      }
    }
    i = e + 2;
  }
  return out;
}

/** Whether `word` (lower case) occurs in [from, to) in any case. */
function hasToken(b: Buffer, from: number, to: number, word: string): boolean {
  for (let i = from; i + word.length <= to; i++) if (nameIs(b, i, word.length, word)) return true;
  return false;
}

/** Whether [from, to) ends in `word` (lower case, any case), trailing whitespace aside. */
function endsWithToken(b: Buffer, from: number, to: number, word: string): boolean {
  let e = to;
  while (e > from && (b[e - 1] === 32 || b[e - 1] === 9)) e--;
  return e - from >= word.length && nameIs(b, e - word.length, word.length, word);
}

/** The decimal number after optional whitespace in [from, to), or -1 when there is none. */
function decimalAt(b: Buffer, from: number, to: number): number {
  let i = from;
  while (i < to && (b[i] === 32 || b[i] === 9)) i++;
  let v = -1;
  for (; i < to; i++) {
    const d = b[i]! - 48;
    if (d < 0 || d > 9) break;
    v = (v < 0 ? 0 : v * 10) + d;
  }
  return v;
}

function hex(b: Buffer): string {
  return b.subarray(0, 8).toString('hex');
}

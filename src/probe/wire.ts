/**
 * Sockets for the probe: connect over TCP or TLS with a deadline, read a socket as a sequence of
 * chunks (`Inbox`), watch the TLS records going each way (`TlsRecordTap`), and name what went wrong
 * in words a user can act on (`classifyFailure`).
 */

import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { Duplex } from 'node:stream';
import tls from 'node:tls';
import { socketFailureOf } from '../core/index.ts';
import type { Failure, FailureKind } from '../model/index.ts';

/** Where to connect. `servername` is the TLS SNI (omitted for IP literals, RFC 6066 §3). */
export interface Endpoint {
  host: string;
  port: number;
  servername?: string;
}

/** The TLS material the user handed over: CA to trust, client certificate and key (PEM). */
export interface ClientTlsMaterial {
  ca?: string | Buffer;
  cert?: string | Buffer;
  key?: string | Buffer;
}

/**
 * Names a socket/TLS error in the probe's terms: src/core's socket-failure table for the codes, and
 * the TLS alert's words for what the table calls `tls` (which version, ALPN, a missing certificate).
 */
export function classifyFailure(err: unknown): Failure {
  const e = err as NodeJS.ErrnoException & { reason?: string };
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const message = e instanceof Error ? e.message : String(err);
  const text = `${code ?? ''} ${message}`.toLowerCase();
  const f = (kind: FailureKind): Failure => ({ kind, ...(code ? { code } : {}), detail: message });
  const socket = socketFailureOf(code);
  if (socket === 'unreachable') return f('unreachable');
  if (socket === 'timeout' || code === 'PROBE_TIMEOUT') return f('timeout');
  if (code === 'PROBE_NOT_TLS') return f('not-tls');
  if (
    /wrong version number|packet length too long|record layer failure|http request|unknown protocol/.test(
      text,
    )
  ) {
    return f('not-tls');
  }
  if (/certificate required|certificate_required|peer did not return a certificate/.test(text)) {
    return f('client-cert-required');
  }
  if (/no application protocol|no_application_protocol/.test(text)) return f('tls-alpn');
  // This machine's OpenSSL would not offer the version at all: nothing was learned about the server.
  if (code === 'ERR_SSL_NO_PROTOCOLS_AVAILABLE') return f('tls-handshake');
  if (
    /protocol version|unsupported protocol|no protocols available|version too low|tlsv1 alert protocol/.test(
      text,
    )
  ) {
    return f('tls-version');
  }
  if (
    /alert (bad certificate|unknown ca|certificate unknown|handshake failure)|alert_bad_certificate/.test(
      text,
    )
  ) {
    // A handshake_failure alert right after a client without a certificate is how TLS 1.2 servers
    // (and some TLS 1.3 ones) say "certificate required"; the caller decides with what it offered.
    return f('tls-handshake');
  }
  if (socket === 'reset') return f('reset');
  if (socket === 'tls' || /ssl|tls/.test(text)) return f('tls-handshake');
  return f('protocol');
}

/** An error thrown when a deadline passes (classified as `timeout`). */
export function timeoutError(what: string, ms: number): Error {
  return Object.assign(new Error(`${what}: no answer within ${Math.round(ms)} ms`), {
    code: 'PROBE_TIMEOUT',
  });
}

/**
 * Reads a stream as a sequence of chunks with deadlines, for protocols spoken step by step.
 * `next()` resolves with the next chunk, `null` at end of stream; rejects on a socket error or when
 * the deadline (a `performance.now()` time, ms) passes.
 */
export class Inbox {
  private readonly chunks: Buffer[] = [];
  private ended = false;
  private failure: Error | undefined;
  private wake: (() => void) | undefined;

  constructor(readonly stream: Duplex) {
    stream.on('data', (b: Buffer) => {
      this.chunks.push(b);
      this.notify();
    });
    stream.on('end', () => {
      this.ended = true;
      this.notify();
    });
    stream.on('close', () => {
      this.ended = true;
      this.notify();
    });
    stream.on('error', (err: Error) => {
      this.failure ??= err;
      this.notify();
    });
  }

  /** Puts bytes back at the front (read too far, e.g. frames after an HTTP/1.1 101 response). */
  unshift(b: Buffer): void {
    if (b.length > 0) this.chunks.unshift(b);
  }

  async next(deadlineMs: number, what = 'read'): Promise<Buffer | null> {
    for (;;) {
      const chunk = this.chunks.shift();
      if (chunk) return chunk;
      if (this.failure) throw this.failure;
      if (this.ended) return null;
      const waitMs = deadlineMs - performance.now();
      if (waitMs <= 0) throw timeoutError(what, 0);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.wake = undefined;
          reject(timeoutError(what, waitMs));
        }, waitMs);
        this.wake = () => {
          clearTimeout(timer);
          this.wake = undefined;
          resolve();
        };
      });
    }
  }

  private notify(): void {
    this.wake?.();
  }
}

/** Opens a TCP connection, rejecting at the deadline. Resolves once connected. */
export function connectTcp(ep: Endpoint, timeoutMs: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: ep.host, port: ep.port });
    socket.setNoDelay(true);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(timeoutError(`TCP connect to ${ep.host}:${ep.port}`, timeoutMs));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    });
  });
}

/** One TLS record seen on the wire (RFC 8446 §5.1): direction, content type, length. */
interface TlsRecord {
  dir: 'out' | 'in';
  type: number;
  length: number;
}

const RECORD_HANDSHAKE = 22;
const RECORD_CCS = 20;
const RECORD_APPDATA = 23;
const HANDSHAKE_CERTIFICATE_REQUEST = 13;

/**
 * Watches the TLS records a client writes and reads, without decrypting anything. That is enough to
 * answer two questions Node's TLS API does not:
 *
 * - did the server send a CertificateRequest? In TLS 1.2 it is a plaintext handshake message (type 13)
 *   before the server's ChangeCipherSpec (RFC 5246 §7.4.4). In TLS 1.3 it is encrypted, but the client
 *   must answer it with a Certificate message, even an empty one (RFC 8446 §4.4.2): OpenSSL writes each
 *   handshake message in its own record, so the client's encrypted handshake flight has more than one
 *   record (Certificate [+ CertificateVerify] + Finished) instead of just Finished.
 * - did the peer answer in TLS at all? (its first byte must be a TLS content type, 20–23.)
 */
export class TlsRecordTap {
  readonly records: TlsRecord[] = [];
  /** The first bytes the peer sent (to tell "HTTP/1.1 400" from TLS). */
  firstInBytes: Buffer | undefined;
  /** Handshake message types the server sent in plaintext (TLS 1.2: all of them; TLS 1.3: ServerHello). */
  readonly serverHandshakeTypes: number[] = [];
  private readonly pending = { in: Buffer.alloc(0), out: Buffer.alloc(0) };
  private serverHandshakeBytes = Buffer.alloc(0);
  private serverCcsSeen = false;

  feed(dir: 'in' | 'out', chunk: Buffer): void {
    if (dir === 'in' && !this.firstInBytes) this.firstInBytes = Buffer.from(chunk.subarray(0, 16));
    let buf = this.pending[dir].length ? Buffer.concat([this.pending[dir], chunk]) : chunk;
    while (buf.length >= 5) {
      const type = buf.readUInt8(0);
      const length = buf.readUInt16BE(3);
      if (type < 20 || type > 24) {
        // Not TLS (a plain-text server's answer): stop parsing this direction.
        buf = Buffer.alloc(0);
        break;
      }
      if (buf.length < 5 + length) break;
      this.records.push({ dir, type, length });
      if (dir === 'in' && type === RECORD_CCS) this.serverCcsSeen = true;
      if (dir === 'in' && type === RECORD_HANDSHAKE && !this.serverCcsSeen) {
        this.serverHandshakeBytes = Buffer.concat([this.serverHandshakeBytes, buf.subarray(5, 5 + length)]);
        this.parseServerHandshake();
      }
      buf = buf.subarray(5 + length);
    }
    this.pending[dir] = Buffer.from(buf);
  }

  private parseServerHandshake(): void {
    let b = this.serverHandshakeBytes;
    while (b.length >= 4) {
      const len = b.readUIntBE(1, 3);
      if (b.length < 4 + len) break;
      this.serverHandshakeTypes.push(b.readUInt8(0));
      b = b.subarray(4 + len);
    }
    this.serverHandshakeBytes = Buffer.from(b);
  }

  /** True when the peer's first byte is not a TLS record type: it is not speaking TLS. */
  get peerNotTls(): boolean {
    const b = this.firstInBytes;
    return b !== undefined && b.length > 0 && (b[0]! < 20 || b[0]! > 24);
  }

  /**
   * Whether the server asked for a client certificate. `tlsVersion` is the negotiated version;
   * `outRecordsAtHandshake` the number of client records written when the handshake completed.
   */
  certificateRequested(tlsVersion: string | null, outRecordsAtHandshake: number): boolean {
    if (this.serverHandshakeTypes.includes(HANDSHAKE_CERTIFICATE_REQUEST)) return true;
    if (tlsVersion !== 'TLSv1.3') return false;
    // TLS 1.3: the client's records after its ClientHello: [ChangeCipherSpec (middlebox
    // compatibility)], then encrypted handshake records. More than one means Certificate was sent.
    const out = this.records.filter((r) => r.dir === 'out').slice(0, outRecordsAtHandshake);
    const encrypted = out.filter((r) => r.type === RECORD_APPDATA);
    return encrypted.length > 1;
  }

  get outRecordCount(): number {
    return this.records.filter((r) => r.dir === 'out').length;
  }
}

/** A Duplex that passes bytes through to a socket and shows them to a tap on the way. */
class TappedStream extends Duplex {
  constructor(
    private readonly inner: net.Socket,
    private readonly tap: TlsRecordTap,
  ) {
    super();
    inner.on('data', (b: Buffer) => {
      tap.feed('in', b);
      if (!this.push(b)) inner.pause();
    });
    inner.on('end', () => this.push(null));
    inner.on('error', (err) => this.destroy(err));
    inner.on('close', () => {
      if (!this.destroyed) this.destroy();
    });
  }

  override _read(): void {
    this.inner.resume();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.tap.feed('out', chunk);
    this.inner.write(chunk, cb);
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.inner.end();
    cb();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.inner.destroy();
    cb(err);
  }
}

/** What one TLS handshake attempt offers. */
export interface TlsAttempt {
  alpn?: string[];
  minVersion?: tls.SecureVersion;
  maxVersion?: tls.SecureVersion;
  /** OpenSSL cipher string, e.g. `DEFAULT:@SECLEVEL=0` so that TLS 1.0/1.1 can be offered at all. */
  ciphers?: string;
  /** Ask for a stapled OCSP response (status_request, RFC 6066 §8). */
  requestOCSP?: boolean;
  /** Present the user's client certificate (when one was given). */
  presentClientCert: boolean;
}

/** A completed TLS handshake. The socket stays open for the caller, who must destroy it. */
interface TlsConnection {
  socket: tls.TLSSocket;
  tap: TlsRecordTap;
  /** Client records written by the end of the handshake (before any application data). */
  outRecordsAtHandshake: number;
  /** The stapled OCSP response, if the server sent one. */
  ocspResponse: Buffer | undefined;
  handshakeMs: number;
}

/**
 * Connects over TCP, then TLS, recording the records both ways. Certificate verification is left to
 * the caller (`rejectUnauthorized: false`; read `socket.authorized`), so that a probe can report on a
 * server whose certificate it does not trust. Rejects with the socket/TLS error (see {@link classifyFailure});
 * the tap is attached to the error as `tap` so the caller can tell "not TLS at all".
 */
export async function connectTls(
  ep: Endpoint,
  material: ClientTlsMaterial,
  attempt: TlsAttempt,
  timeoutMs: number,
): Promise<TlsConnection> {
  const deadline = performance.now() + timeoutMs;
  const raw = await connectTcp(ep, timeoutMs);
  const tap = new TlsRecordTap();
  const tapped = new TappedStream(raw, tap);
  const started = performance.now();
  return await new Promise<TlsConnection>((resolve, reject) => {
    let ocspResponse: Buffer | undefined;
    const socket = tls.connect({
      socket: tapped,
      // With `socket` given, `host` only names the peer for the certificate's hostname check.
      host: ep.servername ?? ep.host,
      ...(ep.servername ? { servername: ep.servername } : {}),
      rejectUnauthorized: false,
      ...(attempt.alpn ? { ALPNProtocols: attempt.alpn } : {}),
      ...(attempt.minVersion ? { minVersion: attempt.minVersion } : {}),
      ...(attempt.maxVersion ? { maxVersion: attempt.maxVersion } : {}),
      ...(attempt.ciphers ? { ciphers: attempt.ciphers } : {}),
      ...(attempt.requestOCSP ? { requestOCSP: true } : {}),
      ...(material.ca ? { ca: material.ca } : {}),
      ...(attempt.presentClientCert && material.cert && material.key
        ? { cert: material.cert, key: material.key }
        : {}),
    });
    const timer = setTimeout(
      () => fail(timeoutError(`TLS handshake with ${ep.host}:${ep.port}`, timeoutMs)),
      Math.max(0, deadline - performance.now()),
    );
    const fail = (err: Error): void => {
      clearTimeout(timer);
      socket.destroy();
      raw.destroy();
      if (tap.peerNotTls) {
        const preview = tap.firstInBytes!.toString('latin1').replace(/[^\x20-\x7e]/g, '.');
        reject(
          Object.assign(
            new Error(`the server answered the TLS ClientHello with non-TLS bytes "${preview}"`),
            {
              code: 'PROBE_NOT_TLS',
              tap,
            },
          ),
        );
        return;
      }
      reject(Object.assign(err, { tap }));
    };
    socket.on('OCSPResponse', (resp: Buffer) => {
      ocspResponse = resp;
    });
    socket.once('error', fail);
    socket.once('close', () =>
      fail(
        Object.assign(new Error('the server closed the connection during the TLS handshake'), {
          code: 'ECONNRESET',
        }),
      ),
    );
    socket.once('secureConnect', () => {
      const handshakeMs = performance.now() - started;
      // 'secureConnect' fires before the client's last handshake flight (TLS 1.3: [Certificate,]
      // Finished) has reached the underlying stream; one turn of the event loop later it has
      // (measured on Node 20). Count the client's records then, before the caller writes anything.
      setImmediate(() => {
        clearTimeout(timer);
        socket.removeListener('error', fail);
        socket.removeAllListeners('close');
        resolve({ socket, tap, outRecordsAtHandshake: tap.outRecordCount, ocspResponse, handshakeMs });
      });
    });
  });
}

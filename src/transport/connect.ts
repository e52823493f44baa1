/**
 * Opening one connection with its phases timed: TCP connect, then (for https) the TLS handshake with
 * ALPN. Both HTTP/1.1 and HTTP/2 transports use it, so connect and TLS times mean the same thing for
 * every strategy.
 */
import net from 'node:net';
import tls from 'node:tls';
import { appendKeyLog, socketFailureOf } from '../core/index.ts';
import type { FailureClass, WireProtocol } from '../model/index.ts';
import type { TcpLog } from '../net/index.ts';

/** Where and how to connect. TLS material is already loaded (PEM text). */
export interface ConnectTarget {
  host: string;
  port: number;
  tls: boolean;
  /** SNI and certificate name; defaults to `host` (omitted for IP literals, RFC 6066 §3). */
  servername?: string;
  /**
   * The name (or IP) the server's certificate must carry when `host` is not the URL's host: a
   * connection through an emulated link's gateway dials the link's address but talks to the URL's
   * server (as curl's `--connect-to`). Default: what `servername`/`host` say.
   */
  verifyHost?: string;
  /** Extra trusted CA certificates (PEM). */
  ca?: string;
  /** Client certificate and key for mutual TLS (PEM). */
  cert?: string;
  key?: string;
  /** Accept any server certificate. */
  insecure?: boolean;
  /** Give up on a connection attempt after this long, ms. */
  connectTimeoutMs: number;
  /** Where each connected socket's TCP_INFO is recorded (read at its close, or at the run's end). */
  tcp?: TcpLog;
  /** Append each TLS connection's secrets to this NSS key log (`SSLKEYLOGFILE` format). */
  keyLogFile?: string;
  /** h2lab's HTTP/2 client appends one JSON line per frame in and out to this file (`--frames`). */
  framesFile?: string;
  /** The HTTP/3 client's qlog directory (`--qlog`): one JSON-SEQ file per QUIC connection. */
  qlogDir?: string;
}

/** A connected socket with how long each phase took. */
export interface Connected {
  socket: net.Socket;
  connectMs: number;
  tlsMs?: number;
  /** ALPN result: the protocol id, or `false` when the server selected none. */
  alpn?: string | false;
  /** TLS version negotiated, as OpenSSL names it (`TLSv1.3`). */
  tlsVersion?: string;
}

/** A connection attempt that failed, classified. */
export class ConnectError extends Error {
  readonly failure: FailureClass;
  readonly errCode: string | undefined;
  constructor(failure: FailureClass, message: string, errCode?: string) {
    super(message);
    this.failure = failure;
    this.errCode = errCode;
  }
}

/**
 * One TLS context per distinct trust + client-certificate combination. Building a context with
 * `ca` re-parses the whole system root store (~150 certificates): done per connection it cost tens of
 * milliseconds of client CPU per handshake, which a pool of many connections pays and one HTTP/2
 * session does not — a client-side bias in exactly the comparison h2lab exists to make fair. The
 * default context (system roots, no client certificate) is shared the same way. `createTransport`
 * builds the context when the transport is made, before any clock starts: the first one to a new CA
 * took 45–63 ms here, which a timed burst's first connection would otherwise pay.
 */
const contexts = new Map<string, tls.SecureContext>();

export function secureContextFor(target: ConnectTarget): tls.SecureContext {
  const key = `${target.ca ?? ''}\0${target.cert ?? ''}\0${target.key ?? ''}`;
  let ctx = contexts.get(key);
  if (!ctx) {
    ctx = tls.createSecureContext({
      ...(target.ca ? { ca: [...tls.rootCertificates, target.ca] } : {}),
      ...(target.cert ? { cert: target.cert, key: target.key } : {}),
    });
    contexts.set(key, ctx);
  }
  return ctx;
}

/**
 * The class of an error during setup. The kernel giving up (ETIMEDOUT in src/core's socket-failure
 * table) is a `timeout`; otherwise where it happened decides: before TCP connected, `connect`; after
 * it (only a TLS target is still setting up then), `tls` whatever the code, a reset included: the
 * handshake is what was under way.
 */
function setupFailure(err: unknown, connected: boolean): FailureClass {
  if (socketFailureOf(err) === 'timeout') return 'timeout';
  return connected ? 'tls' : 'connect';
}

/**
 * The class of an error that ended a connection after its setup: a TLS alert is `tls`, anything else
 * `reset`. In TLS 1.3 the client's handshake is over before the server has verified the client's
 * certificate (RFC 8446 §4.4.2: it is sent with the client's Finished), so a server that refuses it
 * (no certificate, another CA's) answers with an alert (116 certificate_required, 48 unknown_ca)
 * on a connection the client already uses: a handshake refusal, not a peer that went away.
 */
export function endedFailure(err: unknown): FailureClass {
  return socketFailureOf(err) === 'tls' ? 'tls' : 'reset';
}

/** Checks a certificate against `name` (not the dialled address): see {@link ConnectTarget.verifyHost}. */
function identityOf(name: string): (host: string, cert: tls.PeerCertificate) => Error | undefined {
  return (_dialled, cert) => tls.checkServerIdentity(name, cert);
}

/**
 * Where a cleartext socket's bytes go when they are read into a reused buffer rather than emitted as
 * `data` events. Its reader attaches once it exists; what arrives before (copied) is handed over then.
 * A reader gets a view of the shared buffer, valid only during the call: what it keeps, it copies.
 */
export class ReadSink {
  private reader: ((bytes: Buffer) => void) | undefined;
  private early: Buffer[] | undefined;

  /** Called by the socket's `onread` for every read. */
  deliver(bytes: Buffer): void {
    if (this.reader) this.reader(bytes);
    else {
      this.early ??= [];
      this.early.push(Buffer.from(bytes));
    }
  }

  /** Sets who reads from now on, after what arrived before it. */
  attach(reader: (bytes: Buffer) => void): void {
    this.reader = reader;
    const early = this.early;
    this.early = undefined;
    if (early) for (const b of early) reader(b);
  }
}

/**
 * One buffer every cleartext socket of this thread reads into (`onread`, net.Socket): a read then
 * allocates no buffer (Node's default path allocates 64 KiB per read and shrinks it) and skips the
 * readable stream's push and `data` emit — about a third of the HTTP/1.1 client's CPU per request
 * (docs/performance.md). Shared because each read is handed on synchronously.
 */
let readBuffer: Buffer | undefined;
const READ_BUFFER_BYTES = 64 * 1024;

/**
 * Connects and, for TLS, handshakes offering `alpn` in order. Resolves once the socket is ready for
 * application data; rejects with a {@link ConnectError} (`connect`, `tls` or `timeout`). With `sink`,
 * a cleartext socket's bytes go to the sink's reader instead of `data` events (TLS sockets emit
 * `data` as usual: the sink is then unused).
 */
export function connectTimed(
  target: ConnectTarget,
  alpn: string[],
  now: () => number,
  sink?: ReadSink,
): Promise<Connected> {
  return new Promise((resolve, reject) => {
    const t0 = now();
    let tConnect = -1;
    let settled = false;
    const fail = (failure: FailureClass, err: Error & { code?: string }): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      reject(new ConnectError(failure, `${err.code ?? ''} ${err.message}`.trim(), err.code));
    };
    let socket: net.Socket;
    if (target.tls) {
      const secureContext = secureContextFor(target);
      const servername = target.servername ?? (net.isIP(target.host) ? undefined : target.host);
      socket = tls.connect({
        host: target.host,
        port: target.port,
        ...(servername ? { servername } : {}),
        ALPNProtocols: alpn,
        secureContext,
        rejectUnauthorized: !target.insecure,
        ...(target.verifyHost !== undefined ? { checkServerIdentity: identityOf(target.verifyHost) } : {}),
      });
      const keyLogFile = target.keyLogFile;
      if (keyLogFile !== undefined) socket.on('keylog', (line) => appendKeyLog(keyLogFile, line));
      socket.once('secureConnect', () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const t = now();
        const s = socket as tls.TLSSocket;
        const tlsVersion = s.getProtocol();
        resolve({
          socket,
          connectMs: tConnect - t0,
          tlsMs: t - tConnect,
          alpn: s.alpnProtocol ?? false,
          ...(tlsVersion ? { tlsVersion } : {}),
        });
      });
    } else if (sink) {
      readBuffer ??= Buffer.allocUnsafe(READ_BUFFER_BYTES);
      socket = net.connect({
        host: target.host,
        port: target.port,
        onread: {
          buffer: readBuffer,
          callback: (n, buf) => {
            sink.deliver((buf as Buffer).subarray(0, n));
            return true;
          },
        },
      });
    } else {
      socket = net.connect({ host: target.host, port: target.port });
    }
    socket.setNoDelay(true);
    socket.once('connect', () => {
      tConnect = now();
      target.tcp?.watch(socket);
      if (target.tls || settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ socket, connectMs: tConnect - t0 });
    });
    socket.once('error', (err: Error & { code?: string }) => fail(setupFailure(err, tConnect >= 0), err));
    socket.once('close', () =>
      fail(tConnect < 0 ? 'connect' : 'tls', new Error('connection closed during setup')),
    );
    const timer = setTimeout(
      () => fail('timeout', new Error(`no connection within ${target.connectTimeoutMs} ms`)),
      target.connectTimeoutMs,
    );
  });
}

/** The wire protocol name for an ALPN result on a TLS connection (no ALPN = HTTP/1.1, RFC 7301 §3.2). */
export function wireFromAlpn(alpn: string | false | undefined): WireProtocol | 'none' {
  if (alpn === 'h2') return 'h2';
  if (alpn === 'http/1.1' || alpn === false || alpn === undefined) return 'http/1.1';
  return 'none';
}

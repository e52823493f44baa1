/**
 * One request/response exchange, whatever the protocol. The routes are written once against this
 * interface; `H1Exchange` wraps Node's `http` request/response, `H2Exchange` an HTTP/2 stream (the
 * core API, not the compatibility layer, which costs a request and a response object per stream).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants, type Http2Session, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { Duplex, Readable, Writable } from 'node:stream';
import type { WireProtocol } from '../model/index.ts';

/** Response header fields (lower-case names), without pseudo-headers. */
export type Headers = Record<string, string | number | string[]>;

export interface Exchange {
  readonly protocol: WireProtocol;
  readonly method: string;
  /** The request target (path and query). */
  readonly url: string;
  /** A request header (lower-case name). */
  header(name: string): string | undefined;
  /** The request body. */
  readonly body: Readable;
  /** Sends a complete response. */
  respond(status: number, headers: Headers, body?: Buffer | string): void;
  /** Sends the head and returns the body stream to write and end. */
  start(status: number, headers: Headers): Writable;
  /** True once the response has been completely handed to the transport. */
  readonly finished: boolean;
  /** Runs `cb` once if the client goes away before the response is complete. */
  onGone(cb: () => void): void;
  /**
   * `/reset`: RST_STREAM with `code` (HTTP/2; INTERNAL_ERROR once the head was sent) or destroy the
   * connection (HTTP/1.1).
   */
  reset(code: number): void;
  /**
   * `/reset?mode=socket`: ends the whole connection at the TCP level, with no GOAWAY and no TLS
   * close_notify: what a crashing server or a middlebox dropping the connection looks like.
   */
  abortConnection(): void;
  /** `/goaway`: after this response, GOAWAY (HTTP/2) or `Connection: close` (HTTP/1.1). */
  goawayAfter(code: number): void;
}

/** HTTP/1.1 on either listener. */
export class H1Exchange implements Exchange {
  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
  ) {}
  get protocol(): WireProtocol {
    return 'http/1.1';
  }
  get method(): string {
    return this.req.method ?? 'GET';
  }
  get url(): string {
    const u = this.req.url ?? '/';
    // Absolute form (`GET http://host/path`, what a client sends to a proxy): a server must accept it
    // (RFC 9112 §3.2.2) and route on its path and query, as on origin form.
    if (/^https?:\/\//i.test(u)) {
      try {
        const parsed = new URL(u);
        return `${parsed.pathname}${parsed.search}`;
      } catch {
        return u;
      }
    }
    return u;
  }
  get body(): Readable {
    return this.req;
  }
  get finished(): boolean {
    return this.res.writableFinished;
  }
  header(name: string): string | undefined {
    const v = this.req.headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  }
  respond(status: number, headers: Headers, body?: Buffer | string): void {
    this.res.writeHead(status, headers);
    this.res.end(body);
  }
  start(status: number, headers: Headers): Writable {
    this.res.writeHead(status, headers);
    return this.res;
  }
  onGone(cb: () => void): void {
    // 'close' on the response fires when it completed *or* when the connection went away first.
    this.res.once('close', () => {
      if (!this.res.writableFinished) cb();
    });
  }
  reset(): void {
    this.req.socket.destroy();
  }
  abortConnection(): void {
    this.req.socket.destroy();
  }
  goawayAfter(): void {
    this.res.shouldKeepAlive = false;
  }
}

/**
 * The socket each HTTP/2 session was made on (set by the server as it hands the socket over). Node
 * forbids destroying `session.socket`, and `session.destroy()` sends GOAWAY(NO_ERROR) first.
 */
export const sessionSockets = new WeakMap<Http2Session, Duplex>();

/** Marks a stream that the server itself reset, so its close is not counted as a client RST_STREAM. */
export const kServerReset = Symbol('h2lab.serverReset');

/** HTTP/2 (h2 or h2c). */
export class H2Exchange implements Exchange {
  constructor(
    readonly stream: ServerHttp2Stream,
    readonly headers: IncomingHttpHeaders,
    readonly protocol: WireProtocol,
    /** Fields added to every response (the TLS listener's `Alt-Svc` once HTTP/3 listens). */
    readonly extra?: Headers,
  ) {}
  get method(): string {
    return this.headers[':method'] ?? 'GET';
  }
  get url(): string {
    return this.headers[':path'] ?? '/';
  }
  get body(): Readable {
    return this.stream;
  }
  get finished(): boolean {
    return this.stream.writableFinished;
  }
  header(name: string): string | undefined {
    const v = this.headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  }
  respond(status: number, headers: Headers, body?: Buffer | string): void {
    if (this.stream.destroyed) return;
    // Node copies the object and adds `:status: 200` when absent, so a 200 can pass a cached object.
    const h = status === 200 && !this.extra ? headers : { ...headers, ...this.extra, ':status': status };
    if (body === undefined || body.length === 0) {
      this.stream.respond(h, { endStream: true });
    } else {
      this.stream.respond(h);
      this.stream.end(body);
    }
  }
  start(status: number, headers: Headers): Writable {
    if (!this.stream.destroyed) this.stream.respond({ ...headers, ...this.extra, ':status': status });
    return this.stream;
  }
  onGone(cb: () => void): void {
    this.stream.once('close', () => {
      if (!this.stream.writableFinished || this.stream.rstCode !== constants.NGHTTP2_NO_ERROR) cb();
    });
  }
  reset(code: number): void {
    (this.stream as unknown as Record<symbol, boolean>)[kServerReset] = true;
    if (this.stream.headersSent) {
      // Once DATA has been written, Node's close(code) ends the writable side first and the peer
      // sees a clean end (rstCode 0); destroying with an error sends RST_STREAM(INTERNAL_ERROR).
      this.stream.destroy(new Error('reset by the /reset fixture'));
    } else this.stream.close(code);
  }
  abortConnection(): void {
    const session = this.stream.session;
    if (!session) return;
    const raw = sessionSockets.get(session);
    if (raw) raw.destroy();
    else session.destroy();
  }
  goawayAfter(code: number): void {
    const session: Http2Session | undefined = this.stream.session;
    this.stream.once('finish', () => {
      // RFC 9113 §6.8: the last stream id we processed is this one; then close the connection.
      if (session && !session.destroyed) {
        session.goaway(code, this.stream.id ?? 0);
        session.close();
      }
    });
  }
}

/**
 * The fixture's HTTP/3 listener (UDP, through src/h3's binding) and its {@link Exchange}: the same
 * routes, limits of the route table and counters as HTTP/1.1 and HTTP/2, so an h3 run is measured
 * against the same server. It listens on the TLS port's number by default, which is what the
 * `Alt-Svc: h3=":PORT"` the TLS listener sends says (RFC 7838 §3; RFC 9114 §3.1.1).
 */
import type { Writable } from 'node:stream';
import { type H3Listener, type H3ServerStream, loadBinding } from '../h3/index.ts';
import type { WireProtocol } from '../model/index.ts';
import type { Exchange, Headers } from './exchange.ts';
import type { ServerMetrics } from './metrics.ts';
import type { ServerOptions } from './options.ts';
import type { Router } from './routes.ts';

/** HTTP/3 error codes (RFC 9114 §8.1). */
const H3_NO_ERROR = 0x100;
const H3_INTERNAL_ERROR = 0x102;
const H3_REQUEST_CANCELLED = 0x10c;

function h3Headers(status: number, headers: Headers): Record<string, string> {
  const h: Record<string, string> = { ':status': String(status) };
  for (const k in headers) {
    const v = headers[k]!;
    h[k] = Array.isArray(v) ? v.join(', ') : String(v);
  }
  return h;
}

/** One HTTP/3 request stream. */
class H3Exchange implements Exchange {
  private sent = false;
  constructor(private readonly s: H3ServerStream) {}
  get protocol(): WireProtocol {
    return 'h3';
  }
  get method(): string {
    return this.header(':method') ?? 'GET';
  }
  get url(): string {
    return this.header(':path') ?? '/';
  }
  get body() {
    return this.s.duplex;
  }
  get finished(): boolean {
    return this.sent || this.s.duplex.writableFinished;
  }
  header(name: string): string | undefined {
    const v = this.s.headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  }
  respond(status: number, headers: Headers, body?: Buffer | string): void {
    if (this.s.duplex.destroyed) return;
    const h = h3Headers(status, headers);
    if (body === undefined || body.length === 0) this.s.respond(h, true);
    else this.s.respondWithBody(h, body);
    this.sent = true;
  }
  start(status: number, headers: Headers): Writable {
    if (!this.s.duplex.destroyed) this.s.respond(h3Headers(status, headers), false);
    return this.s.duplex;
  }
  onGone(cb: () => void): void {
    this.s.duplex.once('close', () => {
      if (!this.finished) cb();
    });
  }
  reset(code: number): void {
    // RST_STREAM's CANCEL (8) is H3_REQUEST_CANCELLED; anything else an internal error.
    this.s.reset(code === 8 ? H3_REQUEST_CANCELLED : H3_INTERNAL_ERROR);
  }
  abortConnection(): void {
    this.s.closeConnection(H3_INTERNAL_ERROR);
  }
  goawayAfter(): void {
    this.s.duplex.once('finish', () => this.s.closeConnection(H3_NO_ERROR));
  }
}

/** Starts the HTTP/3 listener on UDP `port`; rejects with H2LAB_ERR_H3_UNAVAILABLE without the binding. */
export async function startH3Listener(
  opts: ServerOptions,
  port: number,
  tls: { certPem: string; keyPem: string },
  router: Router,
  metrics: ServerMetrics,
): Promise<H3Listener> {
  const binding = await loadBinding();
  metrics.quic.settings = {
    binding: binding.id,
    retry: opts.quicRetry,
    maxStreams: opts.maxConcurrentStreams,
    congestionControl: binding.congestionControl,
    congestionControlSource: binding.congestionControlSource,
  };
  return binding.listen(
    {
      host: opts.h3Host ?? opts.host,
      port,
      certPem: tls.certPem,
      keyPem: tls.keyPem,
      // The same stream limit an HTTP/2 client gets in SETTINGS_MAX_CONCURRENT_STREAMS.
      maxStreams: opts.maxConcurrentStreams,
      idleTimeoutMs: opts.h2IdleTimeoutMs || 30_000,
      retry: opts.quicRetry,
      ...(opts.qlogDir ? { qlogDir: opts.qlogDir } : {}),
      onConnection: (c) => {
        metrics.connectionsTotal.quic.h3++;
        metrics.connectionsOpen.quic.h3++;
        metrics.quic.opened(c);
      },
      onConnectionClose: (c) => {
        metrics.connectionsOpen.quic.h3--;
        metrics.quic.ended(c);
      },
    },
    (s) => {
      metrics.streamsOpen++;
      s.duplex.once('close', () => metrics.streamsOpen--);
      s.duplex.on('error', () => {});
      router.handle(new H3Exchange(s));
    },
  );
}

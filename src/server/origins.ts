/**
 * Several HTTPS origins served from this host, one listener each: what `h2lab page` serves a
 * generated site from (to record it) and a recorded page from (to replay it).
 *
 * ```
 *   Chromium --host-resolver-rules="MAP www.x.test A:p1, MAP cdn.x.test A:p2"
 *        │                                   │
 *        ▼                                   ▼
 *   listener p1: cert for www.x.test     listener p2: cert for cdn.x.test     (one per origin)
 *   speaks http/1.1 | h2 | h3          speaks http/1.1 | h2 | h3          (per origin: dilution)
 *        └── the origin's resources: recorded status, headers, body, after the recorded think time
 * ```
 *
 * Each listener presents a certificate naming its own host, signed by the CA it is given (h2lab's
 * development CA), and listens on a port of its own: Chromium pools an HTTP/2 connection for another
 * host only when the certificate covers that host and the resolved address and port are the same
 * ("connection coalescing", RFC 9113 §9.1.1), so separate origins do not coalesce, as separate
 * servers of a real page would not. Hosts that shared a server where the page was recorded (`shared`)
 * share one listener and one certificate naming them all, and Chromium coalesces them again. What a listener speaks is chosen by what its TLS handshake offers (ALPN), the
 * way a server that has not turned HTTP/2 on answers a browser that asks for it.
 */
import { once } from 'node:events';
import http2 from 'node:http2';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { H3Listener } from '../h3/index.ts';
import { loadBinding } from '../h3/index.ts';
import type { ReplayProtocol } from '../model/index.ts';
import { issueServerCertificate } from '../tls/index.ts';

/** One response an origin serves. */
export interface OriginResource {
  method: string;
  /** Path and query, e.g. `/img/3.svg?v=1`. */
  path: string;
  status: number;
  /** Response header fields as recorded (connection-specific ones are dropped when served). */
  headers: ReadonlyArray<readonly [string, string]>;
  body: OriginBody;
  /** Delay before the response head is sent, ms: the server's think time. */
  thinkMs: number;
}

/**
 * A body made while it is sent: `head`, filler bytes, then `tail`, `length` bytes in all. A HAR
 * without bodies claims sizes only; a claimed 500 MB costs a 64 KiB pattern, not 500 MB of memory.
 */
interface FillerBody {
  readonly length: number;
  readonly head: Buffer;
  readonly tail: Buffer;
}

/** What an origin serves: bytes held in memory, or a {@link FillerBody}. */
export type OriginBody = Buffer | FillerBody;

const FILLER_UNIT = 'h2lab synthesised body ';
/** The filler's pattern, a whole number of units (so consecutive slices continue it), ~64 KiB. */
const FILLER = Buffer.from(FILLER_UNIT.repeat(Math.ceil(65_536 / FILLER_UNIT.length)));

/**
 * A body of `bytes` bytes: `open`, the filler, `close` (both cut when `bytes` is smaller than they
 * are), built when it is sent.
 *
 * @example fillerBody(1e9, '/*', '*' + '/').length // 1e9, and nothing allocated beyond the head and tail
 */
export function fillerBody(bytes: number, open = '', close = ''): FillerBody {
  const n = Math.max(0, Math.floor(bytes));
  if (n <= open.length + close.length) {
    const all = Buffer.from(`${open}${close}`.slice(0, n));
    return { length: all.length, head: all, tail: Buffer.alloc(0) };
  }
  return { length: n, head: Buffer.from(open), tail: Buffer.from(close) };
}

/** The body's bytes in order, at most ~64 KiB at a time. */
export function* bodyChunks(body: OriginBody): Generator<Buffer> {
  if (Buffer.isBuffer(body)) {
    if (body.length > 0) yield body;
    return;
  }
  if (body.head.length > 0) yield body.head;
  for (let left = body.length - body.head.length - body.tail.length; left > 0; left -= FILLER.length)
    yield FILLER.subarray(0, Math.min(left, FILLER.length));
  if (body.tail.length > 0) yield body.tail;
}

/** What a response can be written to: node:http's and node:http2's responses, an HTTP/3 stream. */
interface BodySink {
  write(chunk: Buffer): boolean;
  end(): void;
  once(event: 'drain' | 'close', f: () => void): unknown;
}

/** Writes `body` to `sink` and ends it, waiting for `drain` whenever the sink's buffer is full. */
function sendBody(sink: BodySink, body: OriginBody): void {
  const chunks = bodyChunks(body);
  let closed = false;
  sink.once('close', () => {
    closed = true;
  });
  const more = (): void => {
    for (;;) {
      if (closed) return;
      const next = chunks.next();
      if (next.done) {
        sink.end();
        return;
      }
      if (!sink.write(next.value)) {
        sink.once('drain', more);
        return;
      }
    }
  };
  more();
}

/** One origin: its hostname and what it serves. */
export interface OriginSpec {
  host: string;
  /** What the origin speaks: HTTP/1.1 over TLS, h2 over TLS (HTTP/1.1 offered beside it), or h3. */
  wire: ReplayProtocol;
  resources: readonly OriginResource[];
}

/** A listening origin. */
export interface OriginListener {
  host: string;
  wire: ReplayProtocol;
  /** TCP port (http/1.1, h2) or UDP port (h3). */
  port: number;
}

/** What the origins answered since they started. */
interface OriginTally {
  /** Requests answered with a recorded resource. */
  served: number;
  /** Requests no recorded resource matched (answered 404), as `host path`. */
  misses: string[];
}

/** The running origins. */
export interface OriginServers {
  readonly listeners: readonly OriginListener[];
  /** The certificates presented, PEM, one per host (for SPKI pins). */
  readonly certPems: readonly string[];
  tally(): OriginTally;
  close(): Promise<void>;
}

/** Options of {@link startOriginServers}. */
interface OriginServerOptions {
  /** The CA that signs each host's certificate (PEM certificate and PKCS#8 key). */
  ca: { caPem: string; caKeyPem: string };
  /** Address to listen on. Default 127.0.0.1. */
  address?: string;
  /**
   * Address the HTTP/3 (UDP) listeners bind instead of `address`: the unspecified one inside a
   * namespace holding only `lo`, where nothing but `address` reaches it (net/isolation.ts).
   */
  quicAddress?: string;
  /**
   * SETTINGS_MAX_CONCURRENT_STREAMS (h2) and initial_max_streams_bidi (h3) announced. Default 128,
   * nginx's `http2_max_concurrent_streams` default: Chrome stops at 100 when a server announces none.
   */
  maxConcurrentStreams?: number;
  /** Certificates already issued, by host list (reused across calls, so a replay issues each once). */
  certCache?: Map<string, { pem: string; keyPem: string }>;
  /**
   * Hosts that share one server: one listener whose certificate names them all, so Chromium pools
   * their requests onto one HTTP/2 or HTTP/3 connection (connection coalescing, RFC 9113 §9.1.1) as
   * it did where the page was recorded. Hosts of a group served with different protocols in this
   * call get listeners of their own (they could not share a connection anyway).
   */
  shared?: ReadonlyArray<readonly string[]>;
}

/** Default streams a replayed origin allows per connection (nginx's default). */
export const ORIGIN_MAX_STREAMS = 128;

/** Response fields that belong to one connection or one encoding, never replayed (RFC 9113 §8.2.2). */
const DROPPED = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'content-encoding',
  'alt-svc',
  'date',
  'http2-settings',
  'te',
]);

/** Whether a response of this status carries content (RFC 9110 §6.4.1: not 1xx, 204, 304). */
const hasBody = (status: number) => status >= 200 && status !== 204 && status !== 304;

/** Headers to send for `r`, with content-length of the body actually served. */
function replayHeaders(r: OriginResource): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k0, v] of r.headers) {
    const k = k0.toLowerCase();
    if (k.startsWith(':') || DROPPED.has(k)) continue;
    const prev = out[k];
    out[k] = prev === undefined ? v : [...(Array.isArray(prev) ? prev : [prev]), v];
  }
  if (hasBody(r.status)) out['content-length'] = String(r.body.length);
  return out;
}

/** Resources of one origin by `METHOD path`, and by `METHOD pathname` for queries that change per load. */
class OriginTable {
  private readonly exact = new Map<string, OriginResource>();
  private readonly loose = new Map<string, OriginResource>();
  constructor(resources: readonly OriginResource[]) {
    for (const r of resources) {
      const key = `${r.method} ${r.path}`;
      if (!this.exact.has(key)) this.exact.set(key, r);
      const bare = `${r.method} ${r.path.split('?')[0]}`;
      if (!this.loose.has(bare)) this.loose.set(bare, r);
    }
  }
  find(method: string, path: string): OriginResource | undefined {
    return this.exact.get(`${method} ${path}`) ?? this.loose.get(`${method} ${path.split('?')[0]}`);
  }
}

/** The specs grouped into listeners: each group of `shared` whose members speak one protocol, else one each. */
function listenerUnits(
  specs: readonly OriginSpec[],
  shared: ReadonlyArray<readonly string[]>,
): OriginSpec[][] {
  const byHost = new Map(specs.map((s) => [s.host, s]));
  const taken = new Set<string>();
  const units: OriginSpec[][] = [];
  for (const group of shared) {
    const members = group
      .map((h) => byHost.get(h))
      .filter((s): s is OriginSpec => s !== undefined && !taken.has(s.host));
    for (const wire of new Set(members.map((m) => m.wire))) {
      const unit = members.filter((m) => m.wire === wire);
      for (const m of unit) taken.add(m.host);
      units.push(unit);
    }
  }
  for (const s of specs) if (!taken.has(s.host)) units.push([s]);
  return units;
}

const NOT_FOUND: OriginResource = {
  method: 'GET',
  path: '',
  status: 404,
  headers: [
    ['content-type', 'text/plain'],
    ['server-timing', 'think;dur=0'],
  ],
  body: Buffer.from('not recorded\n'),
  thinkMs: 0,
};

/**
 * Starts one listener per origin. Rejects with H2LAB_ERR_H3_UNAVAILABLE when an origin asks for h3
 * without the binding.
 *
 * @example
 * const o = await startOriginServers([{ host: 'www.example.test', wire: 'h2', resources }], { ca: dev });
 * // Chromium: --host-resolver-rules="MAP www.example.test 127.0.0.1:${o.listeners[0].port}"
 */
export async function startOriginServers(
  specs: readonly OriginSpec[],
  opts: OriginServerOptions,
): Promise<OriginServers> {
  const address = opts.address ?? '127.0.0.1';
  const maxStreams = opts.maxConcurrentStreams ?? ORIGIN_MAX_STREAMS;
  const cache = opts.certCache ?? new Map<string, { pem: string; keyPem: string }>();
  const tally: OriginTally = { served: 0, misses: [] };
  const listeners: OriginListener[] = [];
  const closers: Array<() => Promise<void>> = [];
  const timers = new Set<NodeJS.Timeout>();
  const pems = new Set<string>();
  const answer = (host: string, table: OriginTable, method: string, path: string) => {
    const r = table.find(method, path);
    if (r) tally.served++;
    else if (tally.misses.length < 1000) tally.misses.push(`${host} ${path}`);
    return r ?? NOT_FOUND;
  };
  const later = (ms: number, f: () => void) => {
    if (ms <= 0) return f();
    const t = setTimeout(() => {
      timers.delete(t);
      f();
    }, ms);
    timers.add(t);
  };
  try {
    for (const unit of listenerUnits(specs, opts.shared ?? [])) {
      const names = unit.map((u) => u.host);
      const key = [...names].sort().join(' ');
      let cert = cache.get(key);
      if (!cert) {
        cert = await issueServerCertificate(opts.ca.caPem, opts.ca.caKeyPem, names);
        cache.set(key, cert);
      }
      pems.add(cert.pem);
      const wire = unit[0]!.wire;
      const tables = new Map(unit.map((u) => [u.host, new OriginTable(u.resources)]));
      // A shared listener tells its hosts apart by the request's authority (Host or :authority).
      const route = (authority: string | undefined, method: string, path: string) => {
        const host = (authority ?? '').replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
        const name = tables.has(host) ? host : names[0]!;
        return answer(name, tables.get(name)!, method, path);
      };
      if (wire === 'h3') {
        const binding = await loadBinding();
        const l: H3Listener = await binding.listen(
          {
            // The address the listener is reported on, as for TCP: a replay never serves a HAR to
            // the network. On loopback quiche takes its path-MTU probe ceiling from the route to the
            // client (65535 there) and probes up to 16383 bytes, which Chromium may refuse
            // (QUIC_PACKET_TOO_LARGE, docs/usage.md "h2lab browser"); behind a link the route is the
            // link's (MTU 1500) and it does not; in a namespace holding only `lo` the unspecified
            // address (`quicAddress`) reaches no more than 127.0.0.1 and its ceiling is 1472.
            host: opts.quicAddress ?? address,
            port: 0,
            certPem: cert.pem,
            keyPem: cert.keyPem,
            maxStreams,
            idleTimeoutMs: 30_000,
            onConnection: () => {},
            onConnectionClose: () => {},
            retry: false,
          },
          (s) => {
            s.duplex.on('error', () => {});
            const h = (n: string) => {
              const v = s.headers[n];
              return Array.isArray(v) ? v.join(', ') : v;
            };
            const r = route(h(':authority'), h(':method') ?? 'GET', h(':path') ?? '/');
            s.duplex.resume();
            later(r.thinkMs, () => {
              if (s.duplex.destroyed) return;
              const head: Record<string, string> = { ':status': String(r.status) };
              for (const [k, v] of Object.entries(replayHeaders(r)))
                head[k] = Array.isArray(v) ? v.join(', ') : v;
              if (r.body.length === 0 || !hasBody(r.status)) s.respond(head, true);
              else if (Buffer.isBuffer(r.body)) s.respondWithBody(head, r.body);
              else {
                s.respond(head, false);
                sendBody(s.duplex, r.body);
              }
            });
          },
        );
        for (const name of names) listeners.push({ host: name, wire: 'h3', port: l.port });
        closers.push(() => l.close());
        continue;
      }
      const handler = (
        req: {
          method?: string;
          url?: string;
          headers: Record<string, string | string[] | undefined>;
          resume(): void;
        },
        res: BodySink & {
          writeHead(s: number, h: Record<string, string | string[]>): void;
          destroyed?: boolean;
        },
      ) => {
        const authority = req.headers[':authority'] ?? req.headers.host;
        const r = route(
          Array.isArray(authority) ? authority[0] : authority,
          req.method ?? 'GET',
          req.url ?? '/',
        );
        req.resume();
        later(r.thinkMs, () => {
          if (res.destroyed) return;
          res.writeHead(r.status, replayHeaders(r));
          if (req.method === 'HEAD' || !hasBody(r.status)) res.end();
          else sendBody(res, r.body);
        });
      };
      const server =
        wire === 'h2'
          ? http2.createSecureServer(
              {
                cert: cert.pem,
                key: cert.keyPem,
                allowHTTP1: true,
                ALPNProtocols: ['h2', 'http/1.1'],
                settings: { maxConcurrentStreams: maxStreams },
              },
              handler as never,
            )
          : https.createServer(
              { cert: cert.pem, key: cert.keyPem, ALPNProtocols: ['http/1.1'] },
              handler as never,
            );
      server.on('secureConnection', (s) => s.on('error', () => {}));
      server.listen(0, address);
      await once(server, 'listening');
      const sockets = new Set<import('node:net').Socket>();
      server.on('connection', (s) => {
        sockets.add(s);
        s.once('close', () => sockets.delete(s));
      });
      const port = (server.address() as AddressInfo).port;
      for (const name of names) listeners.push({ host: name, wire, port });
      closers.push(async () => {
        const closed = new Promise<void>((r) => server.close(() => r()));
        for (const s of sockets) s.destroy();
        await closed;
      });
    }
  } catch (err) {
    for (const c of closers) await c().catch(() => {});
    throw err;
  }
  return {
    listeners,
    certPems: [...pems],
    tally: () => ({ served: tally.served, misses: [...tally.misses] }),
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const c of closers.splice(0)) await c().catch(() => {});
    },
  };
}

/**
 * Chromium's `--host-resolver-rules` value sending each listener's host to `address:port`.
 *
 * @example resolverRules(o.listeners, '127.0.0.1') // 'MAP www.x.test 127.0.0.1:40001, MAP cdn.x.test 127.0.0.1:40002'
 */
export function resolverRules(listeners: readonly OriginListener[], address: string): string {
  return listeners.map((l) => `MAP ${l.host} ${address}:${l.port}`).join(', ');
}

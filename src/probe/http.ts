/**
 * Requests made with Node's own HTTP clients (http/https for HTTP/1.1, http2 for h2/h2c): one timed
 * request, the keep-alive check, and the idle-timeout watch. Sockets-level facts (SETTINGS, TLS
 * records) come from `h2.ts` and `wire.ts`; here we look at responses as a client sees them.
 */
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import type net from 'node:net';
import { performance } from 'node:perf_hooks';
import type { IdleReport, KeepAliveReport, ResponseReport } from '../model/index.ts';
import { type ClientTlsMaterial, type Endpoint, type Inbox, timeoutError } from './wire.ts';

/** Offered on every request so the probe can report what compression the server uses. */
const ACCEPT_ENCODING = 'gzip, deflate, br, zstd';
const USER_AGENT = 'h2lab-probe';

/** Where and how to reach the origin with Node's clients. */
export interface Origin {
  scheme: 'http' | 'https';
  ep: Endpoint;
  /** `host[:port]` for Host / :authority. */
  authority: string;
  material: ClientTlsMaterial;
}

/** A response with the arrival of its body over time. */
export interface TimedResponse extends ResponseReport {
  firstBodyByteMs: number;
  halfBodyMs: number;
  headers: Record<string, string>;
  /** The HTTP/1.1 socket it came on (for keep-alive accounting). */
  socket?: net.Socket;
}

function tlsOptions(o: Origin) {
  return {
    ...(o.ep.servername ? { servername: o.ep.servername } : {}),
    // Trust was decided by the TLS step (which stops the probe unless --insecure).
    rejectUnauthorized: false,
    ...(o.material.ca ? { ca: o.material.ca } : {}),
    ...(o.material.cert && o.material.key ? { cert: o.material.cert, key: o.material.key } : {}),
  };
}

function flatHeaders(h: http.IncomingHttpHeaders | http2.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined || k.startsWith(':')) continue;
    out[k] = Array.isArray(v) ? v.join(', ') : String(v);
  }
  return out;
}

/** Follows the body's arrival: first byte, half of it, the end. */
class BodyClock {
  bytes = 0;
  firstMs = Number.NaN;
  private readonly arrivals: Array<[ms: number, total: number]> = [];

  constructor(
    private readonly startMs: number,
    private readonly maxBytes: number,
  ) {}

  /** Returns false once `maxBytes` is exceeded (the caller abandons the body). */
  add(n: number): boolean {
    const t = performance.now() - this.startMs;
    if (Number.isNaN(this.firstMs)) this.firstMs = t;
    this.bytes += n;
    this.arrivals.push([t, this.bytes]);
    return this.bytes <= this.maxBytes;
  }

  halfMs(endMs: number): number {
    const half = this.bytes / 2;
    return this.arrivals.find(([, total]) => total >= half)?.[0] ?? endMs;
  }
}

function summarise(
  protocol: ResponseReport['protocol'],
  path: string,
  status: number,
  headers: Record<string, string>,
  ttfbMs: number,
  totalMs: number,
  body: BodyClock,
): TimedResponse {
  return {
    protocol,
    path,
    status,
    ttfbMs,
    totalMs,
    bodyBytes: body.bytes,
    server: headers.server ?? null,
    contentType: headers['content-type'] ?? null,
    contentEncoding: headers['content-encoding'] ?? null,
    altSvc: headers['alt-svc'] ?? null,
    firstBodyByteMs: Number.isNaN(body.firstMs) ? totalMs : body.firstMs,
    halfBodyMs: body.halfMs(totalMs),
    headers,
  };
}

/**
 * One HTTP/1.1 GET through `agent` (keep-alive or not), timed from writing the request. Rejects on
 * socket errors and at `timeoutMs` (for the whole exchange).
 */
export function fetchH1(
  origin: Origin,
  path: string,
  agent: http.Agent,
  timeoutMs: number,
  maxBodyBytes: number,
): Promise<TimedResponse> {
  return new Promise((resolve, reject) => {
    const mod = origin.scheme === 'https' ? https : http;
    const started = performance.now();
    const req = mod.request({
      host: origin.ep.host,
      port: origin.ep.port,
      path,
      method: 'GET',
      agent,
      headers: {
        host: origin.authority,
        'user-agent': USER_AGENT,
        'accept-encoding': ACCEPT_ENCODING,
        accept: '*/*',
      },
      ...(origin.scheme === 'https' ? { ...tlsOptions(origin), ALPNProtocols: ['http/1.1'] } : {}),
    });
    const timer = setTimeout(
      () => req.destroy(timeoutError(`GET ${path} over HTTP/1.1`, timeoutMs)),
      timeoutMs,
    );
    req.once('error', (err) => {
      clearTimeout(timer);
      reject(Object.assign(err, { reusedSocket: req.reusedSocket }));
    });
    req.once('response', (res) => {
      const ttfbMs = performance.now() - started;
      const body = new BodyClock(started, maxBodyBytes);
      const socket = res.socket as net.Socket;
      res.on('data', (chunk: Buffer) => {
        if (!body.add(chunk.length)) res.destroy();
      });
      const done = (): void => {
        clearTimeout(timer);
        const totalMs = performance.now() - started;
        resolve({
          ...summarise(
            'http/1.1',
            path,
            res.statusCode ?? 0,
            flatHeaders(res.headers),
            ttfbMs,
            totalMs,
            body,
          ),
          socket,
        });
      };
      res.once('end', done);
      res.once('close', () => {
        if (!res.complete) done();
      });
    });
    req.end();
  });
}

/** An HTTP/2 client session over TLS (ALPN h2) or cleartext with prior knowledge. */
export function openH2Session(origin: Origin, timeoutMs: number): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const url = `${origin.scheme}://${origin.authority}`;
    const session = http2.connect(url, {
      host: origin.ep.host,
      port: origin.ep.port,
      ...(origin.scheme === 'https' ? { ...tlsOptions(origin), ALPNProtocols: ['h2'] } : {}),
    });
    const timer = setTimeout(() => {
      session.destroy();
      reject(timeoutError(`HTTP/2 connection to ${url}`, timeoutMs));
    }, timeoutMs);
    session.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    session.once('connect', () => {
      clearTimeout(timer);
      session.removeAllListeners('error');
      session.on('error', () => {});
      resolve(session);
    });
  });
}

/** One GET on an HTTP/2 session, timed from writing the request. */
export function fetchH2(
  session: http2.ClientHttp2Session,
  protocol: 'h2' | 'h2c',
  path: string,
  timeoutMs: number,
  maxBodyBytes: number,
): Promise<TimedResponse> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const stream = session.request({
      ':method': 'GET',
      ':path': path,
      'user-agent': USER_AGENT,
      'accept-encoding': ACCEPT_ENCODING,
      accept: '*/*',
    });
    const timer = setTimeout(() => stream.close(http2.constants.NGHTTP2_CANCEL), timeoutMs);
    let ttfbMs = Number.NaN;
    let status = 0;
    let headers: Record<string, string> = {};
    const body = new BodyClock(started, maxBodyBytes);
    stream.once('response', (h) => {
      ttfbMs = performance.now() - started;
      status = Number(h[':status'] ?? 0);
      headers = flatHeaders(h);
    });
    stream.on('data', (chunk: Buffer) => {
      if (!body.add(chunk.length)) stream.close(http2.constants.NGHTTP2_CANCEL);
    });
    stream.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    stream.once('close', () => {
      clearTimeout(timer);
      if (Number.isNaN(ttfbMs)) {
        reject(
          stream.rstCode === http2.constants.NGHTTP2_CANCEL
            ? timeoutError(`GET ${path} over ${protocol}`, timeoutMs)
            : Object.assign(
                new Error(`stream closed before a response (RST_STREAM code ${stream.rstCode})`),
                {
                  code: 'ECONNRESET',
                },
              ),
        );
        return;
      }
      resolve(summarise(protocol, path, status, headers, ttfbMs, performance.now() - started, body));
    });
    stream.end();
  });
}

/**
 * Sends `count` GETs one after another through a keep-alive agent and counts the connections they
 * needed. A server that closes after each response (with or without `Connection: close`) makes every
 * request pay a new TCP (and TLS) handshake.
 */
export async function checkKeepAlive(
  origin: Origin,
  path: string,
  count: number,
  timeoutMs: number,
  maxBodyBytes: number,
): Promise<{ report: KeepAliveReport; first: TimedResponse }> {
  const Agent = origin.scheme === 'https' ? https.Agent : http.Agent;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const sockets = new Set<net.Socket>();
  const connectionHeaders: string[] = [];
  let keepAliveHeader: string | null = null;
  let first: TimedResponse | undefined;
  let upstream: KeepAliveReport['upstream'];
  try {
    const before = await originCounters(origin, agent, timeoutMs);
    for (let i = 0; i < count; i++) {
      let r: TimedResponse;
      try {
        r = await fetchH1(origin, path, agent, timeoutMs, maxBodyBytes);
      } catch (err) {
        // The server closed the idle connection just as the request went out on it: it did not keep
        // it alive. Node's agent does not retry; we do, once, on a new connection.
        if (!(err as { reusedSocket?: boolean }).reusedSocket) throw err;
        r = await fetchH1(origin, path, agent, timeoutMs, maxBodyBytes);
      }
      first ??= r;
      if (r.socket) sockets.add(r.socket);
      if (r.headers.connection) connectionHeaders.push(r.headers.connection.toLowerCase());
      keepAliveHeader ??= r.headers['keep-alive'] ?? null;
      // Give a FIN sent right after the response the time to arrive, so the agent does not pick a
      // socket the server has already closed.
      await new Promise((res) => setTimeout(res, 20));
    }
    const after = before ? await originCounters(origin, agent, timeoutMs) : undefined;
    if (before && after) {
      const connections = after.connections - before.connections;
      upstream = {
        requests: after.requests - before.requests,
        connections,
        // Each of `count` requests on a new upstream connection: the hop in front opens one per
        // request. A reusing proxy opens at most one per worker, and no new one once warm.
        reused: connections < count,
      };
    }
  } finally {
    agent.destroy();
  }
  return {
    report: {
      requests: count,
      connections: sockets.size,
      honoured: sockets.size === 1,
      connectionHeaders,
      keepAliveHeader,
      ...(upstream ? { upstream } : {}),
    },
    first: first!,
  };
}

/**
 * The h2lab fixture server's counters of connections accepted and requests served, read from its
 * `/metrics?format=json` through `agent` (so on the keep-alive connection under test); undefined when
 * the origin is not an h2lab server or the read fails. Only the two sums are read: the probe does not
 * depend on the server's code, only on its published metrics contract (schema h2lab.server-metrics/1).
 */
async function originCounters(
  origin: Origin,
  agent: http.Agent,
  timeoutMs: number,
): Promise<{ connections: number; requests: number } | undefined> {
  const mod = origin.scheme === 'https' ? https : http;
  const body = await new Promise<string | undefined>((resolve) => {
    const req = mod.request({
      host: origin.ep.host,
      port: origin.ep.port,
      path: '/metrics?format=json',
      method: 'GET',
      agent,
      headers: { host: origin.authority, 'user-agent': USER_AGENT, accept: 'application/json' },
      ...(origin.scheme === 'https' ? { ...tlsOptions(origin), ALPNProtocols: ['http/1.1'] } : {}),
    });
    const timer = setTimeout(() => req.destroy(), timeoutMs);
    req.once('error', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > 1024 * 1024) res.destroy();
        else chunks.push(c);
      });
      res.once('close', () => {
        clearTimeout(timer);
        resolve(res.statusCode === 200 && res.complete ? Buffer.concat(chunks).toString('utf8') : undefined);
      });
    });
    req.end();
  });
  if (!body) return undefined;
  try {
    const m = JSON.parse(body) as {
      schema?: string;
      connections?: { total?: Record<string, Record<string, number>> };
      requests?: Record<string, Record<string, number>>;
    };
    if (m.schema !== 'h2lab.server-metrics/1' || !m.connections?.total || !m.requests) return undefined;
    const total = (t: Record<string, Record<string, number>>) =>
      Object.values(t).reduce((a, row) => a + Object.values(row).reduce((x, y) => x + y, 0), 0);
    return { connections: total(m.connections.total), requests: total(m.requests) };
  } catch {
    return undefined;
  }
}

/**
 * Waits on an idle connection until the server closes it or `waitMs` passes. `onFrameGoaway` tells
 * whether bytes received are a GOAWAY (HTTP/2); for HTTP/1.1 any close counts.
 */
export async function watchIdle(
  protocol: IdleReport['protocol'],
  inbox: Inbox,
  waitMs: number,
  isGoaway: (chunk: Buffer) => boolean = () => false,
): Promise<IdleReport> {
  const idleSince = performance.now();
  const deadline = idleSince + waitMs;
  for (;;) {
    let chunk: Buffer | null;
    try {
      chunk = await inbox.next(deadline, 'idle wait');
    } catch (err) {
      if ((err as { code?: string }).code === 'PROBE_TIMEOUT') {
        return { protocol, waitedMs: waitMs, closedAfterMs: null, how: null };
      }
      return { protocol, waitedMs: waitMs, closedAfterMs: performance.now() - idleSince, how: 'reset' };
    }
    if (chunk === null)
      return { protocol, waitedMs: waitMs, closedAfterMs: performance.now() - idleSince, how: 'close' };
    if (isGoaway(chunk))
      return { protocol, waitedMs: waitMs, closedAfterMs: performance.now() - idleSince, how: 'goaway' };
  }
}

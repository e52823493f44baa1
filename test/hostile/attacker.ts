// A small attacker library for the hostile-peer suite: raw TCP/TLS sockets writing HTTP/2 frames
// (encoded by h2lab's own src/h2) or raw HTTP/1.1 bytes, and watching what the server answers and
// when it closes. Loopback only; every loop is bounded by its caller in count and time.
import { readdirSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { encodeHeaderBlock } from '../../src/h2/hpack.ts';
import {
  CLIENT_PREFACE,
  decodeGoaway,
  encodeFrame,
  encodeSettingsPayload,
  FLAG_ACK,
  FrameReader,
  FrameType,
  RequestEncoder,
} from '../../src/h2/index.ts';
import type { RunningServer } from '../../src/server/index.ts';

export { CLIENT_PREFACE, encodeFrame, FrameType };

/** Frame flags (RFC 9113 §6). */
export const END_STREAM = 0x1;
export const END_HEADERS = 0x4;

/** RFC 9113 §7 error codes the tests look for. */
export const Code = {
  NO_ERROR: 0,
  PROTOCOL_ERROR: 1,
  INTERNAL_ERROR: 2,
  COMPRESSION_ERROR: 9,
  ENHANCE_YOUR_CALM: 11,
} as const;

export interface Goaway {
  code: number;
  lastStreamId: number;
  /** Since the peer connected, ms. */
  atMs: number;
}

/** One hostile connection. */
export interface Peer {
  socket: net.Socket;
  /** When the TCP (and TLS) connection was established (performance.now()). */
  t0: number;
  /** The first GOAWAY the server sent, once it did. */
  goaway?: Goaway;
  /** RST_STREAMs the server sent. */
  rstReceived: number;
  /** Their error codes, in order (the first 100). */
  rstCodes: number[];
  /** HEADERS frames the server sent (response heads). */
  headersReceived: number;
  /** Resolves with ms since connect when the server closed the connection (or the socket errored). */
  closed: Promise<number>;
  isClosed(): boolean;
  /** Writes, resolving once the socket accepted the bytes (backpressure) or closed. */
  write(buf: Buffer | string): Promise<void>;
  destroy(): void;
}

export interface ConnectOptions {
  port: number;
  host?: string;
  /** TLS with this CA and ALPN; plain TCP when absent. */
  tls?: { ca?: string; alpn?: string[] };
  /** Do not parse HTTP/2 frames from the server (HTTP/1.1, TLS garbage). */
  raw?: boolean;
  /** Do not read at all (a zero-window peer). */
  noRead?: boolean;
}

/** Opens a connection; resolves once connected (TLS: after the handshake). */
export function connectPeer(o: ConnectOptions): Promise<Peer> {
  return new Promise((resolve, reject) => {
    const host = o.host ?? '127.0.0.1';
    const socket: net.Socket = o.tls
      ? tls.connect({
          host,
          port: o.port,
          ca: o.tls.ca,
          ALPNProtocols: o.tls.alpn ?? ['h2'],
          servername: 'localhost',
        })
      : net.connect({ host, port: o.port });
    let closedAt: number | undefined;
    let onClosed: (ms: number) => void = () => {};
    const closed = new Promise<number>((r) => {
      onClosed = r;
    });
    const peer: Peer = {
      socket,
      t0: performance.now(),
      rstReceived: 0,
      rstCodes: [],
      headersReceived: 0,
      closed,
      isClosed: () => closedAt !== undefined,
      write: (buf) =>
        new Promise<void>((r) => {
          if (socket.destroyed || !socket.writable) return r();
          if (socket.write(buf)) return r();
          const done = () => {
            socket.off('drain', done);
            socket.off('close', done);
            r();
          };
          socket.once('drain', done);
          socket.once('close', done);
        }),
      destroy: () => socket.destroy(),
    };
    const reader = new FrameReader(1 << 24);
    socket.on('data', (chunk: Buffer) => {
      if (o.raw) return;
      let frames: ReturnType<FrameReader['push']>;
      try {
        frames = reader.push(chunk);
      } catch {
        return;
      }
      for (const f of frames) {
        if (f.type === FrameType.GOAWAY && !peer.goaway) {
          const g = decodeGoaway(f.payload);
          peer.goaway = {
            code: g.errorCode,
            lastStreamId: g.lastStreamId,
            atMs: performance.now() - peer.t0,
          };
        } else if (f.type === FrameType.RST_STREAM) {
          peer.rstReceived++;
          if (peer.rstCodes.length < 100) peer.rstCodes.push(f.payload.readUInt32BE(0));
        } else if (f.type === FrameType.HEADERS) peer.headersReceived++;
      }
    });
    if (o.noRead) socket.pause();
    socket.on('error', () => {});
    socket.once('close', () => {
      closedAt = performance.now() - peer.t0;
      onClosed(closedAt);
    });
    socket.once(o.tls ? 'secureConnect' : 'connect', () => {
      peer.t0 = performance.now();
      resolve(peer);
    });
    socket.once('error', reject);
  });
}

/** The client preface and an empty SETTINGS frame (RFC 9113 §3.4). */
export function preface(settings: ReadonlyArray<readonly [number, number]> = []): Buffer {
  return Buffer.concat([
    CLIENT_PREFACE,
    encodeFrame(FrameType.SETTINGS, 0, 0, encodeSettingsPayload(settings)),
  ]);
}

/** SETTINGS ACK (the server's SETTINGS bind us once acknowledged, RFC 9113 §6.5.3). */
export const settingsAck = (): Buffer => encodeFrame(FrameType.SETTINGS, FLAG_ACK, 0);

/** A request HEADERS frame encoder for one connection (h2lab's own HPACK encoder). */
export function requestHeaders(
  authority = 'localhost',
): (streamId: number, path?: string, flags?: number) => Buffer {
  const enc = new RequestEncoder('http', authority, 'h2lab-hostile');
  return (streamId, path = '/healthz', flags = END_STREAM | END_HEADERS) =>
    encodeFrame(FrameType.HEADERS, flags, streamId, enc.encode(path, 'GET', path, [], 4096));
}

export function rstStream(streamId: number, code = 8 /* CANCEL */): Buffer {
  const p = Buffer.alloc(4);
  p.writeUInt32BE(code);
  return encodeFrame(FrameType.RST_STREAM, 0, streamId, p);
}

export function priority(streamId: number, dependsOn = 0, weight = 15): Buffer {
  const p = Buffer.alloc(5);
  p.writeUInt32BE(dependsOn);
  p[4] = weight;
  return encodeFrame(FrameType.PRIORITY, 0, streamId, p);
}

export function windowUpdate(streamId: number, increment = 1): Buffer {
  const p = Buffer.alloc(4);
  p.writeUInt32BE(increment);
  return encodeFrame(FrameType.WINDOW_UPDATE, 0, streamId, p);
}

export const ping = (n = 0): Buffer => {
  const p = Buffer.alloc(8);
  p.writeUInt32BE(n >>> 0, 4);
  return encodeFrame(FrameType.PING, 0, 0, p);
};

// --- HPACK, by hand where h2lab's encoder (which never indexes an attacker's field) cannot --------

/** RFC 7541 §5.1 integer with an N-bit prefix. */
function hpackInt(first: number, prefixBits: number, value: number): number[] {
  const max = (1 << prefixBits) - 1;
  if (value < max) return [first | value];
  const out = [first | max];
  let v = value - max;
  while (v >= 128) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return out;
}

/** Static-table request fields (RFC 7541 Appendix A): GET, http, /; `:authority: localhost`. */
const BASE_REQUEST = [0x82, 0x86, 0x84, 0x01, 9, ...Buffer.from('localhost')];

/** A literal field with incremental indexing and a new name (RFC 7541 §6.2.1), no Huffman. */
export function hpackIndexedLiteral(name: string, value: string): Buffer {
  return Buffer.from([
    0x40,
    ...hpackInt(0, 7, name.length),
    ...Buffer.from(name),
    ...hpackInt(0, 7, value.length),
    ...Buffer.from(value),
  ]);
}

/**
 * A GET on `streamId` whose header list is about `kb` × 1000 bytes as SETTINGS_MAX_HEADER_LIST_SIZE
 * counts it (RFC 9113 §6.5.2: name + value + 32 per field), in 4,000-byte fields, as HEADERS and as
 * many CONTINUATIONs as 16 KiB frames need.
 */
export function largeHeaderList(streamId: number, kb: number): Buffer {
  const fields: Array<[string, string]> = [
    [':method', 'GET'],
    [':scheme', 'http'],
    [':path', '/healthz'],
    [':authority', 'localhost'],
  ];
  for (let i = 0; i < Math.ceil((kb * 1000) / 4000); i++) fields.push([`x-h${i}`, 'a'.repeat(4000 - 37)]);
  const block = encodeHeaderBlock(fields);
  const frames: Buffer[] = [];
  for (let off = 0; off < block.length; off += 16_384) {
    const last = off + 16_384 >= block.length;
    const type = off === 0 ? FrameType.HEADERS : FrameType.CONTINUATION;
    const flags = (last ? END_HEADERS : 0) | (off === 0 ? END_STREAM : 0);
    frames.push(encodeFrame(type, flags, streamId, block.subarray(off, off + 16_384)));
  }
  return Buffer.concat(frames);
}

/**
 * An HPACK bomb block: the request fields, then `refs` references to dynamic-table entry 62 (the
 * newest, RFC 7541 §2.3.3) — a few bytes on the wire that decode to `refs` × the entry's size.
 * `insert` (the first block) puts the entry there first.
 */
export function bombBlock(refs: number, insert?: Buffer): Buffer {
  return Buffer.concat([insert ?? Buffer.alloc(0), Buffer.from(BASE_REQUEST), Buffer.alloc(refs, 0xbe)]);
}

// --- the server's view ------------------------------------------------------------------------------

/** Open file descriptors of this process (the server runs in it). */
export function openFds(): number {
  return readdirSync('/proc/self/fd').length;
}

/** Waits until `cond()` or `maxMs`; returns whether it held. */
export async function until(cond: () => boolean, maxMs: number, stepMs = 20): Promise<boolean> {
  const end = performance.now() + maxMs;
  while (performance.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, stepMs));
  }
  return cond();
}

/** Waits for the fd count to come back to at most `base` + `slack` (closing is asynchronous). */
export async function fdsBackTo(base: number, maxMs = 3000, slack = 2): Promise<number> {
  await until(() => openFds() <= base + slack, maxMs, 25);
  return openFds();
}

/** A normal request over HTTP/1.1 and over h2c answers 200 (the server is up for everyone else). */
export async function normalRequestOk(srv: RunningServer): Promise<boolean> {
  const r = await fetch(`${srv.plainUrl}/healthz`, { signal: AbortSignal.timeout(3000) });
  await r.arrayBuffer();
  if (r.status !== 200) return false;
  const http2 = await import('node:http2');
  return new Promise((resolve) => {
    const s = http2.connect(srv.plainUrl!);
    const t = setTimeout(() => {
      s.destroy();
      resolve(false);
    }, 3000);
    s.on('error', () => resolve(false));
    const q = s.request({ ':path': '/healthz' });
    q.on('error', () => resolve(false));
    q.on('response', (h) => {
      q.resume();
      q.on('end', () => {
        clearTimeout(t);
        s.close();
        resolve(h[':status'] === 200);
      });
    });
    q.end();
  });
}

/** Handler runs of `/healthz` so far, all protocols (metrics count a handler when it starts). */
export function healthzHandlers(srv: RunningServer): number {
  const row = (srv.metrics().requests as Record<string, Record<string, number>>).healthz ?? {};
  return Object.values(row).reduce((a, b) => a + b, 0);
}

/** The plain port of a running server. */
export const plainPort = (srv: RunningServer): number => Number(new URL(srv.plainUrl!).port);
/** The TLS port of a running server. */
export const tlsPort = (srv: RunningServer): number => Number(new URL(srv.tlsUrl!).port);

/**
 * Writes `total` units made by `unit(i)` in batches until the server closes the connection, the
 * count is reached or `maxMs` passed. Returns how many units were written.
 */
export async function flood(
  peer: Peer,
  unit: (i: number) => Buffer,
  total: number,
  maxMs = 3000,
  batch = 500,
  pauseMs = 0,
): Promise<number> {
  const end = performance.now() + maxMs;
  let i = 0;
  while (i < total && !peer.isClosed() && performance.now() < end) {
    const n = Math.min(batch, total - i);
    const bufs: Buffer[] = [];
    for (let k = 0; k < n; k++) bufs.push(unit(i + k));
    i += n;
    await peer.write(Buffer.concat(bufs));
    if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
  }
  return i;
}

/** Resolves with `p`, or with `fallback` after `ms`. */
export function within<T>(p: Promise<T>, ms: number, fallback: T): Promise<T> {
  return Promise.race([p, new Promise<T>((r) => setTimeout(() => r(fallback), ms).unref())]);
}

/** An nginx reference server with HTTP/2 prior knowledge on a free port (see test/probe/nginx.ts). */
export async function startNginxH2(): Promise<{ port: number; stop(): Promise<void> } | undefined> {
  const { haveNginx, freePort, startNginx } = await import('../helpers/nginx.ts');
  if (!haveNginx()) return undefined;
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-hostile-nginx-'));
  const port = await freePort();
  const ng = await startNginx(
    dir,
    `server { listen 127.0.0.1:${port} http2; location / { return 200 "ok\\n"; } }`,
    [port],
  );
  return {
    port,
    stop: async () => {
      await ng.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

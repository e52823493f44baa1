/**
 * The fixture routes, written once against {@link Exchange} so every listener and protocol behaves
 * the same. See docs/usage.md (`h2lab serve`) for the user-facing description of each route.
 *
 * Hot path (`GET /bytes/:n`, n ≤ 64 KiB): one cached size lookup, one cached header object, a
 * zero-copy body slice; no URL object and no closure per request.
 */

import { constants as h2 } from 'node:http2';
import { finished, Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { createRng, parseBytesOrUndefined } from '../core/index.ts';
import type { BackendPool } from './backend-pool.ts';
import { ChunkSet, randomBuffer, TEXT_BLOCK_BYTES, TextBytes, tileUniform } from './content.ts';
import type { Exchange, Headers } from './exchange.ts';
import { mapAssets, mapPageHtml, mapPageParams } from './map-page.ts';
import { type RouteName, renderPrometheus, type ServerMetrics } from './metrics.ts';
import type { ServerOptions } from './options.ts';
import { tilesPageHtml, tilesPageParams } from './tiles-page.ts';
import { VECTOR_TILE_MAX_ZOOM, type VectorTileSet, vectorTileSet } from './vector-tiles.ts';

const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json';

/** Sends a text response; returns the body bytes written. */
function text(ex: Exchange, status: number, body: string, extra?: Headers): number {
  const b = Buffer.from(body);
  const head = ex.method === 'HEAD';
  ex.respond(status, { 'content-type': TEXT, 'content-length': b.length, ...extra }, head ? undefined : b);
  return head ? 0 : b.length;
}

function jsonError(ex: Exchange, status: number, message: string): number {
  const b = Buffer.from(`${JSON.stringify({ error: message })}\n`);
  ex.respond(status, { 'content-type': JSON_TYPE, 'content-length': b.length }, b);
  return b.length;
}

/** Routes requests to handlers and keeps the per-route counters. */
export class Router {
  private readonly text: TextBytes;
  private readonly chunks: ChunkSet;
  private readonly tileBody: Buffer;
  /** `/bytes/<seg>` → n, for the few sizes a benchmark repeats. */
  private readonly sizeCache = new Map<string, number>();
  /** n → header object for `/bytes/n` (plain). */
  private readonly bytesHeaders = new Map<number, Headers>();
  /** Real MVT tiles, loaded on the first `/vector-tiles` request. */
  private readonly vectorTiles: VectorTileSet = vectorTileSet();
  private readonly assets = mapAssets();
  /** `/reset?every=N` requests seen, so every N-th of them is the one reset. */
  private resetEveryCount = 0;

  constructor(
    private readonly opts: ServerOptions,
    private readonly metrics: ServerMetrics,
    private readonly pool: BackendPool,
  ) {
    this.text = new TextBytes(opts.seed);
    this.chunks = new ChunkSet(opts.seed, opts.chunkCount, opts.chunkMinBytes, opts.chunkMaxBytes);
    this.tileBody = randomBuffer(createRng(opts.seed ^ 0x74696c65), opts.tileSizeBytes);
  }

  handle(ex: Exchange): void {
    const url = ex.url;
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? '' : url.slice(q + 1);
    if (path.startsWith('/bytes/')) {
      this.bytes(ex, path.slice(7), query);
      return;
    }
    if (path.startsWith('/tiles/')) {
      this.tiles(ex, path.slice(7));
      return;
    }
    if (path.startsWith('/vector-tiles/')) {
      this.vectorTile(ex, path.slice(14));
      return;
    }
    if (path.startsWith('/assets/maplibre-gl/')) {
      this.asset(ex, path.slice(20));
      return;
    }
    if (path.startsWith('/chunks/')) {
      this.chunk(ex, path.slice(8));
      return;
    }
    switch (path) {
      case '/echo': {
        this.echo(ex);
        return;
      }
      case '/metrics':
      case '/metrics/reset': {
        this.metricsRoute(ex, path, query);
        return;
      }
      case '/options':
        this.simple(ex, 'options', () => {
          const b = Buffer.from(`${JSON.stringify(this.opts)}\n`);
          ex.respond(200, { 'content-type': JSON_TYPE, 'content-length': b.length }, b);
          return b.length;
        });
        return;
      case '/healthz': {
        this.simple(ex, 'healthz', () => text(ex, 200, 'ok\n'));
        return;
      }
      case '/page/tiles.html': {
        this.page(ex, query);
        return;
      }
      case '/page/map.html': {
        this.simple(ex, 'page', () => this.html(ex, mapPageHtml(mapPageParams(new URLSearchParams(query)))));
        return;
      }
      case '/slow-headers': {
        this.slowHeaders(ex, query);
        return;
      }
      case '/reset': {
        this.reset(ex, query);
        return;
      }
      case '/hang': {
        this.hang(ex);
        return;
      }
      case '/goaway': {
        this.goaway(ex, query);
        return;
      }
      default: {
        this.simple(ex, 'other', () => jsonError(ex, 404, `no route for ${path}`));
        return;
      }
    }
  }

  /** A route that answers synchronously; `send` returns the body bytes written (or nothing). */
  private simple(ex: Exchange, route: RouteName, send: () => number | undefined): void {
    this.metrics.begin(route, ex.protocol);
    const n = send();
    this.metrics.end(route, ex.protocol, typeof n === 'number' ? n : 0);
  }

  /** Begins a route whose response completes later; returns the function that ends it (once). */
  private later(ex: Exchange, route: RouteName): (bytes: number) => void {
    const proto = ex.protocol;
    this.metrics.begin(route, proto);
    let ended = false;
    return (bytes: number) => {
      if (ended) return;
      ended = true;
      this.metrics.end(route, proto, bytes);
    };
  }

  private bytes(ex: Exchange, seg: string, query: string): void {
    let n = this.sizeCache.get(seg);
    if (n === undefined) {
      n = parseBytesOrUndefined(seg.replace(/%20/g, ' '));
      if (n === undefined || n > this.opts.maxBytes) {
        this.simple(ex, 'bytes', () =>
          jsonError(
            ex,
            400,
            n === undefined
              ? `/bytes/${seg}: not a size; use e.g. /bytes/1024, /bytes/1KiB or /bytes/1MiB`
              : `/bytes/${seg}: larger than --max-bytes ${this.opts.maxBytes}`,
          ),
        );
        return;
      }
      if (this.sizeCache.size < 256) this.sizeCache.set(seg, n);
    }
    const head = ex.method === 'HEAD';
    if (
      query !== '' &&
      new URLSearchParams(query).get('gzip') === '1' &&
      /\bgzip\b/.test(ex.header('accept-encoding') ?? '')
    ) {
      this.bytesGzip(ex, n, head);
      return;
    }
    if (n <= TEXT_BLOCK_BYTES) {
      let h = this.bytesHeaders.get(n);
      if (!h) {
        h = { 'content-type': 'application/octet-stream', 'content-length': n };
        if (this.bytesHeaders.size < 256) this.bytesHeaders.set(n, h);
      }
      this.metrics.begin('bytes', ex.protocol);
      ex.respond(200, h, head ? undefined : this.text.small(n));
      this.metrics.end('bytes', ex.protocol, head ? 0 : n);
      return;
    }
    const end = this.later(ex, 'bytes');
    const w = ex.start(200, { 'content-type': 'application/octet-stream', 'content-length': n });
    if (head) {
      w.end();
      end(0);
      return;
    }
    Readable.from(this.text.blocks(n), { objectMode: false }).pipe(w);
    finished(w, (err) => end(err ? 0 : n));
  }

  private bytesGzip(ex: Exchange, n: number, head: boolean): void {
    const hdr = {
      'content-type': 'application/octet-stream',
      'content-encoding': 'gzip',
      vary: 'accept-encoding',
    };
    const z = this.text.gzipped(n);
    if (z) {
      this.simple(ex, 'bytes', () => {
        ex.respond(200, { ...hdr, 'content-length': z.length }, head ? undefined : z);
        return head ? 0 : z.length;
      });
      return;
    }
    const end = this.later(ex, 'bytes');
    const w = ex.start(200, hdr);
    if (head) {
      w.end();
      end(0);
      return;
    }
    let sent = 0;
    const gz = createGzip();
    gz.on('data', (c: Buffer) => {
      sent += c.length;
    });
    Readable.from(this.text.blocks(n), { objectMode: false }).pipe(gz).pipe(w);
    finished(w, () => end(sent));
  }

  private echo(ex: Exchange): void {
    if (ex.method !== 'POST' && ex.method !== 'PUT') {
      this.simple(ex, 'echo', () => jsonError(ex, 405, `/echo takes POST or PUT, not ${ex.method}`));
      return;
    }
    const end = this.later(ex, 'echo');
    const h: Headers = { 'content-type': ex.header('content-type') ?? 'application/octet-stream' };
    const len = ex.header('content-length');
    if (len !== undefined && /^\d+$/.test(len)) h['content-length'] = len;
    let bytes = 0;
    ex.body.on('data', (c: Buffer) => {
      bytes += c.length;
    });
    // Streams the body back as it arrives: memory stays bounded by the flow-control windows, whatever
    // the upload size.
    const w = ex.start(200, h);
    ex.body.pipe(w);
    finished(w, () => end(bytes));
    ex.onGone(() => end(bytes));
  }

  private chunk(ex: Exchange, seg: string): void {
    this.simple(ex, 'chunks', () => {
      if (seg === 'manifest') {
        const b = Buffer.from(
          `${JSON.stringify({ count: this.chunks.count, sizes: Array.from(this.chunks.sizes) })}\n`,
        );
        ex.respond(200, { 'content-type': JSON_TYPE, 'content-length': b.length }, b);
        return b.length;
      }
      const i = /^\d+$/.test(seg) ? Number(seg) : -1;
      const body = this.chunks.chunk(i);
      if (!body)
        return jsonError(ex, 404, `/chunks/${seg}: chunks are numbered 0 to ${this.chunks.count - 1}`);
      ex.respond(200, { 'content-type': 'application/octet-stream', 'content-length': body.length }, body);
      return body.length;
    });
  }

  private tiles(ex: Exchange, seg: string): void {
    const m = /^(\d+)\/(\d+)\/(\d+)(?:\.\w+)?$/.exec(seg);
    if (!m) {
      this.simple(ex, 'tiles', () => jsonError(ex, 404, `/tiles/${seg}: use /tiles/Z/X/Y`));
      return;
    }
    const body = this.tileBody;
    this.pooled(
      ex,
      'tiles',
      Number(m[1]),
      Number(m[2]),
      Number(m[3]),
      'application/octet-stream',
      () => body,
    );
  }

  /**
   * `/vector-tiles/Z/X/Y.mvt`: a real Mapbox Vector Tile, through the same pool and render-time model
   * as `/tiles` (the pool's service time stands for the database; the cut itself is cached).
   */
  private vectorTile(ex: Exchange, seg: string): void {
    const m = /^(\d{1,2})\/(\d{1,7})\/(\d{1,7})(?:\.mvt|\.pbf)?$/.exec(seg);
    const [z, x, y] = m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [-1, -1, -1];
    if (!m || !(z <= VECTOR_TILE_MAX_ZOOM && x < 2 ** z && y < 2 ** z)) {
      this.simple(ex, 'vector-tiles', () =>
        jsonError(
          ex,
          404,
          `/vector-tiles/${seg}: use /vector-tiles/Z/X/Y.mvt with Z ≤ ${VECTOR_TILE_MAX_ZOOM} and X, Y < 2^Z`,
        ),
      );
      return;
    }
    this.vectorTiles.warm();
    // application/vnd.mapbox-vector-tile: the IANA-registered media type of MVT.
    this.pooled(ex, 'vector-tiles', z, x, y, 'application/vnd.mapbox-vector-tile', () =>
      this.vectorTiles.tile(z, x, y).then((b) => b ?? Buffer.alloc(0)),
    );
  }

  /**
   * A tile through the backend pool: heavy or light by a seeded hash of z/x/y
   * (`--tile-heavy-fraction`), queued, rendered, then `body()` sent. A client that goes away drops
   * or aborts its job (unless `--ignore-cancel`) and is counted by stage.
   */
  private pooled(
    ex: Exchange,
    route: RouteName,
    z: number,
    x: number,
    y: number,
    contentType: string,
    body: () => Buffer | Promise<Buffer>,
  ): void {
    const proto = ex.protocol;
    const end = this.later(ex, route);
    let gone = false;
    const heavy = tileUniform(this.opts.seed, z, x, y) < this.opts.tileHeavyFraction;
    const job = this.pool.submit(heavy ? this.opts.tileHeavyMs : this.opts.tileMs, (r) => {
      const send = (b: Buffer) => {
        if (gone) return;
        ex.respond(
          200,
          {
            'content-type': contentType,
            'content-length': b.length,
            'cache-control': 'no-store',
            // Server-Timing (W3C): lets a browser or client see queueing vs rendering per tile.
            'server-timing': `queue;dur=${r.queuedMs.toFixed(2)}, render;dur=${r.serviceMs.toFixed(2)}`,
            'x-h2lab-tile': heavy ? 'heavy' : 'light',
          },
          b,
        );
        end(b.length);
      };
      const b = body();
      if (Buffer.isBuffer(b)) send(b);
      else
        b.then(send, (err: Error) => {
          if (gone) return;
          jsonError(ex, 500, `${route}: ${err.message}`);
          end(0);
        });
    });
    ex.onGone(() => {
      gone = true;
      const stage = job.cancel();
      this.metrics.cancellations[proto][stage]++;
      end(0);
    });
  }

  /** `/assets/maplibre-gl/NAME`: the map page's MapLibre files from the installed package. */
  private asset(ex: Exchange, name: string): void {
    this.simple(ex, 'page', () => {
      const a = this.assets(name);
      if (!a) return jsonError(ex, 404, `/assets/maplibre-gl/${name}: not a file the map page uses`);
      ex.respond(
        200,
        { 'content-type': a.contentType, 'content-length': a.body.length, 'cache-control': 'no-cache' },
        a.body,
      );
      return a.body.length;
    });
  }

  private html(ex: Exchange, html: string): number {
    const b = Buffer.from(html);
    ex.respond(
      200,
      { 'content-type': 'text/html; charset=utf-8', 'content-length': b.length, 'cache-control': 'no-store' },
      b,
    );
    return b.length;
  }

  private page(ex: Exchange, query: string): void {
    this.simple(ex, 'page', () => this.html(ex, tilesPageHtml(tilesPageParams(new URLSearchParams(query)))));
  }

  private metricsRoute(ex: Exchange, path: string, query: string): void {
    this.simple(ex, 'metrics', () => {
      if (path === '/metrics/reset') {
        if (ex.method !== 'POST') return jsonError(ex, 405, 'POST /metrics/reset');
        this.metrics.reset();
        ex.respond(204, {});
        return 0;
      }
      const s = this.metrics.snapshot();
      if (new URLSearchParams(query).get('format') === 'json') {
        const b = Buffer.from(`${JSON.stringify(s)}\n`);
        ex.respond(
          200,
          { 'content-type': JSON_TYPE, 'content-length': b.length, 'cache-control': 'no-store' },
          b,
        );
        return b.length;
      }
      const b = Buffer.from(renderPrometheus(s));
      ex.respond(
        200,
        { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': b.length },
        b,
      );
      return b.length;
    });
  }

  /** `/slow-headers?ms=2000`: the response head comes after `ms`. */
  private slowHeaders(ex: Exchange, query: string): void {
    const ms = clampInt(new URLSearchParams(query).get('ms'), 2000, 0, 3_600_000);
    const end = this.later(ex, 'slow-headers');
    const t = setTimeout(() => {
      text(ex, 200, `slow headers after ${ms} ms\n`);
      end(0);
    }, ms);
    ex.onGone(() => {
      clearTimeout(t);
      end(0);
    });
  }

  /**
   * `/reset?after=headers&code=N&mode=socket&every=N`: HTTP/2 resets the stream (RST_STREAM, code
   * default INTERNAL_ERROR) or, with `mode=socket`, destroys the TCP connection (no GOAWAY); HTTP/1.1
   * always destroys it.
   * `after=headers` first sends the head and part of the body. With `every=N`, only every N-th
   * request carrying `every` is reset (counted by this server since it started); the others get 200.
   */
  private reset(ex: Exchange, query: string): void {
    const p = new URLSearchParams(query);
    const code = clampInt(p.get('code'), h2.NGHTTP2_INTERNAL_ERROR, 0, 0xffffffff);
    const mode = p.get('mode') === 'socket' ? 'socket' : 'stream';
    const every = p.has('every') ? clampInt(p.get('every'), 1, 1, 1_000_000) : 1;
    this.simple(ex, 'reset', () => {
      if (every > 1 && ++this.resetEveryCount % every !== 0) return text(ex, 200, 'ok\n');
      const doReset = () => {
        if (mode === 'socket') ex.abortConnection();
        else ex.reset(code);
      };
      if (p.get('after') === 'headers') {
        const w = ex.start(200, { 'content-type': 'application/octet-stream', 'content-length': 1024 });
        w.write(this.text.small(100), () => setImmediate(doReset));
        return 100;
      }
      doReset();
      return 0;
    });
  }

  /** `/hang`: never answers; ends only when the client or the server gives up. */
  private hang(ex: Exchange): void {
    const end = this.later(ex, 'hang');
    ex.onGone(() => end(0));
  }

  /** `/goaway?code=N`: answers, then GOAWAY (HTTP/2) or `Connection: close` (HTTP/1.1). */
  private goaway(ex: Exchange, query: string): void {
    const code = clampInt(new URLSearchParams(query).get('code'), h2.NGHTTP2_NO_ERROR, 0, 0xffffffff);
    this.simple(ex, 'goaway', () => {
      ex.goawayAfter(code);
      return text(ex, 200, 'goaway\n');
    });
  }
}

function clampInt(v: string | null, dflt: number, lo: number, hi: number): number {
  const n = v === null ? Number.NaN : Number(v);
  return Number.isInteger(n) ? Math.min(hi, Math.max(lo, n)) : dflt;
}

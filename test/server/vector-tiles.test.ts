// Real vector tiles: /vector-tiles/Z/X/Y.mvt over HTTP/1.1 and h2 is a Mapbox Vector Tile that
// MapLibre's own decoder (@mapbox/vector-tile) reads as Natural Earth's country polygons; it goes
// through the backend pool's render-time model (heavy tiles take --tile-heavy-ms) and its
// cancellation like /tiles; the map page and the MapLibre files it loads are served by the fixture.
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { after, before, describe, test } from 'node:test';
import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader as Pbf } from 'pbf';
import type { RunningServer } from '../../src/server/index.ts';
import { scrape, startFixture } from '../helpers/fixture.ts';

interface Got {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function h2get(srv: RunningServer, path: string): Promise<Got> {
  const session = http2.connect(srv.tlsUrl!, { ca: srv.caPem });
  return new Promise<Got>((resolve, reject) => {
    session.on('error', reject);
    const req = session.request({ ':path': path });
    const chunks: Buffer[] = [];
    let headers: Got['headers'] = {};
    req.on('response', (h) => {
      headers = h;
    });
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      resolve({ status: Number(headers[':status']), headers, body: Buffer.concat(chunks) });
      session.close();
    });
    req.on('error', reject);
  });
}

function headersOf(h: { forEach(cb: (v: string, k: string) => void): void }): Got['headers'] {
  const out: Got['headers'] = {};
  h.forEach((v, k) => {
    out[k] = v;
  });
  return out;
}

async function h1get(srv: RunningServer, path: string): Promise<Got> {
  const r = await fetch(`${srv.plainUrl}${path}`);
  return {
    status: r.status,
    headers: headersOf(r.headers),
    body: Buffer.from(await r.arrayBuffer()),
  };
}

const renderMs = (g: Got) => Number(/render;dur=([\d.]+)/.exec(String(g.headers['server-timing']))?.[1]);

describe('vector tiles', () => {
  let srv: RunningServer;
  before(async () => {
    srv = await startFixture({ poolSize: 2, tileMs: 20 });
  });
  after(() => srv?.close());

  for (const [name, get] of [
    ['http/1.1', h1get],
    ['h2', h2get],
  ] as const) {
    test(`z0 over ${name} is an MVT of the world's countries`, async () => {
      const g = await get(srv, '/vector-tiles/0/0/0.mvt');
      assert.equal(g.status, 200);
      assert.equal(g.headers['content-type'], 'application/vnd.mapbox-vector-tile');
      const tile = new VectorTile(new Pbf(g.body));
      const layer = tile.layers.countries;
      assert.ok(layer, `layers: ${Object.keys(tile.layers).join(', ')}`);
      assert.equal(layer.version, 2);
      assert.equal(layer.extent, 4096);
      // Natural Earth 1:50m has 241 countries; at z0 the smallest are simplified away (199 remain).
      assert.ok(layer.length > 150, `${layer.length} features`);
      const names = new Set<string>();
      for (let i = 0; i < layer.length; i++) {
        const f = layer.feature(i);
        assert.equal(f.type, 3, 'polygons');
        names.add(String(f.properties.name));
      }
      assert.ok(names.has('France') && names.has('Brazil'), [...names].slice(0, 5).join(', '));
      assert.ok(renderMs(g) >= 19, `render ${renderMs(g)} ms ≥ --tile-ms 20`);
    });
  }

  test('a deeper tile is cut on demand; open sea is an empty tile; outside the pyramid is 404', async () => {
    // z6 x33 y22 covers northern France.
    const land = await h1get(srv, '/vector-tiles/6/33/22.mvt');
    assert.equal(land.status, 200);
    const layer = new VectorTile(new Pbf(land.body)).layers.countries!;
    const names = Array.from({ length: layer.length }, (_, i) => layer.feature(i).properties.name);
    assert.ok(names.includes('France'), names.join(', '));
    const sea = await h1get(srv, '/vector-tiles/6/6/40.mvt'); // the South Pacific
    assert.equal(sea.status, 200);
    assert.equal(sea.body.length, 0);
    for (const p of ['/vector-tiles/11/0/0.mvt', '/vector-tiles/2/4/0.mvt', '/vector-tiles/a/b/c'])
      assert.equal((await h1get(srv, p)).status, 404, p);
  });

  test('the map page and the MapLibre files it imports are served', async () => {
    const page = await h1get(srv, '/page/map.html?lon=2&lat=47&zoom=4');
    assert.equal(page.status, 200);
    const html = page.body.toString();
    for (const m of html.matchAll(/(?:href|from) ['"](\/assets\/[^'"]+)['"]/g)) {
      const a = await h1get(srv, m[1]!);
      assert.equal(a.status, 200, m[1]);
      assert.ok(a.body.length > 10_000, `${m[1]}: ${a.body.length} bytes`);
    }
    assert.match(html, /center: \[2, 47\]/);
    const worker = await h2get(srv, '/assets/maplibre-gl/maplibre-gl-worker.mjs');
    assert.equal(worker.status, 200);
    assert.match(String(worker.headers['content-type']), /^text\/javascript/);
    assert.equal((await h1get(srv, '/assets/maplibre-gl/__proto__')).status, 404);
    assert.equal((await h1get(srv, '/assets/maplibre-gl/../package.json')).status, 404);
  });

  test('counted under their own route; /tiles is unchanged', async () => {
    await fetch(`${srv.plainUrl}/metrics/reset`, { method: 'POST' });
    await h1get(srv, '/vector-tiles/1/0/0.mvt');
    const t = await h1get(srv, '/tiles/12/1/1');
    assert.equal(t.status, 200);
    assert.equal(t.headers['content-type'], 'application/octet-stream');
    assert.equal(t.body.length, 8 * 1024);
    const m = await scrape(srv);
    assert.equal(m.requests['vector-tiles']['http/1.1'], 1);
    assert.equal(m.requests.tiles['http/1.1'], 1);
    assert.equal(m.pool.jobs.completed, 2);
  });
});

describe('vector tiles: heavy share and cancellation', () => {
  let srv: RunningServer;
  before(async () => {
    srv = await startFixture({ poolSize: 1, tileMs: 10, tileHeavyFraction: 1, tileHeavyMs: 400 });
  });
  after(() => srv?.close());

  test('every tile heavy at --tile-heavy-fraction 1; an abandoned one frees the worker', async () => {
    const g = await h1get(srv, '/vector-tiles/2/1/1.mvt');
    assert.equal(g.headers['x-h2lab-tile'], 'heavy');
    assert.ok(renderMs(g) >= 399, `render ${renderMs(g)} ms`);
    await fetch(`${srv.plainUrl}/metrics/reset`, { method: 'POST' });
    const session = http2.connect(srv.tlsUrl!, { ca: srv.caPem });
    session.on('error', () => {});
    const abandoned = session.request({ ':path': '/vector-tiles/3/4/2.mvt' });
    abandoned.on('error', () => {});
    await new Promise((r) => setTimeout(r, 100));
    abandoned.close(http2.constants.NGHTTP2_CANCEL);
    const t0 = performance.now();
    const wanted = await h2get(srv, '/vector-tiles/3/4/3.mvt');
    const ms = performance.now() - t0;
    session.close();
    assert.equal(wanted.status, 200);
    // One heavy tile after the cancel, not the rest of the abandoned one first (about 700 ms).
    assert.ok(ms < 650, `the wanted tile took ${ms.toFixed(0)} ms`);
    const m = await scrape(srv);
    assert.equal(m.cancellations.h2.running, 1);
    assert.equal(m.pool.jobs.aborted, 1);
    assert.equal(m.rstStream['8'], 1);
  });
});

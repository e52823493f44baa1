/**
 * `GET /page/map.html?lon=10&lat=48&zoom=3`: a MapLibre GL map of the fixture's vector tiles
 * (`/vector-tiles/{z}/{x}/{y}.mvt`), with MapLibre served by the fixture itself from the installed
 * `maplibre-gl` package under `/assets/maplibre-gl/` (no CDN: the machines that run h2lab may have no
 * internet, and a CDN's protocol would be measured instead of the server's).
 *
 * The page keeps its own account in `window.h2labMap` for a driver (src/browser/map-session.ts):
 * every tile URL MapLibre asked for (made unique per request, so CDP records and server counts can be
 * matched one to one even when a tile is asked for again after an abort), MapLibre's `dataloading`,
 * `data` and `dataabort` events for tiles, `idle` times and errors. Times are `performance.now()`
 * milliseconds.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Query of the map page; out-of-range values are clamped (it is a fixture). */
interface MapPageParams {
  lon: number;
  lat: number;
  zoom: number;
}

/** Reads the page's query. */
export function mapPageParams(query: URLSearchParams): MapPageParams {
  const num = (name: string, dflt: number, lo: number, hi: number): number => {
    const v = Number.parseFloat(query.get(name) ?? '');
    return Number.isFinite(v) ? Math.min(hi, Math.max(lo, v)) : dflt;
  };
  return { lon: num('lon', 10, -180, 180), lat: num('lat', 48, -85, 85), zoom: num('zoom', 3, 0, 22) };
}

/** The page's HTML. Only numbers from the query reach it. */
export function mapPageHtml(p: MapPageParams): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>h2lab map</title>
<link rel="stylesheet" href="/assets/maplibre-gl/maplibre-gl.css">
<style>html,body,#map{margin:0;width:100%;height:100%}</style></head>
<body><div id="map"></div>
<script type="module">
import { Map as MapLibreMap } from '/assets/maplibre-gl/maplibre-gl.mjs';
const state = { loaded: false, loadMs: undefined, requests: [], loading: 0, loaded_: 0, aborted: 0,
  abortedKeys: [], idle: [], errors: [], map: undefined };
window.h2labMap = state;
let n = 0;
const map = new MapLibreMap({
  container: 'map',
  center: [${p.lon}, ${p.lat}],
  zoom: ${p.zoom},
  attributionControl: false,
  fadeDuration: 0,
  transformRequest: (url, kind) => {
    if (kind !== 'Tile') return { url };
    const u = url + (url.includes('?') ? '&' : '?') + 'r=' + (n++);
    state.requests.push({ url: new URL(u, location.href).href, atMs: performance.now() });
    return { url: u };
  },
  style: {
    version: 8,
    sources: { world: { type: 'vector', tiles: [location.origin + '/vector-tiles/{z}/{x}/{y}.mvt'], minzoom: 0, maxzoom: 10 } },
    layers: [
      { id: 'sea', type: 'background', paint: { 'background-color': '#a8c8e8' } },
      { id: 'land', type: 'fill', source: 'world', 'source-layer': 'countries', paint: { 'fill-color': '#e8e0c8' } },
      { id: 'borders', type: 'line', source: 'world', 'source-layer': 'countries', paint: { 'line-color': '#8a7050', 'line-width': 1 } },
    ],
  },
});
state.map = map;
const key = (e) => e.tile && e.tile.tileID ? e.tile.tileID.key : undefined;
map.on('dataloading', (e) => { if (e.tile) state.loading++; });
map.on('data', (e) => { if (e.tile && e.dataType === 'source') state.loaded_++; });
map.on('dataabort', (e) => { if (e.dataType === 'source') { state.aborted++; const k = key(e); if (k !== undefined) state.abortedKeys.push(String(k)); } });
map.on('idle', () => state.idle.push(performance.now()));
map.on('error', (e) => state.errors.push(String(e && e.error && e.error.message || e)));
map.on('load', () => { state.loaded = true; state.loadMs = performance.now(); });
</script>
</body>
</html>
`;
}

/** The files of `maplibre-gl` the page needs, by the name they are served under. */
const ASSETS: Readonly<Record<string, string>> = Object.freeze({
  'maplibre-gl.mjs': 'text/javascript; charset=utf-8',
  'maplibre-gl-worker.mjs': 'text/javascript; charset=utf-8',
  'maplibre-gl.css': 'text/css; charset=utf-8',
});

/** One static asset: its body and content type. */
interface MapAsset {
  body: Buffer;
  contentType: string;
}

/**
 * `maplibre-gl`'s files from the installed package, read on first use and kept (about 1.7 MB).
 * Returns undefined for any other name.
 */
export function mapAssets(): (name: string) => MapAsset | undefined {
  const cache = new Map<string, MapAsset>();
  let dist: string | undefined;
  return (name) => {
    if (!Object.hasOwn(ASSETS, name)) return undefined;
    const contentType = ASSETS[name]!;
    let a = cache.get(name);
    if (!a) {
      dist ??= join(dirname(createRequire(import.meta.url).resolve('maplibre-gl/package.json')), 'dist');
      a = { body: readFileSync(join(dist, name)), contentType };
      cache.set(name, a);
    }
    return a;
  };
}

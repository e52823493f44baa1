/**
 * Real vector tiles for `/vector-tiles/:z/:x/:y.mvt`: Natural Earth's countries (1:50m, the TopoJSON
 * that `world-atlas` ships) cut by `@maplibre/geojson-vt` and encoded as Mapbox Vector Tiles
 * (protobuf, spec 2.1) by `@maplibre/vt-pbf`, one layer named {@link VECTOR_TILE_LAYER}.
 *
 *   first request ──▶ import the three packages, read + decode the TopoJSON, build the tile index
 *                     (once per process; about 0.3 s here) ──▶ getTile ──▶ encode ──▶ cache
 *
 * Nothing is loaded until the first vector tile is asked for: the fixture server starts hundreds of
 * times in the test suite and `/tiles` (the synthetic body) is what compare's workloads use, so the
 * server's start time must not pay for geodata it may never serve.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { GeometryCollection, Topology } from 'topojson-specification';

/** The one source layer in every tile; a MapLibre style names it as `source-layer`. */
const VECTOR_TILE_LAYER = 'countries';
/**
 * Deepest zoom the index cuts (a client overzooms past it). 1:50m data has nothing finer to show
 * beyond about z8; the cut is still real work at z10 and keeps pans at street-like zooms realistic.
 */
export const VECTOR_TILE_MAX_ZOOM = 10;
/** Encoded tiles kept in memory (a tile is 0–40 KiB; the cache is dropped whole when full). */
const CACHE_TILES = 4096;

/** The cut-and-encode engine, built lazily on the first call. */
export interface VectorTileSet {
  /**
   * The encoded tile z/x/y (an empty buffer when the tile has no land: a client treats a 0-byte MVT
   * as an empty tile), or undefined when z/x/y is outside the tile pyramid (z above
   * {@link VECTOR_TILE_MAX_ZOOM}, x or y ≥ 2^z).
   */
  tile(z: number, x: number, y: number): Promise<Buffer | undefined>;
  /**
   * Starts the lazy load without waiting for it: called when a tile request arrives, so the load
   * overlaps the request's time in the pool instead of adding to it.
   */
  warm(): void;
  /** Milliseconds the lazy load took (imports, decode, index), once it happened. */
  loadMs(): number | undefined;
}

interface Engine {
  getTile(z: number, x: number, y: number): Buffer;
}

/** Creates the lazily loaded tile set. Cheap: nothing is read until {@link VectorTileSet.tile}. */
export function vectorTileSet(): VectorTileSet {
  let engine: Promise<Engine> | undefined;
  let loadMs: number | undefined;
  const cache = new Map<string, Buffer>();
  const load = (): Promise<Engine> => {
    if (!engine) {
      const t0 = performance.now();
      const p = loadEngine().then((e) => {
        loadMs = performance.now() - t0;
        return e;
      });
      engine = p;
      // A failed load (a missing package) is retried by the next request rather than kept.
      p.catch(() => {
        if (engine === p) engine = undefined;
      });
    }
    return engine;
  };
  return {
    warm: () => {
      load().catch(() => {});
    },
    async tile(z, x, y) {
      if (!(z >= 0 && z <= VECTOR_TILE_MAX_ZOOM && x >= 0 && y >= 0 && x < 2 ** z && y < 2 ** z))
        return undefined;
      const key = `${z}/${x}/${y}`;
      const hit = cache.get(key);
      if (hit) return hit;
      const b = (await load()).getTile(z, x, y);
      if (cache.size >= CACHE_TILES) cache.clear();
      cache.set(key, b);
      return b;
    },
    loadMs: () => loadMs,
  };
}

async function loadEngine(): Promise<Engine> {
  const [{ GeoJSONVT }, { fromGeojsonVt }, { feature }] = await Promise.all([
    import('@maplibre/geojson-vt'),
    import('@maplibre/vt-pbf'),
    import('topojson-client'),
  ]);
  const file = createRequire(import.meta.url).resolve('world-atlas/countries-50m.json');
  const topo = JSON.parse(readFileSync(file, 'utf8')) as Topology<{ countries: GeometryCollection }>;
  const countries = feature(topo, topo.objects.countries);
  // indexMaxZoom 4: pre-cut the top of the pyramid (the tiles every session asks for), cut deeper
  // tiles on demand from their z4 ancestor.
  const index = new GeoJSONVT(countries, { maxZoom: VECTOR_TILE_MAX_ZOOM, indexMaxZoom: 4 });
  return {
    getTile(z, x, y) {
      const t = index.getTile(z, x, y);
      if (!t || t.features.length === 0) return Buffer.alloc(0);
      // Version 2 of the MVT spec, at geojson-vt's default extent (4096).
      const pbf = fromGeojsonVt({ [VECTOR_TILE_LAYER]: t }, { version: 2, extent: 4096 });
      return Buffer.from(pbf.buffer, pbf.byteOffset, pbf.byteLength);
    },
  };
}

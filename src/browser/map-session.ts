/**
 * The map session: a real MapLibre GL map (the fixture's `/page/map.html`) in Chromium, moved by a
 * script of pans and zooms, so that the tile requests — and the abandoned ones — are the map's own.
 *
 *   navigate ──▶ load ──▶ idle ──▶ move 1 (steps gapMs apart) ──▶ idle ──▶ move 2 … ──▶ settle
 *                                      │ tiles that leave the viewport before they arrive are
 *                                      │ aborted by MapLibre (AbortController → CDP canceled;
 *                                      ▼ h2: RST_STREAM CANCEL, RFC 9113 §8.7; h1: socket closed)
 *
 * Three accounts are joined per tile URL (the page makes each one unique): the page's (MapLibre's
 * transformRequest, dataabort and idle events), CDP's (sent, stalled, on the wire, canceled) and the
 * server's (metrics delta on `/vector-tiles`: reached a handler, dropped, aborted, rendered for
 * nobody). Over http:// Chromium keeps at most 6 connections per host, so most of a move's tiles
 * wait in the browser and an abort there costs the server nothing; over h2 they are all sent and the
 * abort has to travel to the server to save its work.
 */
import {
  type BrowserTarget,
  type MapMove,
  type MapMoveResult,
  type MapServerView,
  type MapSession,
  type MapStep,
  mapMoveSchema,
} from '../model/index.ts';
import { type MetricsSnapshot, metricsDelta, type ServerMetricsClient } from '../server/index.ts';
import { burstServerView, metricsBefore, withRunTimeout } from './burst.ts';
import { cancellationsByStage, nonZero } from './cancel.ts';
import type { CollectedPage } from './collector.ts';
import { peakConcurrency, spread, tally } from './spread.ts';

/** Where a session starts: longitude, latitude (degrees) and zoom. */
interface MapView {
  lon: number;
  lat: number;
  zoom: number;
}

/** The view every scripted session starts from: Europe at zoom 3. */
const MAP_START: Readonly<MapView> = Object.freeze({ lon: 10, lat: 48, zoom: 3 });

/**
 * A drag from `from` to `to` at one zoom: `n` jumps `gapMs` apart, the way a pointer drag moves the
 * camera without waiting for tiles.
 */
function dragSteps(from: [number, number], to: [number, number], zoom: number, n: number): MapStep[] {
  return Array.from({ length: n }, (_, i) => {
    const f = (i + 1) / n;
    return {
      center: [from[0] + (to[0] - from[0]) * f, from[1] + (to[1] - from[1]) * f] as [number, number],
      zoom,
      how: 'jump' as const,
    };
  });
}

const PARIS: [number, number] = [2.35, 48.86];
const BERLIN: [number, number] = [13.4, 52.52];
const VIENNA: [number, number] = [16.37, 48.21];
const NEW_YORK: [number, number] = [-74.0, 40.71];
const CHICAGO: [number, number] = [-87.63, 41.88];
const CITIES: ReadonlyArray<[number, number]> = [
  PARIS,
  [-3.7, 40.42],
  [12.5, 41.9],
  VIENNA,
  BERLIN,
  [-0.13, 51.5],
];

/**
 * Jumps from city to city at zoom 7, 50 ms after each view's first tile request (a user flicking
 * through search results): each view shares no tile with the one before, and a tile takes at least
 * the pool's service time, so the tiles still in flight are abandoned at each jump.
 */
const FLICK: MapMove = {
  name: 'flick through cities',
  steps: CITIES.map((c) => ({ center: c, zoom: 7, how: 'jump' as const })),
  gapMs: 50,
};

const ZOOM_IN: MapMove = {
  name: 'zoom in on Paris',
  steps: [{ center: PARIS, zoom: 6, how: 'fly', durationMs: 1200 }],
};
const FLY_NEW_YORK: MapMove = {
  name: 'fly to New York',
  steps: [{ center: NEW_YORK, zoom: 7, how: 'fly', durationMs: 2000 }],
};

/**
 * The full script: zooms, drags and flings over Europe, a flick through cities, a long flight to
 * New York (whose intermediate frames ask for tiles the map drops on arrival), a drag west and a
 * zoom out.
 */
export const MAP_MOVES: readonly MapMove[] = Object.freeze([
  ZOOM_IN,
  { name: 'drag to Berlin', steps: dragSteps(PARIS, BERLIN, 6, 6), gapMs: 120 },
  { name: 'zoom in on Berlin', steps: [{ center: BERLIN, zoom: 8, how: 'ease', durationMs: 800 }] },
  {
    name: 'fling to Vienna',
    steps: dragSteps(BERLIN, VIENNA, 8, 5).map((s) => ({ ...s, how: 'ease' as const, durationMs: 150 })),
    gapMs: 150,
  },
  FLICK,
  { name: 'zoom out over Europe', steps: [{ center: [10, 48], zoom: 4, how: 'ease', durationMs: 800 }] },
  FLY_NEW_YORK,
  { name: 'drag to Chicago', steps: dragSteps(NEW_YORK, CHICAGO, 7, 6), gapMs: 120 },
  { name: 'zoom out to the world', steps: [{ center: [0, 20], zoom: 1.5, how: 'ease', durationMs: 1000 }] },
]);

/** The `--quick` script: one zoom, the flick through cities, one long flight. */
export const MAP_MOVES_QUICK: readonly MapMove[] = Object.freeze([ZOOM_IN, FLICK, FLY_NEW_YORK]);

/** What one session needs. */
interface MapSessionSpec {
  /** A page on the target's origin (its collector records the tiles). */
  page: CollectedPage;
  target: BrowserTarget;
  index: number;
  serverMode: MapSession['serverMode'];
  moves: readonly MapMove[];
  start?: MapView;
  /** Bound on waiting for `idle` after a move's last step (plus its animation), ms. */
  idleTimeoutMs: number;
  /** Bound on the whole session, ms (H2LAB_ERR_BROWSER_TIMEOUT). */
  runTimeoutMs: number;
  metrics?: ServerMetricsClient;
  /** Bound on waiting for the pool to drain before and after, ms. Default 10 000. */
  drainTimeoutMs?: number;
}

interface PageState {
  loaded: boolean;
  loadMs: number | null;
  firstIdleMs: number | null;
  webgl: string;
  urls: string[];
  aborted: number;
  errors: string[];
}

/** Waits (in the page) for the map's load and first idle, each within `boundMs`. */
function readyScript(boundMs: number): string {
  return `(async () => {
  const until = async (f) => { const end = performance.now() + ${boundMs};
    while (!f()) { if (performance.now() > end) return false; await new Promise((r) => setTimeout(r, 10)); } return true; };
  await until(() => window.h2labMap && (window.h2labMap.loaded || window.h2labMap.errors.length));
  const s = window.h2labMap;
  if (s) await until(() => s.idle.length > 0 || s.errors.length > 0);
  return { loaded: !!(s && s.loaded), firstIdleMs: s && s.idle.length ? s.idle[0] : null };
})()`;
}

/** Runs one move in the page and waits for the idle after its last step. */
function moveScript(move: ReturnType<typeof mapMoveSchema.parse>, idleTimeoutMs: number): string {
  return `(async () => {
  const s = window.h2labMap, map = s.map;
  const steps = ${JSON.stringify(move.steps)}, gap = ${move.gapMs};
  const r0 = s.requests.length, a0 = s.aborted;
  let last = 0, lastDuration = 0;
  for (let i = 0; i < steps.length; i++) {
    const st = steps[i], o = { center: st.center, zoom: st.zoom }, before = s.requests.length;
    last = performance.now();
    lastDuration = st.how === 'jump' ? 0 : st.durationMs;
    if (st.how === 'jump') map.jumpTo(o);
    else if (st.how === 'ease') map.easeTo({ ...o, duration: st.durationMs });
    else map.flyTo({ ...o, duration: st.durationMs, essential: true });
    if (i === steps.length - 1) break;
    // The map asks for tiles in its render frames, which a loaded machine delays: the gap counts
    // from the step's first tile request (at most 1 s), so every step has tiles in flight to abandon.
    const until = performance.now() + 1000;
    while (s.requests.length === before && performance.now() < until) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, gap));
  }
  const idleAt = await new Promise((res) => {
    const f = () => { if (map.isMoving()) return; clearTimeout(t); map.off('idle', f); res(performance.now()); };
    const t = setTimeout(() => { map.off('idle', f); res(null); }, ${idleTimeoutMs} + lastDuration);
    map.on('idle', f);
  });
  return { tilesRequested: s.requests.length - r0, tilesAborted: s.aborted - a0,
    completeMs: idleAt === null ? null : idleAt - last };
})()`;
}

const STATE_SCRIPT = `(() => {
  const s = window.h2labMap;
  let webgl = 'none';
  try {
    const g = document.createElement('canvas').getContext('webgl2');
    const e = g && g.getExtension('WEBGL_debug_renderer_info');
    webgl = g ? (e ? g.getParameter(e.UNMASKED_RENDERER_WEBGL) : g.getParameter(g.RENDERER)) : 'no WebGL2';
  } catch (err) { webgl = 'error: ' + err; }
  return { loaded: !!(s && s.loaded), loadMs: s && s.loadMs !== undefined ? s.loadMs : null,
    firstIdleMs: s && s.idle.length ? s.idle[0] : null, webgl,
    urls: s ? s.requests.map((r) => r.url) : [], aborted: s ? s.aborted : 0, errors: s ? s.errors : [] };
})()`;

/** The page's URL for a session starting at `v`. */
function mapPageUrl(origin: string, v: MapView): string {
  return `${origin}/page/map.html?lon=${v.lon}&lat=${v.lat}&zoom=${v.zoom}`;
}

/**
 * The server's view of a session from the metrics delta. The pool's jobs and cancellations are not
 * per route: during a session the map's tiles are the pool's only work.
 */
function mapServerView(delta: MetricsSnapshot, drained: boolean, owned: boolean): MapServerView {
  const byStage = cancellationsByStage(delta);
  const { poolQueueMs, inFlightPeak, connectionsOpened } = burstServerView(delta, owned);
  return {
    reachedHandler: Object.values(delta.requests['vector-tiles']).reduce((a, b) => a + b, 0),
    cancellations: byStage,
    jobs: { ...delta.pool.jobs },
    renderedForNothing: delta.pool.jobs.unwanted + (byStage.after ?? 0),
    rstStreamByCode: nonZero(delta.rstStream),
    connectionsOpened,
    drained,
    ...(poolQueueMs && { poolQueueMs }),
    ...(inFlightPeak !== undefined && { inFlightPeak }),
  };
}

/**
 * Runs one scripted session on a fresh map (a new navigation: MapLibre's in-memory tile cache starts
 * empty; the browser's HTTP cache is off). Throws H2LAB_ERR_BROWSER_TIMEOUT past `runTimeoutMs`.
 */
export async function runMapSession(spec: MapSessionSpec): Promise<MapSession> {
  const { page, target } = spec;
  const moves = spec.moves.map((m) => mapMoveSchema.parse(m));
  const drainMs = spec.drainTimeoutMs ?? 10_000;
  if (spec.metrics) await spec.metrics.waitForIdlePool(drainMs);
  const before = spec.metrics ? await metricsBefore(spec.metrics) : undefined;
  await page.collectWorkers();
  page.clear();
  const what = `map session ${spec.index} on ${target.label}`;
  const body = async () => {
    await page.page.goto(mapPageUrl(page.origin, spec.start ?? MAP_START), { waitUntil: 'load' });
    await page.evaluate(readyScript(spec.idleTimeoutMs));
    const results: MapMoveResult[] = [];
    for (const m of moves) {
      const r = await page.evaluate<
        Omit<MapMoveResult, 'name' | 'completeMs'> & { completeMs: number | null }
      >(moveScript(m, spec.idleTimeoutMs));
      results.push({ name: m.name, ...r, completeMs: r.completeMs ?? Number.NaN });
    }
    return results;
  };
  const moveResults = await withRunTimeout(body(), spec.runTimeoutMs, what);
  const st = await page.evaluate<PageState>(STATE_SCRIPT);
  await page.settle(st.urls);
  const records = page.records(st.urls);
  const done = records.filter((r) => r.failed === undefined && r.status !== undefined);
  const sent = done.filter((r) => r.sendMs !== undefined);
  const failed = records.filter((r) => r.failed !== undefined && !r.canceled);
  const session: MapSession = {
    target: target.id,
    index: spec.index,
    serverMode: spec.serverMode,
    webgl: st.webgl,
    loadMs: st.loadMs ?? Number.NaN,
    firstIdleMs: st.firstIdleMs ?? Number.NaN,
    moves: moveResults,
    tilesRequested: st.urls.length,
    tilesCompleted: done.length,
    tilesCanceled: records.filter((r) => r.canceled).length,
    tilesFailed: tally(failed.map((r) => r.failed!)),
    mapAborted: st.aborted,
    cdpMissing: st.urls.length - records.length,
    peakInFlight: peakConcurrency(sent.map((r) => [r.sendMs!, r.lastDataMs ?? r.endMs] as const)),
    connections: new Set(sent.map((r) => r.connectionId)).size,
    protocols: tally(done.map((r) => r.protocol ?? 'unknown')),
    stalledMs: spread(sent.map((r) => r.stalledMs!)),
    wireMs: spread(sent.map((r) => r.wireMs!)),
    mapErrors: st.errors,
  };
  if (spec.metrics && before) {
    const { snapshot, drained } = await spec.metrics.waitForIdlePool(drainMs);
    session.server = mapServerView(metricsDelta(before, snapshot), drained, spec.metrics.owned);
  }
  return session;
}

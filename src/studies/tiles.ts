/**
 * `h2lab study tiles`: the map tile server (report 000). A backend pool with a render-time model
 * (light and heavy tiles) behind the fixture server, and real Chromium as the client:
 *
 * - the synthetic burst (121 tiles at once) over http:// (HTTP/1.1), https:// (h2) and the
 *   HTTP/1.1-over-TLS control, and the cancellation experiment with the server honouring and
 *   ignoring cancellation (src/browser's measureBrowser, as `h2lab browser` runs it);
 * - MapLibre GL map sessions whose pans and zooms issue and abandon the tile requests themselves
 *   (src/browser/map-session.ts), on real vector tiles;
 * - the open tuning question: a backend pool-size sweep for HTTP/1.1 and h2, with the time to the
 *   last tile and where the queue sat (the browser's stall or the server's pool);
 *
 * on loopback and behind emulated links (`--net`). The explanation is derived from the numbers.
 */
import {
  type ChromiumHandle,
  CollectedPage,
  checkChromium,
  launchChromium,
  MAP_MOVES,
  MAP_MOVES_QUICK,
  measureBrowser,
  runBurst,
  runMapSession,
  spkiPins,
  summarizeBurst,
} from '../browser/index.ts';
import { invalidOption, medianNearestRank, parseInteger } from '../core/index.ts';
import {
  type BrowserResult,
  type BrowserTarget,
  type BurstRun,
  type BurstSummary,
  type CancelSummary,
  DEFAULT_CHROMIUM_PATH,
  type MapSession,
  type StudySection,
} from '../model/index.ts';
import { checkNetAvailable, createLink, type Link, profileNames } from '../net/index.ts';
import { type FixtureTarget, type ServerOptionsInput, startFixtureTarget } from '../server/index.ts';
import { listOf } from './flags.ts';
import type { Study, StudyContext } from './study.ts';

/** The report's burst table (121 tiles at once, headless Chrome over CDP, medians). */
const REPORT_BURST = [
  { target: 'HTTP/1.1', peak: 6, stalled: 527, wire: 63, wall: 1324 },
  { target: 'HTTP/2 (TLS)', peak: 121, stalled: 33, wire: 541, wall: 1202 },
];
/** The report's cancellation result: 121 abandoned after 60 ms, then one wanted tile. */
const REPORT_CANCEL = { wantedMs: 86, baselineMs: 59 };
const BURST = 121;
/** A tiny burst that opens the connections before a sweep's measured bursts (discarded). */
const WARM_UP = 12;

/**
 * The render-time model. The report: ~250 ms for a heavy tile, a pool of 8 database connections;
 * its 121-tile burst took 1.2 s on h2, i.e. about 80 ms of pool time per tile on average, which is
 * what 60 ms light tiles with 10% of 250 ms heavy ones give (60 + 0.1 × 190 = 79 ms).
 */
const MODEL = { poolSize: 8, tileMs: 60, tileHeavyMs: 250, tileHeavyFraction: 0.1 };

const GRID = {
  full: {
    net: ['loopback', 'wan'],
    pools: [2, 4, 8, 16, 32],
    runs: 6,
    cancelRuns: 3,
    sweepRuns: 3,
    sessions: 2,
    mapModes: ['honour', 'ignore'] as const,
  },
  quick: {
    net: ['loopback', 'wan'],
    pools: [4, 8, 32],
    runs: 2,
    cancelRuns: 1,
    sweepRuns: 1,
    sessions: 1,
    mapModes: ['honour'] as const,
  },
};

/** The study's resolved options (stored in the result). */
interface TilesOptions {
  net: string[];
  pools: number[];
  runs: number;
  sessions: number;
  poolSize: number;
  tileMs: number;
  tileHeavyMs: number;
  tileHeavyFraction: number;
  chromiumPath: string;
}

function resolve(ctx: Pick<StudyContext, 'quick' | 'options'>): TilesOptions {
  const g = ctx.quick ? GRID.quick : GRID.full;
  const o = ctx.options as Partial<TilesOptions> & { loopback?: boolean };
  return {
    net: o.loopback ? ['loopback'] : (o.net ?? [...g.net]),
    pools: o.pools ?? [...g.pools],
    runs: o.runs ?? g.runs,
    sessions: o.sessions ?? g.sessions,
    poolSize: o.poolSize ?? MODEL.poolSize,
    tileMs: MODEL.tileMs,
    tileHeavyMs: MODEL.tileHeavyMs,
    tileHeavyFraction: MODEL.tileHeavyFraction,
    chromiumPath: o.chromiumPath ?? DEFAULT_CHROMIUM_PATH,
  };
}

/** Where the fixture runs for one network condition: in this process, or behind a link. */
interface Env {
  id: string;
  link?: Link;
  start: (o: ServerOptionsInput) => Promise<FixtureTarget>;
}

/** Mean pool time of one tile under the model, ms: the backend's work per tile. */
function meanTileMs(o: TilesOptions): number {
  return o.tileMs + o.tileHeavyFraction * (o.tileHeavyMs - o.tileMs);
}

/** The backend's floor for `n` tiles on `pool` workers, ms (ignoring the network). */
function floorMs(o: TilesOptions, n: number, pool: number): number {
  return (n * meanTileMs(o)) / pool;
}

const r0 = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? null : Math.round(x));
const r2 = (x: number | undefined) =>
  x === undefined || !Number.isFinite(x) ? null : Math.round(x * 100) / 100;
const med = (xs: number[]) => {
  const v = xs.filter(Number.isFinite);
  return v.length ? medianNearestRank(v) : Number.NaN;
};

function targetLabel(id: string): string {
  return id === 'http' ? 'HTTP/1.1 (http://)' : id === 'https' ? 'HTTP/2 (TLS)' : 'HTTP/1.1 over TLS';
}

// --- the burst and cancellation (measureBrowser) ------------------------------------------------

function burstSection(env: string, b: BrowserResult, o: TilesOptions): StudySection {
  return {
    id: `burst-${env}`,
    title: `${BURST} tiles at once, ${env}`,
    note: `Medians over ${Math.max(1, o.runs - 1)} kept run(s) a target (the first discarded), Chromium over CDP, cache off. Pool of ${o.poolSize} workers, ${o.tileMs} ms a tile, ${Math.round(o.tileHeavyFraction * 100)}% heavy at ${o.tileHeavyMs} ms. Stalled = in the browser before sending; on the wire = send to the last byte (the server's queue included); server queue = the pool's wait (p50).`,
    table: {
      columns: [
        { key: 'target', label: '' },
        { key: 'peak', label: 'peak in flight' },
        { key: 'conns', label: 'connections' },
        { key: 'stalled', label: 'stalled p50', unit: 'ms' },
        { key: 'wire', label: 'on the wire p50', unit: 'ms' },
        { key: 'queue', label: 'server queue p50', unit: 'ms' },
        { key: 'wall', label: 'wall', unit: 'ms' },
      ],
      rows: b.burst.summaries.map((s) => ({
        target: targetLabel(s.target),
        peak: s.peakInFlight.median,
        conns: s.connections.median,
        stalled: r0(s.stalledP50Ms),
        wire: r0(s.wireP50Ms),
        queue: r0(s.serverPoolQueueP50Ms),
        wall: r0(s.wallMs),
      })),
    },
    reference: {
      source:
        'report 000, 121 tiles fired at once (headless Chrome over CDP, cache-busted, first run discarded)',
      note: 'Its server rendered with PostGIS behind a pool of 8 connections, ~250 ms for a heavy tile.',
      table: {
        columns: [
          { key: 'target', label: '' },
          { key: 'peak', label: 'peak in flight' },
          { key: 'stalled', label: 'stalled p50', unit: 'ms' },
          { key: 'wire', label: 'on the wire p50', unit: 'ms' },
          { key: 'wall', label: 'wall', unit: 'ms' },
        ],
        rows: REPORT_BURST,
      },
    },
  };
}

function cancelSection(env: string, b: BrowserResult): StudySection {
  return {
    id: `cancel-${env}`,
    title: `${BURST} tiles abandoned, then one wanted tile, ${env}`,
    note: 'Every tile is aborted shortly after the burst starts (the actual abort time is shown); then one tile the burst did not ask for is fetched. Reached = abandoned tiles whose handler started; dropped = taken out of the pool queue; aborted = stopped while rendering; unwanted = rendered to the end for nobody.',
    table: {
      columns: [
        { key: 'target', label: '' },
        { key: 'mode', label: 'server' },
        { key: 'abortMs', label: 'aborted after', unit: 'ms' },
        { key: 'reached', label: 'reached' },
        { key: 'dropped', label: 'dropped' },
        { key: 'aborted', label: 'aborted' },
        { key: 'unwanted', label: 'unwanted' },
        { key: 'wanted', label: 'wanted tile', unit: 'ms' },
        { key: 'baseline', label: 'idle baseline', unit: 'ms' },
      ],
      rows: b.cancelSummaries.map((c) => ({
        target: targetLabel(c.target),
        mode: c.serverMode,
        abortMs: r0(c.actualAbortMs),
        reached: c.server?.reachedHandler ?? null,
        dropped: c.server?.jobs.dropped ?? null,
        aborted: c.server?.jobs.aborted ?? null,
        unwanted: c.server?.jobs.unwanted ?? null,
        wanted: r0(c.wantedMs),
        baseline: r0(c.baselineMs),
      })),
    },
    reference: {
      source: 'report 000, cancellation (121 tiles abandoned after 60 ms, then one wanted tile; h2)',
      note: 'Its handler honoured the request’s cancellation and its pool dropped abandoned work.',
      table: {
        columns: [
          { key: 'target', label: '' },
          { key: 'wanted', label: 'wanted tile', unit: 'ms' },
          { key: 'baseline', label: 'idle baseline', unit: 'ms' },
        ],
        rows: [
          {
            target: 'HTTP/2 (TLS)',
            ...{ wanted: REPORT_CANCEL.wantedMs, baseline: REPORT_CANCEL.baselineMs },
          },
        ],
      },
    },
  };
}

function pctDiff(a: number, b: number): string {
  return `${Math.round((Math.abs(a - b) / Math.max(a, b)) * 100)}%`;
}

function explainBurst(env: string, b: BrowserResult, o: TilesOptions): string {
  const by = new Map(b.burst.summaries.map((s) => [s.target, s]));
  const h1 = by.get('http');
  const h2 = by.get('https');
  if (!h1 || !h2) return `On ${env} the burst did not produce both targets, so it says nothing.`;
  const floor = floorMs(o, BURST, o.poolSize);
  const queueWhere = (s: BurstSummary) =>
    (s.serverPoolQueueP50Ms ?? 0) > s.stalledP50Ms ? 'at the server’s pool' : 'in the browser';
  const parts = [
    `On ${env}, over http:// Chromium had ${h1.peakInFlight.median} tiles in flight at most, on ${h1.connections.median} connections, and the queue sat ${queueWhere(h1)} (stalled p50 ${Math.round(h1.stalledP50Ms)} ms, server queue p50 ${Math.round(h1.serverPoolQueueP50Ms ?? 0)} ms); over h2 ${h2.peakInFlight.median} were in flight on ${h2.connections.median} connection(s) and the queue sat ${queueWhere(h2)} (stalled p50 ${Math.round(h2.stalledP50Ms)} ms, server queue p50 ${Math.round(h2.serverPoolQueueP50Ms ?? 0)} ms).`,
  ];
  const faster = h2.wallMs < h1.wallMs ? 'h2' : 'HTTP/1.1';
  const h1Busy = Math.min(o.poolSize, h1.peakInFlight.median);
  const h1Floor = floorMs(o, BURST, h1Busy);
  const near = (wall: number, f: number) => `${Math.round((wall / f - 1) * 100)}%`;
  parts.push(
    `The last tile arrived after ${Math.round(h1.wallMs)} ms over HTTP/1.1 and ${Math.round(h2.wallMs)} ms over h2 (${faster} ${pctDiff(h1.wallMs, h2.wallMs)} faster). The backend's floor is ${Math.round(floor)} ms (${BURST} tiles × ${Math.round(meanTileMs(o))} ms mean render / ${o.poolSize} workers)${h1Busy < o.poolSize ? `; with ${h1Busy} requests in flight HTTP/1.1 keeps at most ${h1Busy} of the ${o.poolSize} workers busy, so its own floor is ${Math.round(h1Floor)} ms` : ''}. HTTP/1.1 finished ${near(h1.wallMs, h1Floor)} above its floor, h2 ${near(h2.wallMs, floor)} above the backend's: ${
      h1.wallMs < h1Floor * 1.25 && h2.wallMs < floor * 1.25
        ? h1Busy < o.poolSize
          ? 'both ran at the limit their queue allowed, so h2 moved the queue into the pool and shortened it only by the workers HTTP/1.1 left idle'
          : 'both ran at the backend’s limit, so h2 moved the queue into the pool without shortening it'
        : 'the rest is time outside the pool: the browser’s own work on this machine and, behind a link, the round trip before each connection’s next tile'
    }.`,
  );
  const ctl = by.get('https-h1');
  if (ctl)
    parts.push(
      `HTTP/1.1 over TLS took ${Math.round(ctl.wallMs)} ms with ${ctl.peakInFlight.median} in flight: ${Math.abs(ctl.wallMs - h1.wallMs) < Math.abs(ctl.wallMs - h2.wallMs) ? 'like plain HTTP/1.1, so the difference is the protocol, not TLS' : 'closer to h2 than to plain HTTP/1.1, so part of the difference is TLS or the connection setup, not the protocol'}.`,
    );
  return parts.join(' ');
}

function explainCancel(env: string, cs: readonly CancelSummary[]): string | undefined {
  const get = (t: string, m: string) => cs.find((c) => c.target === t && c.serverMode === m);
  const honour = get('https', 'honour');
  const ignore = get('https', 'ignore');
  const h1 = get('http', 'honour');
  if (!honour || !ignore) return undefined;
  const n = honour.runs;
  const worse = ignore.wantedMs > honour.wantedMs * 1.2;
  const parts = [
    `On ${env}, ${n} run(s) abandoning ${BURST} tiles over h2 (the abort ran after ${Math.round(honour.actualAbortMs)} ms, median) delivered ${honour.server?.reachedHandler ?? '?'} abandoned tile${honour.server?.reachedHandler === 1 ? '' : 's'} in all to a handler; a server that honours cancellation dropped ${honour.server?.jobs.dropped ?? '?'} of them from its queue and aborted ${honour.server?.jobs.aborted ?? '?'} while rendering, one that ignores it rendered ${ignore.server?.jobs.unwanted ?? '?'} for nobody (of ${ignore.server?.reachedHandler ?? '?'} that reached it).`,
    `The wanted tile then took ${Math.round(honour.wantedMs)} ms against ${Math.round(ignore.wantedMs)} ms (idle ${Math.round(honour.baselineMs)} ms): ${worse ? `ignoring cancellation cost it ${Math.round(ignore.wantedMs - honour.wantedMs)} ms, the work of the abandoned tiles still ahead of it in the pool` : 'ignoring cancellation did not cost it measurably here, so the abandoned work had mostly drained or ran beside it on free workers'}.`,
  ];
  if (h1)
    parts.push(
      `Over HTTP/1.1 ${h1.server?.reachedHandler ?? '?'} abandoned tiles reached a handler in ${h1.runs} run(s) of ${BURST}: the rest were still queued in the browser, where cancelling costs the server nothing.`,
    );
  return parts.join(' ');
}

// --- map sessions ------------------------------------------------------------------------------

interface MapRow {
  target: string;
  mode: string;
  sessions: MapSession[];
}

const sumOf = (xs: MapSession[], f: (s: MapSession) => number) => xs.reduce((a, s) => a + f(s), 0);

function mapSection(env: string, rows: MapRow[], quick: boolean): StudySection {
  return {
    id: `map-${env}`,
    title: `MapLibre pan-and-zoom sessions, ${env}`,
    note: `${quick ? 'The quick script (3 moves)' : `The full script (${MAP_MOVES.length} moves)`}, a 1024×768 map; counts are totals over the sessions, times medians. Cancelled = tile requests the map aborted (CDP); reached = tile requests whose handler started; for nothing = rendered to the end for a client that had gone. Complete = from a move's last step to MapLibre's idle.`,
    table: {
      columns: [
        { key: 'target', label: '' },
        { key: 'mode', label: 'server' },
        { key: 'requested', label: 'requested' },
        { key: 'completed', label: 'completed' },
        { key: 'cancelled', label: 'cancelled' },
        { key: 'reached', label: 'reached server' },
        { key: 'nothing', label: 'for nothing' },
        { key: 'peak', label: 'peak in flight' },
        { key: 'stalled', label: 'stalled p50', unit: 'ms' },
        { key: 'wire', label: 'on the wire p50', unit: 'ms' },
        { key: 'complete', label: 'complete p50', unit: 'ms' },
        { key: 'completeMax', label: 'complete max', unit: 'ms' },
      ],
      rows: rows.map((r) => {
        const moves = r.sessions.flatMap((s) => s.moves.map((m) => m.completeMs));
        return {
          target: targetLabel(r.target),
          mode: r.mode,
          requested: sumOf(r.sessions, (s) => s.tilesRequested),
          completed: sumOf(r.sessions, (s) => s.tilesCompleted),
          cancelled: sumOf(r.sessions, (s) => s.tilesCanceled),
          reached: sumOf(r.sessions, (s) => s.server?.reachedHandler ?? 0),
          nothing: sumOf(r.sessions, (s) => s.server?.renderedForNothing ?? 0),
          peak: Math.max(...r.sessions.map((s) => s.peakInFlight)),
          stalled: r0(med(r.sessions.map((s) => s.stalledMs.p50))),
          wire: r0(med(r.sessions.map((s) => s.wireMs.p50))),
          complete: r0(med(moves)),
          completeMax: r0(Math.max(...moves.filter(Number.isFinite))),
        };
      }),
    },
  };
}

function explainMap(env: string, rows: MapRow[]): string | undefined {
  const get = (t: string, m: string) => rows.find((r) => r.target === t && r.mode === m);
  const parts: string[] = [];
  for (const r of rows.filter((x) => x.mode === 'honour')) {
    const req = sumOf(r.sessions, (s) => s.tilesRequested);
    const canc = sumOf(r.sessions, (s) => s.tilesCanceled);
    const reached = sumOf(r.sessions, (s) => s.server?.reachedHandler ?? 0);
    const cancelled = sumOf(r.sessions, (s) =>
      Object.values(s.server?.cancellations ?? {}).reduce((a, b) => a + b, 0),
    );
    const moves = r.sessions.flatMap((s) => s.moves.map((m) => m.completeMs));
    parts.push(
      `${targetLabel(r.target)}: the map asked for ${req} tiles and abandoned ${canc} itself; ${reached} reached the server, where ${cancelled} were cancelled; the viewport was complete ${Math.round(med(moves))} ms (median) after a move.`,
    );
  }
  if (parts.length === 0) return undefined;
  const ig = get('https', 'ignore');
  if (ig) {
    const wasted = sumOf(ig.sessions, (s) => s.server?.renderedForNothing ?? 0);
    const moves = ig.sessions.flatMap((s) => s.moves.map((m) => m.completeMs));
    parts.push(
      `With a server that ignores cancellation, h2 sessions had ${wasted} tiles rendered for nobody and the viewport was complete ${Math.round(med(moves))} ms after a move.`,
    );
  }
  return `On ${env}, in MapLibre sessions — ${parts.join(' ')}`;
}

// --- the pool-size sweep -----------------------------------------------------------------------

interface SweepPoint {
  pool: number;
  http?: BurstSummary;
  https?: BurstSummary;
}

function where(s: BurstSummary | undefined): string | null {
  if (!s) return null;
  const q = s.serverPoolQueueP50Ms ?? 0;
  return q > s.stalledP50Ms ? 'server' : 'browser';
}

function sweepSection(env: string, points: SweepPoint[], o: TilesOptions): StudySection {
  return {
    id: `sweep-${env}`,
    title: `Backend pool size, ${BURST} tiles at once, ${env}`,
    note: `One fixture per pool size, ${o.tileMs} ms a tile, ${Math.round(o.tileHeavyFraction * 100)}% heavy at ${o.tileHeavyMs} ms; medians over the kept bursts. Queue = where a tile waited longer at the median: in the browser (stalled) or in the server's pool. Floor = ${BURST} × mean render / workers.`,
    table: {
      columns: [
        { key: 'pool', label: 'workers' },
        { key: 'floor', label: 'floor', unit: 'ms' },
        { key: 'h1wall', label: 'HTTP/1.1 wall', unit: 'ms' },
        { key: 'h1stalled', label: 'h1 stalled', unit: 'ms' },
        { key: 'h1queue', label: 'h1 server queue', unit: 'ms' },
        { key: 'h1where', label: 'h1 queue' },
        { key: 'h2wall', label: 'h2 wall', unit: 'ms' },
        { key: 'h2stalled', label: 'h2 stalled', unit: 'ms' },
        { key: 'h2queue', label: 'h2 server queue', unit: 'ms' },
        { key: 'h2where', label: 'h2 queue' },
        { key: 'ratio', label: 'h1/h2', unit: '×' },
      ],
      rows: points.map((p) => ({
        pool: p.pool,
        floor: r0(floorMs(o, BURST, p.pool)),
        h1wall: r0(p.http?.wallMs),
        h1stalled: r0(p.http?.stalledP50Ms),
        h1queue: r0(p.http?.serverPoolQueueP50Ms),
        h1where: where(p.http),
        h2wall: r0(p.https?.wallMs),
        h2stalled: r0(p.https?.stalledP50Ms),
        h2queue: r0(p.https?.serverPoolQueueP50Ms),
        h2where: where(p.https),
        ratio: p.http && p.https ? r2(p.http.wallMs / p.https.wallMs) : null,
      })),
    },
  };
}

/** The first pool size after which doubling the workers gains less than 10%, or undefined. */
function knee(points: SweepPoint[], side: 'http' | 'https'): { pool: number; wall: number } | undefined {
  const pts = points.filter((p) => p[side] !== undefined);
  for (let i = 0; i + 1 < pts.length; i++) {
    const a = pts[i]![side]!.wallMs;
    const b = pts[i + 1]![side]!.wallMs;
    if (b > a * 0.9) return { pool: pts[i]!.pool, wall: a };
  }
  return undefined;
}

function explainSweep(env: string, points: SweepPoint[], o: TilesOptions): string | undefined {
  const full = points.filter((p) => p.http && p.https);
  if (full.length < 2) return undefined;
  const first = full[0]!;
  const last = full.at(-1)!;
  const parts = [
    `On ${env}, from ${first.pool} to ${last.pool} workers the ${BURST}-tile burst went from ${Math.round(first.http!.wallMs)} to ${Math.round(last.http!.wallMs)} ms over HTTP/1.1 and from ${Math.round(first.https!.wallMs)} to ${Math.round(last.https!.wallMs)} ms over h2.`,
  ];
  for (const side of ['http', 'https'] as const) {
    const name = side === 'http' ? 'HTTP/1.1' : 'h2';
    const k = knee(full, side);
    const atLast = last[side]!;
    if (!k) {
      parts.push(
        `${name} kept gaining up to ${last.pool} workers (queue ${where(atLast) === 'server' ? 'at the server' : 'in the browser'} at ${last.pool}).`,
      );
      continue;
    }
    const pk = full.find((p) => p.pool === k.pool)![side]!;
    const stalled = `stalled p50 ${Math.round(atLast.stalledP50Ms)} ms at ${last.pool} workers against ${Math.round(atLast.serverPoolQueueP50Ms ?? 0)} ms in the pool`;
    const why =
      where(atLast) !== 'browser'
        ? `the pool still queued (p50 ${Math.round(atLast.serverPoolQueueP50Ms ?? 0)} ms at ${last.pool} workers), so the limit is elsewhere: the per-tile render time (${Math.round(meanTileMs(o))} ms mean) and the round trips`
        : atLast.peakInFlight.median < last.pool
          ? `the queue had moved into the browser (${stalled}): with ${atLast.peakInFlight.median} requests in flight, workers beyond ${atLast.peakInFlight.median} sit idle`
          : `the browser itself became the limit (${stalled}): ${atLast.peakInFlight.median} requests were in flight, more than the workers, but Chromium took that long to send them`;
    parts.push(
      `${name} stopped gaining at ${k.pool} workers (${Math.round(k.wall)} ms; a doubling gave less than 10%), peak in flight ${pk.peakInFlight.median}: ${why}.`,
    );
  }
  return parts.join(' ');
}

// --- running it --------------------------------------------------------------------------------

function fixtureOptions(o: TilesOptions, extra: ServerOptionsInput = {}): ServerOptionsInput {
  return {
    poolSize: o.poolSize,
    tileMs: o.tileMs,
    tileHeavyMs: o.tileHeavyMs,
    tileHeavyFraction: o.tileHeavyFraction,
    // Chrome stops at 100 streams when the server announces none (browser-notes): room for 121.
    maxConcurrentStreams: 256,
    ...extra,
  };
}

async function launchFor(
  o: TilesOptions,
  fixtures: FixtureTarget[],
  webgl: boolean,
): Promise<ChromiumHandle> {
  const spki = fixtures.flatMap((f) => [...spkiPins(f.certPem), ...(f.caPem ? spkiPins(f.caPem) : [])]);
  return launchChromium({ executablePath: o.chromiumPath, spki: [...new Set(spki)], webgl });
}

function targetsOf(f: FixtureTarget): BrowserTarget[] {
  return [
    {
      id: 'http',
      label: 'http:// HTTP/1.1',
      origin: new URL(f.plainUrl!).origin,
      h2Disabled: false,
      expectedProtocol: 'http/1.1',
    },
    {
      id: 'https',
      label: 'https:// h2',
      origin: new URL(f.tlsUrl!).origin,
      h2Disabled: false,
      expectedProtocol: 'h2',
    },
  ];
}

async function mapCell(ctx: StudyContext, env: Env, o: TilesOptions): Promise<MapRow[]> {
  const modes = ctx.quick ? GRID.quick.mapModes : GRID.full.mapModes;
  const fixtures = new Map<MapSession['serverMode'], FixtureTarget>();
  const rows: MapRow[] = [];
  let chromium: ChromiumHandle | undefined;
  try {
    for (const m of modes)
      fixtures.set(m, await env.start(fixtureOptions(o, { ignoreCancel: m === 'ignore' })));
    chromium = await launchFor(o, [...fixtures.values()], true);
    for (const [mode, f] of fixtures) {
      // The first vector tile loads the geodata (about 0.3 s): not part of any session.
      await fetch(`${f.plainUrl}/vector-tiles/0/0/0.mvt`).then((r) => r.arrayBuffer());
      for (const t of targetsOf(f)) rows.push({ target: t.id, mode, sessions: [] });
    }
    for (let i = 0; i < o.sessions; i++) {
      for (const [mode, f] of fixtures) {
        for (const t of targetsOf(f)) {
          if (ctx.signal.aborted) return rows;
          const page = await CollectedPage.open(chromium.context, t.origin);
          try {
            await page.page.setViewportSize({ width: 1024, height: 768 });
            const s = await runMapSession({
              page,
              target: t,
              index: i,
              serverMode: mode,
              moves: ctx.quick ? MAP_MOVES_QUICK : MAP_MOVES,
              idleTimeoutMs: 30_000,
              runTimeoutMs: 180_000,
              metrics: f.metrics,
            });
            rows.find((r) => r.target === t.id && r.mode === mode)!.sessions.push(s);
            ctx.log(`map ${env.id} ${t.id} ${mode}: ${s.tilesRequested} tiles, ${s.tilesCanceled} cancelled`);
          } finally {
            await page.close();
          }
        }
      }
    }
    return rows;
  } finally {
    await chromium?.close();
    for (const f of fixtures.values()) await f.close();
  }
}

/** One pool size: a warm-up burst per target (discarded), then `runs` bursts a target, alternating. */
async function sweepBursts(
  chromium: ChromiumHandle,
  f: FixtureTarget,
  runs: number,
): Promise<{ http: BurstSummary; https: BurstSummary }> {
  const all: BurstRun[] = [];
  const targets = targetsOf(f);
  const pages = await Promise.all(targets.map((t) => CollectedPage.open(chromium.context, t.origin)));
  const burst = (j: number, count: number, index: number) =>
    runBurst({
      page: pages[j]!,
      target: targets[j]!,
      count,
      pathTemplate: '/tiles/7/{x}/{y}',
      index,
      runTimeoutMs: 60_000,
      metrics: f.metrics,
    });
  try {
    // Index 0 is discarded: a small burst that opens the connections.
    for (let j = 0; j < targets.length; j++) all.push(await burst(j, WARM_UP, 0));
    for (let i = 1; i <= runs; i++)
      for (let j0 = 0; j0 < targets.length; j0++) all.push(await burst((i + j0) % targets.length, BURST, i));
  } finally {
    for (const p of pages) await p.close();
  }
  return { http: summarizeBurst('http', all), https: summarizeBurst('https', all) };
}

async function sweepCell(
  ctx: StudyContext,
  env: Env,
  o: TilesOptions,
  progress: (f: number) => void,
): Promise<SweepPoint[]> {
  const points: SweepPoint[] = [];
  const runs = ctx.quick ? GRID.quick.sweepRuns : GRID.full.sweepRuns;
  let chromium: ChromiumHandle | undefined;
  let pinned = '';
  try {
    for (const [k, pool] of o.pools.entries()) {
      if (ctx.signal.aborted) break;
      const f = await env.start(fixtureOptions(o, { poolSize: pool }));
      try {
        // In this process every fixture has the same development certificate; behind a link each
        // start issues its own, and Chromium trusts only the pins it started with.
        const pins = [...spkiPins(f.certPem), ...(f.caPem ? spkiPins(f.caPem) : [])].join(',');
        if (pins !== pinned) {
          await chromium?.close();
          chromium = await launchFor(o, [f], false);
          pinned = pins;
        }
        points.push({ pool, ...(await sweepBursts(chromium!, f, runs)) });
        const p = points.at(-1)!;
        ctx.log(
          `sweep ${env.id} pool ${pool}: h1 ${Math.round(p.http!.wallMs)} ms, h2 ${Math.round(p.https!.wallMs)} ms`,
        );
      } finally {
        await f.close();
      }
      progress((k + 1) / o.pools.length);
    }
  } finally {
    await chromium?.close();
  }
  return points;
}

export const tilesStudy: Study = {
  name: 'tiles',
  title: 'The map tile server: HTTP/2 moves the queue, does it shorten it?',
  source: 'report 000 (the map tile server)',
  question:
    'For a map whose tiles come from a bounded backend pool, what does HTTP/2 change against HTTP/1.1 in a real browser — where the queue sits, what abandoned tiles cost, and how many workers are worth having?',
  flags: [
    {
      flags: '--net <list>',
      description: `network conditions: loopback and link profiles (${profileNames().join(', ')}); default loopback,wan`,
      key: 'net',
      parse: (v, f) =>
        listOf(v, f, (x) => {
          if (x !== 'loopback' && !profileNames().includes(x))
            throw invalidOption(f, v, `use a list of loopback, ${profileNames().join(', ')}`);
          return x;
        }),
    },
    {
      flags: '--loopback',
      description: 'loopback only (no emulated link, no root needed)',
      key: 'loopback',
    },
    {
      flags: '--pools <list>',
      description: 'backend pool sizes of the sweep (default 2,4,8,16,32; quick 4,8,32)',
      key: 'pools',
      parse: (v, f) => listOf(v, f, (x) => parseInteger(x, f, 1, 1024)),
    },
    {
      flags: '--pool <n>',
      description: `backend workers for the burst and the map sessions (default ${MODEL.poolSize}, as the report's)`,
      key: 'poolSize',
      parse: (v, f) => parseInteger(v, f, 1, 1024),
    },
    {
      flags: '--runs <n>',
      description: 'bursts per target, the first discarded (default 6; quick 2)',
      key: 'runs',
      parse: (v, f) => parseInteger(v, f, 2, 100),
    },
    {
      flags: '--sessions <n>',
      description: 'map sessions per target and server mode (default 2; quick 1)',
      key: 'sessions',
      parse: (v, f) => parseInteger(v, f, 1, 20),
    },
    {
      flags: '--chromium <path>',
      description: `the Chromium executable (default ${DEFAULT_CHROMIUM_PATH})`,
      key: 'chromiumPath',
    },
  ],
  check(options, quick) {
    const o = resolve({ quick, options });
    checkChromium(o.chromiumPath);
    if (o.net.some((n) => n !== 'loopback')) checkNetAvailable('relay');
  },
  async run(ctx) {
    const o = resolve(ctx);
    ctx.setData('model', { ...MODEL, poolSize: o.poolSize, meanTileMs: meanTileMs(o) });
    const quick = ctx.quick;
    // Weights: about the seconds each cell takes on two cores.
    const wBurst = quick ? 15 : 60;
    const wMap = quick ? 25 : 120;
    const wSweep = quick ? 15 : 90;
    const envs = o.net;
    // The quick grid keeps only the burst behind a link: the 2-minute bound.
    for (const id of envs) ctx.plan(wBurst + (id === 'loopback' || !quick ? wMap + wSweep : 0));
    const burstData: Record<string, BrowserResult> = {};
    const mapData: Record<string, MapRow[]> = {};
    const sweepData: Record<string, SweepPoint[]> = {};
    for (const id of envs) {
      if (ctx.signal.aborted) break;
      const loop = id === 'loopback';
      let link: Link | undefined;
      if (!loop) {
        link = await createLink({ profile: id });
      }
      const env: Env = {
        id,
        ...(link ? { link } : {}),
        start: (so) => startFixtureTarget(so, link ? { link } : 'in-process'),
      };
      try {
        const b = await ctx.cell(
          `burst-${id}`,
          async () =>
            measureBrowser(
              {
                chromiumPath: o.chromiumPath,
                count: BURST,
                runs: o.runs,
                cancel: loop || !quick,
                cancelRuns: quick ? GRID.quick.cancelRuns : GRID.full.cancelRuns,
                control: loop || !quick,
                fixture: { poolSize: o.poolSize, tileMs: o.tileMs, maxConcurrentStreams: 256 },
              },
              {
                startFixture: (fo) =>
                  env.start(fixtureOptions(o, { poolSize: fo.poolSize, ignoreCancel: fo.ignoreCancel })),
                signal: ctx.signal,
              },
            ),
          { weight: wBurst },
        );
        if (b) {
          burstData[id] = b;
          ctx.setData('burst', burstData);
          ctx.section(burstSection(id, b, o));
          if (b.cancelSummaries.length) ctx.section(cancelSection(id, b));
          for (const w of b.warnings) ctx.warn(`${id}: ${w}`);
        }
        if (quick && !loop) continue;
        const rows = await ctx.cell(`map-${id}`, () => mapCell(ctx, env, o), { weight: wMap });
        if (rows) {
          mapData[id] = rows;
          ctx.setData('map', mapData);
          ctx.section(mapSection(id, rows, quick));
        }
        const points = await ctx.cell(`sweep-${id}`, (p) => sweepCell(ctx, env, o, p), { weight: wSweep });
        if (points) {
          sweepData[id] = points;
          ctx.setData('sweep', sweepData);
          ctx.section(sweepSection(id, points, o));
        }
      } finally {
        await link?.close();
      }
    }
    for (const id of envs) {
      const b = burstData[id];
      if (b) {
        ctx.explain(explainBurst(id, b, o));
        const c = explainCancel(id, b.cancelSummaries);
        if (c) ctx.explain(c);
      }
      const m = mapData[id] && explainMap(id, mapData[id]);
      if (m) ctx.explain(m);
      const s = sweepData[id] && explainSweep(id, sweepData[id], o);
      if (s) ctx.explain(s);
    }
  },
};

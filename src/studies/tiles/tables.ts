/** The tiles study's tables: the burst, the cancellation experiment, the map sessions, the sweep. */

import { MAP_MOVES, summarizeBurst } from '../../browser/index.ts';
import type {
  BrowserResult,
  BurstRun,
  BurstSummary,
  CancelRun,
  CancelSummary,
  MapSession,
  StudySection,
} from '../../model/index.ts';
import { type ClaimDecision, decideRuns } from '../claims.ts';
import { BURST, failedBurst, REPORT_BURST, REPORT_CANCEL, type TilesOptions } from './options.ts';
import { floorMs, medNearestRank, modelWords, r0, r2, targetLabel } from './plan.ts';

// --- the burst and cancellation (measureBrowser) ------------------------------------------------

/** Bursts of one target left out of every median: how many, and their failures by CDP error text. */
interface Excluded {
  runs: number;
  failures: Record<string, number>;
}

/** Counts failed bursts into a target's {@link Excluded}. */
export function exclude(into: Record<string, Excluded>, target: string, runs: readonly BurstRun[]): void {
  into[target] ??= { runs: 0, failures: {} };
  const e = into[target];
  for (const r of runs) {
    e.runs++;
    for (const q of r.requests) if (q.failed) e.failures[q.failed] = (e.failures[q.failed] ?? 0) + 1;
  }
}

/** The bursts of a target without a failed request, summarised; the others counted, never data. */
export interface CleanBursts {
  summaries: BurstSummary[];
  /** Per target: each kept clean run's wall time, ms (what a decision between targets is made over). */
  walls: Record<string, number[]>;
  /** Per target: runs with a failed request (repeated, or the last attempt), left out and counted. */
  excluded: Record<string, Excluded>;
}

/**
 * A burst in which Chromium reported a failed request (net::ERR_NETWORK_CHANGED when a link's
 * addresses were set up, a reset) measures fewer tiles than it claims: its wall time can fall under
 * the backend's own floor. Such runs were repeated ({@link BURST_REPEAT}); they, and a last attempt
 * that still failed, are left out of every median and counted instead.
 */
export function cleanBursts(burst: BrowserResult['burst'], targets: readonly string[]): CleanBursts {
  const out: CleanBursts = { summaries: [], walls: {}, excluded: {} };
  for (const t of targets) {
    const of = (runs: readonly BurstRun[]) => runs.filter((r) => r.target === t && !r.discarded);
    exclude(out.excluded, t, [...of(burst.repeated ?? []), ...of(burst.runs).filter(failedBurst)]);
    const good = burst.runs.filter((r) => r.target === t && (r.discarded || !failedBurst(r)));
    if (good.some((r) => !r.discarded)) out.summaries.push(summarizeBurst(t, good));
    out.walls[t] = good.filter((r) => !r.discarded).map((r) => r.stats.wallMs);
  }
  return out;
}

/**
 * HTTP/1.1's wall time over h2's (above 1: h2 faster), decided by compare's rule over the clean kept
 * bursts of the two targets. Undefined when either has none.
 */
export function burstDecision(
  clean: CleanBursts | undefined,
  h1 = 'http',
  h2 = 'https',
): ClaimDecision | undefined {
  const a = clean?.walls[h1] ?? [];
  const b = clean?.walls[h2] ?? [];
  return a.length && b.length ? decideRuns(a, b, { higherIsBetter: true }) : undefined;
}

function failureWords(f: Record<string, number>): string {
  return Object.entries(f)
    .map(([k, n]) => `${n} × ${k}`)
    .join(', ');
}

export function burstSection(
  env: string,
  b: BrowserResult,
  clean: CleanBursts,
  o: TilesOptions,
): StudySection {
  return {
    id: `burst-${env}`,
    title: `${BURST} tiles at once, ${env}`,
    note: `Medians over the kept runs a target (the first discarded; a run with a failed request repeated, at most twice, and left out: runs excluded counts them), Chromium over CDP, cache off. Pool of ${o.poolSize} workers. ${modelWords(o)}. Stalled = in the browser before sending; on the wire = send to the last byte (the server's queue included); server queue = the pool's wait (p50).`,
    table: {
      columns: [
        { key: 'target', label: '' },
        { key: 'peak', label: 'peak in flight' },
        { key: 'conns', label: 'connections' },
        { key: 'stalled', label: 'stalled p50', unit: 'ms' },
        { key: 'wire', label: 'on the wire p50', unit: 'ms' },
        { key: 'queue', label: 'server queue p50', unit: 'ms' },
        { key: 'wall', label: 'wall', unit: 'ms' },
        { key: 'kept', label: 'runs kept' },
        { key: 'excluded', label: 'runs excluded' },
      ],
      rows: b.targets.map((t) => {
        const s = clean.summaries.find((x) => x.target === t.id);
        return {
          target: targetLabel(t.id),
          peak: s?.peakInFlight.median ?? null,
          conns: s?.connections.median ?? null,
          stalled: r0(s?.stalledP50Ms),
          wire: r0(s?.wireP50Ms),
          queue: r0(s?.serverPoolQueueP50Ms),
          wall: r0(s?.wallMs),
          kept: s?.runs ?? 0,
          excluded: clean.excluded[t.id]?.runs ?? 0,
        };
      }),
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

/**
 * The wanted tile's time over h2 after abandoning tiles to a server that ignores cancellation, against
 * one that honours it (above 1: ignoring made it later), decided by compare's rule over the legs'
 * runs. Undefined when either leg has none.
 */
export function cancelDecision(runs: readonly CancelRun[], target = 'https'): ClaimDecision | undefined {
  const of = (m: string) =>
    runs.filter((c) => c.target === target && c.serverMode === m).map((c) => c.wantedMs);
  const a = of('ignore');
  const b = of('honour');
  return a.length && b.length ? decideRuns(a, b, { higherIsBetter: false }) : undefined;
}

/** Reached tiles per run: the comparable amount of abandoned work a leg delivered to the server. */
export function reachedPerRun(c: CancelSummary): number | undefined {
  const r = c.server?.reachedHandler;
  return r === undefined || c.runs === 0 ? undefined : r / c.runs;
}

export function cancelSection(env: string, b: BrowserResult): StudySection {
  return {
    id: `cancel-${env}`,
    title: `${BURST} tiles abandoned, then one wanted tile, ${env}`,
    note: 'Every tile is aborted once as many as the protocol can deliver have reached the server (abort at reached: 121 over h2, 6 over HTTP/1.1, read from its metrics; the actual abort time is shown), the same for the honouring and the ignoring server; then one tile the burst did not ask for is fetched. Reached = abandoned tiles whose handler started, in all runs and per run (what makes two legs comparable); dropped = taken out of the pool queue; aborted = stopped while rendering; unwanted = rendered to the end for nobody. Extra = wanted tile − idle baseline.',
    table: {
      columns: [
        { key: 'target', label: '' },
        { key: 'mode', label: 'server' },
        { key: 'runs', label: 'runs' },
        { key: 'when', label: 'abort at reached' },
        { key: 'abortMs', label: 'aborted after', unit: 'ms' },
        { key: 'reached', label: 'reached' },
        { key: 'perRun', label: 'reached a run' },
        { key: 'dropped', label: 'dropped' },
        { key: 'aborted', label: 'aborted' },
        { key: 'unwanted', label: 'unwanted' },
        { key: 'wanted', label: 'wanted tile', unit: 'ms' },
        { key: 'baseline', label: 'idle baseline', unit: 'ms' },
        { key: 'extra', label: 'extra', unit: 'ms' },
      ],
      rows: b.cancelSummaries.map((c) => ({
        target: targetLabel(c.target),
        mode: c.serverMode,
        runs: c.runs,
        when: c.abortWhenReached ?? null,
        abortMs: r0(c.actualAbortMs),
        reached: c.server?.reachedHandler ?? null,
        perRun: r0(reachedPerRun(c)),
        dropped: c.server?.jobs.dropped ?? null,
        aborted: c.server?.jobs.aborted ?? null,
        unwanted: c.server?.jobs.unwanted ?? null,
        wanted: r0(c.wantedMs),
        baseline: r0(c.baselineMs),
        extra: r0(c.wantedMs - c.baselineMs),
      })),
    },
    reference: {
      source: 'report 000, cancellation (121 tiles abandoned after 60 ms, then one wanted tile)',
      note: 'Its handler honoured the request’s cancellation and its pool dropped abandoned work. The HTTP/1.1 figures are the report’s “71/89 ms over HTTP/1.1”, read in the order of its HTTP/2 sentence (wanted / baseline).',
      table: {
        columns: [
          { key: 'target', label: '' },
          { key: 'wanted', label: 'wanted tile', unit: 'ms' },
          { key: 'baseline', label: 'idle baseline', unit: 'ms' },
          { key: 'extra', label: 'extra', unit: 'ms' },
        ],
        rows: [
          {
            target: 'HTTP/2 (TLS)',
            wanted: REPORT_CANCEL.wantedMs,
            baseline: REPORT_CANCEL.baselineMs,
            extra: REPORT_CANCEL.wantedMs - REPORT_CANCEL.baselineMs,
          },
          {
            target: 'HTTP/1.1 (http://)',
            wanted: REPORT_CANCEL.h1WantedMs,
            baseline: REPORT_CANCEL.h1BaselineMs,
            extra: REPORT_CANCEL.h1WantedMs - REPORT_CANCEL.h1BaselineMs,
          },
        ],
      },
    },
  };
}

export function pctDiff(a: number, b: number): string {
  return `${Math.round((Math.abs(a - b) / Math.max(a, b)) * 100)}%`;
}

export function perTile(extra: number, c: CancelSummary): string {
  const r = c.server?.reachedHandler;
  return r ? ((extra * c.runs) / r).toFixed(1) : '?';
}

// --- map sessions ------------------------------------------------------------------------------

export interface MapRow {
  target: string;
  mode: string;
  sessions: MapSession[];
}

export const sumOf = (xs: MapSession[], f: (s: MapSession) => number) => xs.reduce((a, s) => a + f(s), 0);

export function mapSection(env: string, rows: MapRow[], quick: boolean): StudySection {
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
          stalled: r0(medNearestRank(r.sessions.map((s) => s.stalledMs.p50))),
          wire: r0(medNearestRank(r.sessions.map((s) => s.wireMs.p50))),
          complete: r0(medNearestRank(moves)),
          completeMax: r0(Math.max(...moves.filter(Number.isFinite))),
        };
      }),
    },
  };
}

// --- the pool-size sweep -----------------------------------------------------------------------

export interface SweepPoint {
  pool: number;
  http?: BurstSummary;
  https?: BurstSummary;
  /** Bursts with a failed request, repeated and never summarised, by target. */
  excluded: Record<string, Excluded>;
  /** Median over the clean bursts of the pool's mean service time a tile (wall ms), by target. */
  serviceMs: Record<string, number>;
  /**
   * Each kept clean burst's wall time (ms) and the pool's mean service time a tile around it, by
   * target: the runs a step of the sweep is decided over. A run saved without them has one figure a
   * pool size.
   */
  walls?: Record<string, number[]>;
  serviceRuns?: Record<string, number[]>;
}

/**
 * One step of the sweep for a target, `to`'s against `from`'s (below 1: less wall time at `to`),
 * decided by compare's rule over their runs of `what` (the burst's wall, or the pool's render time a
 * tile). Undefined when either point has no runs of it.
 */
export function sweepStep(
  from: SweepPoint,
  to: SweepPoint,
  target: string,
  what: 'walls' | 'serviceRuns' = 'walls',
): ClaimDecision | undefined {
  const a = to[what]?.[target] ?? [];
  const b = from[what]?.[target] ?? [];
  return a.length && b.length ? decideRuns(a, b, { higherIsBetter: false }) : undefined;
}

function excludedCount(p: SweepPoint): number {
  return Object.values(p.excluded).reduce((a, e) => a + e.runs, 0);
}

export function sweepSection(env: string, points: SweepPoint[], o: TilesOptions): StudySection {
  const failures: Record<string, number> = {};
  for (const p of points)
    for (const e of Object.values(p.excluded))
      for (const [k, n] of Object.entries(e.failures)) failures[k] = (failures[k] ?? 0) + n;
  const excluded = points.reduce((a, p) => a + excludedCount(p), 0);
  return {
    id: `sweep-${env}`,
    title: `Backend pool size, ${BURST} tiles at once, ${env}`,
    note: `One fixture per pool size. ${modelWords(o)}. Medians over the clean bursts; ${excluded === 0 ? 'no burst had a failed request' : `${excluded} burst(s) with a failed request (${failureWords(failures)}) were repeated and left out`}. Render = the pool's mean wall time a tile (grows when busy workers share the cores). Floor = ${BURST} × mean tile time / tiles rendering at once (h2).`,
    table: {
      columns: [
        { key: 'pool', label: 'workers' },
        { key: 'floor', label: 'floor', unit: 'ms' },
        { key: 'h1wall', label: 'HTTP/1.1 wall', unit: 'ms' },
        { key: 'h1stalled', label: 'h1 stalled', unit: 'ms' },
        { key: 'h1render', label: 'h1 render', unit: 'ms' },
        { key: 'h2wall', label: 'h2 wall', unit: 'ms' },
        { key: 'h2queue', label: 'h2 server queue', unit: 'ms' },
        { key: 'h2render', label: 'h2 render', unit: 'ms' },
        { key: 'ratio', label: 'h1/h2', unit: '×' },
        { key: 'excluded', label: 'bursts excluded' },
      ],
      rows: points.map((p) => ({
        pool: p.pool,
        floor: r0(floorMs(o, BURST, p.pool)),
        h1wall: r0(p.http?.wallMs),
        h1stalled: r0(p.http?.stalledP50Ms),
        h1render: r0(p.serviceMs.http),
        h2wall: r0(p.https?.wallMs),
        h2queue: r0(p.https?.serverPoolQueueP50Ms),
        h2render: r0(p.serviceMs.https),
        ratio: p.http && p.https ? r2(p.http.wallMs / p.https.wallMs) : null,
        excluded: excludedCount(p),
      })),
    },
  };
}

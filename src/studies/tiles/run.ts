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
import os from 'node:os';
import {
  type BurstRepeat,
  type ChromiumHandle,
  CollectedPage,
  checkChromium,
  launchChromium,
  MAP_MOVES,
  MAP_MOVES_QUICK,
  measureBrowser,
  runBurstRepeated,
  runMapSession,
  spkiPins,
  summarizeBurst,
} from '../../browser/index.ts';
import { medianNearestRank } from '../../core/index.ts';
import {
  type BrowserResult,
  type BrowserTarget,
  type BurstRun,
  type BurstSummary,
  type CancelSummary,
  DEFAULT_CHROMIUM_PATH,
  type MapSession,
  type StudyFinding,
  type StudyResult,
  type StudySection,
} from '../../model/index.ts';
import { checkNetAvailable, createLink, type Link } from '../../net/index.ts';
import {
  type FixtureTarget,
  otherCpus,
  pinThisProcess,
  renderCpuList,
  type ServerOptionsInput,
  serverViewOf,
  startFixtureTarget,
} from '../../server/index.ts';
import { Evidence, evidenceNumber, makeFinding, notMeasured } from '../findings.ts';
import { defineStudy, type Rederived, type StudyContext } from '../study.ts';
import { counted, medianOf, rounded } from '../table.ts';
// The render-time model and the report's cores sit beside the flags whose help quotes them.
import { TILES_MODEL as MODEL, TILES_REPORT_CORES as REPORT_CORES, TILES_STUDY } from './descriptor.ts';

/** The report's burst table (121 tiles at once, headless Chrome over CDP, medians). */
const REPORT_BURST = [
  { target: 'HTTP/1.1', peak: 6, stalled: 527, wire: 63, wall: 1324 },
  { target: 'HTTP/2 (TLS)', peak: 121, stalled: 33, wire: 541, wall: 1202 },
];
/**
 * The report's cancellation result: 121 abandoned after 60 ms, then one wanted tile — 86 ms over
 * HTTP/2 against a 59 ms idle baseline, "71/89 ms over HTTP/1.1" (read in the same order: wanted /
 * baseline).
 */
const REPORT_CANCEL = { wantedMs: 86, baselineMs: 59, h1WantedMs: 71, h1BaselineMs: 89, abortMs: 60 };
const BURST = 121;
/** A tiny burst that opens the connections before a sweep's measured bursts (discarded). */
const WARM_UP = 12;

/** A burst in which Chromium reported a failed request (e.g. net::ERR_NETWORK_CHANGED, a reset). */
const failedBurst = (r: BurstRun) => r.stats.failed > 0;
/**
 * Every measured burst of the study (the main burst's and the sweep's): one with a failed request is
 * repeated, at most twice; the attempts are counted, never summarised.
 */
const BURST_REPEAT: BurstRepeat = { retries: 2, repeat: (r) => !r.discarded && failedBurst(r) };

const GRID = {
  full: {
    net: ['loopback', 'wan'],
    pools: [1, 2, 4, 8, 16, 32],
    runs: 6,
    cancelRuns: 3,
    sweepRuns: 3,
    sessions: 2,
    mapModes: ['honour', 'ignore'] as const,
  },
  quick: {
    net: ['loopback', 'wan'],
    pools: [1, 4, 16],
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
  /** cpu: pinned render threads burning CPU time; sleep: the timer pool. */
  render: 'cpu' | 'sleep';
  /** CPUs the render threads share (cpu render only). */
  renderCores: number;
  chromiumPath: string;
}

/** What a caller gives: the options, and `loopback` (= `net: ['loopback']`). */
type TilesGiven = Partial<TilesOptions> & { loopback?: boolean };

function resolve(o: TilesGiven, quick: boolean): TilesOptions {
  const g = quick ? GRID.quick : GRID.full;
  return {
    net: o.loopback ? ['loopback'] : (o.net ?? [...g.net]),
    pools: o.pools ?? [...g.pools],
    runs: o.runs ?? g.runs,
    sessions: o.sessions ?? g.sessions,
    poolSize: o.poolSize ?? MODEL.poolSize,
    ...scaledTiles(o.render ?? 'cpu', o.renderCores ?? MODEL.renderCores),
    tileHeavyFraction: MODEL.tileHeavyFraction,
    render: o.render ?? 'cpu',
    renderCores: o.renderCores ?? MODEL.renderCores,
    chromiumPath: o.chromiumPath ?? DEFAULT_CHROMIUM_PATH,
  };
}

/** Where the fixture runs for one network condition: in this process, or behind a link. */
interface Env {
  id: string;
  link?: Link;
  start: (o: ServerOptionsInput) => Promise<FixtureTarget>;
}

/** The tile times: the report's, or (cpu render) its CPU scaled to the cores given. */
function scaledTiles(render: 'cpu' | 'sleep', cores: number): { tileMs: number; tileHeavyMs: number } {
  const k = render === 'cpu' ? cores / REPORT_CORES : 1;
  return { tileMs: MODEL.tileMs * k, tileHeavyMs: MODEL.tileHeavyMs * k };
}

/** Mean pool time of one tile under the model, ms: the backend's work per tile (CPU time for cpu). */
function meanTileMs(o: TilesOptions): number {
  return o.tileMs + o.tileHeavyFraction * (o.tileHeavyMs - o.tileMs);
}

/** Tiles that render at once with `inFlight` requests at the server and `pool` workers. */
function rendering(o: TilesOptions, pool: number, inFlight = Number.POSITIVE_INFINITY): number {
  return Math.min(pool, inFlight, o.render === 'cpu' ? o.renderCores : Number.POSITIVE_INFINITY);
}

/** The backend's floor for `n` tiles on `pool` workers with `inFlight` requests, ms (no network). */
function floorMs(o: TilesOptions, n: number, pool: number, inFlight?: number): number {
  return (n * meanTileMs(o)) / rendering(o, pool, inFlight);
}

/** The model in words, for the notes of every table. */
function modelWords(o: TilesOptions): string {
  return o.render === 'cpu'
    ? `Tiles burn CPU (--render cpu): ${fmt1(o.tileMs)} ms of CPU a tile, ${Math.round(o.tileHeavyFraction * 100)}% heavy at ${fmt1(o.tileHeavyMs)} ms (the report's 60/250 ms × ${o.renderCores}/${REPORT_CORES} cores), on render threads pinned to ${o.renderCores} core(s)`
    : `Tiles wait on a timer (--render sleep): ${o.tileMs} ms a tile, ${Math.round(o.tileHeavyFraction * 100)}% heavy at ${o.tileHeavyMs} ms`;
}

const fmt1 = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(1));

const r0 = (x: number | undefined) => rounded(x);
const r2 = (x: number | undefined) => rounded(x, 2);
/** Nearest-rank, as the burst summaries beside these figures (src/browser/burst.ts); NaN for none. */
const med = (xs: number[]) => medianOf(xs, 'nearest-rank') ?? Number.NaN;

function targetLabel(id: string): string {
  return id === 'http' ? 'HTTP/1.1 (http://)' : id === 'https' ? 'HTTP/2 (TLS)' : 'HTTP/1.1 over TLS';
}

// --- the burst and cancellation (measureBrowser) ------------------------------------------------

/** Bursts of one target left out of every median: how many, and their failures by CDP error text. */
interface Excluded {
  runs: number;
  failures: Record<string, number>;
}

/** Counts failed bursts into a target's {@link Excluded}. */
function exclude(into: Record<string, Excluded>, target: string, runs: readonly BurstRun[]): void {
  into[target] ??= { runs: 0, failures: {} };
  const e = into[target];
  for (const r of runs) {
    e.runs++;
    for (const q of r.requests) if (q.failed) e.failures[q.failed] = (e.failures[q.failed] ?? 0) + 1;
  }
}

/** The bursts of a target without a failed request, summarised; the others counted, never data. */
interface CleanBursts {
  summaries: BurstSummary[];
  /** Per target: runs with a failed request (repeated, or the last attempt), left out and counted. */
  excluded: Record<string, Excluded>;
}

/**
 * A burst in which Chromium reported a failed request (net::ERR_NETWORK_CHANGED when a link's
 * addresses were set up, a reset) measures fewer tiles than it claims: its wall time can fall under
 * the backend's own floor. Such runs were repeated ({@link BURST_REPEAT}); they, and a last attempt
 * that still failed, are left out of every median and counted instead.
 */
function cleanBursts(burst: BrowserResult['burst'], targets: readonly string[]): CleanBursts {
  const out: CleanBursts = { summaries: [], excluded: {} };
  for (const t of targets) {
    const of = (runs: readonly BurstRun[]) => runs.filter((r) => r.target === t && !r.discarded);
    exclude(out.excluded, t, [...of(burst.repeated ?? []), ...of(burst.runs).filter(failedBurst)]);
    const good = burst.runs.filter((r) => r.target === t && (r.discarded || !failedBurst(r)));
    if (good.some((r) => !r.discarded)) out.summaries.push(summarizeBurst(t, good));
  }
  return out;
}

function failureWords(f: Record<string, number>): string {
  return Object.entries(f)
    .map(([k, n]) => `${n} × ${k}`)
    .join(', ');
}

function burstSection(env: string, b: BrowserResult, clean: CleanBursts, o: TilesOptions): StudySection {
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

/** Reached tiles per run: the comparable amount of abandoned work a leg delivered to the server. */
function reachedPerRun(c: CancelSummary): number | undefined {
  const r = c.server?.reachedHandler;
  return r === undefined || c.runs === 0 ? undefined : r / c.runs;
}

function cancelSection(env: string, b: BrowserResult): StudySection {
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

function pctDiff(a: number, b: number): string {
  return `${Math.round((Math.abs(a - b) / Math.max(a, b)) * 100)}%`;
}

function explainBurst(env: string, summaries: readonly BurstSummary[], o: TilesOptions): string {
  const by = new Map(summaries.map((s) => [s.target, s]));
  const h1 = by.get('http');
  const h2 = by.get('https');
  if (!h1 || !h2)
    return `On ${env} the burst has no clean run of both targets (runs with a failed request are excluded), so it says nothing.`;
  const floor = floorMs(o, BURST, o.poolSize, h2.peakInFlight.median);
  const queueWhere = (s: BurstSummary) =>
    (s.serverPoolQueueP50Ms ?? 0) > s.stalledP50Ms ? 'at the server’s pool' : 'in the browser';
  const parts = [
    `On ${env}, over http:// Chromium had ${h1.peakInFlight.median} tiles in flight at most, on ${h1.connections.median} connections, and the queue sat ${queueWhere(h1)} (stalled p50 ${Math.round(h1.stalledP50Ms)} ms, server queue p50 ${Math.round(h1.serverPoolQueueP50Ms ?? 0)} ms); over h2 ${h2.peakInFlight.median} were in flight on ${h2.connections.median} connection(s) and the queue sat ${queueWhere(h2)} (stalled p50 ${Math.round(h2.stalledP50Ms)} ms, server queue p50 ${Math.round(h2.serverPoolQueueP50Ms ?? 0)} ms).`,
  ];
  const faster = h2.wallMs < h1.wallMs ? 'h2' : 'HTTP/1.1';
  const h1Busy = rendering(o, o.poolSize, h1.peakInFlight.median);
  const h2Busy = rendering(o, o.poolSize, h2.peakInFlight.median);
  const h1Floor = floorMs(o, BURST, o.poolSize, h1.peakInFlight.median);
  const near = (wall: number, f: number) => `${Math.round((wall / f - 1) * 100)}%`;
  parts.push(
    `The last tile arrived after ${Math.round(h1.wallMs)} ms over HTTP/1.1 and ${Math.round(h2.wallMs)} ms over h2 (${faster} ${pctDiff(h1.wallMs, h2.wallMs)} faster). ${o.render === 'cpu' ? `Tiles burn CPU on ${o.renderCores} core(s), so at most ${h2Busy} render at full speed whatever the pool (${o.poolSize} workers) and the protocol allow; ` : ''}the backend's floor is ${Math.round(floor)} ms for h2 (${BURST} tiles × ${fmt1(meanTileMs(o))} ms mean / ${h2Busy} rendering at once) and ${Math.round(h1Floor)} ms for HTTP/1.1 (${h1Busy} at once with ${h1.peakInFlight.median} in flight). HTTP/1.1 finished ${near(h1.wallMs, h1Floor)} above its floor, h2 ${near(h2.wallMs, floor)} above its own: ${
      h1.wallMs < h1Floor * 1.25 && h2.wallMs < floor * 1.25
        ? h1Busy < h2Busy
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

/**
 * Whether two cancellation legs abandoned comparable work: the same order of abandoned tiles reached
 * each server per run (within a factor of 1.5, and at least 10 a run). Otherwise the wanted tile's
 * time of one leg says nothing about the other's.
 */
function comparableLegs(a: CancelSummary, b: CancelSummary): boolean {
  const x = reachedPerRun(a);
  const y = reachedPerRun(b);
  if (x === undefined || y === undefined || Math.min(x, y) < 10) return false;
  return Math.max(x, y) / Math.min(x, y) <= 1.5;
}

function explainCancel(env: string, cs: readonly CancelSummary[]): string | undefined {
  const get = (t: string, m: string) => cs.find((c) => c.target === t && c.serverMode === m);
  const honour = get('https', 'honour');
  const ignore = get('https', 'ignore');
  const h1 = get('http', 'honour');
  if (!honour || !ignore) return undefined;
  const parts = [
    `On ${env}, abandoning ${BURST} tiles over h2 (the abort ran after ${Math.round(honour.actualAbortMs)} ms, median) delivered ${honour.server?.reachedHandler ?? '?'} abandoned tiles in ${honour.runs} run(s) to a server that honours cancellation (it dropped ${honour.server?.jobs.dropped ?? '?'} from its queue and aborted ${honour.server?.jobs.aborted ?? '?'} while rendering) and ${ignore.server?.reachedHandler ?? '?'} in ${ignore.runs} run(s) to one that ignores it (it rendered ${ignore.server?.jobs.unwanted ?? '?'} for nobody).`,
  ];
  const extraH = honour.wantedMs - honour.baselineMs;
  const extraI = ignore.wantedMs - ignore.baselineMs;
  if (comparableLegs(honour, ignore)) {
    const worse = extraI > extraH + Math.max(10, 0.2 * honour.baselineMs);
    parts.push(
      `With comparable abandoned work (${Math.round(reachedPerRun(honour)!)} against ${Math.round(reachedPerRun(ignore)!)} reached a run), the wanted tile took ${Math.round(extraH)} ms over its idle baseline against ${Math.round(extraI)} ms: ${worse ? `ignoring cancellation cost it ${Math.round(extraI - extraH)} ms, the abandoned tiles still rendering ahead of it` : 'within the noise of the baseline, so here the abandoned work had drained before the wanted tile or ran beside it'}.`,
    );
  } else {
    parts.push(
      `The two legs are not comparable — ${reachedPerRun(honour) === undefined ? '?' : Math.round(reachedPerRun(honour)!)} against ${reachedPerRun(ignore) === undefined ? '?' : Math.round(reachedPerRun(ignore)!)} abandoned tiles reached the server a run — so the wanted tile's ${Math.round(extraH)} against ${Math.round(extraI)} ms over the idle baseline says nothing about what ignoring cancellation costs; per abandoned tile that reached it, that is ${perTile(extraH, honour)} against ${perTile(extraI, ignore)} ms.`,
    );
  }
  if (h1)
    parts.push(
      `Over HTTP/1.1 ${h1.server?.reachedHandler ?? '?'} abandoned tiles reached a handler in ${h1.runs} run(s) of ${BURST}: the rest were still queued in the browser, where cancelling costs the server nothing.`,
    );
  return parts.join(' ');
}

function perTile(extra: number, c: CancelSummary): string {
  const r = c.server?.reachedHandler;
  return r ? ((extra * c.runs) / r).toFixed(1) : '?';
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
    // None abandoned on the network: the server answered each tile before the map's next frame
    // dropped it (CDP's account); the page may still count aborts of tiles whose bytes had arrived.
    const none =
      canc === 0
        ? ` (none was still in flight when the map moved on: a tile was on the wire ${Math.round(med(r.sessions.map((s) => s.wireMs.p50)))} ms, p50)`
        : '';
    parts.push(
      `${targetLabel(r.target)}: the map asked for ${req} tiles and abandoned ${canc} itself${none}; ${reached} reached the server, where ${cancelled} were cancelled; the viewport was complete ${Math.round(med(moves))} ms (median) after a move.`,
    );
  }
  if (parts.length === 0) return undefined;
  const ig = get('https', 'ignore');
  if (ig) {
    const wasted = sumOf(ig.sessions, (s) => s.server?.renderedForNothing ?? 0);
    const moves = ig.sessions.flatMap((s) => s.moves.map((m) => m.completeMs));
    parts.push(
      `With a server that ignores cancellation, h2 sessions had ${counted(wasted, 'tile')} rendered for nobody and the viewport was complete ${Math.round(med(moves))} ms after a move.`,
    );
  }
  return `On ${env}, in MapLibre sessions — ${parts.join(' ')}`;
}

// --- the pool-size sweep -----------------------------------------------------------------------

interface SweepPoint {
  pool: number;
  http?: BurstSummary;
  https?: BurstSummary;
  /** Bursts with a failed request, repeated and never summarised, by target. */
  excluded: Record<string, Excluded>;
  /** Median over the clean bursts of the pool's mean service time a tile (wall ms), by target. */
  serviceMs: Record<string, number>;
}

function excludedCount(p: SweepPoint): number {
  return Object.values(p.excluded).reduce((a, e) => a + e.runs, 0);
}

function sweepSection(env: string, points: SweepPoint[], o: TilesOptions): StudySection {
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

/** A step of the sweep gains when its wall falls below this share of the step before. */
const KNEE_GAIN = 0.9;

/**
 * The first pool size after which the sweep's next step (whatever its factor: 1, 4, 16 steps by 4)
 * gains less than 10%, with that next step, or undefined.
 */
function knee(
  points: SweepPoint[],
  side: 'http' | 'https',
): { pool: number; wall: number; next: number; nextWall: number } | undefined {
  const pts = points.filter((p) => p[side] !== undefined);
  for (let i = 0; i + 1 < pts.length; i++) {
    const a = pts[i]![side]!.wallMs;
    const b = pts[i + 1]![side]!.wallMs;
    if (b > a * KNEE_GAIN) return { pool: pts[i]!.pool, wall: a, next: pts[i + 1]!.pool, nextWall: b };
  }
  return undefined;
}

/** What the step after the knee did: "4× the workers gave 3% less wall time" or "… 21% more". */
function kneeStep(k: NonNullable<ReturnType<typeof knee>>): string {
  const factor = k.next / k.pool;
  const times = Number.isInteger(factor) ? `${factor}×` : `${factor.toFixed(1)}×`;
  const change = Math.round((k.nextWall / k.wall - 1) * 100);
  return `${k.next} workers (${times} as many) gave ${change > 0 ? `${change}% more wall time` : change < 0 ? `${-change}% less wall time, under ${Math.round((1 - KNEE_GAIN) * 100)}%` : 'the same wall time'}`;
}

function explainSweep(env: string, points: SweepPoint[], o: TilesOptions): string | undefined {
  const full = points.filter((p) => p.http && p.https);
  if (full.length < 2) return undefined;
  const first = full[0]!;
  const last = full.at(-1)!;
  const parts = [
    `On ${env}, from ${first.pool} to ${last.pool} workers the ${BURST}-tile burst went from ${Math.round(first.http!.wallMs)} to ${Math.round(last.http!.wallMs)} ms over HTTP/1.1 and from ${Math.round(first.https!.wallMs)} to ${Math.round(last.https!.wallMs)} ms over h2 (clean bursts only).`,
  ];
  for (const side of ['http', 'https'] as const) {
    const name = side === 'http' ? 'HTTP/1.1' : 'h2';
    const k = knee(full, side);
    const atLast = last[side]!;
    if (!k) {
      parts.push(`${name} kept gaining up to ${last.pool} workers.`);
      continue;
    }
    const pk = full.find((p) => p.pool === k.pool)!;
    const rk = pk.serviceMs[side];
    const rl = last.serviceMs[side];
    const cores = o.render === 'cpu' ? o.renderCores : undefined;
    const why =
      cores !== undefined && k.pool >= cores && rk !== undefined && rl !== undefined && rl > rk * 1.25
        ? `tiles burn CPU on ${cores} core(s), and more busy workers only share them: a tile's render time rose from ${Math.round(rk)} ms at ${counted(k.pool, 'worker')} to ${Math.round(rl)} ms at ${last.pool}`
        : atLast.peakInFlight.median < last.pool && atLast.stalledP50Ms > (atLast.serverPoolQueueP50Ms ?? 0)
          ? `the queue sat in the browser (stalled p50 ${Math.round(atLast.stalledP50Ms)} ms against ${Math.round(atLast.serverPoolQueueP50Ms ?? 0)} ms in the pool at ${last.pool} workers): with ${atLast.peakInFlight.median} requests in flight, workers beyond ${atLast.peakInFlight.median} sit idle`
          : `the measurements here do not say which limit it met (stalled p50 ${Math.round(atLast.stalledP50Ms)} ms, pool queue p50 ${Math.round(atLast.serverPoolQueueP50Ms ?? 0)} ms at ${last.pool} workers)`;
    parts.push(
      `${name} stopped gaining at ${counted(k.pool, 'worker')} (${Math.round(k.wall)} ms; ${kneeStep(k)}): ${why}.`,
    );
  }
  return parts.join(' ');
}

// --- row by row against the report ----------------------------------------------------------

/** The report's rows, each answered with this run's numbers on `env` (the report measured loopback). */
function tilesFindings(
  env: string,
  clean: CleanBursts | undefined,
  cs: readonly CancelSummary[],
  points: SweepPoint[] | undefined,
  o: TilesOptions,
  elsewhere: Readonly<Record<string, CleanBursts>> = {},
): StudyFinding[] {
  const byTarget = (c: CleanBursts | undefined) => new Map((c?.summaries ?? []).map((s) => [s.target, s]));
  const by = byTarget(clean);
  const others = Object.entries(elsewhere)
    .filter(([id]) => id !== env)
    .map(([id, c]) => ({ env: id, by: byTarget(c) }));
  return [
    ...burstRows(env, clean, by, points, o),
    ...burstRatioRow(env, by, o, others),
    ...cancelAbortRow(env, cs),
    ...cancelRows(env, cs),
    ...cancelIgnoreRow(env, cs),
    ...poolSizeRow(env, points, o),
  ];
}

/** The clean bursts' summaries by target. */
type BurstsByTarget = ReadonlyMap<string, BurstSummary>;

/** What this run's backend does with a tile, in words (the report's backend was another). */
function backendWords(ev: Evidence, o: TilesOptions): string {
  return o.render === 'cpu'
    ? `tiles burn ${ev.ms('meanTileCpuMs', meanTileMs(o))} of CPU on average on ${ev.n('renderCores', o.renderCores)} pinned core(s), the report's ${ev.n('reportCores', REPORT_CORES)} cores' capacity scaled down`
    : `tiles wait ${ev.ms('meanTileMs', meanTileMs(o))} on average on a timer (no CPU)`;
}

/** The report's burst rows (HTTP/1.1 and h2): peak in flight, stalled, on the wire, wall. */
function burstRows(
  env: string,
  clean: CleanBursts | undefined,
  by: BurstsByTarget,
  points: SweepPoint[] | undefined,
  o: TilesOptions,
): StudyFinding[] {
  const out: StudyFinding[] = [];
  // The sweep's point at as many workers as render cores: no tile shares a core with another tile,
  // so its render time against its CPU time is the share of the core the pool got.
  const alone =
    o.render === 'cpu'
      ? points?.find((p) => p.pool === o.renderCores && p.serviceMs.https !== undefined)
      : undefined;
  const coreShare = (ev: Evidence) =>
    alone
      ? `; in the sweep, with ${ev.n('alonePool', alone.pool)} worker(s) on as many cores, a tile took ${ev.ms('aloneRenderMs', alone.serviceMs.https!)} for its ${ev.ms('meanTileCpuMs', meanTileMs(o))} of CPU: the render core(s) gave the pool ${ev.pct('coreShare', meanTileMs(o) / alone.serviceMs.https!)} of their time, the rest went to other processes on this machine`
      : '; this run does not break the time above the floor down';
  for (const [target, ref, id] of [
    ['http', REPORT_BURST[0]!, 'burst-h1'],
    ['https', REPORT_BURST[1]!, 'burst-h2'],
  ] as const) {
    const s = by.get(target);
    const ev = new Evidence();
    const ex = clean?.excluded[target];
    const reportText = `${ev.n('reportPeak', ref.peak)} in flight, stalled p50 ${ev.ms('reportStalledMs', ref.stalled)}, on the wire p50 ${ev.ms('reportWireMs', ref.wire)}, wall ${ev.ms('reportWallMs', ref.wall)}`;
    const common = {
      id,
      section: `burst-${env}`,
      row: `${ref.target}, ${BURST} tiles at once`,
      report: reportText,
      ev,
    };
    if (!s) {
      out.push(
        notMeasured(
          common,
          `not measured: no clean burst (${ev.n('excludedRuns', ex?.runs ?? 0)} excluded with failed requests)`,
          'every burst of this target had a failed request',
        ),
      );
      continue;
    }
    const peak = s.peakInFlight.median;
    const busy = rendering(o, o.poolSize, peak);
    const floor = floorMs(o, BURST, o.poolSize, peak);
    out.push(
      makeFinding({
        ...common,
        measured: `${ev.n('peak', peak)} in flight, stalled p50 ${ev.ms('stalledMs', s.stalledP50Ms)}, on the wire p50 ${ev.ms('wireMs', s.wireP50Ms)}, wall ${ev.ms('wallMs', s.wallMs)} (${ev.n('keptRuns', s.runs)} clean run(s), ${ev.n('excludedRuns', ex?.runs ?? 0)} excluded)`,
        reference: ref.wall,
        value: s.wallMs,
        explain: (v) => {
          const where =
            (s.serverPoolQueueP50Ms ?? 0) > s.stalledP50Ms
              ? `the queue sat at the server's pool (queue p50 ${ev.ms('serverQueueMs', s.serverPoolQueueP50Ms ?? 0)} against ${ev.ms('stalledMs', s.stalledP50Ms)} stalled), as in the report's row`
              : `the queue sat in the browser (stalled p50 ${ev.ms('stalledMs', s.stalledP50Ms)} against ${ev.ms('serverQueueMs', s.serverPoolQueueP50Ms ?? 0)} in the pool)`;
          const peakWords =
            peak === ref.peak
              ? `The peak in flight reproduces exactly (${ev.n('peak', peak)})`
              : `The peak in flight was ${ev.n('peak', peak)} against the report's ${ev.n('reportPeak', ref.peak)}`;
          const wallWords =
            v === 'agrees'
              ? 'the wall time agrees'
              : `the wall time differs because this fixture's backend is not the report's: ${backendWords(ev, o)}, so with ${ev.n('peak', peak)} in flight ${ev.n('rendering', busy)} tile(s) render at full speed and the floor is ${ev.ms('floorMs', floor)}; the run took ${ev.change('aboveFloor', s.wallMs, floor)} against it${coreShare(ev)}`;
          return `${peakWords}; ${where}; ${wallWords}.`;
        },
      }),
    );
  }
  return out;
}

/**
 * The report's conclusion: HTTP/2 about 9% faster (wall h1/h2), against the backend's floors; the
 * same ratio on the run's other environments (a link) beside it, so the row cannot leave them out.
 */
function burstRatioRow(
  env: string,
  by: BurstsByTarget,
  o: TilesOptions,
  others: ReadonlyArray<{ env: string; by: BurstsByTarget }> = [],
): StudyFinding[] {
  const out: StudyFinding[] = [];
  const h1 = by.get('http');
  const h2 = by.get('https');
  const ev = new Evidence();
  const reportRatio = REPORT_BURST[0]!.wall / REPORT_BURST[1]!.wall;
  if (h1 && h2) {
    const ratio = h1.wallMs / h2.wallMs;
    const f1 = floorMs(o, BURST, o.poolSize, h1.peakInFlight.median);
    const f2 = floorMs(o, BURST, o.poolSize, h2.peakInFlight.median);
    const predicted = f1 / f2;
    out.push(
      makeFinding({
        id: 'burst-ratio',
        section: `burst-${env}`,
        row: 'HTTP/2 against HTTP/1.1: “worth about 9%” (wall h1/h2)',
        report: `h1/h2 ${ev.x('reportRatio', reportRatio)}`,
        measured: `h1/h2 ${ev.x('ratio', ratio)} (${env})${others
          .flatMap((x) => {
            const a = x.by.get('http');
            const b = x.by.get('https');
            return a && b ? [`; ${x.env} ${ev.x(`ratio-${x.env}`, a.wallMs / b.wallMs)}`] : [];
          })
          .join('')}`,
        reference: reportRatio,
        value: ratio,
        tolerance: 0.1,
        ratio: true,
        explain: () =>
          Math.abs(ratio / predicted - 1) <= 0.15
            ? `Explained by the tiles each protocol lets render at once: ${ev.n('h1Rendering', rendering(o, o.poolSize, h1.peakInFlight.median))} over HTTP/1.1 against ${ev.n('h2Rendering', rendering(o, o.poolSize, h2.peakInFlight.median))} over h2 (${backendWords(ev, o)}), floors ${ev.ms('h1FloorMs', f1)} and ${ev.ms('h2FloorMs', f2)}, a predicted h1/h2 of ${ev.x('predictedRatio', predicted)}; the report's rows imply ${ev.ms('reportH1TileMs', (REPORT_BURST[0]!.wall * REPORT_BURST[0]!.peak) / BURST)} of pool time a tile at ${ev.n('reportPeak1', REPORT_BURST[0]!.peak)} in flight against ${ev.ms('reportH2TileMs', (REPORT_BURST[1]!.wall * REPORT_CORES) / BURST)} at ${ev.n('reportCores', REPORT_CORES)} busy — a tile's cost rising with concurrency, as CPU-bound tiles do`
            : undefined,
        unexplained: `the backend's floors predict h1/h2 ${ev.x('predictedRatio', predicted)} (${ev.ms('h1FloorMs', f1)} against ${ev.ms('h2FloorMs', f2)}), this run measured ${ev.x('ratio', ratio)}; the rest is time outside the pool that this run does not break down`,
        ev,
      }),
    );
  }
  return out;
}

/** The cancellation summary of one target against one server mode. */
function cancelSummaryOf(
  cs: readonly CancelSummary[],
  target: string,
  mode: string,
): CancelSummary | undefined {
  return cs.find((c) => c.target === target && c.serverMode === mode);
}

/**
 * The report's abort "after 60 ms": when this run's abort ran (cancelWhenReached waits until every
 * abandoned tile has reached the server, so the abort comes after the browser has issued them all).
 */
function cancelAbortRow(env: string, cs: readonly CancelSummary[]): StudyFinding[] {
  const c = cancelSummaryOf(cs, 'https', 'honour');
  if (!c) return [];
  const ev = new Evidence();
  return [
    makeFinding({
      id: 'cancel-abort',
      section: `cancel-${env}`,
      row: `h2: ${BURST} tiles abandoned after 60 ms`,
      report: `the abort after ${ev.ms('reportAbortMs', REPORT_CANCEL.abortMs)}`,
      measured: `the abort after ${ev.ms('abortMs', c.actualAbortMs)} (median of ${ev.n('runs', c.runs)} run(s))`,
      reference: REPORT_CANCEL.abortMs,
      value: c.actualAbortMs,
      tolerance: 0.5,
      explain: () => undefined,
      unexplained: `this run aborts once every abandoned tile has reached the server (so that the server's side of the cancellation can be counted), not at a fixed ${ev.ms('reportAbortMs', REPORT_CANCEL.abortMs)}; issuing ${ev.n('tiles', BURST)} fetch() calls on this machine took longer than that, so the report's 60 ms abort, which left tiles unsent, is not measured here`,
      ev,
    }),
  ];
}

/** The report's cancellation rows, the server honouring cancellation. */
function cancelRows(env: string, cs: readonly CancelSummary[]): StudyFinding[] {
  const out: StudyFinding[] = [];
  const get = (t: string, m: string) => cancelSummaryOf(cs, t, m);
  for (const [target, id, wanted, baseline] of [
    ['https', 'cancel-h2', REPORT_CANCEL.wantedMs, REPORT_CANCEL.baselineMs],
    ['http', 'cancel-h1', REPORT_CANCEL.h1WantedMs, REPORT_CANCEL.h1BaselineMs],
  ] as const) {
    const c = get(target, 'honour');
    if (!c) continue;
    const ev = new Evidence();
    const reached = c.server?.reachedHandler ?? 0;
    const dropped = c.server?.jobs.dropped ?? 0;
    const aborted = c.server?.jobs.aborted ?? 0;
    const unwanted = c.server?.jobs.unwanted ?? 0;
    out.push(
      makeFinding({
        id,
        section: `cancel-${env}`,
        row: `${targetLabel(target)}: ${BURST} tiles abandoned, then one wanted tile (server honours cancellation)`,
        report: `wanted tile ${ev.ms('reportWantedMs', wanted)} against an idle baseline of ${ev.ms('reportBaselineMs', baseline)}: ${ev.x('reportRatio', wanted / baseline)} the idle time`,
        measured: `wanted tile ${ev.ms('wantedMs', c.wantedMs)} against ${ev.ms('baselineMs', c.baselineMs)} idle: ${ev.x('ratio', c.wantedMs / c.baselineMs)} the idle time; the abort after ${ev.ms('abortMs', c.actualAbortMs)} (the report's ${ev.ms('reportAbortMs', REPORT_CANCEL.abortMs)}), ${ev.n('runs', c.runs)} run(s)`,
        // The claim is the extra over an idle server, not the absolute time of either machine.
        reference: wanted / baseline,
        value: c.wantedMs / c.baselineMs,
        tolerance: 0.25,
        ratio: true,
        explain: () =>
          unwanted === 0
            ? `${ev.n('reached', reached)} abandoned tiles reached the server in ${ev.n('runs', c.runs)} run(s); it dropped ${ev.n('dropped', dropped)} from the queue and aborted ${ev.n('aborted', aborted)} while rendering, none rendered for nobody, so no abandoned work stood ahead of the wanted tile: its ${ev.ms('extraMs', c.wantedMs - c.baselineMs)} over the idle baseline (the report: ${ev.ms('reportExtraMs', wanted - baseline)}) is not the pool's${target === 'http' ? '; over HTTP/1.1 the tiles not yet sent died in the browser’s queue' : ''}`
            : undefined,
        unexplained: `${ev.n('unwanted', unwanted)} abandoned tiles were rendered for nobody although the server honours cancellation`,
        ev,
      }),
    );
  }
  return out;
}

/** HTTP/2 with a server that ignores cancellation, against one that honours it. */
function cancelIgnoreRow(env: string, cs: readonly CancelSummary[]): StudyFinding[] {
  const out: StudyFinding[] = [];
  const get = (t: string, m: string) => cancelSummaryOf(cs, t, m);
  const honour = get('https', 'honour');
  const ignore = get('https', 'ignore');
  if (honour && ignore) {
    const ev = new Evidence();
    const comparable = comparableLegs(honour, ignore);
    const xh = honour.wantedMs - honour.baselineMs;
    const xi = ignore.wantedMs - ignore.baselineMs;
    const worse = xi > xh + Math.max(10, 0.2 * honour.baselineMs);
    const perRun = `${ev.n('honourReachedPerRun', reachedPerRun(honour) ?? Number.NaN)} abandoned tiles a run reached the honouring server, ${ev.n('ignoreReachedPerRun', reachedPerRun(ignore) ?? Number.NaN)} the ignoring one`;
    out.push(
      makeFinding({
        id: 'cancel-ignore',
        section: `cancel-${env}`,
        row: 'HTTP/2: “fine only because the handler honours the request’s cancellation”',
        report: 'not measured with a server that ignores cancellation',
        measured: comparable
          ? `extra over the idle baseline ${ev.ms('honourExtraMs', xh)} honouring against ${ev.ms('ignoreExtraMs', xi)} ignoring; ${perRun}`
          : `not comparable: ${perRun}`,
        verdict: comparable ? (worse ? 'agrees' : 'differs') : 'not-measured',
        explain: () =>
          comparable
            ? worse
              ? `Ignoring cancellation left ${ev.n('unwanted', ignore.server?.jobs.unwanted ?? 0)} tiles rendering for nobody ahead of the wanted tile, which cost it ${ev.ms('costMs', xi - xh)}`
              : `With ${ev.n('unwanted', ignore.server?.jobs.unwanted ?? 0)} tiles rendered for nobody the wanted tile was not measurably later here: the abandoned work had drained or ran beside it on free workers`
            : undefined,
        unexplained: `the two legs did not abandon comparable work (${perRun}), so this run cannot say what ignoring cancellation costs`,
        ev,
      }),
    );
  }
  return out;
}

/** The question the report left open: does a pool larger than the core count help? */
function poolSizeRow(env: string, points: SweepPoint[] | undefined, o: TilesOptions): StudyFinding[] {
  const out: StudyFinding[] = [];
  const full = (points ?? []).filter((p) => p.https);
  if (full.length >= 2) {
    const ev = new Evidence();
    const cores = o.render === 'cpu' ? o.renderCores : undefined;
    const base = full.find((p) => cores !== undefined && p.pool >= cores) ?? full[0]!;
    const last = full.at(-1)!;
    const gain = last.https!.wallMs / base.https!.wallMs;
    const helps = gain < 0.9;
    const rb = base.serviceMs.https;
    const rl = last.serviceMs.https;
    out.push(
      makeFinding({
        id: 'pool-size',
        section: `sweep-${env}`,
        row: 'Left open: does a pool larger than the core count help? (“a tile is single-threaded CPU, raising it would just move the queue”)',
        report: `not measured; the pool stayed at ${ev.n('reportPool', MODEL.poolSize)} on ${ev.n('reportCores', REPORT_CORES)} cores`,
        measured: `h2 wall ${ev.ms('baseWallMs', base.https!.wallMs)} at ${ev.n('basePool', base.pool)} worker(s), ${ev.ms('lastWallMs', last.https!.wallMs)} at ${ev.n('lastPool', last.pool)} (${ev.change('gain', last.https!.wallMs, base.https!.wallMs)})`,
        verdict: cores === undefined ? 'not-measured' : helps ? 'differs' : 'agrees',
        explain: () => {
          if (cores === undefined) return undefined;
          const render =
            rb !== undefined && rl !== undefined
              ? `a tile's render time went from ${ev.ms('baseRenderMs', rb)} to ${ev.ms('lastRenderMs', rl)}`
              : 'the render times were not read';
          const used = (p: SweepPoint) => (BURST * meanTileMs(o)) / p.https!.wallMs;
          return helps
            ? `A larger pool helped although tiles burn CPU on ${ev.n('renderCores', cores)} core(s) (${render}): the burst's rendering got ${ev.x('baseCoresUsed', used(base))} of a core at ${ev.n('basePool', base.pool)} worker(s) and ${ev.x('lastCoresUsed', used(last))} at ${ev.n('lastPool', last.pool)} — the render core(s) were shared with other processes, and the kernel shares a core per thread, so more render threads took a larger share of it; this run cannot show the pool on cores the server has to itself`
            : `No: with tiles burning CPU on ${ev.n('renderCores', cores)} core(s), workers beyond the cores only share them — ${render} while the burst's wall ${gain - 1 <= 0.1 ? `stayed within ${ev.pct('tolerance', 0.1)}` : `grew by ${ev.pct('growth', gain - 1)}`}`;
        },
        unexplained:
          'the pool rendered on a timer (--render sleep), whose workers cost no CPU, so more workers always help; rerun with --render cpu',
        ev,
      }),
    );
  }
  return out;
}

// --- checking the findings against the result ----------------------------------------------

/**
 * The contradictions a referee would look for, read from the result's own tables and data: a burst
 * row or ratio whose figures are not the clean bursts' medians, a sweep cell built on a burst with a
 * failed request, a conclusion about ignoring cancellation from legs that abandoned different amounts
 * of work, a pool-size answer its own walls contradict.
 */
export function verifyTiles(r: StudyResult): string[] {
  const problems: string[] = [];
  // A sweep paragraph that calls a step "a doubling" on a grid whose steps are not.
  for (const [id, points] of Object.entries((r.data.sweep ?? {}) as Record<string, SweepPoint[]>)) {
    const p = r.explanation.find((x) => x.startsWith(`On ${id}, from `));
    const pools = points.map((x) => x.pool);
    if (p && /a doubling/.test(p) && pools.some((x, k) => k > 0 && x !== 2 * pools[k - 1]!))
      problems.push(`sweep ${id}: "a doubling" on a grid of ${pools.join(', ')} workers`);
  }
  const f = (id: string) => r.findings.find((x) => x.id === id);
  const burst = (r.data.burst ?? {}) as Record<string, BrowserResult>;
  const close = (a: number | undefined, b: number | undefined, tol = 1) =>
    a !== undefined && b !== undefined && Math.abs(a - b) <= tol;
  for (const [id, target] of [
    ['burst-h1', 'http'],
    ['burst-h2', 'https'],
  ] as const) {
    const x = f(id);
    if (!x || x.verdict === 'not-measured') continue;
    const env = x.section?.replace(/^burst-/, '') ?? '';
    const runs = burst[env]?.burst.runs.filter((b) => b.target === target && !b.discarded) ?? [];
    if (runs.length === 0) {
      problems.push(`${id}: no burst data for ${env}`);
      continue;
    }
    const clean = runs.filter((b) => !failedBurst(b)).map((b) => b.stats.wallMs);
    if (!close(evidenceNumber(x, 'wallMs'), clean.length ? medianNearestRank(clean) : undefined))
      problems.push(`${id}: wall ${evidenceNumber(x, 'wallMs')} ms is not the median of the clean bursts`);
    const repeated = (burst[env]?.burst.repeated ?? []).filter((b) => b.target === target && !b.discarded);
    const failed = runs.length - clean.length + repeated.length;
    if (evidenceNumber(x, 'excludedRuns') !== failed)
      problems.push(`${id}: ${evidenceNumber(x, 'excludedRuns')} runs said excluded, ${failed} had failures`);
    const row = r.sections
      .find((s) => s.id === x.section)
      ?.table.rows.find((q) => q.target === targetLabel(target));
    if (!close(evidenceNumber(x, 'wallMs'), typeof row?.wall === 'number' ? row.wall : undefined))
      problems.push(`${id}: the finding's wall is not the table's`);
  }
  const ratio = f('burst-ratio');
  if (ratio) {
    const w1 = evidenceNumber(f('burst-h1'), 'wallMs');
    const w2 = evidenceNumber(f('burst-h2'), 'wallMs');
    if (w1 === undefined || w2 === undefined || !close(evidenceNumber(ratio, 'ratio'), w1 / w2, 0.005))
      problems.push('burst-ratio: the ratio is not the two rows’ walls');
    if (ratio.explained && /Explained by/.test(ratio.explanation)) {
      const p = evidenceNumber(ratio, 'predictedRatio');
      const m = evidenceNumber(ratio, 'ratio');
      if (p === undefined || m === undefined || Math.abs(m / p - 1) > 0.15)
        problems.push('burst-ratio: explained by the floors, yet the floors predict another ratio');
    }
  }
  for (const [env, points] of Object.entries((r.data.sweep ?? {}) as Record<string, SweepPoint[]>))
    for (const p of points)
      for (const side of ['http', 'https'] as const) {
        const n = Object.values(p[side]?.failures ?? {}).reduce((a, b) => a + b, 0);
        if (n > 0)
          problems.push(`sweep ${env} pool ${p.pool} ${side}: printed from bursts with ${n} failed requests`);
      }
  const ig = f('cancel-ignore');
  if (ig && ig.verdict !== 'not-measured') {
    const a = evidenceNumber(ig, 'honourReachedPerRun');
    const b = evidenceNumber(ig, 'ignoreReachedPerRun');
    if (a === undefined || b === undefined || Math.min(a, b) < 10 || Math.max(a, b) / Math.min(a, b) > 1.5)
      problems.push(`cancel-ignore: a conclusion from legs that abandoned ${a} and ${b} tiles a run`);
  }
  const pool = f('pool-size');
  if (pool && pool.verdict !== 'not-measured') {
    const g = evidenceNumber(pool, 'gain');
    if (g === undefined) problems.push('pool-size: no gain recorded');
    else if ((pool.verdict === 'agrees') !== g > -0.1)
      problems.push(`pool-size: verdict ${pool.verdict} with a change of ${Math.round(g * 100)}%`);
    if (g !== undefined && /stayed within/.test(pool.explanation) && Math.abs(g) > 0.1)
      problems.push(`pool-size: the wall 'stayed within' 10% but changed by ${Math.round(g * 100)}%`);
    if (r.data.model && (r.data.model as { render?: string }).render !== 'cpu')
      problems.push('pool-size: answered from a pool that does not burn CPU');
  }
  return problems;
}

// --- running it --------------------------------------------------------------------------------

function fixtureOptions(o: TilesOptions, extra: ServerOptionsInput = {}): ServerOptionsInput {
  return {
    poolSize: o.poolSize,
    tileMs: o.tileMs,
    tileHeavyMs: o.tileHeavyMs,
    tileHeavyFraction: o.tileHeavyFraction,
    tileRender: o.render,
    ...(o.render === 'cpu' ? { renderCores: o.renderCores } : {}),
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

/**
 * One pool size: a warm-up burst per target (discarded), then `runs` bursts a target, alternating. A
 * burst with a failed request is repeated ({@link BURST_REPEAT}) and counted, never summarised. The
 * pool's mean service time a tile is read from /metrics around each burst.
 */
async function sweepBursts(
  chromium: ChromiumHandle,
  f: FixtureTarget,
  runs: number,
): Promise<Omit<SweepPoint, 'pool'>> {
  const all: BurstRun[] = [];
  const excluded: SweepPoint['excluded'] = {};
  const service: Record<string, number[]> = {};
  const targets = targetsOf(f);
  const pages = await Promise.all(targets.map((t) => CollectedPage.open(chromium.context, t.origin)));
  const burst = (j: number, count: number, index: number) =>
    runBurstRepeated(
      {
        page: pages[j]!,
        target: targets[j]!,
        count,
        pathTemplate: '/tiles/7/{x}/{y}',
        index,
        runTimeoutMs: 60_000,
        metrics: f.metrics,
      },
      BURST_REPEAT,
    );
  try {
    // Index 0 is discarded: a small burst that opens the connections.
    for (let j = 0; j < targets.length; j++) all.push((await burst(j, WARM_UP, 0)).run);
    for (let i = 1; i <= runs; i++)
      for (let j0 = 0; j0 < targets.length; j0++) {
        const j = (i + j0) % targets.length;
        const id = targets[j]!.id;
        const { run, repeated } = await burst(j, BURST, i);
        // runBurst reset the fixture's counters before the last attempt: what they hold is that burst.
        const after = await f.metrics?.tryRead();
        const failed = failedBurst(run) ? [...repeated, run] : repeated;
        if (failed.length > 0) exclude(excluded, id, failed);
        if (failedBurst(run)) continue;
        all.push(run);
        const view = after ? serverViewOf(after) : undefined;
        if (view?.poolServiceMs) service[id] = [...(service[id] ?? []), view.poolServiceMs.mean];
      }
  } finally {
    for (const p of pages) await p.close();
  }
  const has = (t: string) => all.some((r) => r.target === t && !r.discarded);
  return {
    ...(has('http') ? { http: summarizeBurst('http', all) } : {}),
    ...(has('https') ? { https: summarizeBurst('https', all) } : {}),
    excluded,
    serviceMs: Object.fromEntries(Object.entries(service).map(([k, v]) => [k, med(v)])),
  };
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
        const w = (x: BurstSummary | undefined) => (x ? `${Math.round(x.wallMs)} ms` : 'no clean burst');
        ctx.log(`sweep ${env.id} pool ${pool}: h1 ${w(p.http)}, h2 ${w(p.https)}`);
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

/**
 * The rows and the sweep paragraphs of a saved run, from its data: each environment's bursts (their
 * runs' statistics; a saved run drops only their per-request lists), the cancellation legs' summaries
 * and the sweep's points.
 */
function rederiveTiles(r: StudyResult): Rederived | undefined {
  const burst = r.data.burst as Record<string, BrowserResult> | undefined;
  const sweep = (r.data.sweep ?? {}) as Record<string, SweepPoint[]>;
  if (!burst || Object.keys(burst).length === 0) return undefined;
  const o = resolve(r.options as TilesGiven, r.mode === 'quick');
  const clean = Object.fromEntries(
    Object.entries(burst).map(([id, b]) => [
      id,
      cleanBursts(
        b.burst,
        b.targets.map((t) => t.id),
      ),
    ]),
  );
  const envs = Object.keys(burst);
  const env = envs.includes('loopback') ? 'loopback' : envs[0]!;
  return {
    findings: tilesFindings(env, clean[env], burst[env]!.cancelSummaries ?? [], sweep[env], o, clean),
    explanation: r.explanation.map((p) => {
      const id = Object.keys(sweep).find((x) => p.startsWith(`On ${x}, from `));
      return (id && explainSweep(id, sweep[id]!, o)) || p;
    }),
  };
}

export const tilesStudy = defineStudy<TilesOptions, TilesGiven>({
  ...TILES_STUDY,
  verify: verifyTiles,
  rederive: rederiveTiles,
  quickLimits: (o) =>
    o.runs - 1 < 3
      ? `Quick: ${o.runs - 1} kept burst(s) a target (${o.runs}, the first discarded), ${GRID.quick.cancelRuns} run(s) a cancellation leg and ${GRID.quick.sweepRuns} a pool size: every figure is one run's, with no spread to tell noise from a difference; the verdicts against the report compare single runs. A full run keeps ${GRID.full.runs - 1} bursts a target.`
      : undefined,
  resolve,
  check(o) {
    checkChromium(o.chromiumPath);
    if (o.render === 'cpu') renderCpuList(o.renderCores);
    if (o.net.some((n) => n !== 'loopback')) checkNetAvailable('relay');
  },
  async run(ctx) {
    const o = ctx.options;
    ctx.setData('model', {
      poolSize: o.poolSize,
      tileMs: o.tileMs,
      tileHeavyMs: o.tileHeavyMs,
      tileHeavyFraction: o.tileHeavyFraction,
      render: o.render,
      renderCores: o.render === 'cpu' ? o.renderCores : null,
      meanTileMs: meanTileMs(o),
      reportCores: REPORT_CORES,
    });
    // The render cores are the server's alone: this process, Chromium (started later, inheriting it)
    // and the fixture's own threads run on the other CPUs; on a machine with no other CPU, they share.
    const others = o.render === 'cpu' ? otherCpus(o.renderCores) : [];
    const restore = others.length > 0 ? pinThisProcess(others) : () => {};
    ctx.setData('cpus', {
      render: o.render === 'cpu' ? renderCpuList(o.renderCores) : null,
      others: others.length > 0 ? others : null,
      loadAverageAtStart: os.loadavg().map((x) => Math.round(x * 100) / 100),
    });
    try {
      await runTiles(ctx, o);
    } finally {
      restore();
    }
  },
});

async function runTiles(ctx: StudyContext, o: TilesOptions): Promise<void> {
  {
    const quick = ctx.quick;
    // Weights: about the seconds each cell takes on two cores.
    const wBurst = quick ? 15 : 60;
    const wMap = quick ? 25 : 120;
    const wSweep = quick ? 15 : 90;
    const envs = o.net;
    // The quick grid keeps only the burst behind a link: the 2-minute bound.
    for (const id of envs) ctx.plan(wBurst + (id === 'loopback' || !quick ? wMap + wSweep : 0));
    const burstData: Record<string, BrowserResult> = {};
    const cleanData: Record<string, CleanBursts> = {};
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
                // Legs comparable by construction: each aborts once every tile its protocol can
                // deliver has reached the server (121 over h2, 6 over HTTP/1.1), honouring or not.
                cancelWhenReached: BURST,
                control: loop || !quick,
                fixture: { poolSize: o.poolSize, tileMs: o.tileMs, maxConcurrentStreams: 256 },
              },
              {
                startFixture: (fo) =>
                  env.start(fixtureOptions(o, { poolSize: fo.poolSize, ignoreCancel: fo.ignoreCancel })),
                signal: ctx.signal,
                burstRepeat: BURST_REPEAT,
              },
            ),
          { weight: wBurst },
        );
        if (b) {
          burstData[id] = b;
          const clean = cleanBursts(
            b.burst,
            b.targets.map((t) => t.id),
          );
          cleanData[id] = clean;
          ctx.setData('burst', burstData);
          ctx.setData(
            'burstExcluded',
            Object.fromEntries(Object.entries(cleanData).map(([k, c]) => [k, c.excluded])),
          );
          ctx.section(burstSection(id, b, clean, o));
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
        ctx.explain(explainBurst(id, cleanData[id]!.summaries, o));
        const c = explainCancel(id, b.cancelSummaries);
        if (c) ctx.explain(c);
      }
      const m = mapData[id] && explainMap(id, mapData[id]);
      if (m) ctx.explain(m);
      const s = sweepData[id] && explainSweep(id, sweepData[id], o);
      if (s) ctx.explain(s);
    }
    // The report measured on loopback: its rows are answered by this run's loopback numbers.
    const env = envs.includes('loopback') ? 'loopback' : envs[0]!;
    for (const f of tilesFindings(
      env,
      cleanData[env],
      burstData[env]?.cancelSummaries ?? [],
      sweepData[env],
      o,
      cleanData,
    ))
      ctx.finding(f);
  }
}

/** The tiles study's explanations, one per table, derived from the numbers. */
import type { BrowserResult, BurstSummary, CancelRun, CancelSummary } from '../../model/index.ts';
import { type ClaimDecision, direction, directionText, NO_RUNS, wouldTell } from '../claims.ts';
import { counted } from '../table.ts';
import { BURST, type TilesOptions } from './options.ts';
import { floorMs, fmt1, meanTileMs, medNearestRank, rendering, targetLabel } from './plan.ts';
import {
  burstDecision,
  type CleanBursts,
  cancelDecision,
  type MapRow,
  pctDiff,
  perTile,
  reachedPerRun,
  type SweepPoint,
  sumOf,
  sweepStep,
} from './tables.ts';

export function explainBurst(env: string, clean: CleanBursts, o: TilesOptions): string {
  const by = new Map(clean.summaries.map((s) => [s.target, s]));
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
  const d = burstDecision(clean);
  const decided = !d
    ? 'no runs to decide which was faster'
    : directionText(d, {
        above: () => `h2 ${pctDiff(h1.wallMs, h2.wallMs)} faster, decided by the runs`,
        below: () => `HTTP/1.1 ${pctDiff(h1.wallMs, h2.wallMs)} faster, decided by the runs`,
        same: 'the same by the runs',
        undecided: 'neither decided faster by the runs',
      });
  const h1Busy = rendering(o, o.poolSize, h1.peakInFlight.median);
  const h2Busy = rendering(o, o.poolSize, h2.peakInFlight.median);
  const h1Floor = floorMs(o, BURST, o.poolSize, h1.peakInFlight.median);
  const near = (wall: number, f: number) => `${Math.round((wall / f - 1) * 100)}%`;
  parts.push(
    `The last tile arrived after ${Math.round(h1.wallMs)} ms over HTTP/1.1 and ${Math.round(h2.wallMs)} ms over h2 (${decided}). ${o.render === 'cpu' ? `Tiles burn CPU on ${o.renderCores} core(s), so at most ${h2Busy} render at full speed whatever the pool (${o.poolSize} workers) and the protocol allow; ` : ''}the backend's floor is ${Math.round(floor)} ms for h2 (${BURST} tiles × ${fmt1(meanTileMs(o))} ms mean / ${h2Busy} rendering at once) and ${Math.round(h1Floor)} ms for HTTP/1.1 (${h1Busy} at once with ${h1.peakInFlight.median} in flight). HTTP/1.1 finished ${near(h1.wallMs, h1Floor)} above its floor, h2 ${near(h2.wallMs, floor)} above its own: ${
      h1.wallMs < h1Floor * 1.25 && h2.wallMs < floor * 1.25
        ? h1Busy < h2Busy
          ? 'both ran at the limit their queue allowed, so h2 moved the queue into the pool and shortened it only by the workers HTTP/1.1 left idle'
          : 'both ran at the backend’s limit, so h2 moved the queue into the pool without shortening it'
        : 'the rest is time outside the pool: the browser’s own work on this machine and, behind a link, the round trip before each connection’s next tile'
    }.`,
  );
  const ctl = by.get('https-h1');
  if (ctl) {
    // TLS alone: plain HTTP/1.1 against HTTP/1.1 over TLS, decided over their runs.
    const tls = burstDecision(clean, 'http', 'https-h1');
    const nearer =
      Math.abs(ctl.wallMs - h1.wallMs) < Math.abs(ctl.wallMs - h2.wallMs) ? 'plain HTTP/1.1' : 'h2';
    const side = tls ? direction(tls) : 'undecided';
    parts.push(
      `HTTP/1.1 over TLS took ${Math.round(ctl.wallMs)} ms with ${ctl.peakInFlight.median} in flight, nearer ${nearer}: ${
        side === 'same'
          ? 'the runs decided it the same as plain HTTP/1.1, so TLS is not what the protocols differ by'
          : side === 'undecided'
            ? `whether TLS alone changed the wall time the runs do not decide (${tls ? wouldTell(tls) : 'no runs'})`
            : 'the runs decided it apart from plain HTTP/1.1, so part of the difference is TLS or the connection setup, not the protocol'
      }.`,
    );
  }
  return parts.join(' ');
}

/**
 * Whether two cancellation legs abandoned comparable work: the same order of abandoned tiles reached
 * each server per run (within a factor of 1.5, and at least 10 a run). Otherwise the wanted tile's
 * time of one leg says nothing about the other's.
 */
export function comparableLegs(a: CancelSummary, b: CancelSummary): boolean {
  const x = reachedPerRun(a);
  const y = reachedPerRun(b);
  if (x === undefined || y === undefined || Math.min(x, y) < 10) return false;
  return Math.max(x, y) / Math.min(x, y) <= 1.5;
}

/**
 * What ignoring cancellation cost the wanted tile, in words: the extra over the idle baseline of each
 * leg as figures, the direction decided by compare's rule over the legs' wanted-tile runs
 * ({@link cancelDecision}).
 */
export function ignoreCostWords(runs: readonly CancelRun[]): string {
  const d = cancelDecision(runs);
  if (!d) return NO_RUNS;
  return directionText(d, {
    above: (x) =>
      `ignoring cancellation made the wanted tile ${x} later, the abandoned tiles still rendering ahead of it`,
    below: (x) => `ignoring cancellation made the wanted tile ${x} sooner`,
    same: 'the same wanted-tile time either way: the abandoned work had drained or ran beside it on free workers',
    undecided: 'whether ignoring cancellation made the wanted tile later the runs do not decide',
  });
}

export function explainCancel(
  env: string,
  b: Pick<BrowserResult, 'cancel' | 'cancelSummaries'>,
): string | undefined {
  const cs = b.cancelSummaries;
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
    parts.push(
      `With comparable abandoned work (${Math.round(reachedPerRun(honour)!)} against ${Math.round(reachedPerRun(ignore)!)} reached a run), the wanted tile took ${Math.round(extraH)} ms over its idle baseline against ${Math.round(extraI)} ms: ${ignoreCostWords(b.cancel)}.`,
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

export function explainMap(env: string, rows: MapRow[]): string | undefined {
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
        ? ` (none was still in flight when the map moved on: a tile was on the wire ${Math.round(medNearestRank(r.sessions.map((s) => s.wireMs.p50)))} ms, p50)`
        : '';
    parts.push(
      `${targetLabel(r.target)}: the map asked for ${req} tiles and abandoned ${canc} itself${none}; ${reached} reached the server, where ${cancelled} were cancelled; the viewport was complete ${Math.round(medNearestRank(moves))} ms (median) after a move.`,
    );
  }
  if (parts.length === 0) return undefined;
  const ig = get('https', 'ignore');
  if (ig) {
    const wasted = sumOf(ig.sessions, (s) => s.server?.renderedForNothing ?? 0);
    const moves = ig.sessions.flatMap((s) => s.moves.map((m) => m.completeMs));
    parts.push(
      `With a server that ignores cancellation, h2 sessions had ${counted(wasted, 'tile')} rendered for nobody and the viewport was complete ${Math.round(medNearestRank(moves))} ms after a move.`,
    );
  }
  return `On ${env}, in MapLibre sessions — ${parts.join(' ')}`;
}

/** A step of the sweep in words: "4 workers (4× as many): wall time 1.2× longer (…)". */
function stepWords(from: SweepPoint, to: SweepPoint, d: ClaimDecision): string {
  const factor = to.pool / from.pool;
  const times = Number.isInteger(factor) ? `${factor}×` : `${factor.toFixed(1)}×`;
  return `${to.pool} workers (${times} as many): ${directionText(d, {
    above: (x) => `wall time ${x} longer`,
    below: (x) => `wall time ${x} shorter`,
    same: 'the same wall time',
    undecided: 'undecided',
  })}`;
}

/**
 * The sweep for one target in words, every step decided by compare's rule over its bursts
 * ({@link sweepStep}): how far more workers gained, where a decided step stopped gaining and why, or
 * that the runs do not decide. A point without runs decides nothing.
 */
function sweepSide(full: SweepPoint[], side: 'http' | 'https', o: TilesOptions): string {
  const name = side === 'http' ? 'HTTP/1.1' : 'h2';
  const last = full.at(-1)!;
  const steps = full.slice(1).map((to, i) => ({ from: full[i]!, to, d: sweepStep(full[i]!, to, side) }));
  if (steps.some((x) => !x.d)) return `${name}, each pool size: ${NO_RUNS}.`;
  const stop = steps.find((x) => direction(x.d!) !== 'below');
  if (!stop) {
    const l = steps.at(-1)!;
    return `${name} kept gaining up to ${last.pool} workers, every step decided by the runs (${stepWords(l.from, l.to, l.d!)}).`;
  }
  const { from, to, d } = stop;
  if (direction(d!) === 'undecided')
    return `Whether ${name} gained beyond ${counted(from.pool, 'worker')} the runs do not decide (${stepWords(from, to, d!)}).`;
  const rk = from.serviceMs[side];
  const rl = last.serviceMs[side];
  const rise = from === last ? undefined : sweepStep(from, last, side, 'serviceRuns');
  const atLast = last[side]!;
  const cores = o.render === 'cpu' ? o.renderCores : undefined;
  const why =
    cores !== undefined &&
    from.pool >= cores &&
    rk !== undefined &&
    rl !== undefined &&
    rise &&
    direction(rise) === 'above'
      ? `tiles burn CPU on ${cores} core(s), and more busy workers only share them: a tile's render time rose from ${Math.round(rk)} ms at ${counted(from.pool, 'worker')} to ${Math.round(rl)} ms at ${last.pool}, decided by the runs`
      : atLast.peakInFlight.median < last.pool && atLast.stalledP50Ms > (atLast.serverPoolQueueP50Ms ?? 0)
        ? `the queue sat in the browser (stalled p50 ${Math.round(atLast.stalledP50Ms)} ms against ${Math.round(atLast.serverPoolQueueP50Ms ?? 0)} ms in the pool at ${last.pool} workers): with ${atLast.peakInFlight.median} requests in flight, workers beyond ${atLast.peakInFlight.median} sit idle`
        : `the measurements here do not say which limit it met (stalled p50 ${Math.round(atLast.stalledP50Ms)} ms, pool queue p50 ${Math.round(atLast.serverPoolQueueP50Ms ?? 0)} ms at ${last.pool} workers)`;
  return `${name} stopped gaining at ${counted(from.pool, 'worker')} (${Math.round(from[side]!.wallMs)} ms; ${stepWords(from, to, d!)}): ${why}.`;
}

export function explainSweep(env: string, points: SweepPoint[], o: TilesOptions): string | undefined {
  const full = points.filter((p) => p.http && p.https);
  if (full.length < 2) return undefined;
  const first = full[0]!;
  const last = full.at(-1)!;
  return [
    `On ${env}, from ${first.pool} to ${last.pool} workers the ${BURST}-tile burst went from ${Math.round(first.http!.wallMs)} to ${Math.round(last.http!.wallMs)} ms over HTTP/1.1 and from ${Math.round(first.https!.wallMs)} to ${Math.round(last.https!.wallMs)} ms over h2 (clean bursts only).`,
    sweepSide(full, 'http', o),
    sweepSide(full, 'https', o),
  ].join(' ');
}

import type {
  BrowserResult,
  BurstSummary,
  CancelRun,
  CancelSummary,
  StudyFinding,
} from '../../model/index.ts';
import { type ClaimDecision, direction, directionText, NO_RUNS, wouldTell } from '../claims.ts';
import { Evidence, makeFinding, notMeasured } from '../findings.ts';
import { TILES_MODEL as MODEL, TILES_REPORT_CORES as REPORT_CORES } from './descriptor.ts';
import { comparableLegs, ignoreCostWords } from './explain.ts';
import { BURST, REPORT_BURST, REPORT_CANCEL, type TilesOptions } from './options.ts';
import { floorMs, meanTileMs, rendering, targetLabel } from './plan.ts';
import {
  burstDecision,
  type CleanBursts,
  cancelDecision,
  reachedPerRun,
  type SweepPoint,
  sweepStep,
} from './tables.ts';

// --- row by row against the report ----------------------------------------------------------

/** The report's rows, each answered with this run's numbers on `env` (the report measured loopback). */
export function tilesFindings(
  env: string,
  clean: CleanBursts | undefined,
  b: Pick<BrowserResult, 'cancel' | 'cancelSummaries'> | undefined,
  points: SweepPoint[] | undefined,
  o: TilesOptions,
  elsewhere: Readonly<Record<string, CleanBursts>> = {},
): StudyFinding[] {
  const cs = b?.cancelSummaries ?? [];
  const byTarget = (c: CleanBursts | undefined) => new Map((c?.summaries ?? []).map((s) => [s.target, s]));
  const by = byTarget(clean);
  const others = Object.entries(elsewhere)
    .filter(([id]) => id !== env)
    .map(([id, c]) => ({ env: id, by: byTarget(c) }));
  return [
    ...burstRows(env, clean, by, points, o),
    ...burstRatioRow(env, by, o, others, clean),
    ...cancelAbortRow(env, cs),
    ...cancelRows(env, cs),
    ...cancelLoadRow(env, cs),
    ...cancelIgnoreRow(env, cs, b?.cancel ?? []),
    ...poolSizeRow(env, points, o),
  ];
}

/** A decision's outcome, ratio, interval and size as evidence: the figures its words print. */
function recordDecision(ev: Evidence, key: string, d: ClaimDecision): void {
  ev.set('outcome', d.outcome);
  ev.set(`${key}Ratio`, d.interval.ratio);
  ev.set(`${key}RatioLo`, d.interval.lo);
  ev.set(`${key}RatioHi`, d.interval.hi);
  // directionText's size: the ratio, or its inverse below 1, one decimal.
  ev.set(`${key}Size`, d.interval.ratio >= 1 ? d.interval.ratio : 1 / d.interval.ratio);
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
  clean?: CleanBursts,
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
    const d = burstDecision(clean);
    if (d) ev.set('outcome', d.outcome);
    const decided = !d
      ? 'no runs to decide a direction'
      : direction(d) === 'undecided'
        ? `undecided: ${wouldTell(d, ev)}`
        : `the runs decided ${direction(d) === 'above' ? 'h2 faster' : direction(d) === 'below' ? 'HTTP/1.1 faster' : 'the same'}`;
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
          .join('')}; ${env}: ${decided}`,
        reference: reportRatio,
        value: ratio,
        tolerance: 0.1,
        ratio: true,
        ...(d ? { decision: d } : {}),
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

/**
 * The report's "r.Context() is now load-bearing for ~4× as many requests": abandoned tiles whose
 * handler started (and so rely on the request's cancellation) a run over h2 against HTTP/1.1, both
 * against a server that honours cancellation. One total a leg, so a figure, not a decision.
 */
function cancelLoadRow(env: string, cs: readonly CancelSummary[]): StudyFinding[] {
  const h2 = cancelSummaryOf(cs, 'https', 'honour');
  const h1 = cancelSummaryOf(cs, 'http', 'honour');
  const a = h2 && reachedPerRun(h2);
  const b = h1 && reachedPerRun(h1);
  const ev = new Evidence();
  const base = {
    id: 'cancel-load',
    section: `cancel-${env}`,
    row: 'r.Context() “load-bearing for ~4× as many requests”: abandoned tiles that reach a handler, h2 against HTTP/1.1',
    report: `about ${ev.x('reportRatio', REPORT_CANCEL.loadBearing)}`,
    ev,
  };
  if (!h2 || !h1 || a === undefined || b === undefined || b === 0)
    return [
      notMeasured(
        base,
        'not measured: this run has no cancellation leg of both targets against the honouring server',
        'no cancellation legs to count',
      ),
    ];
  const all = a >= 0.95 * BURST;
  // A later abort than the report's lets HTTP/1.1 deliver more tiles first: a smaller ratio.
  const fits = h1.actualAbortMs > REPORT_CANCEL.abortMs === a / b < REPORT_CANCEL.loadBearing;
  return [
    makeFinding({
      ...base,
      measured: `${ev.n('h2ReachedPerRun', a)} abandoned tiles a run reached a handler over h2, ${ev.n('h1ReachedPerRun', b)} over HTTP/1.1: ${ev.x('ratio', a / b)} (one total a leg over ${ev.n('h2Runs', h2.runs)} and ${ev.n('h1Runs', h1.runs)} runs: ${NO_RUNS})`,
      reference: REPORT_CANCEL.loadBearing,
      value: a / b,
      tolerance: 0.25,
      ratio: true,
      explain: (v) =>
        all && (v === 'agrees' || fits)
          ? `Over h2 every tile is sent at once, so all ${ev.n('burst', BURST)} abandoned tiles reach a handler; over HTTP/1.1 only those its connections carried before the abort, which came after ${ev.ms('h1AbortMs', h1.actualAbortMs)} here against the report's ${ev.ms('reportAbortMs', REPORT_CANCEL.abortMs)}: the later the abort, the more tiles HTTP/1.1 delivers, so this ratio follows the abort's time as much as the protocol`
          : undefined,
      unexplained: all
        ? `the abort came after ${ev.ms('h1AbortMs', h1.actualAbortMs)} over HTTP/1.1 against the report's ${ev.ms('reportAbortMs', REPORT_CANCEL.abortMs)}, which should move the ratio the other way; what else set HTTP/1.1's count this run does not break down`
        : `only ${ev.n('h2ReachedPerRun', a)} of ${ev.n('burst', BURST)} abandoned tiles a run reached a handler over h2, where multiplexing sends them all`,
    }),
  ];
}

/**
 * HTTP/2 with a server that ignores cancellation, against one that honours it: the wanted tile's
 * extra over the idle baseline as figures, which way it went decided over the legs' runs.
 */
function cancelIgnoreRow(
  env: string,
  cs: readonly CancelSummary[],
  runs: readonly CancelRun[],
): StudyFinding[] {
  const out: StudyFinding[] = [];
  const get = (t: string, m: string) => cancelSummaryOf(cs, t, m);
  const honour = get('https', 'honour');
  const ignore = get('https', 'ignore');
  if (honour && ignore) {
    const ev = new Evidence();
    const comparable = comparableLegs(honour, ignore);
    const xh = honour.wantedMs - honour.baselineMs;
    const xi = ignore.wantedMs - ignore.baselineMs;
    const d = cancelDecision(runs);
    if (d) recordDecision(ev, 'wanted', d);
    const side = d ? direction(d) : 'undecided';
    const perRun = `${ev.n('honourReachedPerRun', reachedPerRun(honour) ?? Number.NaN)} abandoned tiles a run reached the honouring server, ${ev.n('ignoreReachedPerRun', reachedPerRun(ignore) ?? Number.NaN)} the ignoring one`;
    const decided = comparable && d && side !== 'undecided';
    out.push(
      makeFinding({
        id: 'cancel-ignore',
        section: `cancel-${env}`,
        row: 'HTTP/2: “fine only because the handler honours the request’s cancellation”',
        report: 'not measured with a server that ignores cancellation',
        measured: comparable
          ? `extra over the idle baseline ${ev.ms('honourExtraMs', xh)} honouring against ${ev.ms('ignoreExtraMs', xi)} ignoring; ${perRun}; the wanted tile: ${ignoreCostWords(runs)}`
          : `not comparable: ${perRun}`,
        verdict: decided ? (side === 'above' ? 'agrees' : 'differs') : 'not-measured',
        explain: () =>
          decided
            ? side === 'above'
              ? `Ignoring cancellation left ${ev.n('unwanted', ignore.server?.jobs.unwanted ?? 0)} tiles rendering for nobody ahead of the wanted tile, which cost it ${ev.ms('costMs', xi - xh)}`
              : `With ${ev.n('unwanted', ignore.server?.jobs.unwanted ?? 0)} tiles rendered for nobody the wanted tile was not later by the runs: the abandoned work had drained or ran beside it on free workers`
            : undefined,
        unexplained: comparable
          ? d
            ? `the runs do not decide whether ignoring cancellation made the wanted tile later (${wouldTell(d, ev)})`
            : `the legs have no runs to decide from (${NO_RUNS})`
          : `the two legs did not abandon comparable work (${perRun}), so this run cannot say what ignoring cancellation costs`,
        ev,
      }),
    );
  }
  return out;
}

/**
 * The question the report left open: does a pool larger than the core count help? Decided over the
 * h2 bursts at the two pool sizes ({@link sweepStep}); a sweep saved without its runs decides nothing.
 */
function poolSizeRow(env: string, points: SweepPoint[] | undefined, o: TilesOptions): StudyFinding[] {
  const out: StudyFinding[] = [];
  const full = (points ?? []).filter((p) => p.https);
  if (full.length >= 2) {
    const ev = new Evidence();
    const cores = o.render === 'cpu' ? o.renderCores : undefined;
    const base = full.find((p) => cores !== undefined && p.pool >= cores) ?? full[0]!;
    const last = full.at(-1)!;
    const gain = last.https!.wallMs / base.https!.wallMs;
    const d = base === last ? undefined : sweepStep(base, last, 'https');
    if (d) recordDecision(ev, 'wall', d);
    const side = d ? direction(d) : 'undecided';
    const helps = side === 'below';
    const decided = cores !== undefined && side !== 'undecided';
    const rb = base.serviceMs.https;
    const rl = last.serviceMs.https;
    const runsWords = d
      ? directionText(d, {
          above: (x) => `the wall ${x} longer by the runs`,
          below: (x) => `the wall ${x} shorter by the runs`,
          same: 'the same wall by the runs',
          undecided: 'undecided by the runs',
        })
      : NO_RUNS;
    out.push(
      makeFinding({
        id: 'pool-size',
        section: `sweep-${env}`,
        row: 'Left open: does a pool larger than the core count help? (“a tile is single-threaded CPU, raising it would just move the queue”)',
        report: `not measured; the pool stayed at ${ev.n('reportPool', MODEL.poolSize)} on ${ev.n('reportCores', REPORT_CORES)} cores`,
        measured: `h2 wall ${ev.ms('baseWallMs', base.https!.wallMs)} at ${ev.n('basePool', base.pool)} worker(s), ${ev.ms('lastWallMs', last.https!.wallMs)} at ${ev.n('lastPool', last.pool)} (${ev.change('gain', last.https!.wallMs, base.https!.wallMs)}): ${runsWords}`,
        verdict: decided ? (helps ? 'differs' : 'agrees') : 'not-measured',
        explain: () => {
          if (!decided) return undefined;
          const render =
            rb !== undefined && rl !== undefined
              ? `a tile's render time went from ${ev.ms('baseRenderMs', rb)} to ${ev.ms('lastRenderMs', rl)}`
              : 'the render times were not read';
          const used = (p: SweepPoint) => (BURST * meanTileMs(o)) / p.https!.wallMs;
          return helps
            ? `A larger pool helped although tiles burn CPU on ${ev.n('renderCores', cores)} core(s) (${render}): the burst's rendering got ${ev.x('baseCoresUsed', used(base))} of a core at ${ev.n('basePool', base.pool)} worker(s) and ${ev.x('lastCoresUsed', used(last))} at ${ev.n('lastPool', last.pool)} — the render core(s) were shared with other processes, and the kernel shares a core per thread, so more render threads took a larger share of it; this run cannot show the pool on cores the server has to itself`
            : `No: with tiles burning CPU on ${ev.n('renderCores', cores)} core(s), workers beyond the cores only share them — ${render} while the burst's wall ${side === 'same' ? 'stayed the same by the runs' : `grew by ${ev.pct('growth', gain - 1)}, decided by the runs`}`;
        },
        unexplained:
          cores === undefined
            ? 'the pool rendered on a timer (--render sleep), whose workers cost no CPU, so more workers always help; rerun with --render cpu'
            : d
              ? `the runs do not decide whether the larger pool changed the wall (${wouldTell(d, ev)})`
              : 'the sweep kept one figure a pool size, so whether the larger pool helped is not decided',
        ev,
      }),
    );
  }
  return out;
}

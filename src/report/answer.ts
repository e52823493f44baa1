/**
 * The answer block: what a user decides, first, in a few lines. For each workload ×
 * network × level the user asked about, one decision — turn HTTP/2 on, keep HTTP/1.1, no difference,
 * undecided (with the runs that would tell), it depends, or failed — with the effect and its interval
 * and, where one is measured, the mechanism in one clause with its number. Levels with the same
 * decision and strategy are one line. Grouped by what a user decides (browsers: a page's requests at
 * once; API clients: a pool and requests in flight; bulk transfer), not by h2lab's strategy names.
 *
 * A pure function of the result ({@link buildAnswer}); {@link answerLines} lays it out in text. Every
 * number is read from the field the tables read (comparisons, cell statistics, the runs' recorded
 * connection counts), and every clause that names a cause is said only where its measurement is.
 */
import { formatMs } from '../core/index.ts';
import type { CompareResult, Comparison, RunResult, StrategyName, Workload } from '../model/index.ts';
import { findStrategy } from '../transport/index.ts';
import { cellFailures, pathsText } from './failures.ts';
import { quicFirstFlightClause } from './quic-drops.ts';
import { durationFix, runShortfall } from './run-length.ts';
import { netParts } from './settings.ts';
import { wrapText } from './text.ts';
import {
  cellOf,
  comparisonOf,
  formatRatio,
  keptOf,
  levelsText,
  lossRecovery,
  medianRun,
  OUTCOME_WORDS,
  queueMoved,
  tcpMssOf,
  timeShifts,
} from './verdict.ts';

/** What a user decides for one workload × network × level. */
export type Decision = 'on' | 'keep' | 'same' | 'undecided' | 'depends' | 'failed' | 'not-compared';

/** Who the workload stands for: the decision a user makes for these clients. */
type ClientGroup = 'browsers' | 'api' | 'bulk';

/** One line of the answer. */
interface AnswerLine {
  workload: string;
  net: string;
  /** The levels this line covers (concurrency, burst N or rate), ascending. */
  levels: number[];
  decision: Decision;
  /** The strategy the line quotes (the best candidate for `on`, the least bad for `keep`). */
  strategy?: StrategyName;
  /** The comparisons quoted, one per level, of `strategy` on the workload's primary metric. */
  comparisons: Comparison[];
  /** Its columns: the levels ("c=8, 64"), the decision ("turn HTTP/2 on"), the effect, and why. */
  level: string;
  verdict: string;
  effect: string;
  /** The strategies the line does not quote, each with its effect and outcome ("h2 1.03× (0.44–2.45) undecided"); may be empty. */
  others: string;
  /** The mechanism with its number, the runs that would tell, or how the others did; may be empty. */
  why: string;
  /** The failed requests and statuses of its cells ("h1, h2: every request failed (404 Not Found) for /x"). */
  failures: string;
  /**
   * True when h2lab's load client was saturated in a run of the baseline's or the quoted strategy's
   * cells at these levels: the throughput is a floor and the ratio may measure h2lab rather than the
   * server (the verdict's `saturatedRuns`); the decision is marked `*` and the answer's note says so.
   */
  saturated: boolean;
  /** The line in words: its columns joined. */
  text: string;
}

/** One group of lines: the clients and workload they are about. */
interface AnswerGroup {
  group: ClientGroup;
  workload: string;
  net: string;
  heading: string;
  lines: AnswerLine[];
}

/** The answer block. */
interface Answer {
  title: string;
  groups: AnswerGroup[];
  /** What a mark in the lines means (the saturated load client's `*`), or absent. */
  note?: string;
}

/** The note under an answer whose lines carry the saturation mark. */
const SATURATED_NOTE =
  "* h2lab's load client was saturated in runs of these cells: their throughput is a floor and the ratio may measure h2lab rather than the server (try --workers 2)";

/** The most lines one workload's answer takes at 80 columns (its heading and the note included). */
export const ANSWER_MAX_LINES = 12;

const GROUP_ORDER: ClientGroup[] = ['browsers', 'api', 'bulk'];

/** Which clients a workload stands for: a burst is a page (browsers), a large response bulk. */
function clientGroup(w: Workload): ClientGroup {
  if (w.burst !== undefined) return 'browsers';
  return w.kind === 'bulk' ? 'bulk' : 'api';
}

function groupHeading(result: CompareResult, w: Workload, common: string): string {
  const where = result.axes.net.length > 1 ? ` · ${common ? `${common}, then ` : ''}by network` : '';
  const who = { browsers: "browsers, a page's requests at once", api: 'API clients', bulk: 'bulk transfer' }[
    clientGroup(w)
  ];
  const metric = w.burst !== undefined ? 'time to the last response' : 'req/s';
  return `${w.label}${where} — ${who}; ${metric} against ${result.baseline} (95% CI)`;
}

/** "HTTP/2" for h2 and h2-pool, "HTTP/3" for h3: what a user turns on. */
function httpOf(p: StrategyName): string {
  return findStrategy(p)?.http ?? p;
}

/** "1.48× (1.32–1.62)": the ratio and its interval (the heading says of what). */
function effectText(c: Comparison): string {
  const i = c.interval;
  if (!Number.isFinite(i.ratio)) return '—';
  return `${formatRatio(i.ratio)} (${formatRatio(i.lo).slice(0, -1)}–${formatRatio(i.hi).slice(0, -1)})`;
}

/** The metric a workload is decided on: a burst's completion time, else throughput. */
function metricOf(w: Workload): Comparison['metric'] {
  return w.burst !== undefined ? 'burstCompletionMs' : 'rps';
}

/** Oriented effect: > 0 is better than the baseline. */
function gain(c: Comparison): number {
  return Math.log(c.interval.ratio) * (c.higherIsBetter ? 1 : -1);
}

export interface LevelDecision {
  level: number;
  decision: Decision;
  /** Every candidate's comparison at this level on the workload's metric. */
  cmps: Comparison[];
  /** The candidates that carry the decision: better (on), worse (keep), undecided, or all (same). */
  carriers: StrategyName[];
}

function decideLevel(result: CompareResult, w: Workload, net: string, level: number): LevelDecision {
  const metric = metricOf(w);
  const candidates = result.axes.protocols.filter((p) => p !== result.baseline);
  const cmps = candidates
    .map((p) => comparisonOf(result, w.id, level, net, p, metric))
    .filter((x): x is Comparison => x !== undefined && Number.isFinite(x.interval.ratio));
  if (cmps.length === 0) {
    // Nothing compared because a cell failed, or because the server does not offer the baseline
    // (then what did run is shown alone): not the same answer.
    const broken = result.axes.protocols.some(
      (p) => cellOf(result, w.id, level, net, p)?.status === 'failed',
    );
    return { level, decision: broken ? 'failed' : 'not-compared', cmps, carriers: [] };
  }
  const of = (o: Comparison['outcome']) => cmps.filter((c) => c.outcome === o).map((c) => c.protocol);
  const [better, worse, undecided] = [of('better'), of('worse'), of('undecided')];
  const d = (decision: Decision, carriers: StrategyName[]): LevelDecision => ({
    level,
    decision,
    cmps,
    carriers,
  });
  if (better.length > 0 && worse.length > 0) return d('depends', [...better, ...worse]);
  if (better.length > 0) return d('on', better);
  if (worse.length > 0) return d('keep', worse);
  if (undecided.length > 0) return d('undecided', undecided);
  if (cmps.every((c) => c.outcome === 'no-clear-difference'))
    return d(
      'same',
      cmps.map((c) => c.protocol),
    );
  return d('not-compared', []);
}

/** "turn HTTP/2 on", "keep HTTP/1.1", …: the decision in words. */
function verb(result: CompareResult, d: Decision, p: StrategyName | undefined): string {
  switch (d) {
    case 'on':
      return `turn ${p ? httpOf(p) : 'it'} on`;
    case 'keep':
      return `keep ${httpOf(result.baseline)}`;
    case 'same':
      return 'no difference';
    case 'undecided':
      return 'undecided';
    case 'depends':
      return 'depends on the client';
    case 'failed':
      return 'failed';
    default:
      return 'not compared';
  }
}
/**
 * The mechanism in one clause, from what was measured at this level, for the chosen strategy against
 * the baseline — or nothing. Sources, in order: what bounds a burst over a link (⌈N/k⌉ round trips on
 * k HTTP/1.1 connections), where the time went (client queue, the backend pool, transfer, the wire),
 * and one request in flight (nothing to multiplex, the medians).
 */
function mechanism(
  result: CompareResult,
  w: Workload,
  net: string,
  level: number,
  p: StrategyName,
): string | undefined {
  const b = result.baseline;
  const base = keptOf(cellOf(result, w.id, level, net, b));
  const cand = keptOf(cellOf(result, w.id, level, net, p));
  if (base.length === 0 || cand.length === 0) return undefined;
  if (w.burst !== undefined) {
    const run = medianRun(base, (r) => r.burst?.completionMs ?? 0);
    const link = run.environment.link;
    const k = run.transport.connections;
    const other = medianRun(cand, (r) => r.burst?.completionMs ?? 0);
    const faster = (other.burst?.completionMs ?? 0) < (run.burst?.completionMs ?? 0);
    if (link && link.rttMs > 0 && run.protocol.negotiated === 'http/1.1') {
      // The round trips a pool of HTTP/1.1 connections needs explain a multiplexed strategy that was
      // faster; where it was slower, the initial windows are what the baseline had more of.
      if (faster && k < level) {
        const rounds = Math.ceil(level / Math.max(1, k));
        return `${b}'s ${k} connections need ${rounds} round trips of ${formatMs(link.rttMs)} for ${level} requests, ${p} sends them at once`;
      }
      const kc = other.transport.connections;
      if (!faster && kc < k) {
        const iw = link.initialCwnd ?? 10;
        const windows = `${b}'s ${k} connections start with ${k * iw} segments in the first round trip, ${p}'s ${kc} with ${kc * iw} (initial windows of ${iw})`;
        return `${windows}${slowStartClause(result, w, net, level, p, other, kc * iw)}`;
      }
    }
  }
  const shifts = timeShifts(result, w.id, level, net, p);
  if (shifts && shifts.length > 0) {
    const pool = cellOf(result, w.id, level, net, p)?.stats?.serverPoolSize;
    if (queueMoved(shifts)) {
      const q = shifts.find((s) => s.part === 'clientQueue')!;
      return `${b}'s ${formatMs(-q.deltaMs)} wait in the client moved to the server's pool${pool !== undefined ? ` of ${pool}` : ''}`;
    }
    const top = [...shifts].sort((x, y) => Math.abs(y.deltaMs) - Math.abs(x.deltaMs))[0]!;
    const d = formatMs(Math.abs(top.deltaMs));
    const [who, other] = top.deltaMs < 0 ? [b, p] : [p, b];
    if (top.part === 'clientQueue') {
      const k = medianRun(base).transport.connections;
      if (top.deltaMs < 0 && findStrategy(b)?.multiplexed === false)
        return `${b}'s ${k} connections for ${level} in flight queued ${d} more a request`;
      return `${who} queued ${d} more a request than ${other}`;
    }
    if (top.part === 'transfer') return `${who} took ${d} more a response in transfer`;
    if (top.part === 'wire') return `${who} took ${d} more to the first byte`;
  }
  const one = medianRun(cand);
  if (
    w.burst === undefined &&
    !w.rateRps &&
    level === 1 &&
    (one.connections.peakStreamsPerConnection ?? 1) <= 1
  ) {
    const bs = cellOf(result, w.id, level, net, b)?.stats?.latencyP50Ms.median;
    const cs = cellOf(result, w.id, level, net, p)?.stats?.latencyP50Ms.median;
    if (bs !== undefined && cs !== undefined)
      return `one in flight, nothing to multiplex: p50 ${formatMs(cs)} against ${formatMs(bs)}`;
  }
  return undefined;
}

/** Round trips of slow start (the window doubling each round) to send `segments` from `window`. */
function slowStartRounds(window: number, segments: number): number {
  let sent = 0;
  let rounds = 0;
  for (let cwnd = Math.max(1, window); sent < segments; cwnd *= 2) {
    sent += cwnd;
    rounds++;
  }
  return rounds;
}

/**
 * Why one connection's initial window costs a burst its round trips, from what the runs recorded:
 * the responses' segments (the workload's size over the server's MSS) against the window they start
 * from, and the first response's end on each side (the cells' medians) — ": the 8 responses' 64
 * segments take 3 round trips of slow start from 10, and h2's first response ended at 812 ms against
 * h1's 641 ms". Empty when the size or the MSS was not recorded.
 */
function slowStartClause(
  result: CompareResult,
  w: Workload,
  net: string,
  level: number,
  p: StrategyName,
  run: RunResult,
  window: number,
): string {
  const mss = run.connections.tcp?.server?.perConnection?.[0]?.mssBytes;
  if (!w.responseSizeBytes || !mss) return '';
  const segments = level * Math.ceil(w.responseSizeBytes / mss);
  const rounds = slowStartRounds(window, segments);
  const first = (q: StrategyName) => cellOf(result, w.id, level, net, q)?.stats?.burstFirstResponseMs?.median;
  const [fp, fb] = [first(p), first(result.baseline)];
  const firsts =
    fp !== undefined && fb !== undefined && fp > fb
      ? `, and ${p}'s first response ended at ${formatMs(fp)} against ${result.baseline}'s ${formatMs(fb)}`
      : '';
  return rounds > 1
    ? `: the ${level} responses' ${segments} segments take ${rounds} round trips of slow start from ${window}${firsts}`
    : firsts;
}

/**
 * "runs too short for the link (11 requests in 500 ms): --duration 7s would tell" when a kept run
 * of these levels was too short for its link (src/compare/run-length.ts), else undefined.
 */
function shortRunsFix(
  result: CompareResult,
  w: Workload,
  net: string,
  levels: readonly number[],
): string | undefined {
  // The shortest run of these levels names it: the one furthest from the minimum.
  const short = levels.flatMap((level) =>
    result.axes.protocols.flatMap((p) =>
      keptOf(cellOf(result, w.id, level, net, p))
        .filter((r) => runShortfall(r) !== undefined)
        .map((r) => ({ p, r, level })),
    ),
  );
  if (short.length === 0) return undefined;
  const { p, r, level } = short.reduce((a, b) => (b.r.counts.ok < a.r.counts.ok ? b : a));
  return `runs too short for the link (${p}: ${runShortfall(r)}): ${durationFix(r, level)} would tell`;
}

/**
 * The failures in a line's cells, in words, or undefined when every request succeeded: cells that
 * failed alike are named together ("h1, h2: every request failed (404 Not Found) for /x").
 */
function failureClause(
  result: CompareResult,
  w: Workload,
  net: string,
  levels: readonly number[],
): string | undefined {
  const by = new Map<string, string[]>();
  for (const p of result.axes.protocols) {
    for (const level of levels) {
      const cell = cellOf(result, w.id, level, net, p);
      const f = cell ? cellFailures(cell) : undefined;
      if (!f) continue;
      const text = `${f.brief}${f.statuses.length > 0 ? ` for ${pathsText(w)}` : ''}`;
      const who = `${p}${levels.length > 1 ? ` at ${levelsText(result, w.id, [level])}` : ''}`;
      by.set(text, [...(by.get(text) ?? []), who]);
    }
  }
  if (by.size === 0) return undefined;
  return [...by].map(([text, who]) => `${[...new Set(who)].join(', ')}: ${text}`).join('; ');
}

/**
 * The strategies the server did not offer at these levels ("h1 not offered by the server"), or
 * undefined: a cell that never ran says so in the answer rather than vanishing from it.
 */
function notOfferedClause(
  result: CompareResult,
  w: Workload,
  net: string,
  levels: readonly number[],
): string | undefined {
  const absent = result.axes.protocols.filter((p) =>
    levels.some((level) => cellOf(result, w.id, level, net, p)?.status === 'not-offered'),
  );
  return absent.length > 0 ? `${absent.join(', ')} not offered by the server` : undefined;
}

/**
 * A level with nothing to compare (the baseline, or every other strategy, not offered or failed): what
 * the strategies that ran measured on their own, from the same medians as the tables, and which side
 * is missing ("h2 38,512 req/s with nothing to compare against (h1 did not run)"; when only the
 * baseline ran, "h1 34,704 req/s with nothing to compare it against" — the clause after it says why).
 */
function aloneText(
  result: CompareResult,
  w: Workload,
  net: string,
  level: number,
  joined: boolean,
): string | undefined {
  const ran = result.axes.protocols
    .map((p) => ({ p, rps: cellOf(result, w.id, level, net, p)?.stats?.rps.median }))
    .filter((x): x is { p: StrategyName; rps: number } => x.rps !== undefined);
  if (ran.length === 0) return undefined;
  // A line joining levels quotes its last level's figures, and says which.
  const at = joined ? ` at ${levelsText(result, w.id, [level])}` : '';
  const list = `${ran.map((x) => `${x.p} ${Math.round(x.rps).toLocaleString('en-US')} req/s`).join(', ')}${at}`;
  if (ran.some((x) => x.p === result.baseline)) return `${list} with nothing to compare it against`;
  return `${list} with nothing to compare against (${result.baseline} did not run)`;
}

/** "0.84× (0.54–0.95)" for one level; "0.52–0.77× (CIs 0.24–1.52)" for several: the intervals' span. */
function effectsText(cmps: readonly Comparison[]): string {
  if (cmps.length === 1) return effectText(cmps[0]!);
  const r = cmps.map((c) => c.interval.ratio);
  const lo = Math.min(...cmps.map((c) => c.interval.lo));
  const hi = Math.max(...cmps.map((c) => c.interval.hi));
  const [a, b] = [formatRatio(Math.min(...r)), formatRatio(Math.max(...r))];
  return `${a === b ? a : `${a.slice(0, -1)}–${b}`} (CIs ${formatRatio(lo).slice(0, -1)}–${formatRatio(hi).slice(0, -1)})`;
}

/**
 * The strategy a line quotes: one that carries its decision at every level of the line — for on and
 * keep the largest effect at the highest level (keep: the least bad), for undecided and no difference
 * the largest observed effect either way. Levels joined on a loose decision may owe it to different
 * strategies with none common to all ("c=8, 64 undecided" with h2 undecided at 8 and h2-pool at 64):
 * then each level quotes its own (`perLevel`, one per level), named with its level.
 */
export function quoteCarriers(
  decision: Decision,
  levels: readonly LevelDecision[],
): { quoted?: StrategyName; perLevel?: Array<StrategyName | undefined> } {
  const sizeAt = (lv: LevelDecision, p: StrategyName) => {
    const c = lv.cmps.find((x) => x.protocol === p);
    if (!c) return Number.NEGATIVE_INFINITY;
    return decision === 'on' || decision === 'keep' ? gain(c) : Math.abs(gain(c));
  };
  const pick = (lv: LevelDecision, among: readonly StrategyName[]) =>
    [...among].sort((x, y) => sizeAt(lv, y) - sizeAt(lv, x))[0];
  const common = levels.reduce<StrategyName[]>(
    (acc, lv) => acc.filter((p) => lv.carriers.includes(p)),
    [...(levels[0]?.carriers ?? [])],
  );
  const last = levels[levels.length - 1];
  if (!last) return {};
  if (common.length > 0 || levels.every((lv) => lv.carriers.length === 0)) {
    const quoted = pick(last, common);
    return quoted === undefined ? {} : { quoted };
  }
  return { perLevel: levels.map((lv) => pick(lv, lv.carriers)) };
}

/** A line: adjacent levels of one decision, the strategies that carry it at every one of them. */
interface LineDraft {
  levels: LevelDecision[];
  carriers: StrategyName[];
}

/**
 * Where a QUIC strategy was decided worse at a level of the line and the verdict's QUIC paragraph
 * names its server's first flight overrunning the link's queue, that cause in one clause with the
 * drops (src/report/quic-drops.ts), at the highest such level; empty otherwise.
 */
function quicLossClauses(
  result: CompareResult,
  w: Workload,
  net: string,
  group: readonly LevelDecision[],
): string {
  return result.axes.protocols
    .filter((p) => findStrategy(p)?.quic)
    .flatMap((p) => {
      const worse = group.filter((g) => g.cmps.some((c) => c.protocol === p && c.outcome === 'worse'));
      for (const g of [...worse].reverse()) {
        const runs = keptOf(cellOf(result, w.id, g.level, net, p));
        const clause = quicFirstFlightClause(runs, p, tcpMssOf(result, w, g.level, net));
        if (clause) return [clause];
      }
      return [];
    })
    .join('; ');
}

/** The kept runs a comparison's candidate made, or 0 when its cell is not found. */
function runsMade(result: CompareResult, c: Comparison): number {
  const cell = cellOf(result, c.workload, c.concurrency, c.net, c.protocol);
  return cell ? Math.max(0, cell.runs.length - cell.warmupRuns) : 0;
}

function lineOf(result: CompareResult, w: Workload, net: string, draft: LineDraft): AnswerLine {
  const group = draft.levels;
  const d = group[0]!.decision;
  const last = group[group.length - 1]!;
  const levels = group.map((g) => g.level);
  const { quoted, perLevel: quotedAt = [] } = d === 'depends' ? {} : quoteCarriers(d, group);
  const perLevel = quotedAt.length > 0;
  const atLevel = group.flatMap((lv, i) => {
    const c = lv.cmps.find((x) => x.protocol === quotedAt[i]);
    return c ? [{ c, level: lv.level }] : [];
  });
  const cmps = perLevel
    ? atLevel.map((x) => x.c)
    : group.flatMap((g) => g.cmps.filter((c) => c.protocol === quoted));
  const effect = perLevel
    ? atLevel
        .map((x) => `${x.c.protocol} ${effectText(x.c)} at ${levelsText(result, w.id, [x.level])}`)
        .join(', ')
    : quoted === undefined || cmps.length === 0
      ? ''
      : `${quoted} ${effectsText(cmps)}`;
  let why: string | undefined;
  if (d === 'undecided') {
    const need = Math.max(0, ...cmps.filter((c) => c.outcome === 'undecided').map((c) => c.runsNeeded ?? 0));
    const short = shortRunsFix(result, w, net, levels);
    const made = result.budget
      ? Math.max(0, ...cmps.map((c) => (c.outcome === 'undecided' ? runsMade(result, c) : 0)))
      : 0;
    // Under --budget the runs were made where it allowed: say how many, then what would tell.
    const spent = made > 0 ? `${made} runs a side under --budget did not tell` : undefined;
    const more = need > 0 ? `about ${need} runs would tell` : 'the runs cannot tell';
    why = short ?? (spent ? `${spent}; ${more}` : more);
  } else if (d === 'depends') {
    why = last.cmps.map((c) => `${c.protocol} ${effectText(c)} ${c.outcome}`).join(', ');
  } else if (quoted && (d === 'on' || d === 'keep')) {
    why = mechanism(result, w, net, last.level, quoted);
  }
  if (d === 'not-compared') why = aloneText(result, w, net, last.level, levels.length > 1);
  // On a lossy link, what its losses cost the quoted strategy (the median run's counts).
  const lossy = quoted ?? group[group.length - 1]!.carriers[0];
  const lost = lossy ? keptOf(cellOf(result, w.id, last.level, net, lossy)) : [];
  const recovery = lost.length > 0 ? lossRecovery(medianRun(lost)) : undefined;
  if (recovery) why = [why, `loss recovery for ${lossy}: ${recovery}`].filter(Boolean).join('; ');
  const quic = quicLossClauses(result, w, net, group);
  if (quic) why = [why, quic].filter(Boolean).join('; ');
  // Every strategy appears: the ones the line does not quote, with their own effect and outcome.
  const others =
    d === 'depends'
      ? ''
      : result.axes.protocols
          .filter((p) => p !== result.baseline && p !== quoted && !quotedAt.includes(p))
          .map((p) => {
            const mine = group.flatMap((g) => g.cmps.filter((c) => c.protocol === p));
            return mine.length === 0 ? '' : `${p} ${effectsText(mine)} ${OUTCOME_WORDS[mine[0]!.outcome]}`;
          })
          .filter(Boolean)
          .join(', ');
  const failures = [notOfferedClause(result, w, net, levels), failureClause(result, w, net, levels)]
    .filter(Boolean)
    .join('; ');
  const tail = [others, why, failures].filter(Boolean).join('; ');
  // Three levels or more on one line are every level between the first and the last.
  const level =
    levels.length >= 3
      ? levelsText(result, w.id, [levels[0]!]).replace(
          /\d+(?=\D*$)/,
          (x) => `${x}–${levels[levels.length - 1]}`,
        )
      : levelsText(result, w.id, levels);
  const named = quotedAt.filter((p): p is StrategyName => p !== undefined);
  const who = [result.baseline, ...(quoted ? [quoted] : perLevel ? named : draft.carriers)];
  const saturated = levels.some((level) =>
    who.some((p) => (cellOf(result, w.id, level, net, p)?.stats?.saturatedRuns ?? 0) > 0),
  );
  const v = `${verb(result, d, quoted)}${saturated ? ' *' : ''}`;
  return {
    workload: w.id,
    net,
    levels,
    decision: d,
    ...(quoted ? { strategy: quoted } : {}),
    comparisons: cmps,
    level,
    verdict: v,
    effect,
    others,
    why: why ?? '',
    failures,
    saturated,
    text: `${level}: ${v}${effect ? ` — ${effect}` : ''}${tail ? `; ${tail}` : ''}`,
  };
}

/**
 * What every strategy did at a level, as a key: its outcome and, for an undecided one, which side of
 * 1 its estimate fell. Levels share a line only when their keys are equal, so one line never joins
 * opposite directions (h2 0.48× at N=2 and 1.33× at N=128 are two lines) nor hides a strategy whose
 * outcome changed between them.
 */
function shapeOf(d: LevelDecision): string {
  return d.cmps
    .map((c) => `${c.protocol}:${c.outcome}:${c.outcome === 'undecided' ? Math.sign(gain(c)) : ''}`)
    .sort()
    .join(',');
}

/** Adjacent levels share a line when their decision and every strategy's outcome and direction agree. */
function drafts(decided: readonly LevelDecision[]): LineDraft[] {
  const out: LineDraft[] = [];
  for (const d of decided) {
    const last = out[out.length - 1];
    const prev = last?.levels[last.levels.length - 1];
    const joinable =
      d.decision !== 'depends' &&
      d.decision !== 'failed' &&
      prev?.decision === d.decision &&
      shapeOf(prev) === shapeOf(d);
    if (last && joinable) last.levels.push(d);
    else out.push({ levels: [d], carriers: d.carriers });
  }
  return out;
}

/** The answer of a comparison: one group per workload, one line per network and run of equal decisions. */
export function buildAnswer(result: CompareResult): Answer {
  const groups: AnswerGroup[] = [];
  const workloads = [...result.axes.workloads].sort(
    (a, b) => GROUP_ORDER.indexOf(clientGroup(a)) - GROUP_ORDER.indexOf(clientGroup(b)),
  );
  // One group per workload: over several networks each line leads with what sets its network apart
  // (a grid of 8 links is 8 lines under one heading, not 8 headings).
  const nets = netParts(result);
  const multi = result.axes.net.length > 1;
  for (const w of workloads) {
    const lines: AnswerLine[] = [];
    for (const net of result.axes.net) {
      const levels = [
        ...new Set(
          result.cells.filter((c) => c.workload === w.id && c.net === net).map((c) => c.concurrency),
        ),
      ].sort((a, b) => a - b);
      if (levels.length === 0) continue;
      const decided = levels.map((l) => decideLevel(result, w, net, l));
      for (const d of drafts(decided)) {
        const l = lineOf(result, w, net, d);
        if (multi) {
          l.level = `${nets.short(net)} ${l.level}`;
          l.text = `${nets.short(net)} ${l.text}`;
        }
        lines.push(l);
      }
    }
    if (lines.length === 0) continue;
    groups.push({
      group: clientGroup(w),
      workload: w.id,
      net: multi ? nets.common : result.axes.net[0]!,
      heading: groupHeading(result, w, nets.common),
      lines,
    });
  }
  const kept = result.runsPerCell - result.warmupRuns;
  const others = result.axes.protocols.filter((p) => p !== result.baseline);
  const title = `Answer: ${others.join(', ')} against ${result.baseline}, 95% intervals, ${kept} kept run${kept === 1 ? '' : 's'} a cell${result.status === 'complete' ? '' : ` (${result.status}: not every cell finished)`}`;
  const saturated = groups.some((g) => g.lines.some((l) => l.saturated));
  return { title, groups, ...(saturated ? { note: SATURATED_NOTE } : {}) };
}

/** A line's strategies in the compact form: each one's estimate and outcome, no intervals. */
function compactEffects(l: AnswerLine): string {
  const quoted =
    l.comparisons.length > 0
      ? `${l.strategy ?? l.comparisons[0]!.protocol} ${spanOf(l.comparisons)} ${OUTCOME_WORDS[l.comparisons[0]!.outcome]}`
      : '';
  const others = l.others.replace(/ \([^)]*\)/g, '');
  return [quoted, others].filter(Boolean).join(', ');
}

/** "0.52×" or "0.52–0.77×": the estimates of a line's comparisons. */
function spanOf(cmps: readonly Comparison[]): string {
  const r = cmps.map((c) => c.interval.ratio);
  const [a, b] = [formatRatio(Math.min(...r)), formatRatio(Math.max(...r))];
  return a === b ? a : `${a.slice(0, -1)}–${b}`;
}

/**
 * The answer as text lines within `width` columns (the title is the caller's): each group's heading
 * and its lines as aligned columns (levels, decision, effect, why), the last column wrapping under
 * the decision. Each group (a workload) takes at most {@link ANSWER_MAX_LINES}: over that, the
 * mechanisms give way (the verdict below has them: keep lines first, then turn-on lines, then the
 * runs that would tell), then the group is printed compactly — the lines joined by network, every
 * strategy's estimate without its interval. Every workload and link keeps its answer on the terminal.
 */
export function answerLines(answer: Answer, width = 80): string[] {
  const all = answer.groups.flatMap((g) => g.lines);
  const wl = Math.max(0, ...all.map((l) => l.level.length));
  const wv = Math.max(0, ...all.map((l) => l.verdict.length));
  const hang = ' '.repeat(2 + wl + 2);
  const row = (l: AnswerLine, why: boolean): string[] => {
    const prefix = `  ${l.level.padEnd(wl)}  ${l.verdict.padEnd(wv)}  `;
    const rest = [l.effect, l.others, why ? l.why : '', l.failures].filter(Boolean).join('; ');
    if (!rest) return [prefix.trimEnd()];
    // The first line after the columns, the rest wrapped under the decision (wrapText keeps a number
    // with its unit; a placeholder word holds the columns' room on the first line).
    const hold = 'x'.repeat(prefix.length - 1);
    const [first, ...more] = wrapText(`${hold} ${rest}`, width, '').split('\n');
    const head = first!.length > hold.length ? `${prefix}${first!.slice(hold.length + 1)}` : prefix.trimEnd();
    return more.length > 0 ? [head, ...wrapText(more.join(' '), width, hang).split('\n')] : [head];
  };
  // The note (what a mark means) is part of the budget: it is never left out while a mark is shown.
  const note = answer.note ? wrapText(answer.note, width, '  ').split('\n') : [];
  const budget = ANSWER_MAX_LINES - note.length;
  const out: string[] = [];
  for (const g of answer.groups) {
    const heading = wrapText(g.heading, width, '').split('\n');
    const dropOrder = [
      ...g.lines.filter((l) => l.decision === 'keep'),
      ...g.lines.filter((l) => l.decision === 'on').reverse(),
      ...g.lines.filter((l) => l.decision === 'undecided'),
    ].filter((l) => l.why);
    const dropped = new Set<AnswerLine>();
    const blockOf = () => [...heading, ...g.lines.flatMap((l) => row(l, !dropped.has(l)))];
    let block = blockOf();
    for (const l of dropOrder) {
      if (block.length <= budget) break;
      dropped.add(l);
      block = blockOf();
    }
    if (block.length > budget) {
      // Compact: a row per line, every strategy's estimate and outcome without its interval.
      block = [
        ...heading,
        ...g.lines.flatMap((l) => row({ ...l, effect: compactEffects(l), others: '' }, false)),
      ];
    }
    if (block.length > budget) {
      // Then the lines of a network on one wrapped row.
      const byNet = new Map<string, AnswerLine[]>();
      for (const l of g.lines) byNet.set(l.net, [...(byNet.get(l.net) ?? []), l]);
      block = [
        ...heading,
        ...[...byNet.values()].flatMap((ls) =>
          wrapText(ls.map((l) => `${l.level} ${l.verdict}: ${compactEffects(l)}`).join('; '), width, '    ')
            .split('\n')
            .map((x, i) => (i === 0 ? `  ${x.trimStart()}` : x)),
        ),
      ];
    }
    if (block.length > budget) {
      const left = block.length - (budget - 1);
      block = [
        ...block.slice(0, budget - 1),
        `  … ${left} more line${left === 1 ? '' : 's'} of this answer in the detail below`,
      ];
    }
    out.push(...block);
  }
  return [...out, ...note];
}

/**
 * The verdict in plain words, built only from the numbers in the result: per workload a headline and
 * paragraphs that carry their numbers, a recommendation per client kind, and the caveats that could
 * distort the numbers. Never a claim the numbers do not show: a difference whose interval includes 1
 * or that is smaller than the minimum effect is said to be "no clear difference".
 */

import { formatBytes, formatMs, minRunsForRankTest } from '../core/index.ts';
import type {
  CellResult,
  CompareResult,
  Comparison,
  Metric,
  RunResult,
  StrategyName,
  Verdict,
  Workload,
} from '../model/index.ts';
import {
  findStrategy,
  type StreamWaitCause,
  strategyLabel,
  streamWaitCause,
  streamWaitWords,
} from '../transport/index.ts';
import { confoundersOf } from './confounders.ts';
import { captureRoundsSentence } from './evidence-graphs.ts';
import { cellFailures, pathsText } from './failures.ts';
import { type HandshakeSide, handshakeSentence } from './handshakes.ts';
import { quicCpuCaveat } from './quic-cpu.ts';
import { quicQueueDropsSentence } from './quic-drops.ts';
import { comparePath, netParts } from './settings.ts';
import { controllerWindowSentence, headOfLineSentence, tcpFactSentences } from './tcp-facts.ts';

/** 1.8234 → "1.82×". */
export function formatRatio(r: number): string {
  if (!Number.isFinite(r)) return '—';
  return `${r >= 10 ? r.toFixed(1) : r.toFixed(2)}×`;
}

/** "1.82× (95% CI 1.70–1.95×)". */
export function formatInterval(c: Pick<Comparison, 'interval'>): string {
  const i = c.interval;
  if (!Number.isFinite(i.ratio)) return '—';
  return `${formatRatio(i.ratio)} (${Math.round(i.confidence * 100)}% CI ${formatRatio(i.lo).slice(0, -1)}–${formatRatio(i.hi)})`;
}

/** 1234.5 → "1,235". */
export function formatRps(n: number): string {
  if (!Number.isFinite(n)) return '—';
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1);
}

const METRIC_WORDS: Record<Metric, { name: string; better: string; worse: string }> = {
  rps: { name: 'throughput', better: 'more requests per second', worse: 'fewer requests per second' },
  latencyP50Ms: { name: 'median latency', better: 'lower median latency', worse: 'higher median latency' },
  latencyP99Ms: { name: 'p99 latency', better: 'lower p99 latency', worse: 'higher p99 latency' },
  burstCompletionMs: {
    name: 'burst completion time',
    better: 'shorter completion time of the burst',
    worse: 'longer completion time of the burst',
  },
};

/** The comparison of strategy `p` against the baseline in one cell group, for metric `m`. */
export function comparisonOf(
  result: CompareResult,
  w: string,
  c: number,
  net: string,
  p: StrategyName,
  m: Metric,
): Comparison | undefined {
  return result.comparisons.find(
    (x) => x.workload === w && x.concurrency === c && x.net === net && x.protocol === p && x.metric === m,
  );
}

export function cellOf(
  result: CompareResult,
  w: string,
  c: number,
  net: string,
  p: StrategyName,
): CellResult | undefined {
  return result.cells.find(
    (x) => x.workload === w && x.concurrency === c && x.net === net && x.protocol === p,
  );
}

/** "h2 1.25× (1.21–1.28)" — the strategy, its ratio and interval, or "no clear difference". */
function ratioPhrase(cmp: Comparison): string {
  const i = cmp.interval;
  const ci = `${formatRatio(i.ratio)} (${formatRatio(i.lo).slice(0, -1)}–${formatRatio(i.hi)})`;
  if (cmp.outcome === 'insufficient') return `${cmp.protocol} ${formatRatio(i.ratio)} (too few runs)`;
  if (cmp.outcome === 'undecided')
    return `${cmp.protocol} ${ci}, undecided${cmp.runsNeeded ? ` (~${cmp.runsNeeded} runs would tell)` : ''}`;
  if (cmp.outcome === 'no-clear-difference') return `${cmp.protocol} ${ci}, no clear difference`;
  return `${cmp.protocol} ${ci}`;
}

/**
 * One sentence per concurrency for a metric: "At c=8: h2 1.25× (1.21–1.28×) and h2-pool 1.36× … of
 * h1's 956 req/s." Concurrency levels where nothing differs are folded into one clause.
 */
function metricSentence(
  result: CompareResult,
  w: string,
  net: string,
  metric: Metric,
  baseValue: (c: number) => string | undefined,
): string | undefined {
  const quiet: number[] = [];
  const clauses: string[] = [];
  const candidates = result.axes.protocols.filter((p) => p !== result.baseline);
  for (const c of result.axes.concurrency) {
    const cmps = candidates
      .map((p) => comparisonOf(result, w, c, net, p, metric))
      .filter((x): x is Comparison => !!x);
    if (cmps.length === 0) continue;
    if (cmps.every((x) => x.outcome === 'no-clear-difference')) {
      quiet.push(c);
      continue;
    }
    const bv = baseValue(c);
    clauses.push(
      `at ${levelText(result, w, c)} ${cmps.map(ratioPhrase).join(', ')}${bv ? ` of ${result.baseline}'s ${bv}` : ''}`,
    );
  }
  if (clauses.length === 0 && quiet.length === 0) return undefined;
  const head =
    metric === 'rps' ? 'Throughput' : METRIC_WORDS[metric].name.replace(/^./, (x) => x.toUpperCase());
  const parts = [...clauses];
  if (quiet.length > 0) parts.push(`no clear difference at ${levelsText(result, w, quiet)}`);
  return `${head} against ${result.baseline} (95% CI): ${parts.join('; ')}.`;
}

/** One part of a request's mean time that moved against the baseline: what, and by how much (ms; < 0 removed). */
interface TimeShift {
  part: 'clientQueue' | 'serverQueue' | 'wire' | 'transfer';
  words: string;
  deltaMs: number;
}

/**
 * The parts of a request's mean time that moved against the baseline by more than 10% of the
 * baseline's total and at least 0.5 ms, largest first; undefined when either cell has no statistics.
 */
export function timeShifts(
  result: CompareResult,
  w: string,
  c: number,
  net: string,
  p: StrategyName,
): TimeShift[] | undefined {
  const base = cellOf(result, w, c, net, result.baseline)?.stats?.breakdownMs;
  const cand = cellOf(result, w, c, net, p)?.stats?.breakdownMs;
  if (!base || !cand) return undefined;
  const threshold = Math.max(0.5, 0.1 * base.total);
  const parts: TimeShift[] = [
    { part: 'clientQueue', words: 'client-side queueing', deltaMs: cand.clientQueue - base.clientQueue },
    {
      part: 'serverQueue',
      words: 'server-side queueing (backend pool)',
      deltaMs: (cand.serverQueue ?? 0) - (base.serverQueue ?? 0),
    },
    { part: 'wire', words: 'time on the wire before the first byte', deltaMs: cand.wire - base.wire },
    { part: 'transfer', words: 'transfer time', deltaMs: cand.transfer - base.transfer },
  ];
  return parts.filter((x) => Math.abs(x.deltaMs) >= threshold);
}

/** Whether the shifts say the queue moved from the client to the server's backend pool. */
export function queueMoved(shifts: readonly TimeShift[]): boolean {
  const d = (k: TimeShift['part']) => shifts.find((s) => s.part === k)?.deltaMs ?? 0;
  return d('clientQueue') < 0 && d('serverQueue') > 0;
}

/** Where the time went, compared with the baseline, in words ({@link timeShifts}). */
function describeTimeShift(
  result: CompareResult,
  w: string,
  c: number,
  net: string,
  p: StrategyName,
): string | undefined {
  const moved = timeShifts(result, w, c, net, p);
  if (!moved || moved.length === 0) return undefined;
  const words = moved.map(
    (m) => `${m.deltaMs < 0 ? 'removed' : 'added'} ${formatMs(Math.abs(m.deltaMs))} of ${m.words}`,
  );
  let text = `${p} ${words.join(' and ')} per request (mean, against ${result.baseline})`;
  if (queueMoved(moved)) {
    const pool = cellOf(result, w, c, net, p)?.stats?.serverPoolSize;
    text += `: the queue moved to the backend pool${pool !== undefined ? ` (${pool} workers)` : ''}`;
  }
  return text;
}

function workloadParagraphs(result: CompareResult, w: Workload): { headline: string; paragraphs: string[] } {
  const paragraphs: string[] = [];
  const wins: string[] = [];
  const losses: string[] = [];
  const undecided: string[] = [];
  const failedTags: string[] = [];
  let quiet = 0;
  const candidates = result.axes.protocols.filter((p) => p !== result.baseline);
  const multiNet = result.axes.net.length > 1;
  for (const net of result.axes.net) {
    const prefix = multiNet ? `On ${net}: ` : '';
    for (const p of result.axes.protocols) {
      const cells = result.cells.filter((c) => c.workload === w.id && c.net === net && c.protocol === p);
      const notOffered = cells.find((c) => c.status === 'not-offered');
      if (notOffered)
        paragraphs.push(
          `${prefix}${p}: ${notOffered.note ?? 'not offered by the server'}; its cells were not run.`,
        );
      const failed = cells.filter((c) => c.status === 'failed');
      for (const c of failed)
        failedTags.push(`${p} at ${levelText(result, w.id, c.concurrency)}${multiNet ? ` (${net})` : ''}`);
      if (notOffered) failedTags.push(`${p}${multiNet ? ` (${net})` : ''} not offered`);
      if (failed.length > 0) {
        paragraphs.push(
          `${prefix}${p} failed at ${levelsText(
            result,
            w.id,
            failed.map((c) => c.concurrency),
          )}: ${failed[0]!.note ?? 'see the cell'}${failureWords(failed[0]!, w)}.`,
        );
      }
    }
    const base = (c: number) => cellOf(result, w.id, c, net, result.baseline)?.stats;
    const burst = w.burst !== undefined;
    // A burst is judged by its completion time alone (how long until the page is complete); its
    // requests per second and percentiles only restate it or the order the client served them in.
    const completion = burst
      ? metricSentence(result, w.id, net, 'burstCompletionMs', (c) => {
          const s = base(c)?.burstCompletionMs;
          return s ? formatMs(s.median) : undefined;
        })
      : undefined;
    if (completion) paragraphs.push(prefix + completion);
    const rps = burst
      ? undefined
      : metricSentence(result, w.id, net, 'rps', (c) => {
          const s = base(c);
          return s ? `${formatRps(s.rps.median)} req/s` : undefined;
        });
    if (rps) paragraphs.push(prefix + rps);
    const p50 = burst
      ? undefined
      : metricSentence(result, w.id, net, 'latencyP50Ms', (c) => {
          const s = base(c);
          return s ? formatMs(s.latencyP50Ms.median) : undefined;
        });
    if (p50) paragraphs.push(prefix + p50);
    const p99 = burst
      ? undefined
      : metricSentence(result, w.id, net, 'latencyP99Ms', (c) => {
          const s = base(c);
          return s ? formatMs(s.latencyP99Ms.median) : undefined;
        });
    if (p99) paragraphs.push(prefix + p99);
    // Where the time went: said once, at the highest concurrency where some part moved.
    for (const c of [...result.axes.concurrency].sort((a, b) => b - a)) {
      const shifts = candidates.map((p) => describeTimeShift(result, w.id, c, net, p)).filter(Boolean);
      if (shifts.length > 0) {
        paragraphs.push(
          `${prefix}Where the time went at ${levelText(result, w.id, c)}: ${shifts.join('; ')}.`,
        );
        break;
      }
    }
    for (const c of result.axes.concurrency) {
      for (const p of candidates) {
        const r = comparisonOf(result, w.id, c, net, p, burst ? 'burstCompletionMs' : 'rps');
        if (!r) continue;
        const tag = `${p} at ${levelText(result, w.id, c)}${multiNet ? ` (${net})` : ''} ${formatRatio(r.interval.ratio)}`;
        if (r.outcome === 'better') wins.push(tag);
        if (r.outcome === 'worse') losses.push(tag);
        if (r.outcome === 'undecided') undecided.push(tag);
        if (r.outcome === 'no-clear-difference') quiet++;
      }
    }
    const bounds = burst ? burstBounds(result, w, net) : undefined;
    if (bounds) paragraphs.push(prefix + bounds);
    const mechanism = mechanismParagraphs(result, w, net, burst ? 'burstCompletionMs' : 'rps');
    for (const m of mechanism) paragraphs.push(prefix + m);
    const flow = flowControlNotes(result, w, net);
    if (flow.length > 0) paragraphs.push(prefix + flow.join(' '));
    const measured = result.cells.filter((x) => x.workload === w.id && x.net === net && x.stats);
    const saturated = measured
      .filter((x) => (x.stats?.saturatedRuns ?? 0) > 0)
      .map((x) => `${x.protocol} at ${levelText(result, x.workload, x.concurrency)}`);
    if (saturated.length > 0) {
      const which =
        saturated.length > 3 ? `${saturated.length} of ${measured.length} cells` : saturated.join(', ');
      paragraphs.push(
        `${prefix}The load client was saturated in runs of ${which}: those throughputs are a floor, the server may do more.`,
      );
    }
    const empty = result.cells.filter(
      (x) =>
        x.workload === w.id &&
        x.net === net &&
        x.runs.slice(x.warmupRuns).some((r) => !r.error && r.counts.ok === 0),
    );
    if (empty.length > 0) {
      paragraphs.push(
        `${prefix}No request completed within some runs of ${empty.map((x) => `${x.protocol} at ${levelText(result, x.workload, x.concurrency)}`).join(', ')}; those runs were left out: a longer --duration would measure them.`,
      );
    }
  }
  let headline: string;
  const compared = result.comparisons.some((c) => c.workload === w.id);
  const measuredProtocols = result.axes.protocols.filter((p) =>
    result.cells.some((c) => c.workload === w.id && c.protocol === p && c.stats),
  );
  if (!compared) {
    const missing = result.axes.protocols.filter((p) => !measuredProtocols.includes(p));
    headline =
      measuredProtocols.length === 0
        ? `${w.label}: nothing could be measured (see below).`
        : `${w.label}: only ${measuredProtocols.join(', ')} could be measured (${missing.join(', ')}: see below), so there is nothing to compare.`;
  } else {
    // Each kind of answer is named for what it is: a failed or not-offered cell is never folded into
    // "no clear difference", and "undecided" (the runs cannot tell) never reads as "no difference".
    const parts: string[] = [];
    const burst = w.burst !== undefined;
    const [more, less, what] = burst
      ? [
          `complete sooner than ${result.baseline}`,
          `complete later than ${result.baseline}`,
          'completion time',
        ]
      : [`more throughput than ${result.baseline}`, `less throughput than ${result.baseline}`, 'throughput'];
    if (wins.length > 0) parts.push(`${more}: ${wins.join(', ')}`);
    if (losses.length > 0) parts.push(`${less}: ${losses.join(', ')}`);
    if (undecided.length > 0) parts.push(`undecided (the runs cannot tell): ${undecided.join(', ')}`);
    if (failedTags.length > 0) parts.push(`failed: ${failedTags.join(', ')}`);
    const decided = wins.length + losses.length + undecided.length;
    if (quiet > 0) {
      parts.push(
        decided === 0
          ? `no clear difference in ${what} between ${measuredProtocols.join(', ')} (within ${minEffectPercent(result)}%) where they could be compared`
          : `elsewhere no clear difference (within ${minEffectPercent(result)}%)`,
      );
    }
    headline =
      parts.length > 0
        ? `${w.label}: ${parts.join('; ')}.`
        : `${w.label}: the runs measured nothing that can be compared (see the cells).`;
  }
  return { headline, paragraphs };
}

/** "; all 3,809 requests failed (404 Not Found ×3,809) for /x": a failed cell's counts, or nothing. */
function failureWords(cell: CellResult, w: Workload): string {
  const f = cellFailures(cell);
  if (!f || f.total === 0) return '';
  return `; ${f.short}${f.statuses.length > 0 ? ` for ${pathsText(w)}` : ''}`;
}

/**
 * What bounds a burst over a link, from first principles and the runs' own numbers: a connection
 * carries one HTTP/1.1 request per round trip, so N requests on k connections need at least ⌈N/k⌉
 * round trips; a multiplexed session sends them all at once and is bounded instead by the link's rate
 * (the bytes received over the bottleneck). Said for the highest burst size, against the measured
 * completion, so the reader sees which bound the time sat on.
 */
function burstBounds(result: CompareResult, w: Workload, net: string): string | undefined {
  const levels = [...new Set(result.cells.filter((c) => c.workload === w.id).map((c) => c.concurrency))].sort(
    (a, b) => b - a,
  );
  for (const n of levels) {
    const parts: string[] = [];
    const sides: HandshakeSide[] = [];
    let rttMs = 0;
    for (const p of result.axes.protocols) {
      const runs = keptOf(cellOf(result, w.id, n, net, p)).filter((r) => r.burst);
      if (runs.length === 0) continue;
      const run = medianRun(runs, (r) => r.burst!.completionMs);
      sides.push({ strategy: p, run });
      const link = run.environment.link;
      if (!link || link.rttMs <= 0) return undefined;
      rttMs = link.rttMs;
      // The table's figure (the cell's median over its kept runs), not one run's.
      const medianMs =
        cellOf(result, w.id, n, net, p)?.stats?.burstCompletionMs?.median ?? run.burst!.completionMs;
      const measured = `median ${formatMs(medianMs)}`;
      const k = run.transport.connections;
      if (run.protocol.negotiated === 'http/1.1') {
        const rounds = Math.ceil(n / Math.max(1, k));
        parts.push(
          `${p}'s ${k} connection${k === 1 ? '' : 's'} carry one request each per round trip, so ${n} requests need at least ${rounds} round trip${rounds === 1 ? '' : 's'}: ${formatMs(rounds * link.rttMs)} of its ${measured}`,
        );
      } else if (link.rateBitsPerSec) {
        const bytes = run.throughput.bytesIn / Math.max(1, run.burst!.bursts);
        const floor = (bytes * 8 * 1000) / link.rateBitsPerSec;
        const rate = `${formatBytes(bytes)} at ${+(link.rateBitsPerSec / 1e6).toPrecision(4)} Mbit/s take at least ${formatMs(floor)} of its ${measured}`;
        // The rate is named as the bound only where it is most of the time; the rest is named by
        // what was measured of it: the losses and retransmissions the kernel and the link counted.
        const recovery = lossRecovery(run);
        const rest = recovery
          ? `the rest includes loss recovery: ${recovery}`
          : 'the rest is handshakes, slow start and the round trips of flow control';
        parts.push(
          floor >= medianMs / 2
            ? `${p} sent all ${n} at once, so the link's rate bounds it instead: ${rate} (${rest})`
            : `${p} sent all ${n} at once; the link's rate is not what bounds it: ${rate}${recovery ? ` — ${rest}` : ''}`,
        );
      }
    }
    if (parts.length > 0) {
      const slow = slowStartRounds(result, w, n, net);
      const setup = handshakeSentence(sides, rttMs);
      return `What bounds a burst of ${n} at ${formatMs(rttMs)} RTT: ${parts.join('; ')}.${slow ? ` ${slow}` : ''}${setup ? ` ${setup}` : ''}`;
    }
  }
  return undefined;
}

/**
 * What a run's losses cost, from the counts the link and the kernel recorded ("the link dropped 41
 * packets and the server retransmitted 57 segments"), or undefined on a link without loss or a run
 * that lost nothing.
 */
export function lossRecovery(run: RunResult): string | undefined {
  if (!(run.environment.link?.loss ?? 0)) return undefined;
  const dropped = run.connections.tcp?.linkDrops?.lossPackets ?? 0;
  const resent =
    (run.connections.tcp?.server?.retransmittedSegments ?? 0) +
    (run.connections.tcp?.client?.retransmittedSegments ?? 0);
  if (dropped === 0 && resent === 0) return undefined;
  return `the link dropped ${dropped} packet${dropped === 1 ? '' : 's'} and the endpoints retransmitted ${resent} segment${resent === 1 ? '' : 's'}`;
}

/** The MSS a run's server (else client) sockets recorded, or 1448 B (MTU 1500, TCP timestamps). */
function mssOf(run: RunResult): number {
  const tcp = run.connections.tcp;
  return tcp?.server?.perConnection[0]?.mssBytes || tcp?.client?.perConnection[0]?.mssBytes || 1448;
}

/**
 * Slow start, from the link's initial window and the runs' own bytes: the first round trip carries
 * k × IW segments over k connections, and each round of slow start doubles a window, so a connection
 * that must deliver S segments needs ⌈log2(S/IW + 1)⌉ round trips of it (RFC 5681 §3.1, RFC 6928's
 * IW10) before any loss. HTTP/1.1 sends one response per connection per round trip, so its S is one
 * response's segments, and a response within the initial window needs one round. Said when the
 * strategies need different numbers of rounds: that is the mechanism by which six HTTP/1.1
 * connections (60 segments in the first round trip) finish a small page before one HTTP/2 session
 * (10). Where the cell has a capture, the rounds its packets show follow (`captureRoundsSentence`);
 * a QUIC connection's rounds are said even where no estimates differ (h3 has none).
 */
function slowStartRounds(result: CompareResult, w: Workload, n: number, net: string): string | undefined {
  const each: Array<{ p: string; k: number; iw: number; segs: number; rounds: number; oneAtATime: boolean }> =
    [];
  for (const p of result.axes.protocols) {
    const runs = keptOf(cellOf(result, w.id, n, net, p)).filter((r) => r.burst);
    if (runs.length === 0) continue;
    const run = medianRun(runs, (r) => r.burst!.completionMs);
    const link = run.environment.link;
    if (!link || run.protocol.negotiated === 'h3') continue;
    const iw = link.initialCwnd ?? 10;
    const k = Math.max(
      1,
      run.burst!.connectionsOpened / Math.max(1, run.burst!.bursts) || run.transport.connections,
    );
    const bytes = run.throughput.bytesIn / Math.max(1, run.burst!.bursts);
    const oneAtATime = run.protocol.negotiated === 'http/1.1';
    const segs = Math.ceil(bytes / (oneAtATime ? n : k) / mssOf(run));
    each.push({ p, k: Math.round(k), iw, segs, rounds: Math.ceil(Math.log2(segs / iw + 1)), oneAtATime });
  }
  // Without estimates that differ, the rounds a capture shows are still said for QUIC, which has no
  // estimate (its initial window is the server's own).
  if (each.length < 2 || new Set(each.map((e) => e.rounds)).size < 2) {
    const quic = captureRoundsSentence(result, w, n, net, new Map(), true);
    return quic ? `Slow start: ${quic[0]!.toLowerCase()}${quic.slice(1)}` : undefined;
  }
  const text = each.map((e) => {
    const first = `${e.p}'s ${e.k === 1 ? 'one connection' : `${e.k} connections`} ${e.k * e.iw} segments (${e.k} × ${e.iw})`;
    if (e.oneAtATime && e.rounds === 1)
      return `${first}, and each carries one response of ${e.segs} segment${e.segs === 1 ? '' : 's'} a round trip, within its initial window, so ${e.rounds} round trip of slow start each`;
    const unit = e.oneAtATime ? 'segments per response' : 'segments per connection';
    return `${first}, and ${e.segs} ${unit} need at least ${e.rounds} round trip${e.rounds === 1 ? '' : 's'} of slow start`;
  });
  const seen = captureRoundsSentence(result, w, n, net, new Map(each.map((e) => [e.p, e.rounds])));
  return `Slow start: the first round trip carries each connection's initial congestion window — ${text.join('; ')}.${seen ? ` ${seen}` : ''}`;
}

/**
 * The run that speaks for several (non-empty): the median by `key` (default the latency p50; the
 * lower middle of an even count), so every number quoted is one a single run saw.
 */
export function medianRun<R extends { latencyMs: { p50: number } }>(
  runs: readonly R[],
  key = (r: R) => r.latencyMs.p50,
): R {
  return [...runs].sort((a, b) => key(a) - key(b))[(runs.length - 1) >> 1]!;
}

/** The kept runs of a cell (after warm-up, without a run error). */
export function keptOf(cell: CellResult | undefined) {
  return cell ? cell.runs.slice(cell.warmupRuns).filter((r) => r.error === undefined) : [];
}

/**
 * The mechanism behind a difference, with its numbers: the kernel's TCP facts of each candidate
 * against the baseline (congestion windows, retransmissions, the link's drops, RTT, receive-window
 * limits — src/report/tcp-facts.ts, which speaks only past its thresholds). Said where the primary
 * metric differed, or else at the highest concurrency that has something to say, so a quiet cell
 * gets no story.
 */
function mechanismParagraphs(result: CompareResult, w: Workload, net: string, metric: Metric): string[] {
  const out: string[] = [];
  const candidates = result.axes.protocols.filter((p) => p !== result.baseline);
  const levels = [...new Set(result.cells.filter((c) => c.workload === w.id).map((c) => c.concurrency))].sort(
    (a, b) => b - a,
  );
  const said: Array<{ c: number; decided: boolean; text: string }> = [];
  for (const c of levels) {
    const base = keptOf(cellOf(result, w.id, c, net, result.baseline));
    if (base.length === 0) continue;
    const parts: string[] = [];
    let decided = false;
    for (const p of candidates) {
      const cand = keptOf(cellOf(result, w.id, c, net, p));
      if (cand.length === 0) continue;
      const cmp = comparisonOf(result, w.id, c, net, p, metric);
      if (cmp && (cmp.outcome === 'better' || cmp.outcome === 'worse')) decided = true;
      parts.push(...tcpFactSentences(base, cand, [result.baseline, p]));
    }
    // HTTP/2 against HTTP/3 under loss: which streams each lost packet held back, for every pair of
    // a multiplexed TCP strategy and a QUIC one measured in this cell (baseline or not).
    const kinds = result.axes.protocols.map((p) => ({ p, s: findStrategy(p) }));
    for (const tcp of kinds.filter((k) => k.s?.multiplexed && !k.s.quic))
      for (const quic of kinds.filter((k) => k.s?.quic)) {
        const t = keptOf(cellOf(result, w.id, c, net, tcp.p));
        const q = keptOf(cellOf(result, w.id, c, net, quic.p));
        const hol = t.length > 0 && q.length > 0 ? headOfLineSentence(t, q, [tcp.p, quic.p]) : undefined;
        if (hol) parts.push(hol);
      }
    // QUIC's sender against TCP's where their congestion controllers differ: each QUIC strategy
    // against the baseline's TCP connections.
    const baseStrategy = findStrategy(result.baseline);
    if (baseStrategy && !baseStrategy.quic)
      for (const quic of kinds.filter((k) => k.s?.quic)) {
        const q = keptOf(cellOf(result, w.id, c, net, quic.p));
        const cw = q.length > 0 ? controllerWindowSentence(base, q, [result.baseline, quic.p]) : undefined;
        if (cw) parts.push(cw);
      }
    if (parts.length > 0)
      said.push({ c, decided, text: `At ${levelText(result, w.id, c)}: ${[...new Set(parts)].join('; ')}.` });
  }
  const decided = said.filter((s) => s.decided);
  for (const s of decided.length > 0 ? decided : said.slice(0, 1))
    out.push(
      `${/QUIC/.test(s.text) ? 'Mechanism (TCP from the kernel, QUIC from its stack and the link)' : 'Mechanism (TCP, from the kernel)'}. ${s.text}`,
    );
  out.push(...quicDropParagraphs(result, w, net, levels));
  // Confounders — what besides the protocol decided a run (flow-control stalls, Nagle): each kind
  // once per strategy, at the highest concurrency where its median run shows it, with its number and
  // what removes it.
  const told = new Set<string>();
  for (const c of levels) {
    for (const p of result.axes.protocols) {
      const runs = keptOf(cellOf(result, w.id, c, net, p));
      if (runs.length === 0) continue;
      const median = medianRun(runs);
      for (const f of confoundersOf(median)) {
        if (told.has(`${p}/${f.kind}`)) continue;
        told.add(`${p}/${f.kind}`);
        out.push(`Confounder, ${p} at ${levelText(result, w.id, c)}: ${f.text}.`);
      }
    }
  }
  return out;
}

/** The MSS a TCP run of a cell recorded (what a QUIC strategy's first flight is set against). */
export function tcpMssOf(result: CompareResult, w: Workload, level: number, net: string): number | undefined {
  const tcpRun = result.axes.protocols
    .filter((x) => !findStrategy(x)?.quic)
    .flatMap((x) => keptOf(cellOf(result, w.id, level, net, x)))
    .find((r) => r.connections.tcp);
  return tcpRun && mssOf(tcpRun);
}

/**
 * For each QUIC strategy behind a link, what the link's queue dropped of its packets and, where the
 * server's qlog was read, the initial window that overran it (src/report/quic-drops.ts): once, at the
 * highest concurrency where its runs have something to say. The TCP MSS is a TCP run's of the cell.
 */
function quicDropParagraphs(
  result: CompareResult,
  w: Workload,
  net: string,
  levels: readonly number[],
): string[] {
  const out: string[] = [];
  for (const p of result.axes.protocols.filter((x) => findStrategy(x)?.quic)) {
    for (const c of levels) {
      const text = quicQueueDropsSentence(
        keptOf(cellOf(result, w.id, c, net, p)),
        p,
        tcpMssOf(result, w, c, net),
      );
      if (!text) continue;
      out.push(
        `Mechanism (QUIC, from the link and the server's stack). At ${levelText(result, w.id, c)}: ${text}.`,
      );
      break;
    }
  }
  return out;
}

/**
 * Whether a cell's strategy speaks HTTP/2: the registry says; for a strategy this process has not
 * registered (a result written with an extension), its runs do — only HTTP/2 runs record windows.
 */
function speaksHttp2(name: string, runs: readonly RunResult[]): boolean {
  return findStrategy(name)?.http2 ?? runs.some((r) => r.transport.window !== undefined);
}

/**
 * What HTTP/2 flow control and stream limits did to a workload: a response larger than the
 * connection window advertised by the client (RFC 9113 §6.9.2: 65,535 bytes unless raised) stalls
 * until WINDOW_UPDATE frames return, so on a real network such a transfer is capped at window/RTT;
 * requests that found the server's SETTINGS_MAX_CONCURRENT_STREAMS reached waited for a stream slot.
 */
function flowControlNotes(result: CompareResult, w: Workload, net: string): string[] {
  const notes: string[] = [];
  const h2cells = result.cells.filter(
    (c) => c.workload === w.id && c.net === net && speaksHttp2(c.protocol, c.runs),
  );
  const runs = h2cells.flatMap((c) => c.runs.slice(c.warmupRuns).map((r) => ({ c, r })));
  // Where the client measured its stalls (h2lab's own HTTP/2 client), the confounder paragraph says
  // what they cost; this estimate from response sizes is for runs that could not measure them.
  const capped = runs.filter(({ r }) => {
    if (r.flowControl) return false;
    const win = r.transport.window?.connectionWindowBytes;
    const per = r.counts.ok > 0 ? r.throughput.bytesIn / r.counts.ok : 0;
    return win !== undefined && per > win;
  });
  if (capped.length > 0) {
    const win = capped[0]!.r.transport.window!;
    notes.push(
      `Each response (${formatBytes(capped[0]!.r.throughput.bytesIn / capped[0]!.r.counts.ok)}) is larger than the HTTP/2 flow-control window the client advertised (${formatBytes(win.connectionWindowBytes)} per connection, ${formatBytes(win.streamWindowBytes)} per stream, preset "${win.preset}"): the sender waits for WINDOW_UPDATE frames, which on loopback costs little but on a real network caps each connection at window/RTT${win.preset === 'node' ? ' (compare --window browser uses what Chromium advertises)' : ''}.`,
    );
  }
  // Which limit bound, by the rule the load engine's warning uses (src/transport/stream-wait.ts):
  // one sentence per cell and cause, with that cell's own numbers (cells of one cause differ in them:
  // at c=8 and c=64 one session held 8 and 64 streams).
  const held = new Map<string, { cause: StreamWaitCause; c: CellResult; r: RunResult }>();
  for (const h of runs) {
    const cause = streamWaitCause(h.r.connections, h.r.transport.quic !== undefined);
    const key = `${cause}|${h.c.id}`;
    if (cause && !held.has(key)) held.set(key, { cause, ...h });
  }
  for (const { cause, c, r } of held.values()) {
    notes.push(
      `${c.protocol} at ${levelText(result, c.workload, c.concurrency)}: requests waited for a stream slot: ${streamWaitWords(cause, r.connections)}.`,
    );
  }
  return notes;
}

/**
 * Picks, for a client kind, the strategy with the most clear wins on the kind's metric and no clear
 * loss; null when no strategy is clearly better than the baseline.
 */
function recommend(
  result: CompareResult,
  client: 'interactive' | 'bulk',
): Verdict['recommendations'][number] {
  // A burst is a page load: both kinds of client are judged on its completion time.
  const metricOf = (w: Workload): Metric =>
    w.burst !== undefined ? 'burstCompletionMs' : client === 'interactive' ? 'latencyP50Ms' : 'rps';
  const kinds = client === 'interactive' ? ['interactive', 'backend'] : ['bulk'];
  let chosen = result.axes.workloads.filter((w) => w.kind !== undefined && kinds.includes(w.kind));
  if (chosen.length === 0) chosen = result.axes.workloads;
  const relevant = result.comparisons.filter((c) => {
    const w = chosen.find((x) => x.id === c.workload);
    return w !== undefined && c.metric === metricOf(w);
  });
  const words = [...new Set(chosen.map((w) => METRIC_WORDS[metricOf(w)].name))].join(' and ');
  const scope = `${words} on ${chosen.map((w) => w.label).join(', ')}`;
  if (relevant.length === 0) {
    return {
      client,
      strategy: null,
      decision: 'not-compared',
      text: `No comparison of ${scope} could be made: fewer than two strategies were measured there.`,
    };
  }
  // Most clear wins first; among equals, the larger effect (geometric mean of the ratios, oriented
  // so that larger is better).
  let best: { p: StrategyName; wins: number; effect: number } | undefined;
  for (const p of result.axes.protocols.filter((x) => x !== result.baseline)) {
    const mine = relevant.filter((c) => c.protocol === p);
    const wins = mine.filter((c) => c.outcome === 'better').length;
    const losses = mine.filter((c) => c.outcome === 'worse').length;
    const logs = mine.map((c) => Math.log(c.interval.ratio) * (c.higherIsBetter ? 1 : -1));
    const effect = logs.reduce((a, b) => a + b, 0) / Math.max(1, logs.length);
    if (
      wins > 0 &&
      losses === 0 &&
      (!best || wins > best.wins || (wins === best.wins && effect > best.effect))
    ) {
      best = { p, wins, effect };
    }
  }
  const who =
    client === 'interactive' ? 'Interactive clients (latency matters)' : 'Bulk clients (throughput matters)';
  if (!best) {
    // No strategy has evidence for it. Say which of three things is true — it depends, the runs cannot
    // tell, or they show no difference that matters — never "keep the baseline" for want of evidence.
    // Each entry names its workload when the list spans several, and its link when there are several.
    const several = new Set(relevant.map((c) => c.workload)).size > 1;
    const label = (id: string) => result.axes.workloads.find((w) => w.id === id)?.label ?? id;
    const tag = (c: Comparison) =>
      `${c.protocol} at ${levelText(result, c.workload, c.concurrency)}${several ? ` on ${label(c.workload)}` : ''}${result.axes.net.length > 1 ? ` (${c.net})` : ''} ${formatRatio(c.interval.ratio)}`;
    const better = relevant.filter((c) => c.outcome === 'better');
    const worse = relevant.filter((c) => c.outcome === 'worse');
    const open = relevant.filter((c) => c.outcome === 'undecided');
    if (better.length > 0) {
      return {
        client,
        strategy: null,
        decision: 'depends',
        text: `${who}: it depends on the cell — better than ${result.baseline} on ${scope} for ${better.map(tag).join(', ')}, worse for ${worse.map(tag).join(', ')}${open.length > 0 ? `, undecided for ${open.map(tag).join(', ')}` : ''}; choose by the conditions that match yours.`,
      };
    }
    if (open.length > 0) {
      // The median estimate decides most of the open cells; the noisiest one is named apart, since
      // a few runs' spread makes its estimate the least reliable.
      const { need, most } = runsToTell(open);
      const lost = worse.length > 0 ? ` (worse than ${result.baseline}: ${worse.map(tag).join(', ')})` : '';
      const more =
        need === undefined
          ? ''
          : `; ${result.budget ? `the --budget ended with them undecided, and about ${need} kept runs per strategy would tell most of them` : `about ${need} kept runs per strategy would tell most of them (--runs ${need + result.warmupRuns})`}${most !== undefined && most > need ? `, the noisiest about ${most}` : ''}`;
      return {
        client,
        strategy: null,
        decision: 'undecided',
        text: `${who}: undecided — the runs cannot tell ${open.map(tag).join(', ')} from ${result.baseline} on ${scope}${lost}${more}.`,
      };
    }
    if (worse.length > 0) {
      return {
        client,
        strategy: result.baseline,
        decision: 'use',
        text: `${who}: use ${strategyLabel(result.baseline)}${alsoText(relevant, tag)}; ${worseText(relevant, worse)} on ${scope} (${worse.map(tag).join(', ')}) and nowhere better.`,
      };
    }
    return {
      client,
      strategy: null,
      decision: 'any',
      text: `${who}: no strategy differed from ${result.baseline} by ${minEffectPercent(result)}% or more on ${scope}: the protocol does not decide it here; any of them will do.`,
    };
  }
  return {
    client,
    strategy: best.p,
    decision: 'use',
    text: `${who}: ${splitByLink(relevant, best.p) ? `it depends on the link — use ${strategyLabel(best.p)} where it was better` : `use ${strategyLabel(best.p)}`}; ${chosenSplit(result, relevant, best.p, scope)}`,
  };
}

/**
 * The strategies as good as the baseline where the others were worse: never worse, and no clearly
 * different ("or h2-pool, no clear difference from it: h2-pool at N=8 0.99×"), or "".
 */
function alsoText(relevant: readonly Comparison[], tag: (c: Comparison) => string): string {
  const by = new Map<StrategyName, Comparison[]>();
  for (const c of relevant) by.set(c.protocol, [...(by.get(c.protocol) ?? []), c]);
  const tied = [...by].filter(([, cs]) => cs.every((c) => c.outcome === 'no-clear-difference'));
  if (tied.length === 0) return '';
  const names = tied.map(([p]) => p).join(' or ');
  return ` or ${names}, no clear difference from it (${tied.flatMap(([, cs]) => cs.map(tag)).join(', ')})`;
}

/** "the others were worse" when every other strategy was, else who was ("h2 was worse"). */
function worseText(relevant: readonly Comparison[], worse: readonly Comparison[]): string {
  const all = new Set(relevant.map((c) => c.protocol));
  const losers = [...new Set(worse.map((c) => c.protocol))];
  if (losers.length === all.size) return 'the others were worse';
  return `${losers.join(' and ')} ${losers.length === 1 ? 'was' : 'were'} worse`;
}

/** Undecided cells' runs that would tell: the median estimate (most of them) and the noisiest. */
function runsToTell(open: Comparison[]): { need: number | undefined; most: number | undefined } {
  const needs = open
    .map((c) => c.runsNeeded ?? 0)
    .filter((n) => n > 0)
    .sort((a, b) => a - b);
  return { need: needs[Math.floor((needs.length - 1) / 2)], most: needs[needs.length - 1] };
}

/**
 * The recommended strategy's record over every cell it was compared in, and where it held: every
 * cell counts — better, worse (none, or it would not be recommended), no clear difference, undecided
 * (with the runs that would tell), failed or not offered — and when the cells span several links and
 * it won on some only, "it depends on the link" with the split. The other strategies' decided losses
 * are named too, so "use h2" is never printed beside an h2-pool that was worse unsaid.
 */
function chosenSplit(result: CompareResult, relevant: Comparison[], p: StrategyName, scope: string): string {
  const several = new Set(relevant.map((c) => c.workload)).size > 1;
  const label = (id: string) => result.axes.workloads.find((w) => w.id === id)?.label ?? id;
  const tag = (c: Comparison) =>
    `${levelText(result, c.workload, c.concurrency)}${several ? ` on ${label(c.workload)}` : ''}${result.axes.net.length > 1 ? ` (${c.net})` : ''}`;
  const mine = relevant.filter((c) => c.protocol === p);
  const short = netParts(result).short;
  const shortTag = (c: Comparison) =>
    `${result.axes.net.length > 1 ? `${short(c.net)} ` : ''}${levelText(result, c.workload, c.concurrency)}${several ? ` on ${label(c.workload)}` : ''}`;
  const by = (o: Comparison['outcome']) => mine.filter((c) => c.outcome === o);
  const better = by('better');
  const open = [...by('undecided'), ...by('insufficient')];
  const same = by('no-clear-difference');
  const workloads = new Set(relevant.map((c) => c.workload));
  const failed = result.cells.filter(
    (c) => c.protocol === p && workloads.has(c.workload) && c.status !== 'done',
  );
  const total = mine.length + failed.length;
  const parts = [`clearly better than ${result.baseline} on ${scope} in ${better.length} of ${total} cells`];
  parts.push('worse in none');
  if (same.length > 0) parts.push(`no clear difference in ${same.length}`);
  if (open.length > 0) {
    const { need } = runsToTell(open);
    parts.push(
      `undecided in ${open.length} (${open.map(shortTag).join(', ')}${need !== undefined ? `; about ${need} kept runs per strategy would tell most` : ''})`,
    );
  }
  if (failed.length > 0)
    parts.push(
      `${failed.length} failed or not offered (${failed.map((c) => c.status).join(', ')}), not counted as either`,
    );
  let text = `${parts.join(', ')}.`;
  if (splitByLink(relevant, p)) text += ` By link: ${linkSplit(result, mine)}.`;
  const othersWorse = relevant.filter((c) => c.protocol !== p && c.outcome === 'worse');
  if (othersWorse.length > 0) {
    text += ` Worse than ${result.baseline}: ${othersWorse.map((c) => `${c.protocol} at ${tag(c)} ${formatRatio(c.interval.ratio)}`).join(', ')}.`;
  }
  // Every other strategy's cells, counted the same way: a grid's undecided cells are part of the answer.
  const others = [...new Set(relevant.map((c) => c.protocol))].filter((q) => q !== p);
  const split = others.map((q) => {
    const theirs = relevant.filter((c) => c.protocol === q);
    const n = (o: Comparison['outcome']) => theirs.filter((c) => c.outcome === o);
    const bits = [`better in ${n('better').length} of ${theirs.length}`];
    if (n('worse').length > 0) bits.push(`worse in ${n('worse').length}`);
    if (n('no-clear-difference').length > 0)
      bits.push(`no clear difference in ${n('no-clear-difference').length}`);
    const open = [...n('undecided'), ...n('insufficient')];
    if (open.length > 0) bits.push(`undecided in ${open.length} (${open.map(shortTag).join(', ')})`);
    return `${q} ${bits.join(', ')}`;
  });
  if (split.length > 0) text += ` The others: ${split.join('; ')}.`;
  return text;
}

/** An outcome in words, as the answer and the tables name it. */
export const OUTCOME_WORDS: Record<Comparison['outcome'], string> = {
  better: 'better',
  worse: 'worse',
  'no-clear-difference': 'no clear difference',
  undecided: 'undecided',
  insufficient: 'too few runs',
};

/** True when `p`'s cells span several links and it was shown better on some of them only. */
function splitByLink(relevant: readonly Comparison[], p: StrategyName): boolean {
  const mine = relevant.filter((c) => c.protocol === p);
  const nets = new Set(mine.map((c) => c.net));
  const wonOn = new Set(mine.filter((c) => c.outcome === 'better').map((c) => c.net));
  return nets.size > 1 && wonOn.size < nets.size;
}

/**
 * Which way a strategy went on each link, each link by its own label: "over rtt200ms+10mbit+cubic
 * better (N=64 0.52×); over rtt200ms+loss2%+10mbit+cubic undecided (N=64 1.03×)".
 */
function linkSplit(result: CompareResult, mine: readonly Comparison[]): string {
  const order: Comparison['outcome'][] = [
    'better',
    'worse',
    'no-clear-difference',
    'undecided',
    'insufficient',
  ];
  return [...new Set(mine.map((c) => c.net))]
    .map((net) => {
      const here = mine.filter((c) => c.net === net);
      const ways = order
        .map((o) => {
          const cs = here.filter((c) => c.outcome === o);
          if (cs.length === 0) return '';
          const at = cs.map(
            (c) => `${levelText(result, c.workload, c.concurrency)} ${formatRatio(c.interval.ratio)}`,
          );
          return `${OUTCOME_WORDS[o]} (${at.join(', ')})`;
        })
        .filter(Boolean);
      return `over ${net} ${ways.join(', ')}`;
    })
    .join('; ');
}

/** Why a budget's extra runs ended, before the cells they left undecided. */
const STOPPED_BY: Record<NonNullable<CompareResult['budget']>['stoppedBy'], string> = {
  decided: 'ended',
  'runs-too-short': 'no runs spent on runs too short for their link (more of them would not tell)',
  budget: 'budget spent',
  'max-runs': 'runs cap (# a cell) reached',
  interrupted: 'stopped',
};

/**
 * `--budget`: what the extra runs were, the corrected alpha every look was held to, and whether the
 * budget ended with cells still undecided.
 */
function budgetCaveat(result: CompareResult): string | undefined {
  const b = result.budget;
  if (!b) return undefined;
  const cellTag = (id: string) => {
    const c = result.cells.find((x) => x.id === id);
    return c ? `${c.protocol} at ${levelText(result, c.workload, c.concurrency)}` : id;
  };
  const extra = Object.entries(b.extraRuns);
  const made =
    extra.length === 0
      ? 'no extra runs were made'
      : `extra runs: ${extra.map(([id, n]) => `${cellTag(id)} ${n} extra run${n === 1 ? '' : 's'}`).join(', ')}`;
  const nominal = 1 - b.nominalConfidence;
  const end =
    b.undecided.length === 0
      ? `every cell decided after ${formatMs(b.spentMs)} of it`
      : `${STOPPED_BY[b.stoppedBy].replace('#', String(b.maxRuns))} with ${b.undecided.map(cellTag).join(', ')} still undecided`;
  return `--budget ${b.ms / 1000}s: after the planned runs, the undecided cells and their baseline ran again in interleaved rounds, each stopping once decided (${made}); judging after every round is a sequential test, so every look, the planned one included, was held to alpha ${nominal.toFixed(2)} / ${b.looks} looks = ${b.alpha.toPrecision(2)} (Bonferroni over the most looks the budget allowed); ${end}.`;
}

function caveats(result: CompareResult): string[] {
  const out: string[] = [];
  if (result.axes.net.every((n) => n === 'loopback')) {
    const path = comparePath(result);
    out.push(
      path && path.placement !== 'loopback'
        ? `Measured over the real path to the target (base RTT ${formatMs(path.baseRttMs)}) without an emulated link: its delay, loss and rate are whatever they were during the runs. To ask what your users at a given distance would see, add e.g. --rtt 100ms or --net wan,mobile-4g (the link is added on top of this path).`
        : 'Measured over loopback: no network delay, loss or bandwidth limit. HTTP/2 multiplexing and connection counts matter more on a real network (add e.g. --net loopback,wan,mobile-4g to compare over emulated links).',
    );
  }
  const kept = result.runsPerCell - result.warmupRuns;
  const confidence = Number(result.options.confidence ?? 0.95);
  const floor = minRunsForRankTest(1 - confidence);
  const widths = result.comparisons
    .filter((c) => Number.isFinite(c.interval.lo) && Number.isFinite(c.interval.hi))
    .map((c) => ({ c, w: Math.log(c.interval.hi / c.interval.lo) }));
  const widest = widths.sort((a, b) => b.w - a.w)[0]?.c;
  const alpha = 1 - confidence;
  const rule = `a difference is called only when it is at least ${minEffectPercent(result)}%, the rank test agrees (p < ${alpha >= 0.01 ? alpha.toFixed(2) : alpha.toPrecision(2)}) and the bootstrap interval excludes 1 (or every run of one side beats every run of the other); "no clear difference" only when the whole interval lies within ±${minEffectPercent(result)}%; anything else is undecided`;
  out.push(
    kept < floor && !result.budget
      ? `Each cell ran ${result.runsPerCell} times, the first ${result.warmupRuns} discarded: ${kept} runs per strategy, too few for the rank test ever to pass at ${Math.round(confidence * 100)}% (it needs ${floor} a side), so every difference larger than ${minEffectPercent(result)}% is "undecided"; use --runs ${floor + result.warmupRuns} or more.`
      : `Each cell ran ${result.runsPerCell} times${result.budget ? ' as planned (the undecided ones more under --budget, below)' : ''}, the first ${result.warmupRuns} discarded: ${kept} runs per strategy; ${rule}.${widest ? ` The widest interval is ${formatRatio(widest.interval.lo).slice(0, -1)}–${formatRatio(widest.interval.hi)} (${widest.protocol} at ${levelText(result, widest.workload, widest.concurrency)}, ${METRIC_WORDS[widest.metric].name}).` : ''}`,
  );
  const budget = budgetCaveat(result);
  if (budget) out.push(budget);
  const cc = congestionControlCaveat(result);
  if (cc) out.push(cc);
  const quicCpu = quicCpuCaveat(result);
  if (quicCpu) out.push(quicCpu);
  const sharded = shardingCaveat(result);
  if (sharded) out.push(sharded);
  const saturated = result.cells.filter((c) => (c.stats?.saturatedRuns ?? 0) > 0).length;
  if (saturated > 0)
    out.push(`The load client was saturated in ${saturated} cell(s): those throughputs are a floor.`);
  // Run warnings carry their own numbers ("event loop 97% utilised, 0.4 CPU cores"): group those
  // that differ only in numbers, and say how many runs said so.
  const groups = new Map<string, { text: string; runs: number }>();
  for (const c of result.cells) {
    for (const r of c.runs.slice(c.warmupRuns)) {
      for (const w of new Set(r.warnings)) {
        const key = w.replace(/\d+(\.\d+)?/g, '#');
        const g = groups.get(key);
        if (g) g.runs++;
        else groups.set(key, { text: w, runs: 1 });
      }
    }
  }
  for (const g of groups.values())
    out.push(g.runs > 1 ? `${g.text} (said by ${g.runs} runs; this one is the first)` : g.text);
  // What the analysis found of a cell's runs as a whole (runs too short for their link).
  for (const c of result.cells)
    for (const w of c.stats?.warnings ?? []) if (/^\S+ at .*: runs too short to decide/.test(w)) out.push(w);
  const missing = result.cells.filter((c) => c.status === 'interrupted').length;
  if (missing > 0) out.push(`${missing} cell(s) did not finish (the comparison was interrupted).`);
  const cut = result.cells.filter((c) => c.cutOffRuns);
  if (cut.length > 0) {
    const timeout = Number((result.options as { timeoutMs?: number }).timeoutMs ?? 30_000);
    out.push(
      `Runs cut off by the ${formatMs(timeout)} request timeout (a request timed out, so the run's times are the timeout's, not the protocol's) are left out of the statistics and the ratios: ${cut.map((c) => `${c.protocol} at ${levelText(result, c.workload, c.concurrency)}${result.axes.net.length > 1 ? ` (${c.net})` : ''} ${c.cutOffRuns} of ${c.runs.length - c.warmupRuns}`).join(', ')}.`,
    );
  }
  return out;
}

/**
 * A comparison run as shards: what the merge makes exact and what it does not, how far apart the
 * shards started their runs, and a fixed count that multiplied (h2's one session per shard).
 */
function shardingCaveat(result: CompareResult): string | undefined {
  const sh = result.sharding;
  if (!sh) return undefined;
  const fixed = result.axes.protocols.filter((p) => findStrategy(p)?.connections.fixed !== undefined);
  const over = sh.runs.filter((r) => r.skewMs > sh.clock.maxSkewMs).length;
  const start =
    sh.clock.reference === 'coordinator'
      ? `the shards started each run within ${formatMs(sh.clock.worstSkewMs)} of each other on the reference clock${over > 0 ? ` (${over} of ${sh.runs.length} runs more than --max-skew ${formatMs(sh.clock.maxSkewMs)} apart)` : ''}`
      : 'without a reference clock the shards’ start skew is unknown';
  const multiplied =
    fixed.length > 0
      ? ` ${fixed.join(', ')} ran ${fixed.length > 1 ? 'their' : 'its'} fixed connection count once per shard: ${sh.shards} shards, ${sh.shards}× the connections one client would hold.`
      : '';
  let local = '';
  if (sh.local) {
    const host = new URL(result.target.url).hostname;
    const sameMachine = /^(127\.|localhost$|\[::1\]$|::1$)/.test(host);
    const busy = sh.local.processes + (sameMachine ? 1 : 0);
    local = ` The shards were ${sh.local.processes} processes of one machine with ${sh.local.cpus} cores${sameMachine ? ', the target on it too' : ''}: they shared its cores${busy > sh.local.cpus ? `, ${busy} busy processes on ${sh.local.cpus} cores, so each run's figures include their contention (a client that needs more CPU per request, such as h1's, loses most); spread over load machines, or compare without --shards on this one` : ''}.`;
  }
  return `Run as ${sh.shards} shards, each run the exact merge of theirs (counts added, latency histograms added); ${start}.${multiplied}${local}`;
}

/**
 * When QUIC strategies were compared with TCP ones and the congestion controllers differ, says so
 * with each side's: QUIC's runs in the binding (user space), TCP's in the kernel (what `--cc` pins),
 * so a difference under loss or delay may be the controllers', not the protocols'.
 */
export function congestionControlCaveat(result: CompareResult): string | undefined {
  const runs = result.cells.flatMap((c) => c.runs.slice(c.warmupRuns));
  const quic = new Map<string, string>();
  const tcp = new Set<string>();
  const tcpNames = new Set<string>();
  for (const r of runs) {
    const q = r.transport.quic;
    if (q) quic.set(r.transport.name, `${q.congestionControl} (${q.binding}, user space)`);
    else {
      tcpNames.add(r.transport.name);
      const cc = r.environment.link?.congestionControl ?? r.environment.congestionControl;
      if (cc) tcp.add(cc);
    }
  }
  if (quic.size === 0 || tcpNames.size === 0) return undefined;
  const quicCc = new Set([...quic.values()].map((v) => v.split(' ')[0]!));
  if (tcp.size === 1 && quicCc.size === 1 && [...tcp][0] === [...quicCc][0]) return undefined;
  const q = [...quic].map(([n, v]) => `${n}: ${v}`).join('; ');
  return `Congestion control differs between the sides: ${q}; ${[...tcpNames].join(', ')}: TCP ${tcp.size > 0 ? [...tcp].join('/') : 'the host default'} (the kernel's; --cc pins TCP only). A difference between them under delay or loss may be the congestion controllers', not the protocols'.`;
}

/**
 * A recommendation resting on cells where a setting of h2lab's own (one a flag removes, such as the
 * HTTP/2 windows) stalled a run says so, with the flag: the answer may be the setting's, not the
 * protocol's. Confounders that are the server's (Nagle) are in the workload paragraphs.
 */
function withConfounders(
  result: CompareResult,
  r: Verdict['recommendations'][number],
): Verdict['recommendations'][number] {
  if (r.decision === 'not-compared') return r;
  const found = new Map<string, string[]>();
  for (const cell of result.cells) {
    const runs = keptOf(cell);
    if (runs.length === 0) continue;
    const median = medianRun(runs);
    for (const f of confoundersOf(median)) {
      if (!f.flag) continue;
      const where = `${cell.protocol} at ${levelText(result, cell.workload, cell.concurrency)}${result.axes.net.length > 1 ? ` (${cell.net})` : ''}`;
      found.set(f.flag, [
        ...(found.get(f.flag) ?? []),
        `${where} ${f.kind === 'flow-control' ? `stalled ${formatMs(f.magnitudeMs)} on flow control` : f.kind}`,
      ]);
    }
  }
  if (found.size === 0) return r;
  const notes = [...found].map(([flag, where]) => `${where.join(', ')} (rerun with ${flag})`);
  return { ...r, text: `${r.text} Before acting on it: h2lab's own setting held back ${notes.join('; ')}.` };
}

/**
 * A cell's level in words: `c=8` in a closed loop, `500 req/s` in an open loop (`--rate`: the
 * cell's concurrency field holds the rate), `N=64` for a burst of 64.
 */
export function levelText(result: CompareResult, workload: string, level: number): string {
  const w = result.axes.workloads.find((x) => x.id === workload);
  return w?.rateRps ? `${level} req/s` : w?.burst ? `N=${level}` : `c=${level}`;
}

/** Several levels of one workload in words: `c=1, 8`, `200, 500 req/s`, `N=16, 64`. */
export function levelsText(result: CompareResult, workload: string, levels: readonly number[]): string {
  const w = result.axes.workloads.find((x) => x.id === workload);
  return w?.rateRps ? `${levels.join(', ')} req/s` : `${w?.burst ? 'N' : 'c'}=${levels.join(', ')}`;
}

/** The smallest difference called a difference, in percent. */
function minEffectPercent(result: CompareResult): number {
  return Math.round(Number(result.options.minEffect ?? 0.05) * 100);
}

/** Builds the verdict of a comparison from its cells and comparisons. */
export function buildVerdict(result: CompareResult): Verdict {
  return {
    workloads: result.axes.workloads.map((w) => ({ workload: w.id, ...workloadParagraphs(result, w) })),
    recommendations: [recommend(result, 'interactive'), recommend(result, 'bulk')].map((r) =>
      withConfounders(result, r),
    ),
    caveats: caveats(result),
  };
}

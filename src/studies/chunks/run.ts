/**
 * `h2lab study chunks`: the chunked-array storage study (report 001). 64 chunks of 20–50 KiB fetched
 * with 1 to 16 requests in flight by pooled HTTP/1.1 (a connection per request in flight, as the
 * report's client), one HTTP/2 session and a pool of HTTP/2 sessions, over emulated WAN links with and
 * without loss and with the congestion control pinned. The table is the report's (H1, H2, H1/H2 per
 * concurrency) with intervals; the explanation names the congestion windows and the losses measured on
 * each side's connections, and where the answer changes from one link to another.
 */

import {
  type CompareOptionsInput,
  compareSamples,
  keptRuns,
  type SampleComparison,
} from '../../compare/index.ts';
import { medianInterpolated } from '../../core/index.ts';
import type {
  CellResult,
  CompareResult,
  StudyFinding,
  StudyResult,
  StudySection,
} from '../../model/index.ts';
import { type CONGESTION_CONTROLS, checkNetAvailable, NO_LINK, planLinks } from '../../net/index.ts';
import {
  baselineStrategy,
  multiplexedStrategy,
  type Strategy as TransportStrategy,
} from '../../transport/index.ts';
import { quickCaveat } from '../caveats.ts';
import { accounts, direction, NO_EFFECT, noDifference, ratio2 } from '../claims.ts';
import { compareCell } from '../compare-cell.ts';
import { Evidence, evidenceNumber, makeFinding, notMeasured } from '../findings.ts';
import { defineStudy } from '../study.ts';
import { intervalText, outcomeWord, rounded, sideFacts } from '../table.ts';
import { CHUNKS, CHUNKS_STUDY } from './descriptor.ts';

/** The report's concurrency sweep (64 chunks against its tuned production server, medians). */
const REPORT_SWEEP = [
  { concurrency: 1, http1: 4.652, http2: 4.647, ratio: 1.001 },
  { concurrency: 4, http1: 1.367, http2: 1.433, ratio: 0.954 },
  { concurrency: 8, http1: 0.838, http2: 0.97, ratio: 0.863 },
  { concurrency: 16, http1: 0.612, http2: 0.809, ratio: 0.773 },
];

/** The grid: full mode, and the quick one the tests run (under two minutes on two cores). */
const GRID = {
  full: { rttMs: [50], loss: [0, 0.01], cc: ['cubic', 'bbr'], concurrency: [1, 4, 8, 16], runs: 7 },
  quick: { rttMs: [20], loss: [0, 0.01], cc: ['cubic'], concurrency: [4, 16], runs: 3 },
} as const;

interface ChunksOptions {
  rttMs: number[];
  loss: number[];
  cc: string[];
  bandwidth?: number[];
  concurrency: number[];
  runs: number;
  h2Sessions: number;
  loopback: boolean;
}

function resolve(o: Partial<ChunksOptions>, quick: boolean): ChunksOptions {
  const g = quick ? GRID.quick : GRID.full;
  return {
    rttMs: o.rttMs ?? [...g.rttMs],
    loss: o.loss ?? [...g.loss],
    cc: o.cc ?? [...g.cc],
    ...(o.bandwidth ? { bandwidth: o.bandwidth } : {}),
    concurrency: o.concurrency ?? [...g.concurrency],
    runs: o.runs ?? g.runs,
    h2Sessions: o.h2Sessions ?? 4,
    loopback: o.loopback ?? false,
  };
}

/** One link of the grid, as the explanation reads it: its name in compare's `net` axis and its settings. */
interface LinkCase {
  id: string;
  rttMs?: number;
  loss?: number;
  cc?: string;
  bandwidth?: number;
}

/**
 * The grid's links, planned as `h2lab compare --rtt … --loss … --cc … --bandwidth …` plans them
 * (src/net/axes.ts): the same names, seed and link settings. Each comes with the `net`/`links` that
 * plan it alone, so every link is its own comparison (its own cell) and compare names it the same.
 */
function linkCases(o: ChunksOptions, seed: number): Array<{ link: LinkCase; input: CompareOptionsInput }> {
  if (o.loopback) return [{ link: { id: 'loopback' }, input: {} }];
  const axes = {
    rttMs: o.rttMs,
    loss: o.loss,
    congestionControl: o.cc as Array<(typeof CONGESTION_CONTROLS)[number]>,
    ...(o.bandwidth ? { rateBitsPerSec: o.bandwidth } : {}),
  };
  return planLinks([NO_LINK], axes, seed).map((p) => {
    const l = p.alone.links;
    const bandwidth = l.rateBitsPerSec?.[0];
    return {
      link: {
        id: p.name,
        ...(l.rttMs ? { rttMs: l.rttMs[0] } : {}),
        loss: l.loss?.[0] ?? 0,
        ...(l.congestionControl ? { cc: l.congestionControl[0] } : {}),
        ...(bandwidth !== undefined ? { bandwidth } : {}),
      },
      input: p.alone,
    };
  });
}

/** What one strategy's kept runs of one concurrency show. */
interface Side {
  runs: number;
  seconds?: number;
  connections?: number;
  /** Σ of the server's congestion windows (the download direction), segments, median over runs. */
  cwndSum?: number;
  /** Median server-side congestion window of one connection, segments. */
  cwndPerConnection?: number;
  /** Body bytes a run received, the segment size, the link's initial window and RTT (slow start). */
  bytesIn?: number;
  mssBytes?: number;
  initialCwnd?: number;
  linkRttMs?: number;
  /** Packets the link dropped on the run's connections (both directions), median over runs. */
  drops?: number;
  retransmits?: number;
}

function sideOf(cell: CellResult | undefined): Side {
  return {
    runs: cell ? keptRuns(cell).length : 0,
    ...sideFacts(cell, [
      'seconds',
      'connections',
      'cwndSum',
      'cwndPerConnection',
      'drops',
      'retransmits',
      'bytesIn',
      'mssBytes',
      'initialCwnd',
      'linkRttMs',
    ]),
  };
}

interface Row {
  concurrency: number;
  h1: Side;
  h2: Side;
  pool: Side;
  /**
   * h2 against h1 on the time to fetch the 64 chunks: its ratio is median H1 time / median H2 time,
   * the table's two columns (above 1: HTTP/2 faster; `better` is HTTP/2's).
   */
  h2VsH1?: SampleComparison;
  poolVsH1?: SampleComparison;
}

/** The three strategies of the report, by role: the HTTP/1.1 pool, one HTTP/2 session, a pool of them. */
function strategies(): { h1: TransportStrategy; h2: TransportStrategy; pool: TransportStrategy } {
  const h2 = multiplexedStrategy('one');
  const pool = multiplexedStrategy('pool');
  if (!h2 || !pool) throw new Error('the registry has no single-session or pooled HTTP/2 strategy');
  return { h1: baselineStrategy(), h2, pool };
}

/**
 * The times of a strategy's kept runs against HTTP/1.1's, as H1 time / candidate time. Compared on
 * time, not on compare's throughput: the table shows medians of time, and with an even number of
 * kept runs the median of throughputs is not 64 over the median of times (a 0.37 s against 1.24 s
 * row read "H1/H2 0.66" before).
 */
function timeComparison(
  result: CompareResult,
  id: string,
  h1: CellResult | undefined,
  other: CellResult | undefined,
): SampleComparison | undefined {
  if (!h1 || !other) return undefined;
  const t = (c: CellResult) => keptRuns(c).map((r) => r.durationMs);
  const h1Times = t(h1);
  const otherTimes = t(other);
  if (h1Times.length === 0 || otherTimes.length === 0) return undefined;
  return compareSamples(id, h1Times, otherTimes, true, {
    minEffect: Number(result.options.minEffect ?? 0.05),
    confidence: Number(result.options.confidence ?? 0.95),
  });
}

function rowsOf(result: CompareResult, net: string, concurrencies: number[]): Row[] {
  const s = strategies();
  const cell = (c: number, p: string) =>
    result.cells.find((x) => x.net === net && x.concurrency === c && x.protocol === p);
  return concurrencies.map((c) => {
    const h1 = cell(c, s.h1.name);
    const h2 = timeComparison(result, `${net}/c${c}/${s.h2.name}/time`, h1, cell(c, s.h2.name));
    const pool = timeComparison(result, `${net}/c${c}/${s.pool.name}/time`, h1, cell(c, s.pool.name));
    return {
      concurrency: c,
      h1: sideOf(h1),
      h2: sideOf(cell(c, s.h2.name)),
      pool: sideOf(cell(c, s.pool.name)),
      ...(h2 ? { h2VsH1: h2 } : {}),
      ...(pool ? { poolVsH1: pool } : {}),
    };
  });
}

const round3 = (x: number | undefined) => rounded(x, 3);

function linkSection(link: LinkCase, rows: Row[], h2Sessions: number): StudySection {
  return {
    id: `sweep-${link.id}`,
    title: `64 chunks, time to fetch all, ${link.id === 'loopback' ? 'loopback (no link)' : `link ${link.id}`}`,
    note: `Median over the kept runs of the time from the first request to the last chunk. H1/H2 is HTTP/1.1's time over HTTP/2's (below 1: HTTP/1.1 faster), with its 95% bootstrap interval. The pool is ${h2Sessions} HTTP/2 sessions. Congestion windows are the server's (it sends the chunks), read at the end of each run; drops are what the link dropped on the run's connections.`,
    table: {
      columns: [
        { key: 'c', label: 'concurrency' },
        { key: 'http1', label: 'HTTP/1.1', unit: 's' },
        { key: 'http2', label: 'HTTP/2', unit: 's' },
        { key: 'ratio', label: 'H1/H2 (95% CI)' },
        { key: 'pool', label: 'h2 pool', unit: 's' },
        { key: 'poolRatio', label: 'H1/pool (95% CI)' },
        { key: 'h1cwnd', label: 'h1 Σcwnd', unit: 'seg' },
        { key: 'h2cwnd', label: 'h2 cwnd', unit: 'seg' },
        { key: 'h1drops', label: 'h1 drops' },
        { key: 'h2drops', label: 'h2 drops' },
        { key: 'outcome', label: 'h2 vs h1' },
      ],
      rows: rows.map((r) => ({
        c: r.concurrency,
        http1: round3(r.h1.seconds),
        http2: round3(r.h2.seconds),
        ratio: intervalText(r.h2VsH1?.interval),
        pool: round3(r.pool.seconds),
        poolRatio: intervalText(r.poolVsH1?.interval),
        h1cwnd: r.h1.cwndSum ?? null,
        h2cwnd: r.h2.cwndSum ?? null,
        h1drops: r.h1.drops ?? null,
        h2drops: r.h2.drops ?? null,
        outcome: r.h2VsH1 ? outcomeWords(r.h2VsH1) : null,
      })),
    },
  };
}

const outcomeWords = (c: SampleComparison): string =>
  outcomeWord(c, { better: 'h2 faster', worse: 'h1 faster', runsNeeded: true })!;

const fmtS = (s: number | undefined) => (s === undefined ? '?' : `${s.toFixed(3)} s`);
/** How much faster the faster side was, from the time ratio slower/faster… as words: "31% less time", "8.4× as fast". */
function faster(timeRatio: number): string {
  const r = timeRatio < 1 ? timeRatio : 1 / timeRatio;
  return r <= 0.5 ? `${(1 / r).toFixed(1)}× as fast as` : `in ${Math.round((1 - r) * 100)}% less time than`;
}

/** The explanation of one link, from its rows: who won where, and the mechanism's numbers. */
function explainLink(link: LinkCase, rows: Row[], lossless?: Row[]): string {
  const top = rows.at(-1)!;
  const serial = rows[0]!;
  const parts: string[] = [];
  const where = link.id === 'loopback' ? 'On loopback' : `On ${link.id}`;
  const c = top.h2VsH1;
  if (!c || top.h1.seconds === undefined || top.h2.seconds === undefined) {
    return `${where} the comparison at concurrency ${top.concurrency} did not finish, so it says nothing.`;
  }
  const r = c.interval.ratio;
  const ci = `H1/H2 ${r.toFixed(2)}, 95% CI ${c.interval.lo.toFixed(2)}–${c.interval.hi.toFixed(2)}`;
  if (c.outcome === 'worse')
    parts.push(
      `${where}, pooled HTTP/1.1 fetched the 64 chunks ${faster(r)} one HTTP/2 session at concurrency ${top.concurrency} (${fmtS(top.h1.seconds)} against ${fmtS(top.h2.seconds)}; ${ci}).`,
    );
  else if (c.outcome === 'better')
    parts.push(
      `${where}, one HTTP/2 session fetched the 64 chunks ${faster(r)} pooled HTTP/1.1 at concurrency ${top.concurrency} (${fmtS(top.h2.seconds)} against ${fmtS(top.h1.seconds)}; ${ci}).`,
    );
  else if (c.outcome === 'no-clear-difference')
    parts.push(
      `${where}, HTTP/1.1 and HTTP/2 took the same time at concurrency ${top.concurrency} (${fmtS(top.h1.seconds)} against ${fmtS(top.h2.seconds)}; ${ci}).`,
    );
  else
    parts.push(
      `${where}, the runs cannot tell HTTP/1.1 from HTTP/2 at concurrency ${top.concurrency} (${fmtS(top.h1.seconds)} against ${fmtS(top.h2.seconds)}; ${ci}); about ${c.runsNeeded ?? 'more'} runs a side would.`,
    );
  const h1c = top.h1.connections;
  if (top.h1.cwndSum !== undefined && top.h2.cwndSum !== undefined) {
    parts.push(
      `The server sent on ${h1c ?? top.concurrency} HTTP/1.1 connections whose congestion windows summed to ${Math.round(top.h1.cwndSum)} segments at the end of a run, against ${Math.round(top.h2.cwndSum)} on HTTP/2's single connection${top.h2.cwndSum > 0 ? ` (${(top.h1.cwndSum / top.h2.cwndSum).toFixed(1)}×)` : ''}: that is how much each side could have in flight per round trip.`,
    );
  }
  if (top.h2.drops !== undefined && top.h1.drops !== undefined && (top.h2.drops > 0 || top.h1.drops > 0)) {
    const perH1 = h1c ? top.h1.drops / h1c : undefined;
    parts.push(
      `The link dropped ${top.h2.drops} packets a run on the HTTP/2 connection, each one holding up all ${top.concurrency} streams behind it until the retransmission arrived (head-of-line blocking in TCP), against ${top.h1.drops} spread over the HTTP/1.1 connections${perH1 !== undefined ? ` (${perH1.toFixed(1)} each)` : ''}, each of which stalled only its own request.`,
    );
    // Whether the losses cut the windows: the same concurrency on the lossless link of the same
    // congestion control is the yardstick.
    const base = lossless?.find((r) => r.concurrency === top.concurrency);
    const before = base?.h2.cwndSum;
    const now = top.h2.cwndSum;
    if (before !== undefined && now !== undefined && before > 0) {
      parts.push(
        now < 0.5 * before
          ? `The losses cut HTTP/2's one window from ${Math.round(before)} segments without loss to ${Math.round(now)} (${link.cc ?? 'the algorithm'} backs off on every loss), while HTTP/1.1's ${h1c ?? top.concurrency} windows still summed to ${Math.round(top.h1.cwndSum ?? 0)}: one backed-off window carries every stream.`
          : `HTTP/2's window held under the losses (${Math.round(before)} segments without loss, ${Math.round(now)} here): ${link.cc ?? 'the algorithm'} did not back off for random loss, so what remains against HTTP/2 is the stall of every stream behind each lost packet.`,
      );
    }
  } else if (link.loss === 0 || link.id === 'loopback') {
    parts.push('Nothing was dropped, so head-of-line blocking after a loss played no part here.');
  }
  if (serial.concurrency === 1 && serial.h2VsH1) {
    parts.push(
      `With one request at a time both protocols are the same round trips (H1/H2 ${serial.h2VsH1.interval.ratio.toFixed(2)} at concurrency 1).`,
    );
  }
  if (top.poolVsH1 && top.pool.seconds !== undefined) {
    const pr = top.poolVsH1.interval.ratio;
    parts.push(
      `The pool of HTTP/2 sessions took ${fmtS(top.pool.seconds)} (H1/pool ${pr.toFixed(2)}): ${pr < 1 ? 'still behind HTTP/1.1' : pr > 1 ? 'ahead of HTTP/1.1' : 'level with HTTP/1.1'}${top.pool.cwndSum !== undefined ? `, with ${Math.round(top.pool.cwndSum)} segments of window over its connections` : ''}.`,
    );
  }
  return parts.join(' ');
}

/** Where the answer changes between links (loss on/off, one congestion control or the other). */
function explainChanges(perLink: Array<{ link: LinkCase; rows: Row[] }>): string | undefined {
  const verdicts = perLink
    .map(({ link, rows }) => ({ link, c: rows.at(-1)?.h2VsH1 }))
    .filter((x): x is { link: LinkCase; c: SampleComparison } => x.c !== undefined);
  if (verdicts.length < 2) return undefined;
  const words = new Set(verdicts.map((v) => v.c.outcome));
  const list = verdicts
    .map((v) => `${v.link.id}: ${v.c.interval.ratio.toFixed(2)} (${outcomeWords(v.c)})`)
    .join('; ');
  const parts = [`H1/H2 at the highest concurrency, link by link — ${list}.`];
  const lossless = verdicts.filter((v) => (v.link.loss ?? 0) === 0);
  const lossy = verdicts.filter((v) => (v.link.loss ?? 0) > 0);
  if (lossless.length > 0 && lossy.length > 0) {
    const a = medianInterpolated(lossless.map((v) => v.c.interval.ratio));
    const b = medianInterpolated(lossy.map((v) => v.c.interval.ratio));
    const moved = Math.abs(b - a) / a;
    parts.push(
      moved < 0.05
        ? `Loss hardly moved the ratio (${a.toFixed(2)} without, ${b.toFixed(2)} with).`
        : `Loss moved the ratio from ${a.toFixed(2)} to ${b.toFixed(2)}: ${b < a ? 'each loss costs the single connection more than one of many' : 'the single connection held up better under loss than the pool of connections'}.`,
    );
  }
  const ccs = [...new Set(verdicts.map((v) => v.link.cc).filter(Boolean))] as string[];
  if (ccs.length > 1) {
    const byCc = ccs.map(
      (cc) =>
        `${cc} ${medianInterpolated(verdicts.filter((v) => v.link.cc === cc).map((v) => v.c.interval.ratio)).toFixed(2)}`,
    );
    parts.push(`By congestion control (median H1/H2 over its links): ${byCc.join(', ')}.`);
  }
  if (words.size === 1) {
    const only = [...words][0]!;
    parts.push(
      only === 'undecided' || only === 'insufficient'
        ? 'No link gave a confirmed answer with these runs: read the ratios as directions, not results.'
        : `Every link gave the same answer: ${outcomeWords(verdicts[0]!.c)}.`,
    );
  } else parts.push('The answer depends on the link: see each link above.');
  return parts.join(' ');
}

function referenceSection(
  perLink: Array<{ link: LinkCase; rows: Row[] }>,
  concurrencies: number[],
): StudySection {
  const ratio = (rows: Row[], c: number) => rows.find((r) => r.concurrency === c)?.h2VsH1?.interval.ratio;
  return {
    id: 'summary',
    title: 'H1/H2 per concurrency on every link, beside the report',
    note: 'HTTP/1.1 time over HTTP/2 time for the 64 chunks (below 1: HTTP/1.1 faster). The report measured against its production server over the internet; its RTT, loss and congestion control were not recorded.',
    table: {
      columns: [
        { key: 'c', label: 'concurrency' },
        ...perLink.map(({ link }) => ({ key: link.id, label: link.id })),
      ],
      rows: concurrencies.map((c) => ({
        c,
        // Two decimals, rounded once: the number the link tables and the findings print.
        ...Object.fromEntries(
          perLink.map(({ link, rows }) => {
            const x = ratio(rows, c);
            return [link.id, x === undefined ? null : ratio2(x)];
          }),
        ),
      })),
    },
    reference: {
      source: 'report 001, multi-chunk benchmark (64 chunks of ~20–50 KiB, medians)',
      table: {
        columns: [
          { key: 'c', label: 'concurrency' },
          { key: 'http1', label: 'HTTP/1.1', unit: 's' },
          { key: 'http2', label: 'HTTP/2', unit: 's' },
          { key: 'ratio', label: 'H1/H2' },
        ],
        rows: REPORT_SWEEP.map((r) => ({ c: r.concurrency, http1: r.http1, http2: r.http2, ratio: r.ratio })),
      },
      note: 'Its explanation: N connections have N congestion windows and no shared head-of-line blocking.',
    },
  };
}

// --- row by row against the report ----------------------------------------------------------

/**
 * One finding per row of the report's sweep, answered on the first link without loss (the report
 * recorded no loss; its RTT was its production path's, unrecorded), else the first link.
 */
/**
 * Slow start, where it accounts for HTTP/1.1's lead: every connection starts a run at the link's
 * initial window (Linux restarts an idle connection's window too), the first round trip carries
 * k × IW segments over k connections, and a connection that must deliver S segments needs
 * ⌈log2(S/IW + 1)⌉ round trips of slow start (RFC 5681 §3.1). Said only when HTTP/2's one connection
 * needs more rounds and those extra round trips come within {@link SLOW_START_TOLERANCE} of the
 * measured difference — the arithmetic then accounts for the ratio; otherwise nothing is claimed.
 */
/** How close the slow-start arithmetic must come to the measured difference to account for it. */
const SLOW_START_TOLERANCE = 0.25;

function slowStart(row: Row, ev: Evidence): string | undefined {
  const { h1, h2 } = row;
  const iw = h1.initialCwnd ?? h2.initialCwnd;
  const mss = h1.mssBytes ?? h2.mssBytes;
  const rtt = h1.linkRttMs ?? h2.linkRttMs;
  const k = h1.connections;
  if (!iw || !mss || !rtt || !k || !h1.bytesIn || !h2.bytesIn) return undefined;
  if (h1.seconds === undefined || h2.seconds === undefined || (h1.drops ?? 0) > 0 || (h2.drops ?? 0) > 0)
    return undefined;
  const segs1 = Math.ceil(h1.bytesIn / k / mss);
  const segs2 = Math.ceil(h2.bytesIn / mss);
  const r1 = Math.ceil(Math.log2(segs1 / iw + 1));
  const r2 = Math.ceil(Math.log2(segs2 / iw + 1));
  const extraMs = (r2 - r1) * rtt;
  const gapMs = (h2.seconds - h1.seconds) * 1000;
  if (r2 <= r1 || gapMs <= 0 || !accounts(extraMs, gapMs, { tolerance: SLOW_START_TOLERANCE }))
    return undefined;
  ev.set('slowStartTolerance', SLOW_START_TOLERANCE);
  return `Slow start: HTTP/1.1's ${ev.n('h1Connections', k)} connections start with ${ev.n('h1FirstRound', k * iw)} segments in the first round trip (${ev.n('initialCwnd', iw)} each) and need at least ${ev.n('h1Rounds', r1)} round trips for their ${ev.n('h1SegmentsEach', segs1)} segments each; HTTP/2's one connection starts with ${ev.n('initialCwnd', iw)} and needs at least ${ev.n('h2Rounds', r2)} for ${ev.n('h2Segments', segs2)} — ${ev.n('extraRounds', r2 - r1)} more round trips of ${ev.ms('rttMs', rtt)}, ${ev.ms('extraMs', extraMs)} against the measured ${ev.ms('gapMs', gapMs)}`;
}

function chunksFindings(perLink: Array<{ link: LinkCase; rows: Row[] }>): StudyFinding[] {
  const chosen = perLink.find((x) => (x.link.loss ?? 0) === 0) ?? perLink[0];
  if (!chosen) return [];
  return [...sweepFindings(chosen), ...conclusionFindings(chosen)];
}

/**
 * The report's third reason (its client's CPU in pure-Python h2) and its decision (HTTP/2 for single
 * slices, pooled HTTP/1.1 for bulk), on the same link as the sweep's rows.
 */
function conclusionFindings(chosen: { link: LinkCase; rows: Row[] }): StudyFinding[] {
  const cpu = notMeasured(
    {
      id: 'client-cpu',
      row: 'Third reason: the client’s CPU in pure-Python h2',
      report: 'offered as part of HTTP/2’s deficit, not measured',
      ev: new Evidence(),
    },
    'not measured here, because h2lab’s client is Node’s HTTP/2, not the report’s Python one; each run records its own CPU (client.cpu), which says nothing of the report’s client',
    'this run has no Python client to measure',
  );
  const ev = new Evidence();
  ev.set('link', chosen.link.id);
  const one = chosen.rows.find((r) => r.concurrency === 1)?.h2VsH1;
  const bulk = chosen.rows.at(-1);
  const base = {
    id: 'decision',
    section: 'summary',
    row: 'Decision: HTTP/2 for single slices (one in flight), pooled HTTP/1.1 for bulk',
    report: 'a tie at one in flight, HTTP/1.1 ahead as concurrency grows',
    ev,
  };
  if (!one || !bulk?.h2VsH1 || bulk.concurrency === 1)
    return [
      cpu,
      notMeasured(
        base,
        `not measured: the grid lacks concurrency ${ev.n('needConcurrency', 1)} or a higher one (--concurrency)`,
      ),
    ];
  const tie = noDifference(one.interval);
  const h1Ahead = direction(bulk.h2VsH1.interval) === 'below';
  return [
    cpu,
    makeFinding({
      ...base,
      measured: `H1/H2 ${ev.x('ratioC1', one.interval.ratio)} at one in flight (interval ${ev.x('loC1', one.interval.lo)}–${ev.x('hiC1', one.interval.hi)}), ${ev.x('ratioBulk', bulk.h2VsH1.interval.ratio)} at ${ev.n('bulkConcurrency', bulk.concurrency)} (interval ${ev.x('loBulk', bulk.h2VsH1.interval.lo)}–${ev.x('hiBulk', bulk.h2VsH1.interval.hi)}), ${chosen.link.id}`,
      verdict: tie && h1Ahead ? 'agrees' : 'differs',
      explain: (v) =>
        v === 'agrees'
          ? 'One request at a time costs both protocols the same round trips, so HTTP/2 (one connection, one handshake) loses nothing for single slices; many in flight need HTTP/1.1’s many congestion windows (the sweep’s rows)'
          : undefined,
      unexplained: `the intervals do not show ${tie ? '' : `a tie at one in flight (within ${ev.pct('noEffect', NO_EFFECT)})${h1Ahead ? '' : ' and '}`}${h1Ahead ? '' : 'HTTP/1.1 ahead in bulk'} on this link`,
    }),
  ];
}

function sweepFindings(chosen: { link: LinkCase; rows: Row[] }): StudyFinding[] {
  return REPORT_SWEEP.map((ref) => {
    const ev = new Evidence();
    ev.set('link', chosen.link.id);
    const row = chosen.rows.find((r) => r.concurrency === ref.concurrency);
    const c = row?.h2VsH1;
    const base = {
      id: `sweep-c${ref.concurrency}`,
      section: 'summary',
      row: `${ev.n('concurrency', ref.concurrency)} in flight, ${ev.n('chunks', CHUNKS)} chunks: H1/H2`,
      report: `${ev.x('reportRatio', ref.ratio)} (${ev.s('reportH1S', ref.http1)} against ${ev.s('reportH2S', ref.http2)})`,
      ev,
    };
    if (!row || !c || row.h1.seconds === undefined || row.h2.seconds === undefined)
      return notMeasured(
        base,
        `not measured: concurrency ${ev.n('concurrency', ref.concurrency)} is not in this run's grid (--concurrency)`,
        'no run at this concurrency',
      );
    const r = c.interval.ratio;
    const w1 = row.h1.cwndSum;
    const w2 = row.h2.cwndSum;
    return makeFinding({
      ...base,
      measured: `${ev.x('ratio', r)} (${ev.s('h1S', row.h1.seconds)} against ${ev.s('h2S', row.h2.seconds)}, ${chosen.link.id})`,
      reference: ref.ratio,
      value: r,
      tolerance: 0.1,
      ratio: true,
      explain: () => {
        if (ref.concurrency === 1 && Math.abs(r - 1) <= 0.1)
          return 'With one request at a time both protocols pay the same round trips, as in the report';
        if (r < 0.95 && w1 !== undefined && w2 !== undefined && w1 > 1.5 * w2)
          return `HTTP/1.1's ${ev.n('h1Connections', row.h1.connections ?? ref.concurrency)} connections ended their runs with ${ev.n('h1CwndSegments', w1)} segments of congestion window together against ${ev.n('h2CwndSegments', w2)} on HTTP/2's one connection: more in flight per round trip, the report's own explanation, measured`;
        const slow = slowStart(row, ev);
        if (slow) return slow;
        if (r >= 0.95 && w1 !== undefined && w2 !== undefined)
          return `HTTP/2 kept up: its one connection's window (${ev.n('h2CwndSegments', w2)} segments) against HTTP/1.1's ${ev.n('h1CwndSegments', w1)} over ${ev.n('h1Connections', row.h1.connections ?? ref.concurrency)} connections was enough on this link, unlike the report's path`;
        return undefined;
      },
      unexplained: `the congestion windows (${w1 === undefined ? 'not read' : `${ev.n('h1CwndSegments', w1)} segments over HTTP/1.1's connections`}, ${w2 === undefined ? 'not read' : `${ev.n('h2CwndSegments', w2)} on HTTP/2's`}) do not account for this ratio`,
    });
  });
}

/** The explanation's paragraphs: each link, then where the answer changes between links. */
function explainAll(perLink: Array<{ link: LinkCase; rows: Row[] }>): string[] {
  const out = perLink.map(({ link, rows }) => {
    const lossless = perLink.find(
      (x) =>
        x.link.loss === 0 &&
        x.link.rttMs === link.rttMs &&
        x.link.cc === link.cc &&
        x.link.bandwidth === link.bandwidth,
    );
    return explainLink(link, rows, lossless && lossless.link !== link ? lossless.rows : undefined);
  });
  const changes = explainChanges(perLink);
  return changes ? [...out, changes] : out;
}

/**
 * The chunks findings against the result: a slow-start explanation only where its extra round trips
 * come within {@link SLOW_START_TOLERANCE} of the measured gap, and each ratio the summary's cell.
 */
export function verifyChunks(r: StudyResult): string[] {
  const problems: string[] = [];
  const summary = r.sections.find((s) => s.id === 'summary');
  for (const f of r.findings) {
    if (/^Slow start/.test(f.explanation)) {
      const extra = evidenceNumber(f, 'extraMs');
      const gap = evidenceNumber(f, 'gapMs');
      if (
        extra === undefined ||
        gap === undefined ||
        !accounts(extra, gap, { tolerance: SLOW_START_TOLERANCE })
      )
        problems.push(`${f.id}: slow start named, but ${extra} ms predicted against ${gap} ms measured`);
    }
    const ratio = evidenceNumber(f, 'ratio');
    const link = f.evidence.link;
    const c = evidenceNumber(f, 'concurrency');
    const cell = summary?.table.rows.find((x) => x.c === c)?.[String(link)];
    if (ratio !== undefined && typeof cell === 'number' && cell.toFixed(2) !== ratio2(ratio).toFixed(2))
      problems.push(`${f.id}: the words say ${ratio2(ratio).toFixed(2)}, the summary ${cell}`);
  }
  return problems;
}

export const chunksStudy = defineStudy<ChunksOptions>({
  ...CHUNKS_STUDY,
  verify: verifyChunks,
  quickLimits: (o) => quickCaveat(o.runs - 1, o.runs),
  resolve,
  check(options) {
    if (!options.loopback) checkNetAvailable('relay');
  },
  async run(ctx) {
    const o = ctx.options;
    const links = linkCases(o, ctx.seed);
    const s = strategies();
    const runsPerLink = o.concurrency.length * 3 * o.runs;
    ctx.plan(links.length * runsPerLink);
    const paths = Array.from({ length: CHUNKS }, (_, i) => `/chunks/${i}`);
    const perLink: Array<{ link: LinkCase; rows: Row[] }> = [];
    for (const { link, input } of links) {
      const result = await compareCell(
        ctx,
        link.id,
        {
          ...input,
          protocols: [s.h1.name, s.h2.name, s.pool.name],
          concurrency: o.concurrency,
          h1Connections: 'concurrency',
          h2PoolSessions: o.h2Sessions,
          requests: CHUNKS,
          runs: o.runs,
          workloads: [{ id: 'chunks', label: `${CHUNKS} chunks`, paths }],
        },
        {},
        runsPerLink,
      );
      if (!result) continue;
      const rows = rowsOf(result, result.axes.net[0] ?? 'loopback', o.concurrency);
      perLink.push({ link, rows });
      ctx.section(linkSection(link, rows, o.h2Sessions));
      ctx.setData('links', perLink);
    }
    if (perLink.length === 0) return;
    ctx.section(referenceSection(perLink, o.concurrency));
    for (const p of explainAll(perLink)) ctx.explain(p);
    for (const f of chunksFindings(perLink)) ctx.finding(f);
  },
  rederive(r) {
    const links = (r.data.links ?? []) as Array<{ link: LinkCase; rows: Row[] }>;
    // From the comparisons when they were kept whole, else from the rows the run saved.
    const perLink = r.compares.length
      ? r.compares.flatMap(({ id, result }) => {
          const link = links.find((l) => l.link.id === id)?.link;
          return link
            ? [{ link, rows: rowsOf(result, result.axes.net[0] ?? 'loopback', result.axes.concurrency) }]
            : [];
        })
      : links;
    if (perLink.length === 0) return undefined;
    const o = resolve(r.options as Partial<ChunksOptions>, r.mode === 'quick');
    return {
      findings: chunksFindings(perLink),
      explanation: explainAll(perLink),
      sections: [
        ...perLink.map(({ link, rows }) => linkSection(link, rows, o.h2Sessions)),
        referenceSection(perLink, o.concurrency),
      ],
    };
  },
});

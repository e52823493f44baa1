/** The chunks study's rows (one per link and concurrency) and their tables. */
import { compareSamples, keptRuns, type SampleComparison } from '../../compare/index.ts';
import type { CellResult, CompareResult, StudySection } from '../../model/index.ts';
import { ratio2 } from '../claims.ts';
import { intervalText, outcomeWord, rounded, sideFacts } from '../table.ts';
import { type CapturedRounds, capturedRoundsOf } from './captured-rounds.ts';
import { REPORT_SWEEP } from './options.ts';
import { type LinkCase, strategies } from './plan.ts';

/** What one strategy's kept runs of one concurrency show. */
interface Side {
  runs: number;
  /** Each kept run's time to fetch the 64 chunks, ms: what the row's decisions were made over. */
  times?: number[];
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
  /** The server's rounds on the connections of the representative captured run (`--capture`). */
  capture?: CapturedRounds;
}

function sideOf(cell: CellResult | undefined): Side {
  return {
    runs: cell ? keptRuns(cell).length : 0,
    ...(cell ? { times: keptRuns(cell).map((r) => r.durationMs) } : {}),
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
    ...capturedRoundsOf(cell),
  };
}

export interface ChunksRow {
  concurrency: number;
  /** The comparison's network (its id seeds the decision's bootstrap); absent in older saved rows. */
  net?: string;
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

/** The comparison's id: it seeds the bootstrap, so a saved row's decision can be made again. */
const comparisonId = (net: string, c: number, strategy: string) => `${net}/c${c}/${strategy}/time`;

/**
 * A row's decision made again from its saved times (`key`: HTTP/2's or the pool's against
 * HTTP/1.1), the same way {@link chunksRowsOf} made it (compare's default minimum effect and confidence).
 */
export function timeDecision(
  net: string,
  concurrency: number,
  key: 'h2VsH1' | 'poolVsH1',
  h1Times: number[],
  otherTimes: number[],
): SampleComparison {
  const s = strategies();
  const name = key === 'h2VsH1' ? s.h2.name : s.pool.name;
  return compareSamples(comparisonId(net, concurrency, name), h1Times, otherTimes, true, {
    minEffect: 0.05,
    confidence: 0.95,
  });
}

export function chunksRowsOf(result: CompareResult, net: string, concurrencies: number[]): ChunksRow[] {
  const s = strategies();
  const cell = (c: number, p: string) =>
    result.cells.find((x) => x.net === net && x.concurrency === c && x.protocol === p);
  return concurrencies.map((c) => {
    const h1 = cell(c, s.h1.name);
    const h2 = timeComparison(result, comparisonId(net, c, s.h2.name), h1, cell(c, s.h2.name));
    const pool = timeComparison(result, comparisonId(net, c, s.pool.name), h1, cell(c, s.pool.name));
    return {
      concurrency: c,
      net,
      h1: sideOf(h1),
      h2: sideOf(cell(c, s.h2.name)),
      pool: sideOf(cell(c, s.pool.name)),
      ...(h2 ? { h2VsH1: h2 } : {}),
      ...(pool ? { poolVsH1: pool } : {}),
    };
  });
}

const round3 = (x: number | undefined) => rounded(x, 3);

export function linkSection(link: LinkCase, rows: ChunksRow[], h2Sessions: number): StudySection {
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

export const outcomeWords = (c: SampleComparison): string =>
  outcomeWord(c, { better: 'h2 faster', worse: 'h1 faster', runsNeeded: true })!;

/** The outcome in words without the runs that would tell (a finding records those as evidence). */
export const outcomeText = (c: SampleComparison): string =>
  outcomeWord(c, { better: 'h2 faster', worse: 'h1 faster' })!;

export const fmtS = (s: number | undefined) => (s === undefined ? '?' : `${s.toFixed(3)} s`);
/** How much faster the faster side was, from the time ratio slower/faster… as words: "31% less time", "8.4× as fast". */
export function faster(timeRatio: number): string {
  const r = timeRatio < 1 ? timeRatio : 1 / timeRatio;
  return r <= 0.5 ? `${(1 / r).toFixed(1)}× as fast as` : `in ${Math.round((1 - r) * 100)}% less time than`;
}

export function referenceSection(
  perLink: Array<{ link: LinkCase; rows: ChunksRow[] }>,
  concurrencies: number[],
): StudySection {
  const ratio = (rows: ChunksRow[], c: number) =>
    rows.find((r) => r.concurrency === c)?.h2VsH1?.interval.ratio;
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

/**
 * What every study's tables and words are made of, once: medians over a cell's kept runs, per-side
 * facts of a {@link RunResult} (connections, congestion windows, drops, stalls, CPU), table cells
 * rounded the same way, a ratio with its interval, a comparison's outcome in a word. A study is then
 * its plan, its rows and its explanations (docs/design.md, "Add a study"); the finding of each
 * report row is built in findings.ts.
 */
import { keptRuns, type Outcome, type RatioInterval } from '../compare/index.ts';
import { medianInterpolated, medianNearestRank } from '../core/index.ts';
import { type CellResult, cpuApart, type RunResult } from '../model/index.ts';
import { ratio2 } from './claims.ts';

/**
 * The median of the finite values, undefined when there is none. Interpolated by default (the
 * comparisons' statistics); `nearest-rank` where the values are set beside a browser summary's
 * medians, which are nearest-rank (src/browser/burst.ts), so one table does not mix the two.
 *
 * @example medianOf([3, undefined, 1, 2, 4]) // 2.5
 */
export function medianOf(
  xs: ReadonlyArray<number | undefined>,
  how: 'interpolated' | 'nearest-rank' = 'interpolated',
): number | undefined {
  const v = xs.filter((x): x is number => x !== undefined && Number.isFinite(x));
  if (v.length === 0) return undefined;
  return how === 'interpolated' ? medianInterpolated(v) : medianNearestRank(v);
}

/**
 * A table cell: `x` rounded to `digits` decimals, null (an empty cell) when there is no finite value.
 *
 * @example rounded(1.23456, 2) // 1.23
 */
export function rounded(x: number | undefined, digits = 0): number | null {
  if (x === undefined || !Number.isFinite(x)) return null;
  const k = 10 ** digits;
  return Math.round(x * k) / k;
}

/** A fraction as a percentage cell with one decimal: 0.7834 → 78.3. */
export function percentCell(fraction: number | undefined): number | null {
  return fraction === undefined || !Number.isFinite(fraction) ? null : Math.round(fraction * 1000) / 10;
}

/** A ratio and its interval (a bootstrap interval, or a comparison's `interval`). */
type IntervalCell = Pick<RatioInterval, 'ratio' | 'lo' | 'hi'>;

/**
 * A ratio with its interval as a table cell, two decimals: `0.61 (0.55–0.68)`; `unit` after the ratio
 * (`1.31× (1.20–1.45)`); `invert` shows 1/ratio (a candidate/baseline latency as h1/h2).
 */
export function intervalText(
  i: IntervalCell | undefined,
  o: { invert?: boolean; unit?: string } = {},
): string | null {
  if (!i) return null;
  const [r, lo, hi] = (o.invert ? [1 / i.ratio, 1 / i.hi, 1 / i.lo] : [i.ratio, i.lo, i.hi]).map((x) =>
    ratio2(x).toFixed(2),
  );
  return `${r}${o.unit ?? ''} (${lo}–${hi})`;
}

/** A comparison's verdict, as compare gives it (src/model/compare.ts). */
interface OutcomeCell {
  outcome: Outcome;
  runsNeeded?: number | undefined;
}

/**
 * A comparison's outcome in a word for a table: `better`/`worse` in the study's words for the
 * candidate and the baseline ("h2 faster", "h1 faster"); `runsNeeded` adds "(~N runs)" to undecided.
 */
export function outcomeWord(
  c: OutcomeCell | undefined,
  words: { better: string; worse: string; runsNeeded?: boolean },
): string | null {
  if (!c) return null;
  switch (c.outcome) {
    case 'better':
      return words.better;
    case 'worse':
      return words.worse;
    case 'no-clear-difference':
      return 'same';
    case 'undecided':
      return `undecided${words.runsNeeded && c.runsNeeded ? ` (~${c.runsNeeded} runs)` : ''}`;
    case 'insufficient':
      return 'too few runs';
  }
}

/**
 * A ratio in words, whichever side of 1 it falls, two decimals: `timesWords(2.1, 'lower latency',
 * 'higher latency')` → "2.10× lower latency"; 0.5 → "2.00× higher latency".
 */
export function timesWords(x: number, above: string, below: string): string {
  return x >= 1 ? `${x.toFixed(2)}× ${above}` : `${(1 / x).toFixed(2)}× ${below}`;
}

/** A count with its noun, singular for one: `counted(1, 'worker')` → "1 worker", 32 → "32 workers". */
export function counted(n: number, noun: string): string {
  return `${n} ${n === 1 ? noun : `${noun}s`}`;
}

/**
 * The facts of one run a study's tables set side by side, each read the one way every study reads
 * it. Medians of them over a cell's kept runs: {@link sideFacts}.
 */
const RUN_FACTS = {
  /** First request to last response, s. */
  seconds: (r: RunResult) => r.durationMs / 1000,
  /** TCP connections the server saw (the client's count where the server's was not read). */
  connections: (r: RunResult) => r.connections.tcp?.server?.connections ?? r.connections.opened,
  /** Σ of the server's congestion windows (the download direction) at the run's end, segments. */
  cwndSum: (r: RunResult) => r.connections.tcp?.server?.cwndSegments.sum,
  /** The median server-side congestion window of one connection, segments. */
  cwndPerConnection: (r: RunResult) => r.connections.tcp?.server?.cwndSegments.median,
  /** Σ of the server's congestion windows at the run's end, bytes. */
  cwndBytes: (r: RunResult) => r.connections.tcp?.server?.cwndBytesSum,
  /** Packets the link dropped on the run's connections (both directions). */
  drops: (r: RunResult) => r.connections.tcp?.linkDrops?.lossPackets,
  /** Segments the server retransmitted. */
  retransmits: (r: RunResult) => r.connections.tcp?.server?.retransmittedSegments,
  /** Highest number of streams one session carried at once. */
  peakStreams: (r: RunResult) => r.connections.peakStreamsPerConnection,
  /** Share of the sessions' open time during which a receive window stopped the server. */
  stalledShare: (r: RunResult) => {
    const f = r.flowControl;
    return f && f.sessionMs > 0 ? f.stalledMs / f.sessionMs : undefined;
  },
  connectionStalls: (r: RunResult) => r.flowControl?.connectionStalls,
  streamStalls: (r: RunResult) => r.flowControl?.streamStalls,
  /** CPU of the process (the client, and the fixture when in-process) over wall: cores used. */
  cpu: (r: RunResult) => r.client.cpu,
  /** CPU ms per request: cpu / req/s (the steady figure on a noisy machine). */
  cpuMsPerRequest: (r: RunResult) =>
    r.throughput.rps > 0 ? (r.client.cpu / r.throughput.rps) * 1000 : undefined,
  /** Mean latency, ms (Little's law reads the mean). */
  latencyMeanMs: (r: RunResult) => r.latencyMs.mean,
  /** The fixture's own CPU per request it saw, ms (its thread or process: cpuApart in src/model). */
  serverCpuMsPerRequest: (r: RunResult) => cpuApart(r)?.serverMsPerRequest,
  /** The fixture's event loop: busy share of the run. */
  serverElu: (r: RunResult) => cpuApart(r)?.serverEventLoopUtilization,
  /** h2lab's client without the fixture's thread: CPU per request, ms. */
  clientCpuMsPerRequest: (r: RunResult) => cpuApart(r)?.clientMsPerRequest,
  /** The client's event loop: busy share of the run. */
  clientElu: (r: RunResult) => r.client.eventLoopUtilization,
  /** Connections (sessions) the run opened. */
  opened: (r: RunResult) => r.connections.opened,
  /** Their TLS handshake time at the median, ms. */
  tlsP50Ms: (r: RunResult) => r.connections.tlsMs?.p50,
  /** Response body bytes the run received. */
  bytesIn: (r: RunResult) => r.throughput.bytesIn,
  /** The segment size the server's sockets recorded (else the client's), bytes. */
  mssBytes: (r: RunResult) =>
    r.connections.tcp?.server?.perConnection[0]?.mssBytes ||
    r.connections.tcp?.client?.perConnection[0]?.mssBytes,
  /** The link's initial congestion window, segments (RFC 6928's 10 unless the link set another). */
  initialCwnd: (r: RunResult) => (r.environment.link ? (r.environment.link.initialCwnd ?? 10) : undefined),
  /** The link's round-trip time, ms. */
  linkRttMs: (r: RunResult) => r.environment.link?.rttMs,
} satisfies Record<string, (r: RunResult) => number | undefined>;

type RunFact = keyof typeof RUN_FACTS;

/**
 * The median of each named fact over the kept runs of one cell (one side of a table's row); a fact
 * no run carries is left out.
 *
 * @example sideFacts(cell, ['seconds', 'cwndSum', 'drops']) // { seconds: 0.41, cwndSum: 62, drops: 3 }
 */
export function sideFacts<K extends RunFact>(
  cell: CellResult | undefined,
  facts: readonly K[],
): { [P in K]?: number } {
  const runs = cell ? keptRuns(cell) : [];
  const out: { [P in K]?: number } = {};
  for (const k of facts) {
    const m = medianOf(runs.map((r) => RUN_FACTS[k](r)));
    if (m !== undefined) out[k] = m;
  }
  return out;
}

/**
 * From runs to statistics: per cell (medians and min–max over the kept runs, where the time went) and
 * per comparison (each strategy against the baseline in the same workload, concurrency and network,
 * with a bootstrap interval and an outcome). Pure: the same file gives the same analysis.
 */
import { medianInterpolated as median } from '../core/index.ts';
import type {
  CellResult,
  CellStats,
  CompareResult,
  Comparison,
  Metric,
  RunResult,
  TimeBreakdown,
  Workload,
} from '../model/index.ts';
import { runShortfall, shortRunsWarning } from '../report/index.ts';
import { bootstrapRatio, decide, type RatioInterval, summarize } from './inference.ts';

/** The metrics compared, and their direction. */
const METRICS: ReadonlyArray<{ metric: Metric; higherIsBetter: boolean; label: string }> = [
  { metric: 'rps', higherIsBetter: true, label: 'throughput' },
  { metric: 'latencyP50Ms', higherIsBetter: false, label: 'p50 latency' },
  { metric: 'latencyP99Ms', higherIsBetter: false, label: 'p99 latency' },
];

/**
 * The metric of burst workloads: the time until the last of N requests issued at once ended, the
 * page-load question. Only this one is compared, because the others say nothing new or mislead here:
 * requests per second over one burst is N divided by that same time (the same figure twice), and the
 * percentiles of per-request latency within a burst measure the order in which the client served
 * the requests (HTTP/1.1 finishes six early and queues the rest; HTTP/2 interleaves all and finishes
 * them together), not when the page was there.
 */
const BURST_METRICS: ReadonlyArray<{ metric: Metric; higherIsBetter: boolean; label: string }> = [
  { metric: 'burstCompletionMs', higherIsBetter: false, label: 'burst completion time' },
];

/** True for a workload measured as bursts. */
function isBurstWorkload(w: Pick<Workload, 'burst'> | undefined): boolean {
  return w?.burst !== undefined;
}

/** The metrics compared for a workload: {@link BURST_METRICS} for bursts, else {@link METRICS}. */
export function metricsFor(
  w: Pick<Workload, 'burst'> | undefined,
): ReadonlyArray<{ metric: Metric; higherIsBetter: boolean; label: string }> {
  return isBurstWorkload(w) ? BURST_METRICS : METRICS;
}

/** The value of a metric in one run (NaN for the burst metric of a run that was not a burst). */
export function metricOf(run: RunResult, metric: Metric): number {
  switch (metric) {
    case 'rps':
      return run.throughput.rps;
    case 'latencyP50Ms':
      return run.latencyMs.p50;
    case 'latencyP99Ms':
      return run.latencyMs.p99;
    case 'burstCompletionMs':
      return run.burst?.completionMs ?? Number.NaN;
  }
}

/** A cell's summary of a metric over its kept runs. */
export function metricSummary(s: CellStats, metric: Metric): CellStats['rps'] | undefined {
  return metric === 'burstCompletionMs' ? s.burstCompletionMs : s[metric];
}

/**
 * Where one request's time went in one run, ms (means). The load engine measures latency from the
 * moment a request was handed to the transport (so it contains the wait for a connection or stream
 * slot, `clientQueueMs`) and time to first byte from the moment it was sent (after that wait). So
 * total = client queue + TTFB + transfer. The server's pool queue and service times (its /metrics)
 * lie inside the TTFB; what is left of it is the wire and the server's non-pool work. Parts are
 * clamped at 0 so rounding never shows negative time.
 */
function breakdownOf(run: RunResult): TimeBreakdown {
  const total = run.latencyMs.mean;
  const clientQueue = Math.max(0, run.clientQueueMs.mean);
  const ttfb = Math.max(0, run.ttfbMs.mean);
  const serverQueue = run.server?.poolQueueMs?.mean;
  const serverService = run.server?.poolServiceMs?.mean;
  const wire = Math.max(0, ttfb - (serverQueue ?? 0) - (serverService ?? 0));
  const transfer = Math.max(0, total - clientQueue - ttfb);
  const b: TimeBreakdown = { clientQueue, wire, transfer, total };
  if (serverQueue !== undefined) b.serverQueue = serverQueue;
  if (serverService !== undefined) b.serverService = serverService;
  return b;
}

/**
 * The runs that count: after the warm-up runs, without a run-level error, and with at least one
 * completed request (a run in which nothing completed has no latency to speak of).
 */
export function keptRuns(cell: CellResult): RunResult[] {
  return cell.runs
    .slice(cell.warmupRuns)
    .filter((r) => r.error === undefined && r.counts.ok > 0 && !cutOff(r));
}

/**
 * A run cut off by the request timeout: some request failed with class `timeout`. Its completion
 * time (a burst ends with its last request, failed or not) and its tail are the timeout, not the
 * protocol's: such a run is reported as cut off and never enters a ratio.
 */
function cutOff(run: RunResult): boolean {
  return (run.counts.byFailure?.timeout ?? 0) > 0;
}

function medianOf(runs: RunResult[], f: (r: RunResult) => number | undefined): number | undefined {
  const xs = runs.map(f).filter((x): x is number => x !== undefined && Number.isFinite(x));
  return xs.length === 0 ? undefined : median(xs);
}

/** Statistics of a cell over its kept runs; undefined when no run was kept. */
export function cellStats(cell: CellResult): CellStats | undefined {
  const runs = keptRuns(cell);
  if (runs.length === 0) return undefined;
  const parts = runs.map(breakdownOf);
  const med = (f: (b: TimeBreakdown) => number | undefined) => {
    const xs = parts.map(f).filter((x): x is number => x !== undefined);
    return xs.length === 0 ? undefined : median(xs);
  };
  const breakdownMs: TimeBreakdown = {
    clientQueue: med((b) => b.clientQueue) ?? 0,
    wire: med((b) => b.wire) ?? 0,
    transfer: med((b) => b.transfer) ?? 0,
    total: med((b) => b.total) ?? 0,
  };
  const sq = med((b) => b.serverQueue);
  if (sq !== undefined) breakdownMs.serverQueue = sq;
  const ss = med((b) => b.serverService);
  if (ss !== undefined) breakdownMs.serverService = ss;
  const warnings = [...new Set(runs.flatMap((r) => r.warnings))];
  const stats: CellStats = {
    runsKept: runs.length,
    rps: summarize(runs.map((r) => r.throughput.rps)),
    bytesPerSec: summarize(runs.map((r) => r.throughput.bytesPerSec)),
    latencyP50Ms: summarize(runs.map((r) => r.latencyMs.p50)),
    latencyP90Ms: summarize(runs.map((r) => r.latencyMs.p90)),
    latencyP99Ms: summarize(runs.map((r) => r.latencyMs.p99)),
    ttfbP50Ms: summarize(runs.map((r) => r.ttfbMs.p50)),
    totalRequests: runs.reduce((n, r) => n + r.counts.total, 0),
    failedRequests: runs.reduce((n, r) => n + r.counts.failed, 0),
    breakdownMs,
    saturatedRuns: runs.filter((r) => r.client.saturated).length,
    warnings,
  };
  const poolSize = medianOf(runs, (r) => r.server?.poolSize);
  if (poolSize !== undefined) stats.serverPoolSize = poolSize;
  const peak = medianOf(runs, (r) => r.server?.peakInFlight);
  if (peak !== undefined) stats.serverPeakInFlight = peak;
  const opened = medianOf(runs, (r) => r.connections.opened);
  if (opened !== undefined) stats.connectionsOpened = opened;
  if (runs.some((r) => r.burst)) {
    stats.burstCompletionMs = summarize(runs.map((r) => r.burst?.completionMs ?? Number.NaN));
    stats.burstFirstResponseMs = summarize(runs.map((r) => r.burst?.firstResponseMs ?? Number.NaN));
    const inPeriod = medianOf(runs, (r) => r.burst?.connectionsOpened);
    if (inPeriod !== undefined) stats.burstConnectionsOpened = inPeriod;
  }
  return stats;
}

/** A stable 32-bit seed from a string, so every comparison resamples the same way on every render. */
function seedOf(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

/**
 * Intervals already computed, by cell, metric, confidence and the exact values: a comparison is
 * re-analysed after every run, and only the group that just ran has new values. Bounded: cleared
 * when it grows past 10,000 entries.
 */
const intervals = new Map<string, RatioInterval>();

function cachedInterval(id: string, cand: number[], base: number[], confidence: number): RatioInterval {
  const key = `${id}|${confidence}|${cand.join(',')}|${base.join(',')}`;
  const hit = intervals.get(key);
  if (hit) return { ...hit, n: { ...hit.n } };
  const r = bootstrapRatio(cand, base, { confidence, seed: seedOf(id) });
  if (intervals.size >= 10_000) intervals.clear();
  intervals.set(key, r);
  return { ...r, n: { ...r.n } };
}

/** What {@link compareSamples} says of two samples: the interval, the test, the outcome. */
export type SampleComparison = Pick<
  Comparison,
  'higherIsBetter' | 'interval' | 'pValue' | 'outcome' | 'runsNeeded'
>;

/**
 * One candidate sample against a baseline sample of the same quantity, the way every comparison is
 * judged: the bootstrap interval of the ratio of medians, the Mann–Whitney p-value, the outcome, and
 * for an undecided one the runs a side that would decide it. `id` seeds the resampling (the same id
 * and values give the same interval on every render). For a quantity whose reciprocal is also
 * reported (a run's time and its throughput), compare the one the table shows: with an even number
 * of runs the median of reciprocals is not the reciprocal of the median.
 */
export function compareSamples(
  id: string,
  candidate: number[],
  baseline: number[],
  higherIsBetter: boolean,
  options: AnalyzeOptions & { runsTooShort?: boolean },
): SampleComparison {
  const interval = cachedInterval(id, candidate, baseline, options.confidence);
  const d = decide(candidate, baseline, interval, {
    higherIsBetter,
    minEffect: options.minEffect,
    confidence: options.confidence,
    ...(options.runsTooShort ? { runsTooShort: true } : {}),
  });
  return { higherIsBetter, ...d };
}

/**
 * True when a kept run of the cell was too short for its link ({@link runShortfall}); the cell's
 * statistics then carry the warning that names the fix (once).
 */
function shortOf(cell: CellResult): boolean {
  const runs = keptRuns(cell);
  const short = runs.map(runShortfall).filter((x): x is string => x !== undefined);
  if (short.length === 0) return false;
  const worst = runs.reduce((a, b) => (b.counts.ok < a.counts.ok ? b : a));
  const text = shortRunsWarning(
    `${cell.protocol} at c=${cell.concurrency} over ${cell.net}`,
    `${short.length} of ${runs.length} kept runs, the shortest ${runShortfall(worst) ?? short[0]}`,
    worst,
    cell.concurrency,
  );
  if (cell.stats && !cell.stats.warnings.includes(text)) cell.stats.warnings.push(text);
  return true;
}

/** Options of {@link analyze}. */
interface AnalyzeOptions {
  minEffect: number;
  confidence: number;
}

/** Cells grouped by what must be equal for a fair comparison: network, workload, concurrency. */
function groupKey(cell: Pick<CellResult, 'net' | 'workload' | 'concurrency'>): string {
  return `${cell.workload}/c${cell.concurrency}/${cell.net}`;
}

/**
 * Recomputes every cell's statistics and every comparison against the baseline. Mutates and returns
 * `result` (cells' `stats`, `comparisons`).
 */
export function analyze(result: CompareResult, options: AnalyzeOptions): CompareResult {
  for (const cell of result.cells) {
    const s = cellStats(cell);
    if (s) cell.stats = s;
    else delete cell.stats;
    const cut = cell.runs.slice(cell.warmupRuns).filter((r) => r.error === undefined && cutOff(r)).length;
    if (cut > 0) cell.cutOffRuns = cut;
    else delete cell.cutOffRuns;
  }
  const comparisons: Comparison[] = [];
  const workloads = new Map(result.axes.workloads.map((w) => [w.id, w]));
  const groups = new Map<string, CellResult[]>();
  for (const cell of result.cells) {
    const k = groupKey(cell);
    groups.set(k, [...(groups.get(k) ?? []), cell]);
  }
  for (const cells of groups.values()) {
    const base = cells.find((c) => c.protocol === result.baseline);
    if (!base) continue;
    const baseRuns = keptRuns(base);
    const baseShort = shortOf(base);
    for (const cell of cells) {
      if (cell === base) continue;
      const runs = keptRuns(cell);
      if (runs.length === 0 || baseRuns.length === 0) continue;
      const runsTooShort = baseShort || shortOf(cell);
      for (const m of metricsFor(workloads.get(cell.workload))) {
        const cand = runs.map((r) => metricOf(r, m.metric));
        const base = baseRuns.map((r) => metricOf(r, m.metric));
        comparisons.push({
          workload: cell.workload,
          concurrency: cell.concurrency,
          net: cell.net,
          protocol: cell.protocol,
          baseline: result.baseline,
          metric: m.metric,
          ...compareSamples(`${cell.id}/${m.metric}`, cand, base, m.higherIsBetter, {
            ...options,
            runsTooShort,
          }),
        });
      }
    }
  }
  result.comparisons = comparisons;
  return result;
}

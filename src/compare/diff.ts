/**
 * Two saved comparisons side by side (before/after a server change): for every cell measured in
 * both, each metric's ratio after/before with the same bootstrap interval and the same "no clear
 * difference" rule as a comparison between strategies.
 */
import type { CompareResult, DiffResult, DiffRow } from '../model/index.ts';
import { formatRatio, levelText } from '../report/index.ts';
import { cellStats, keptRuns, metricOf, metricSummary, metricsFor } from './analyze.ts';
import { bootstrapRatio, DEFAULT_MIN_EFFECT, decide } from './inference.ts';

/** Options of {@link diffResults}. */
interface DiffOptions {
  /** How the two sides are named in words. Default "before" / "after". */
  labels?: [string, string];
  minEffect?: number;
  confidence?: number;
}

/** Compares `after` against `before`, cell by cell. */
export function diffResults(
  before: CompareResult,
  after: CompareResult,
  options: DiffOptions = {},
): DiffResult {
  const [lb, la] = options.labels ?? ['before', 'after'];
  const minEffect = options.minEffect ?? DEFAULT_MIN_EFFECT;
  const rows: DiffRow[] = [];
  const byId = new Map(before.cells.map((c) => [c.id, c]));
  const afterIds = new Set(after.cells.filter((c) => keptRuns(c).length > 0).map((c) => c.id));
  const onlyBefore = before.cells
    .filter((c) => keptRuns(c).length > 0 && !afterIds.has(c.id))
    .map((c) => c.id);
  const onlyAfter: string[] = [];
  const labelOf = new Map([...before.axes.workloads, ...after.axes.workloads].map((w) => [w.id, w.label]));
  const workloadOf = new Map(after.axes.workloads.map((w) => [w.id, w]));
  for (const cell of after.cells) {
    const runsA = keptRuns(cell);
    if (runsA.length === 0) continue;
    const old = byId.get(cell.id);
    const runsB = old ? keptRuns(old) : [];
    if (!old || runsB.length === 0) {
      onlyAfter.push(cell.id);
      continue;
    }
    const sa = cellStats(cell)!;
    const sb = cellStats(old)!;
    for (const m of metricsFor(workloadOf.get(cell.workload))) {
      const cand = runsA.map((r) => metricOf(r, m.metric));
      const base = runsB.map((r) => metricOf(r, m.metric));
      const confidence = options.confidence ?? 0.95;
      const interval = bootstrapRatio(cand, base, { confidence, seed: 1 });
      const { pValue, outcome } = decide(cand, base, interval, {
        higherIsBetter: m.higherIsBetter,
        minEffect,
        confidence,
      });
      const summary = (s: typeof sa) =>
        metricSummary(s, m.metric) ?? { median: Number.NaN, min: Number.NaN, max: Number.NaN, n: 0 };
      rows.push({
        cellId: cell.id,
        workload: cell.workload,
        workloadLabel: labelOf.get(cell.workload) ?? cell.workload,
        concurrency: cell.concurrency,
        net: cell.net,
        protocol: cell.protocol,
        metric: m.metric,
        higherIsBetter: m.higherIsBetter,
        before: summary(sb),
        after: summary(sa),
        interval,
        pValue,
        outcome,
      });
    }
  }
  const summary: string[] = [];
  const words = {
    rps: 'throughput',
    latencyP50Ms: 'median latency',
    latencyP99Ms: 'p99 latency',
    burstCompletionMs: 'burst completion time',
  } as const;
  // Two files of the same setup ("improved 3.13×" between identical runs): nothing was
  // changed between them, so a difference is the machine's drift, never an improvement.
  const same = sameSetup(before, after);
  for (const r of rows) {
    if (r.outcome !== 'better' && r.outcome !== 'worse') continue;
    const moved = same
      ? `differed (${r.outcome === 'better' ? 'better' : 'worse'} in ${la}; the same setup: drift)`
      : r.outcome === 'better'
        ? 'improved'
        : 'got worse';
    summary.push(
      `${r.workloadLabel}, ${r.protocol} at ${levelText(after, r.workload, r.concurrency)}: ${words[r.metric]} ${moved}, ${formatRatio(r.interval.ratio)} of ${lb} (95% CI ${formatRatio(r.interval.lo).slice(0, -1)}–${formatRatio(r.interval.hi)}).`,
    );
  }
  const undecided = rows.filter((r) => r.outcome === 'undecided').length;
  if (undecided > 0)
    summary.push(
      `Undecided in ${undecided} of ${rows.length} comparisons: the runs of ${lb} and ${la} cannot tell whether they differ there (more runs would).`,
    );
  if (summary.length === 0 && rows.length > 0)
    summary.push(`No clear difference between ${lb} and ${la} in any cell measured in both.`);
  if (same && rows.length > 0) {
    summary.push(
      `${lb} and ${la} ran the same setup (the same target, options and h2lab): a difference between them is the machine's drift between the two times, not an improvement or a regression.`,
    );
  }
  if (rows.length === 0) summary.push(`No cell was measured in both ${lb} and ${la}: nothing to compare.`);
  else {
    summary.push(
      `The two files were measured at different times (${before.environment.startedAt} and ${after.environment.startedAt}), not interleaved: anything else that changed on the machines between them (other load, CPU frequency, a kernel setting) counts as a difference here. Two runs of the same setup are the way to see how large that drift is.`,
    );
  }
  if (onlyBefore.length + onlyAfter.length > 0) {
    summary.push(
      `Measured in only one of the two: ${[...onlyBefore.map((x) => `${x} (${lb})`), ...onlyAfter.map((x) => `${x} (${la})`)].join(', ')}.`,
    );
  }
  return {
    kind: 'h2lab.compare-diff',
    sameSetup: same,
    before: { label: lb, startedAt: before.environment.startedAt, target: before.target.url },
    after: { label: la, startedAt: after.environment.startedAt, target: after.target.url },
    rows,
    onlyBefore,
    onlyAfter,
    summary,
  };
}

/**
 * Whether two comparisons ran the same setup: the same target (an embedded fixture's port differs
 * from run to run and does not count), the same resolved options and the same h2lab version.
 */
function sameSetup(a: CompareResult, b: CompareResult): boolean {
  const key = (r: CompareResult) =>
    JSON.stringify({
      target: r.target.embedded ? 'embedded' : r.target.url,
      options: { ...r.options, url: r.target.embedded ? 'embedded' : r.options.url },
      version: r.environment.h2labVersion,
    });
  return key(a) === key(b);
}

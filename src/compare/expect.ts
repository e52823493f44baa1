/**
 * `compare --expect COND`: a comparison as a CI gate. A condition names two strategies, how they
 * must relate on one metric, and optionally the level (concurrency, burst N or rate) and workload:
 *
 * ```
 *  compact:  h2<=h1:p99@64          words:  "h2 not worse than h1 on p99 at c=64"
 *            h2>h1:rps@8/bytes-1024          "h2 better than h1 on rps at c=8 for bytes-1024"
 *            h2~h1:p50                        "h2 same as h1 on p50"
 * ```
 *
 * Compact operators compare the metric's values (`h2<=h1:p99`: h2's p99 at most h1's); each becomes a
 * relation of goodness by the metric's direction (lower latency is better, higher rps is better), so
 * `h2<=h1:p99` and `h2>=h1:rps` are both "not worse". A condition is judged on the bootstrap interval
 * of candidate/reference over the kept runs, with t = log(1 + --min-effect) and g the interval in log
 * goodness (positive = the candidate is better):
 *
 * ```
 *  relation     met when                    failed when
 *  not-worse    g.lo ≥ −t                   g.hi < 0 and g ≤ −t   (worse, by at least min-effect)
 *  better       g.lo > 0 and g ≥ t          g.hi ≤ t              (a gain of min-effect is ruled out)
 *  same         −t ≤ g.lo and g.hi ≤ t      clearly better or clearly worse, as above
 *  worse / not-better: the mirror images
 * ```
 *
 * Anything between is `undecided` (too few or too noisy runs), which by default does not fail: the
 * runs did not show a regression. A cell the condition names that has no measurement (failed, not
 * offered) fails it: a gate that measured nothing must not pass. The rank test the verdict also asks
 * for is not required here, because with the 2–3 kept runs a CI job can afford it can never pass
 * (docs/performance.md, "Defaults that decide outcomes"); the verdict's outcome is reported beside each check.
 */
import { H2labError } from '../core/index.ts';
import type {
  CompareResult,
  Comparison,
  Expectation,
  ExpectationCheck,
  ExpectationStatus,
  Metric,
  Workload,
} from '../model/index.ts';
import { comparisonOf } from '../report/index.ts';
import { metricsFor } from './analyze.ts';

/** How two strategies must relate, in goodness (not in raw values). */
type Relation = Expectation['relation'];

/** A parsed condition, before evaluation. */
interface ExpectCondition {
  /** As written. */
  text: string;
  candidate: string;
  relation: Relation;
  reference: string;
  metric: Metric;
  /** Only cells at this level: concurrency, burst N or rate (req/s). */
  level?: number;
  /** Only this workload id. */
  workload?: string;
}

/** The metric names a condition may use. */
const EXPECT_METRICS: Readonly<Record<string, { metric: Metric; higherIsBetter: boolean }>> = Object.freeze({
  rps: { metric: 'rps', higherIsBetter: true },
  p50: { metric: 'latencyP50Ms', higherIsBetter: false },
  p99: { metric: 'latencyP99Ms', higherIsBetter: false },
  time: { metric: 'burstCompletionMs', higherIsBetter: false },
});

const WORDS: Readonly<Record<string, Relation>> = Object.freeze({
  'better than': 'better',
  'not worse than': 'not-worse',
  'worse than': 'worse',
  'not better than': 'not-better',
  'same as': 'same',
});

/** What a bad condition's message shows. */
const EXPECT_FORMS =
  'CAND OP REF:METRIC[@LEVEL][/WORKLOAD] with OP one of < <= > >= ~ and METRIC one of rps, p50, p99, time (e.g. h2<=h1:p99@64), or words: "CAND (better than|not worse than|worse than|not better than|same as) REF on METRIC [at c=LEVEL] [for WORKLOAD]" (e.g. "h2 not worse than h1 on p99 at c=64")';

const NAME = '[a-z0-9][a-z0-9-]*';
const COMPACT = new RegExp(
  `^(${NAME})\\s*(<=|>=|<|>|~)\\s*(${NAME}):([a-z0-9]+)(?:@(\\d+))?(?:/(${NAME}))?$`,
);
const PHRASE = new RegExp(
  `^(${NAME})\\s+(?:is\\s+)?(${Object.keys(WORDS).join('|')})\\s+(${NAME})\\s+on\\s+([a-z0-9]+)(?:\\s+at\\s+(?:[cnr]\\s*=\\s*)?(\\d+)(?:\\s*req/s)?)?(?:\\s+for\\s+(${NAME}))?$`,
);

function badCondition(text: string, why: string): H2labError {
  return new H2labError(
    'H2LAB_ERR_COMPARE_BAD_EXPECT',
    `--expect ${JSON.stringify(text)}: ${why}; use ${EXPECT_FORMS}`,
    { option: '--expect', value: text },
  );
}

/** The relation a compact operator means for a metric of this direction. */
function relationOf(op: string, higherIsBetter: boolean): Relation {
  if (op === '~') return 'same';
  // In raw values: "<" is "lower"; lower is better for latency and worse for throughput.
  const lower = op.startsWith('<');
  const strict = op.length === 1;
  const good = lower !== higherIsBetter;
  if (strict) return good ? 'better' : 'worse';
  return good ? 'not-worse' : 'not-better';
}

/**
 * Parses one condition (syntax only; {@link checkConditions} checks it against the matrix).
 *
 * @throws H2labError H2LAB_ERR_COMPARE_BAD_EXPECT naming the condition and the accepted forms.
 * @example parseCondition('h2<=h1:p99@64') // { candidate: 'h2', relation: 'not-worse', reference: 'h1', metric: 'latencyP99Ms', level: 64 }
 */
export function parseCondition(text: string): ExpectCondition {
  const t = text.trim().toLowerCase().replace(/\s+/g, ' ');
  const c = COMPACT.exec(t);
  const p = c ? undefined : PHRASE.exec(t);
  const m = c ?? p;
  if (!m) throw badCondition(text, 'not a condition');
  const [, candidate, how, reference, metricName, level, workload] = m as unknown as string[];
  const metric = EXPECT_METRICS[metricName!];
  if (!metric)
    throw badCondition(
      text,
      `unknown metric ${JSON.stringify(metricName)} (${Object.keys(EXPECT_METRICS).join(', ')})`,
    );
  if (candidate === reference) throw badCondition(text, `it compares ${candidate} with itself`);
  return {
    text,
    candidate: candidate!,
    relation: c ? relationOf(how!, metric.higherIsBetter) : WORDS[how!]!,
    reference: reference!,
    metric: metric.metric,
    ...(level !== undefined ? { level: Number(level) } : {}),
    ...(workload !== undefined ? { workload } : {}),
  };
}

/** What a condition is checked against before any run: the matrix as planned. */
interface PlannedMatrix {
  protocols: readonly string[];
  baseline: string;
  workloads: readonly Workload[];
  /** The levels of a workload's cells (concurrency, burst sizes or rates). */
  levelsOf: (w: Workload) => readonly number[];
}

/**
 * Checks parsed conditions against the planned matrix: both strategies compared, one of them the
 * baseline (every statistic is against it), the workload and level present, the metric compared
 * for the workloads it selects (`time` for bursts, the others for the rest).
 *
 * @throws H2labError H2LAB_ERR_COMPARE_BAD_EXPECT naming the condition.
 */
export function checkConditions(conditions: readonly ExpectCondition[], m: PlannedMatrix): void {
  for (const c of conditions) {
    for (const s of [c.candidate, c.reference]) {
      if (!m.protocols.includes(s))
        throw badCondition(c.text, `${s} is not among --protocols ${m.protocols.join(',')}`);
    }
    if (c.candidate !== m.baseline && c.reference !== m.baseline)
      throw badCondition(
        c.text,
        `every strategy is measured against --baseline ${m.baseline}: name it on one side (or pass --baseline ${c.reference})`,
      );
    const selected = m.workloads.filter((w) => c.workload === undefined || w.id === c.workload);
    if (selected.length === 0)
      throw badCondition(
        c.text,
        `no workload ${c.workload} (the workloads: ${m.workloads.map((w) => w.id).join(', ')})`,
      );
    const measured = selected.filter((w) => metricsFor(w).some((x) => x.metric === c.metric));
    if (measured.length === 0)
      throw badCondition(
        c.text,
        c.metric === 'burstCompletionMs'
          ? 'time is compared for burst workloads only (--burst)'
          : 'burst workloads are compared on time only (use :time)',
      );
    if (c.level !== undefined && !measured.some((w) => m.levelsOf(w).includes(c.level!))) {
      const levels = [...new Set(measured.flatMap((w) => m.levelsOf(w)))].join(', ');
      throw badCondition(c.text, `no cell at ${c.level} (the levels: ${levels})`);
    }
  }
}

const STATUS_RANK: Record<ExpectationStatus, number> = { met: 0, undecided: 1, failed: 2 };

/** Judges one interval (candidate/reference) for a relation; see the table at the top. */
function judge(
  relation: Relation,
  interval: { ratio: number; lo: number; hi: number },
  higherIsBetter: boolean,
  minEffect: number,
): ExpectationStatus {
  if (!Number.isFinite(interval.ratio) || !Number.isFinite(interval.lo) || !Number.isFinite(interval.hi))
    return 'undecided';
  const sign = higherIsBetter ? 1 : -1;
  const g = sign * Math.log(interval.ratio);
  const a = sign * Math.log(interval.lo);
  const b = sign * Math.log(interval.hi);
  const lo = Math.min(a, b);
  const hi = Math.max(a, b);
  const t = Math.log(1 + minEffect);
  const clearlyWorse = hi < 0 && g <= -t;
  const clearlyBetter = lo > 0 && g >= t;
  switch (relation) {
    case 'not-worse':
      return clearlyWorse ? 'failed' : lo >= -t ? 'met' : 'undecided';
    case 'not-better':
      return clearlyBetter ? 'failed' : hi <= t ? 'met' : 'undecided';
    case 'better':
      return clearlyBetter ? 'met' : hi <= t ? 'failed' : 'undecided';
    case 'worse':
      return clearlyWorse ? 'met' : lo >= -t ? 'failed' : 'undecided';
    case 'same':
      return clearlyBetter || clearlyWorse ? 'failed' : lo >= -t && hi <= t ? 'met' : 'undecided';
  }
}

const FLIP: Record<Comparison['outcome'], Comparison['outcome']> = {
  better: 'worse',
  worse: 'better',
  'no-clear-difference': 'no-clear-difference',
  undecided: 'undecided',
  insufficient: 'insufficient',
};

const ratioWords = (i: { ratio: number; lo: number; hi: number }) =>
  `${i.ratio.toFixed(2)}× (${i.lo.toFixed(2)}–${i.hi.toFixed(2)})`;

/**
 * Evaluates the conditions on an analysed result: one check per cell group the condition selects
 * (workload × level × net), the condition's status the worst of its checks. `undecidedFails` is
 * `--expect-undecided fail`: then an undecided check counts as failed in {@link expectationsFailed}.
 */
export function evaluateConditions(
  conditions: readonly ExpectCondition[],
  result: CompareResult,
  minEffect: number,
): Expectation[] {
  const workloads = new Map(result.axes.workloads.map((w) => [w.id, w]));
  return conditions.map((c) => {
    const flipped = c.candidate === result.baseline;
    const other = flipped ? c.reference : c.candidate;
    const higherIsBetter = Object.values(EXPECT_METRICS).find((x) => x.metric === c.metric)!.higherIsBetter;
    const checks: ExpectationCheck[] = [];
    const groups = new Map<string, { workload: string; concurrency: number; net: string }>();
    for (const cell of result.cells) {
      if (c.workload !== undefined && cell.workload !== c.workload) continue;
      if (c.level !== undefined && cell.concurrency !== c.level) continue;
      if (!metricsFor(workloads.get(cell.workload)).some((x) => x.metric === c.metric)) continue;
      groups.set(`${cell.workload}/${cell.concurrency}/${cell.net}`, {
        workload: cell.workload,
        concurrency: cell.concurrency,
        net: cell.net,
      });
    }
    for (const g of groups.values()) {
      const at = `${g.workload} at ${g.concurrency}${result.axes.net.length > 1 ? ` (${g.net})` : ''}`;
      const cmp = comparisonOf(result, g.workload, g.concurrency, g.net, other, c.metric);
      if (!cmp) {
        const missing = result.cells.filter(
          (x) =>
            x.workload === g.workload &&
            x.concurrency === g.concurrency &&
            x.net === g.net &&
            (x.protocol === c.candidate || x.protocol === c.reference),
        );
        const why = missing.map((x) => `${x.protocol} ${x.status}${x.note ? `: ${x.note}` : ''}`).join('; ');
        checks.push({ ...g, status: 'failed', reason: `${at}: not measured (${why || 'no cell'})` });
        continue;
      }
      const i = cmp.interval;
      const interval = flipped ? { ...i, ratio: 1 / i.ratio, lo: 1 / i.hi, hi: 1 / i.lo } : { ...i };
      const status = judge(c.relation, interval, higherIsBetter, minEffect);
      const outcome = flipped ? FLIP[cmp.outcome] : cmp.outcome;
      checks.push({
        ...g,
        interval,
        outcome,
        status,
        reason: `${at}: ${c.candidate}/${c.reference} ${ratioWords(interval)}, the verdict says ${outcome}`,
      });
    }
    const status = checks.reduce<ExpectationStatus>(
      (worst, x) => (STATUS_RANK[x.status] > STATUS_RANK[worst] ? x.status : worst),
      checks.length === 0 ? 'failed' : 'met',
    );
    const decisive = checks.filter((x) => x.status === status);
    const reason =
      checks.length === 0
        ? 'no cell was measured for it'
        : status === 'met'
          ? `met in ${checks.length} cell group(s)`
          : decisive.map((x) => x.reason).join('; ');
    return {
      condition: c.text,
      candidate: c.candidate,
      relation: c.relation,
      reference: c.reference,
      metric: c.metric,
      ...(c.level !== undefined ? { level: c.level } : {}),
      ...(c.workload !== undefined ? { workload: c.workload } : {}),
      status,
      reason,
      checks,
    };
  });
}

/** The conditions that make `compare` exit 1: failed ones, and undecided ones when they count. */
export function expectationsFailed(
  expectations: readonly Expectation[],
  undecided: 'pass' | 'fail',
): Expectation[] {
  return expectations.filter(
    (e) => e.status === 'failed' || (undecided === 'fail' && e.status === 'undecided'),
  );
}

/**
 * The comparison engine: a matrix of cells run fairly, and the result kept valid after every run.
 *
 * ```
 *  group (workload × concurrency × net)      run 0 (warm-up)   run 1     …   run N-1
 *  ─────────────────────────────────────     ───────────────   ───────        ───────
 *  1 KiB, c=8, loopback                       h1 h2 h2-pool     h1 h2 h2-pool  h1 h2 h2-pool
 *  1 KiB, c=64, loopback                      h1 h2 h2-pool     …
 * ```
 *
 * Strategies of one group alternate run by run (A B C A B C …, never all A then all B), so a drift of
 * the machine (another process, thermal state, the server's caches) lands on every strategy alike.
 * Every strategy gets the same seed, schedule and duration in the same round. The first run(s) of each
 * cell are warm-up and excluded from the statistics. After every run the caller is handed the whole
 * result (`onUpdate`), so an interrupted comparison leaves a valid file with the finished runs.
 */
import { EventEmitter } from 'node:events';
import { H2labError, hostFacts, isH2labError } from '../core/index.ts';
import { observe } from '../load/index.ts';
import type { CellResult, CompareResult, RunResult, StrategyName, Workload } from '../model/index.ts';
import { COMPARE_RESULT_VERSION } from '../model/index.ts';
import { buildVerdict } from '../report/index.ts';
import type { MetricsSnapshot, ServerMetricsClient } from '../server/index.ts';
import { getStrategy } from '../transport/index.ts';
import { analyze, keptRuns } from './analyze.ts';
import { BUDGET_MAX_RUNS, budgetRound, planBudget, undecidedCells } from './budget.ts';
import { checkConditions, evaluateConditions, parseCondition } from './expect.ts';
import { type CompareOptions, type CompareOptionsInput, resolveCompareOptions } from './options.ts';

/** One cell of the matrix: what a runner is asked to measure. */
export interface Cell {
  /** `workload/c<concurrency>/<net>/<strategy>`. */
  id: string;
  workload: Workload;
  concurrency: number;
  /** Network profile name; `loopback` means no emulation (the seam for src/net). */
  net: string;
  protocol: StrategyName;
}

/** What a runner gets besides the cell: the same for every strategy of a round. */
export interface RoundContext {
  /** Target base URL. */
  url: string;
  /** Round number, 0-based (round 0 .. warmupRuns-1 are warm-up). */
  run: number;
  /** Seed of this round (the same for every strategy). */
  seed: number;
  durationMs: number;
  requests?: number;
  runWarmupMs: number;
  tls?: CompareOptions['tls'];
  /** A CA (PEM file) that verifies this cell's target, when it differs from the comparison's own
   *  (a fixture behind an emulated link has a certificate issued for the link's address). */
  ca?: string;
  /**
   * Dial this address instead of the URL's host (the link's gateway address, when the cell's link
   * leads to a server h2lab did not start); the URL still names the server.
   */
  connectTo?: string;
  /** Aborted when the comparison is stopped: finish quickly (a partial result is discarded). */
  signal: AbortSignal;
}

/**
 * Runs one cell once. Throws an H2labError whose code names a protocol mismatch when the server does
 * not offer the strategy's protocol (the cell becomes "not offered"); any other throw fails the cell.
 */
export type CellRunner = (cell: Cell, ctx: RoundContext) => Promise<RunResult>;

/** Runs round `round` of cell `i` (`last` is the round after which the cell is done); false when stopped. */
type RunOne = (i: number, round: number, last: number) => Promise<boolean>;

/** Progress of a comparison. */
interface CompareEvents {
  /** A run is about to start. `index` counts runs started, `total` is the planned number of runs. */
  'run-start': [{ cell: Cell; run: number; index: number; total: number }];
  /** A run finished (or was skipped); `done` runs of `total` are behind us. */
  'run-end': [{ cell: Cell; run: number; done: number; total: number; status: CellResult['status'] }];
}

/** What the engine needs from outside: the runner, the target, optional server metrics and a sink. */
export interface CompareDeps {
  runCell: CellRunner;
  target: { url: string; embedded: boolean };
  metrics?: ServerMetricsClient;
  /** Called with the whole result after every run and at the end (write it to disk here). */
  onUpdate?: (result: CompareResult) => void | Promise<void>;
}

/** A running comparison. */
export interface CompareHandle {
  /** Resolves with the final result (status `complete`, `interrupted` or `failed`); never rejects for run errors. */
  done: Promise<CompareResult>;
  events: EventEmitter<CompareEvents>;
  /** Stops after aborting the run in progress; `done` then resolves with status `interrupted`. */
  stop(): void;
}

/**
 * True when an error says the server does not speak the strategy's protocol, or that this h2lab
 * cannot speak it (H2LAB_ERR_H3_UNAVAILABLE: the HTTP/3 binding did not load): the cell is
 * not-offered and the rest of the comparison runs.
 */
function isProtocolNotOffered(err: unknown): boolean {
  const code =
    isH2labError(err) || (typeof err === 'object' && err !== null && 'code' in err)
      ? String((err as { code: unknown }).code)
      : '';
  return /PROTOCOL_MISMATCH|NOT_OFFERED|ALPN|H3_UNAVAILABLE/.test(code);
}

/**
 * The concurrency values of a workload's cells: its burst sizes for a burst workload (N requests in
 * flight at t0 is its concurrency, and the `concurrency` axis does not apply), its rates for an
 * open-loop one (requests per second; the schedule, not the client, decides what is in flight),
 * else the axis.
 */
function concurrencyOf(options: Pick<CompareOptions, 'concurrency'>, workload: Workload): number[] {
  return workload.burst ?? workload.rateRps ?? options.concurrency;
}

/** Every concurrency of the matrix, ascending: the axis and the burst sizes. */
function concurrencyAxis(options: Pick<CompareOptions, 'concurrency'>, workloads: Workload[]): number[] {
  return [...new Set(workloads.flatMap((w) => concurrencyOf(options, w)))].sort((a, b) => a - b);
}

/** The workloads with `--burst` applied: each becomes a burst workload unless it names its own sizes. */
function withBursts(options: CompareOptions, workloads: Workload[]): Workload[] {
  const sizes = options.burst;
  if (!sizes) return workloads;
  return workloads.map((w) =>
    w.burst
      ? w
      : {
          ...w,
          label: `burst of ${sizes.join('/')} × ${w.label}`,
          burst: sizes,
          ...(options.burstHandshakes ? { burstHandshakes: options.burstHandshakes } : {}),
        },
  );
}

/**
 * The workloads with the request options applied (`-m`, `-H`, `--body`, `--rate`): recorded in the
 * result's axes, so what every request asked for is in the file. `--body` without `-m` is a POST, as
 * `--body-size` is; `-H` fields win over a workload's own; `--rate` makes every workload that is not a
 * burst open-loop.
 */
function withRequest(options: CompareOptions, workloads: Workload[]): Workload[] {
  return workloads.map((w) => {
    const out: Workload = { ...w };
    if (options.bodyFile) {
      out.bodyFile = options.bodyFile;
      if (!options.method) out.method = 'POST';
    }
    if (options.method) out.method = options.method;
    if (options.headers) out.headers = { ...w.headers, ...options.headers };
    if (options.rateRps && !w.burst && !w.rateRps) out.rateRps = options.rateRps;
    return out;
  });
}

/** The cell level's tag in a cell id: `c8` (concurrency or burst N), `r500` (open loop, req/s). */
function levelTag(workload: Workload, level: number): string {
  return `${workload.rateRps ? 'r' : 'c'}${level}`;
}

/** Builds the cells in matrix order (net, workload, concurrency, strategy). */
function planCells(options: CompareOptions, workloads: Workload[]): Cell[] {
  const cells: Cell[] = [];
  for (const net of options.net) {
    for (const workload of workloads) {
      for (const concurrency of concurrencyOf(options, workload)) {
        for (const protocol of options.protocols) {
          cells.push({
            id: `${workload.id}/${levelTag(workload, concurrency)}/${net}/${protocol}`,
            workload,
            concurrency,
            net,
            protocol,
          });
        }
      }
    }
  }
  return cells;
}

/**
 * The order in which runs happen: per group, round by round, strategies alternating.
 * Returns `[cellIndex, round]` pairs.
 */
export function runOrder(cells: Cell[], runs: number): Array<[number, number]> {
  const groups = new Map<string, number[]>();
  cells.forEach((c, i) => {
    const k = `${c.net}/${c.workload.id}/${c.concurrency}`;
    groups.set(k, [...(groups.get(k) ?? []), i]);
  });
  const order: Array<[number, number]> = [];
  for (const members of groups.values()) {
    for (let r = 0; r < runs; r++) for (const i of members) order.push([i, r]);
  }
  return order;
}

/**
 * The matrix of resolved options: the workloads with `--burst` and the request options applied, the
 * cells, and the `--expect` conditions, checked against the matrix before any run (a condition that
 * names no cell is a usage error).
 */
export function prepareMatrix(options: CompareOptions): {
  workloads: Workload[];
  cells: Cell[];
  conditions: ReturnType<typeof parseCondition>[];
} {
  const workloads = options.workloads && withRequest(options, withBursts(options, options.workloads));
  if (!workloads) {
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      'compare option workloads: none given and no default for this target',
      {
        option: 'workloads',
      },
    );
  }
  const conditions = (options.expect ?? []).map(parseCondition);
  checkConditions(conditions, {
    protocols: options.protocols,
    baseline: options.baseline,
    workloads,
    levelsOf: (w) => concurrencyOf(options, w),
  });
  return { workloads, cells: planCells(options, workloads), conditions };
}

/**
 * Starts a comparison. Library API: nothing is printed; progress comes as events and results through
 * `onUpdate`.
 *
 * @example
 * const h = compare({ url: 'https://127.0.0.1:8443/', concurrency: [1, 16] }, { runCell, target });
 * const result = await h.done;
 */
export function compare(input: CompareOptionsInput, deps: CompareDeps): CompareHandle {
  const options = resolveCompareOptions(input);
  const { workloads, cells, conditions } = prepareMatrix(options);
  const events = new EventEmitter<CompareEvents>();
  const controller = new AbortController();
  const result = newCompareResult(options, workloads, cells, deps.target);
  const refresh = () => refreshCompareResult(result, options, conditions);
  const publish = async () => {
    refresh();
    await deps.onUpdate?.(result);
  };

  /**
   * `--budget`: rounds of the undecided cells and their baseline until each is decided, the next
   * run would not end inside the budget, or the runs cap; every look at alpha / looks.
   */
  const spendBudget = async (
    budgetMs: number,
    runOne: RunOne,
    wall: number[][],
    onRound: (runs: number) => void,
  ): Promise<void> => {
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const plan = planBudget({
      budgetMs,
      runMs: mean(wall.flat()),
      runs: options.runs,
      confidence: options.confidence,
    });
    const nominalConfidence = options.confidence;
    // The resolved options are the result's: reports and re-analysis hold every look to this level.
    options.confidence = 1 - plan.alpha;
    refresh();
    const runsBefore = result.cells.map((c) => c.runs.length);
    const t0 = performance.now();
    let stoppedBy: NonNullable<CompareResult['budget']>['stoppedBy'] = 'decided';
    const settle = () => {
      undecided = undecidedCells(result);
      // Left undecided only by runs too short for their link: more of them were not spent.
      if (stoppedBy === 'decided' && undecided.all.size > 0 && undecided.open.size === 0)
        stoppedBy = 'runs-too-short';
    };
    let undecided = undecidedCells(result);
    settle();
    const record = () => {
      result.budget = {
        ms: budgetMs,
        spentMs: Math.round(performance.now() - t0),
        maxRuns: plan.maxRuns,
        looks: plan.looks,
        nominalConfidence,
        alpha: plan.alpha,
        extraRuns: Object.fromEntries(
          result.cells.map((c, i) => [c.id, c.runs.length - runsBefore[i]!]).filter(([, n]) => n !== 0),
        ),
        stoppedBy,
        undecided: [...undecided.all],
      };
    };
    record();
    await publish();
    rounds: for (let round = 0; undecided.open.size > 0; round++) {
      const order = budgetRound(result, undecided.open, plan.maxRuns, round);
      if (order.length === 0) {
        // Every open cell made the most runs: the runs cap's doing, or the budget's (it set the looks).
        stoppedBy = plan.maxRuns >= BUDGET_MAX_RUNS ? 'max-runs' : 'budget';
        break;
      }
      onRound(order.length);
      for (const i of order) {
        if (controller.signal.aborted) {
          stoppedBy = 'interrupted';
          break rounds;
        }
        if (performance.now() - t0 + mean(wall[i]!) > budgetMs) {
          stoppedBy = 'budget';
          break rounds;
        }
        const run = result.cells[i]!.runs.length;
        if (!(await runOne(i, run, run + 1))) {
          stoppedBy = 'interrupted';
          break rounds;
        }
      }
      refresh();
      settle();
      record();
    }
    refresh();
    settle();
    record();
  };
  const done = (async (): Promise<CompareResult> => {
    const order = runOrder(cells, options.runs);
    let total = order.length;
    let finished = 0;
    let started = 0;
    /** Wall time of each cell's runs, ms: what an extra run is expected to take. */
    const wall: number[][] = cells.map(() => []);
    /** Runs one round of cell `i`; false when the comparison was stopped during it. */
    const runOne: RunOne = async (i, round, last) => {
      const cell = cells[i]!;
      const state = result.cells[i]!;
      if (state.status === 'not-offered' || state.status === 'failed') {
        finished++;
        events.emit('run-end', { cell, run: round, done: finished, total, status: state.status });
        return true;
      }
      const t0 = performance.now();
      state.status = 'running';
      events.emit('run-start', { cell, run: round, index: ++started, total });
      let before: MetricsSnapshot | undefined;
      if (deps.metrics) {
        await deps.metrics.reset();
        before = await deps.metrics.tryRead();
      }
      try {
        const run = await deps.runCell(cell, {
          url: deps.target.url,
          run: round,
          seed: options.seed + round,
          durationMs: options.durationMs,
          ...(options.requests !== undefined ? { requests: options.requests } : {}),
          runWarmupMs: options.runWarmupMs,
          ...(options.tls ? { tls: options.tls } : {}),
          signal: controller.signal,
        });
        if (controller.signal.aborted) return false; // a partial run is not a run: discard it
        if (deps.metrics)
          await observe(run, { metrics: { client: deps.metrics, ...(before ? { before } : {}) } });
        recordRun(state, cell, round, run, last);
      } catch (err) {
        if (controller.signal.aborted) return false;
        recordRunFailure(state, cell, err);
      }
      wall[i]!.push(performance.now() - t0);
      finished++;
      events.emit('run-end', { cell, run: round, done: finished, total, status: state.status });
      await publish();
      return true;
    };
    await publish();
    for (const [i, round] of order) {
      if (controller.signal.aborted || !(await runOne(i, round, options.runs))) break;
    }
    if (options.budgetMs !== undefined && !controller.signal.aborted) {
      await spendBudget(options.budgetMs, runOne, wall, (n) => {
        total += n;
      });
    }
    finishCompareResult(result, options.runs, controller.signal.aborted);
    result.finishedAt = new Date().toISOString();
    await publish();
    return result;
  })();

  return { done, events, stop: () => controller.abort() };
}

/** A comparison's result before its first run: every cell pending. */
export function newCompareResult(
  options: CompareOptions,
  workloads: Workload[],
  cells: Cell[],
  target: CompareResult['target'],
): CompareResult {
  return {
    kind: 'h2lab.compare',
    version: COMPARE_RESULT_VERSION,
    status: 'running',
    options: options as unknown as Record<string, unknown>,
    environment: { ...hostFacts(), startedAt: new Date().toISOString() },
    target,
    axes: {
      workloads,
      concurrency: concurrencyAxis(options, workloads),
      protocols: options.protocols,
      net: options.net,
    },
    baseline: options.baseline,
    runsPerCell: options.runs,
    warmupRuns: options.warmupRuns,
    cells: cells.map((c) => ({
      id: c.id,
      workload: c.workload.id,
      concurrency: c.concurrency,
      net: c.net,
      protocol: c.protocol,
      status: 'pending',
      runs: [],
      warmupRuns: options.warmupRuns,
    })),
    comparisons: [],
  };
}

/** The statistics, the verdict and the `--expect` conditions of a result, from its runs so far. */
export function refreshCompareResult(
  result: CompareResult,
  options: CompareOptions,
  conditions: ReturnType<typeof parseCondition>[],
): void {
  analyze(result, options);
  result.verdict = buildVerdict(result);
  if (conditions.length > 0) result.expectations = evaluateConditions(conditions, result, options.minEffect);
}

/**
 * Records a finished run of a cell: a protocol the server does not offer makes the cell not-offered,
 * another error fails it (the run is kept for the record), else the run counts.
 */
export function recordRun(state: CellResult, cell: Cell, round: number, run: RunResult, runs: number): void {
  if (run.error && isProtocolNotOffered(run.error)) {
    state.status = 'not-offered';
    state.note = notOfferedNote(cell.protocol, run.protocol.negotiated, run.error.message);
    state.error = run.error;
  } else if (run.error) {
    // The run ended early (target unreachable, error rate over the limit…): keep what it
    // measured for the record, and stop spending time on this cell.
    state.runs.push(run);
    state.status = 'failed';
    state.note = `the run failed: ${run.error.message}`;
    state.error = run.error;
  } else {
    state.runs.push(run);
    state.status = round === runs - 1 ? 'done' : 'running';
  }
}

/** Records a run that threw instead of returning a result. */
function recordRunFailure(state: CellResult, cell: Cell, err: unknown): void {
  if (isProtocolNotOffered(err)) {
    state.status = 'not-offered';
    const negotiated = isH2labError(err) ? String(err.details.negotiated ?? '') : '';
    state.note = notOfferedNote(cell.protocol, negotiated, err instanceof Error ? err.message : String(err));
  } else {
    state.status = 'failed';
    state.note = `the run failed: ${err instanceof Error ? err.message : String(err)}`;
  }
  state.error = isH2labError(err)
    ? err.toJSON()
    : { code: 'H2LAB_ERR_INTERNAL', message: err instanceof Error ? err.message : String(err) };
}

/**
 * Ends a result: cells still pending or running become interrupted, and the status says whether the
 * comparison was stopped, measured something, or nothing at all.
 */
export function finishCompareResult(result: CompareResult, runs: number, interrupted: boolean): void {
  for (const state of result.cells) {
    if (state.status === 'pending' || state.status === 'running') {
      state.status = 'interrupted';
      state.note =
        state.runs.length === 0
          ? 'not run: the comparison was stopped before this cell'
          : `stopped after ${state.runs.length} of ${runs} runs`;
    }
  }
  const measured = result.cells.some((c) => keptRuns(c).length > 0);
  result.status = interrupted ? 'interrupted' : measured ? 'complete' : 'failed';
  if (interrupted) {
    result.error = new H2labError(
      'H2LAB_ERR_INTERRUPTED',
      'the comparison was stopped; finished runs were kept',
    ).toJSON();
  } else if (!measured) {
    result.error = new H2labError(
      'H2LAB_ERR_COMPARE_NO_RESULTS',
      "no cell produced a measurement: every cell failed or was not offered (see each cell's note)",
      { notes: [...new Set(result.cells.map((c) => c.note).filter(Boolean))] },
    ).toJSON();
  }
}

function notOfferedNote(strategy: StrategyName, negotiated: string, detail: string): string {
  // Not the server's doing: this h2lab has no HTTP/3 (the message says why and how to fix it).
  if (detail.startsWith('HTTP/3 is not available')) return detail;
  // The transport's message says what was negotiated; take it from there when the result did not.
  const said = /negotiated (h2c|h2|http\/1\.1)/.exec(detail)?.[1];
  const got = negotiated && negotiated !== 'none' && negotiated !== 'unknown' ? negotiated : said;
  const http = getStrategy(strategy).http;
  // Over cleartext nothing is negotiated: an h1 cell records http/1.1 though an h2c-only port answered
  // with HTTP/2 frames. A "negotiated" protocol of the version asked for explains nothing.
  const family = !got ? undefined : got === 'http/1.1' ? 'HTTP/1.1' : /^h3/.test(got) ? 'HTTP/3' : 'HTTP/2';
  const how = got && family !== http ? `: it negotiated ${got}` : `: ${detail}`;
  return `${http} not offered by the server${how} (enable ${http} on the server, or leave ${strategy} out of --protocols)`;
}

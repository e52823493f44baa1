/**
 * `--budget`: after the planned runs, further runs only for the cells still undecided, round by
 * round, each cell stopping once decided. Judging a cell again after every round is a sequential
 * test: stopping at the first look that rejects would raise the false-positive rate well above
 * alpha. The correction is Bonferroni over the most looks the budget allows (the planned look plus
 * one per possible extra round): every look, the planned one included, is held to alpha / looks, so
 * the chance that any look calls a difference that is not there stays at most alpha.
 */
import type { CellResult, CompareResult } from '../model/index.ts';
import { runShortfall } from '../report/index.ts';
import { keptRuns } from './analyze.ts';
import { RUNS_FLAG } from './flags.ts';

/** The most runs a cell makes under a budget, planned ones included: `--runs`' own cap. */
export const BUDGET_MAX_RUNS = RUNS_FLAG.max;

/** How the budget's looks are bounded, known after the planned runs and before any extra look. */
interface BudgetPlan {
  /** Most looks: the planned one plus one per extra round the budget could hold. */
  looks: number;
  /** Most runs a cell could make. */
  maxRuns: number;
  /** alpha / looks. */
  alpha: number;
}

/**
 * The looks a budget allows: an extra round runs at least a cell and its baseline, each about
 * `runMs` long, so at most `budgetMs / (2 · runMs)` rounds fit, and no cell makes more than
 * {@link BUDGET_MAX_RUNS} runs. `runMs` is the planned runs' mean length (it depends on their
 * durations, not on their outcomes, so fixing the looks from it keeps the correction sound).
 *
 * @example planBudget({ budgetMs: 60_000, runMs: 1_000, runs: 5, confidence: 0.95 }) // { looks: 31, maxRuns: 35, alpha: 0.0016… }
 */
export function planBudget(o: {
  budgetMs: number;
  runMs: number;
  runs: number;
  confidence: number;
}): BudgetPlan {
  const rounds = Math.max(0, Math.floor(o.budgetMs / (2 * Math.max(1, o.runMs))));
  const extra = Math.min(rounds, Math.max(0, BUDGET_MAX_RUNS - o.runs));
  const looks = 1 + extra;
  return { looks, maxRuns: o.runs + extra, alpha: (1 - o.confidence) / looks };
}

/**
 * Cells (by id) with a comparison against the baseline still undecided (`all`), and those of them
 * more runs of the same length could decide (`open`): runs too short for their link (either side)
 * decide nothing whatever their number, so none are spent on them.
 */
export function undecidedCells(result: CompareResult): { all: Set<string>; open: Set<string> } {
  const short = (c: CellResult | undefined) =>
    c !== undefined && keptRuns(c).some((r) => runShortfall(r) !== undefined);
  const all = new Set<string>();
  const open = new Set<string>();
  for (const c of result.comparisons) {
    if (c.outcome !== 'undecided') continue;
    const same = (x: CellResult) =>
      x.workload === c.workload && x.concurrency === c.concurrency && x.net === c.net;
    const cell = result.cells.find((x) => same(x) && x.protocol === c.protocol);
    if (!cell) continue;
    all.add(cell.id);
    const base = result.cells.find((x) => same(x) && x.protocol === result.baseline);
    if (short(cell) || short(base)) continue;
    if (cell.status === 'done' || cell.status === 'running') open.add(cell.id);
  }
  return { all, open };
}

/**
 * One extra round: for each group (network, workload, concurrency) with an undecided cell, its
 * undecided cells under `maxRuns` runs and their baseline, in matrix order on even rounds and
 * reversed on odd ones so neither side always runs first. Returns cell indexes.
 */
export function budgetRound(
  result: CompareResult,
  undecided: Set<string>,
  maxRuns: number,
  round: number,
): number[] {
  const groups = new Map<string, number[]>();
  result.cells.forEach((c, i) => {
    const k = `${c.net}/${c.workload}/${c.concurrency}`;
    groups.set(k, [...(groups.get(k) ?? []), i]);
  });
  const order: number[] = [];
  for (const members of groups.values()) {
    const open = members.filter(
      (i) => undecided.has(result.cells[i]!.id) && result.cells[i]!.runs.length < maxRuns,
    );
    if (open.length === 0) continue;
    const base = members.find((i) => result.cells[i]!.protocol === result.baseline);
    if (base === undefined || result.cells[base]!.status === 'failed') continue;
    const members2 = members.filter((i) => i === base || open.includes(i));
    order.push(...(round % 2 === 0 ? members2 : members2.reverse()));
  }
  return order;
}

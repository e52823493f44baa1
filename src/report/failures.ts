/**
 * What failed in a cell, from the counts its runs recorded (`counts.failed`, `counts.byStatus`,
 * `counts.byFailure`) or, when no run measured anything, from its runs' error: one summary that the
 * answer, the tables and the HTML all quote, so a 404 target or a cell with reset requests says so
 * with the same numbers everywhere.
 */
import { STATUS_CODES } from 'node:http';
import type { CellResult, RunResult, Workload } from '../model/index.ts';

/** The failures of one cell, summed over the runs it kept (or every run when it kept none). */
interface CellFailures {
  /** Requests that failed: a transport failure or a status ≥ 400. */
  failed: number;
  total: number;
  /** Statuses ≥ 400 with their counts, most first: [["404", 3809]]. */
  statuses: Array<[string, number]>;
  /** Transport failure classes with their counts, most first: [["reset", 190]]. */
  classes: Array<[string, number]>;
  /** The runs' error when no request was counted (the target unreachable, TLS refused). */
  error?: string;
  /** For a table cell: "190 of 3,800: reset ×190", "all 3,809: 404 Not Found ×3,809". */
  table: string;
  /** With its counts: "190 of 3,800 requests failed, 5.0% (reset ×190)". */
  short: string;
  /** Without counts, for lines that group cells: "5.0% failed (reset)", "every request failed (404 Not Found)". */
  brief: string;
}

const n = (x: number): string => x.toLocaleString('en-US');

/** "404 Not Found". */
export function statusText(code: string): string {
  const name = STATUS_CODES[Number(code)];
  return name ? `${code} ${name}` : code;
}

/** The runs a cell's failures are read from: the kept ones, or all when it kept none (a failed cell). */
function runsOf(cell: CellResult): RunResult[] {
  const kept = cell.runs.slice(cell.warmupRuns);
  return kept.length > 0 ? kept : cell.runs;
}

function add(into: Map<string, number>, from: Record<string, number | undefined>): void {
  for (const [k, v] of Object.entries(from)) if (v) into.set(k, (into.get(k) ?? 0) + v);
}

const sorted = (m: Map<string, number>): Array<[string, number]> => [...m].sort((a, b) => b[1] - a[1]);

/** A run error's message without its advice ("…: check the URL's host and port …"). */
function errorWords(message: string): string {
  return message.replace(/^the run failed: /, '').split(/: (?=check|see|add|use|try|give|set)/)[0]!;
}

/**
 * The failures of a cell, or undefined when every request of the runs it reads succeeded (and no
 * run ended in an error).
 */
export function cellFailures(cell: CellResult): CellFailures | undefined {
  const runs = runsOf(cell);
  let failed = 0;
  let total = 0;
  const statuses = new Map<string, number>();
  const classes = new Map<string, number>();
  for (const r of runs) {
    failed += r.counts.failed;
    total += r.counts.total;
    add(statuses, Object.fromEntries(Object.entries(r.counts.byStatus).filter(([s]) => Number(s) >= 400)));
    add(classes, r.counts.byFailure);
  }
  const err = runs.find((r) => r.error && r.error.code !== 'H2LAB_ERR_ERROR_RATE')?.error;
  if (failed === 0 && !err && cell.status !== 'failed') return undefined;
  const st = sorted(statuses);
  const cl = sorted(classes);
  const kinds = [...st.map(([s, k]) => `${statusText(s)} ×${n(k)}`), ...cl.map(([c, k]) => `${c} ×${n(k)}`)];
  const names = [...st.map(([s]) => statusText(s)), ...cl.map(([c]) => c)].join(', ');
  let short: string;
  let brief: string;
  const table =
    total === 0
      ? err
        ? errorWords(err.message)
        : 'no request completed'
      : `${failed === total ? 'all' : `${n(failed)} of`} ${n(total)}: ${kinds.join(', ')}`;
  if (total === 0) {
    const why = err ? errorWords(err.message) : cell.note ? errorWords(cell.note) : 'no request was made';
    short = `no request completed: ${why}`;
    brief = short;
  } else if (failed === total) {
    short = `all ${n(total)} requests failed (${kinds.join(', ')})`;
    brief = `every request failed (${names})`;
  } else {
    const pct = (100 * failed) / total;
    const p = `${pct < 1 ? pct.toFixed(2) : pct.toFixed(1)}%`;
    short = `${n(failed)} of ${n(total)} requests failed, ${p} (${kinds.join(', ')})`;
    brief = `${p} of requests failed (${names})`;
  }
  return {
    failed,
    total,
    statuses: st,
    classes: cl,
    ...(err ? { error: errorWords(err.message) } : {}),
    table,
    short,
    brief,
  };
}

/** "for /nothing-here" — the paths a workload asked for, at most three. */
export function pathsText(w: Workload): string {
  const shown = w.paths.slice(0, 3).join(', ');
  return w.paths.length > 3 ? `${shown} … (${w.paths.length} paths)` : shown;
}

/**
 * results.json on disk: written whole after every run (temporary file + rename, so a reader or a
 * crash never sees half a file), and read back with validation for `h2lab report`.
 */
import { H2labError, readOptionText, writeFileAtomic } from '../core/index.ts';
import {
  COMPARE_RESULT_VERSION,
  type CompareResult,
  compareResultSchema,
  RUN_RESULT_VERSION,
  type RunResult,
  runResultSchema,
} from '../model/index.ts';

/**
 * Writes `result` to `path` atomically: a rename on the same file system replaces the old file in
 * one step, so an interrupted compare always leaves the last complete state.
 */
export function writeResultsAtomic(path: string, result: CompareResult): void {
  writeFileAtomic(path, resultsJson(result));
}

/** The text of a results.json (one space of indent: diffable, not bloated). */
export function resultsJson(result: CompareResult): string {
  return `${JSON.stringify(result, null, 1)}\n`;
}

/** What `h2lab report` reads: a comparison's results.json, or a bench run's `--json` file. */
const REPORTABLE = 'pass the results.json written by h2lab compare or the --json file of h2lab bench';

/** A result file's JSON, or H2LAB_ERR_RESULT_FILE naming the file when it is none. */
function readResultJson(path: string): unknown {
  const text = readOptionText(path, 'report', { kind: 'result', code: 'H2LAB_ERR_RESULT_FILE' });
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new H2labError(
      'H2LAB_ERR_RESULT_FILE',
      `${path} is not JSON (${(err as Error).message}); ${REPORTABLE}`,
      { path },
    );
  }
}

/** H2LAB_ERR_RESULT_FILE for a result of another version than this h2lab reads. */
function versionError(path: string, version: unknown, expected: number, rerun: string): H2labError {
  return new H2labError(
    'H2LAB_ERR_RESULT_FILE',
    `${path} has result version ${JSON.stringify(version)}; this h2lab reads version ${expected}: ${rerun} with this version`,
    { path, version },
  );
}

/** H2LAB_ERR_RESULT_FILE for the first field of `path` that its schema refuses. */
function fieldError(path: string, where: PropertyKey[], message: string): H2labError {
  return new H2labError(
    'H2LAB_ERR_RESULT_FILE',
    `${path}: field ${where.join('.') || '(root)'}: ${message}`,
    {
      path,
      field: where.join('.'),
    },
  );
}

/**
 * Reads and validates a file for `h2lab report`: a comparison (`h2lab.compare`) or one bench run
 * (`h2lab.run`, what `bench --json` writes). Anything else is H2LAB_ERR_RESULT_FILE naming the file,
 * the kind it holds and the two it could be.
 */
export function loadReportableResult(
  path: string,
): { kind: 'h2lab.compare'; result: CompareResult } | { kind: 'h2lab.run'; result: RunResult } {
  const json = readResultJson(path);
  const kind = (json as { kind?: unknown })?.kind;
  if (kind === 'h2lab.compare') return { kind, result: compareResultOf(path, json) };
  if (kind !== 'h2lab.run') {
    throw new H2labError(
      'H2LAB_ERR_RESULT_FILE',
      `${path} is not a result h2lab report renders (kind ${JSON.stringify(kind)}, expected "h2lab.compare" or "h2lab.run"); ${REPORTABLE}`,
      { path, kind, kinds: ['h2lab.compare', 'h2lab.run'] },
    );
  }
  const version = (json as { version?: unknown }).version;
  if (version !== RUN_RESULT_VERSION)
    throw versionError(path, version, RUN_RESULT_VERSION, 're-run the bench');
  const r = runResultSchema.safeParse(json);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw fieldError(path, i.path, i.message);
  }
  return { kind, result: r.data };
}

/** Reads and validates a results.json written by `h2lab compare`. */
export function loadCompareResult(path: string): CompareResult {
  return compareResultOf(path, readResultJson(path));
}

/** `json` read from `path` as a comparison of this version, or H2LAB_ERR_RESULT_FILE. */
function compareResultOf(path: string, json: unknown): CompareResult {
  const kind = (json as { kind?: unknown })?.kind;
  const version = (json as { version?: unknown })?.version;
  if (kind !== 'h2lab.compare') {
    throw new H2labError(
      'H2LAB_ERR_RESULT_FILE',
      `${path} is not an h2lab compare result (kind ${JSON.stringify(kind)}, expected "h2lab.compare")${kind === 'h2lab.run' ? `: a bench run's file is reported alone (h2lab report ${path})` : ''}`,
      {
        path,
        kind,
      },
    );
  }
  if (version !== COMPARE_RESULT_VERSION)
    throw versionError(path, version, COMPARE_RESULT_VERSION, 're-run the comparison');
  const bad = (where: PropertyKey[], message: string): H2labError => fieldError(path, where, message);
  const r = compareResultSchema.safeParse(json);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw bad(i.path, i.message);
  }
  // The compare schema takes each run on its kind (the published schema stays small); every figure the
  // report re-analyses is checked here against the run's own schema (a negative count is refused).
  for (const [ci, cell] of r.data.cells.entries()) {
    for (const [ri, run] of cell.runs.entries()) {
      const v = runResultSchema.safeParse(run);
      if (!v.success) {
        const i = v.error.issues[0]!;
        throw bad(['cells', ci, 'runs', ri, ...i.path], i.message);
      }
    }
  }
  return r.data;
}

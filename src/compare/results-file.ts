/**
 * results.json on disk: written whole after every run (temporary file + rename, so a reader or a
 * crash never sees half a file), and read back with validation for `h2lab report`.
 */
import { H2labError, readOptionText, writeFileAtomic } from '../core/index.ts';
import {
  COMPARE_RESULT_VERSION,
  type CompareResult,
  compareResultSchema,
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

/** Reads and validates a results.json written by `h2lab compare`. */
export function loadCompareResult(path: string): CompareResult {
  const text = readOptionText(path, 'report', { kind: 'result', code: 'H2LAB_ERR_RESULT_FILE' });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new H2labError(
      'H2LAB_ERR_RESULT_FILE',
      `${path} is not JSON (${(err as Error).message}); pass the results.json written by h2lab compare`,
      {
        path,
      },
    );
  }
  const kind = (json as { kind?: unknown })?.kind;
  const version = (json as { version?: unknown })?.version;
  if (kind !== 'h2lab.compare') {
    throw new H2labError(
      'H2LAB_ERR_RESULT_FILE',
      `${path} is not an h2lab compare result (kind ${JSON.stringify(kind)}, expected "h2lab.compare")`,
      {
        path,
        kind,
      },
    );
  }
  if (version !== COMPARE_RESULT_VERSION) {
    throw new H2labError(
      'H2LAB_ERR_RESULT_FILE',
      `${path} has result version ${JSON.stringify(version)}; this h2lab reads version ${COMPARE_RESULT_VERSION}: re-run the comparison with this version`,
      { path, version },
    );
  }
  const bad = (where: PropertyKey[], message: string): H2labError =>
    new H2labError('H2LAB_ERR_RESULT_FILE', `${path}: field ${where.join('.') || '(root)'}: ${message}`, {
      path,
      field: where.join('.'),
    });
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

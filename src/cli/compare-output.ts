/**
 * Where a comparison's result goes, for every command that ends with one (compare, and a sharded
 * comparison's shard local, k8s run and merge): the table and the verdict, results.json, report.md,
 * report.html, --json and --csv, with a fallback file when a write fails, and the exit status.
 */
import { join } from 'node:path';
import { expectationsFailed, resultsJson } from '../compare/index.ts';
import { checkOutputPath, ERROR_CODES, H2labError, invalidOption, writeWithFallback } from '../core/index.ts';
import type { CompareResult } from '../model/index.ts';
import { compareCsv, loadHtmlAssets, renderTerminal } from '../report/index.ts';
import { exitWithError, outputWidth } from './output.ts';
import { writeRenderedReports } from './report-files.ts';

/** Where a comparison's result goes: the flags compare, shard local, k8s run and merge share. */
export interface CompareOutputFlags {
  out: string;
  json?: string;
  csv?: string;
  quiet?: boolean;
  /** The answer alone on the terminal (compare --brief). */
  brief?: boolean;
}

/** Checks the output flags before any run: a comparison takes minutes, its output must have somewhere to go. */
export function checkCompareOutputs(flags: CompareOutputFlags): void {
  if (flags.json === '-' && flags.csv === '-')
    throw invalidOption('--csv', '-', '--json - already writes to stdout: give --csv a file');
  checkOutputPath(flags.out, '--out', 'dir');
  if (flags.json && flags.json !== '-') checkOutputPath(flags.json, '--json', 'file');
  if (flags.csv && flags.csv !== '-') checkOutputPath(flags.csv, '--csv', 'file');
}

/**
 * Prints the answer, the tables and the verdict (the answer alone with `brief`), writes results.json, report.md, report.html (and --json, --csv),
 * and sets the exit status: the result's error, else a failed --expect condition (exit 1).
 */
export function writeCompareOutputs(
  result: CompareResult,
  flags: CompareOutputFlags,
  expectUndecided: 'pass' | 'fail' | undefined,
  assets = loadHtmlAssets(),
): void {
  const resultsPath = join(flags.out, 'results.json');
  const out = flags.out;
  const toStdout = flags.json === '-' || flags.csv === '-';
  const tableOut = toStdout ? process.stderr : process.stdout;
  // The table first, so that it is on the screen whatever happens to the files.
  if (!flags.quiet)
    tableOut.write(
      renderTerminal(result, { width: outputWidth(tableOut), ...(flags.brief ? { brief: true } : {}) }),
    );
  const json = resultsJson(result);
  if (flags.json === '-') process.stdout.write(json);
  if (flags.csv === '-') process.stdout.write(compareCsv(result));
  const written = writeWithFallback(resultsPath, json, 'h2lab-compare');
  let files: { md: string; html: string } | undefined;
  if (!written.fallback) {
    try {
      files = writeRenderedReports(out, result, assets);
    } catch (err) {
      written.reason = (err as NodeJS.ErrnoException).code ?? String(err);
    }
  }
  const extra =
    flags.json && flags.json !== '-' ? writeWithFallback(flags.json, json, 'h2lab-compare') : undefined;
  const csv =
    flags.csv && flags.csv !== '-'
      ? writeWithFallback(flags.csv, compareCsv(result), 'h2lab-compare', 'csv')
      : undefined;
  process.stderr.write(
    `wrote ${[written.path, ...(files ? [files.md, files.html] : []), ...(extra ? [extra.path] : []), ...(csv ? [csv.path] : [])].join(', ')}\n`,
  );
  const failed = written.fallback || !files ? { option: '--out', path: out, w: written } : undefined;
  const failedJson = extra?.fallback ? { option: '--json', path: flags.json!, w: extra } : undefined;
  const failedCsv = csv?.fallback ? { option: '--csv', path: flags.csv!, w: csv } : undefined;
  const f = failed ?? failedJson ?? failedCsv;
  if (f) {
    const where = f.w.fallback
      ? `the result was written to ${f.w.path} instead`
      : `results.json was written, the reports were not`;
    exitWithError(
      new H2labError('H2LAB_ERR_OUTPUT', `${f.option} ${f.path}: writing failed (${f.w.reason}); ${where}`, {
        option: f.option,
        path: f.path,
        fallback: f.w.path,
        reason: f.w.reason,
      }),
    );
  }
  if (result.error) {
    const e = result.error;
    process.stderr.write(`h2lab: ${e.code}: ${e.message}\n`);
    process.exitCode = (ERROR_CODES as Record<string, { exit: number }>)[e.code]?.exit ?? 1;
    return;
  }
  // The gate, after every output is written: a failed condition is a finding, exit 1.
  const unmet = expectationsFailed(result.expectations ?? [], expectUndecided ?? 'pass');
  if (unmet.length > 0) {
    const e = new H2labError(
      'H2LAB_ERR_COMPARE_EXPECT_FAILED',
      `${unmet.length} of ${result.expectations!.length} --expect condition(s) failed: ${unmet.map((x) => `${x.condition} (${x.status}: ${x.reason})`).join('; ')}`,
      { failed: unmet.map((x) => x.condition) },
    );
    process.stderr.write(`h2lab: ${e.code}: ${e.message}\n`);
    process.exitCode = e.exitCode;
    return;
  }
  // Cells that failed for a target reason: the comparison is incomplete, exit 1 (results kept).
  const failedCells = result.cells.filter((c) => c.status === 'failed');
  if (failedCells.length > 0) {
    const first = failedCells[0]!;
    const e = new H2labError(
      'H2LAB_ERR_COMPARE_CELLS_FAILED',
      `${failedCells.length} of ${result.cells.length} cells failed (first: ${first.id}${first.error ? `: ${first.error.message}` : ''}); every output was written — fix the target and run again`,
      { failed: failedCells.map((c) => c.id) },
    );
    process.stderr.write(`h2lab: ${e.code}: ${e.message}\n`);
    process.exitCode = e.exitCode;
  }
}

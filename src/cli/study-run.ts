/**
 * `h2lab study NAME`'s run, loaded by its action (src/cli/study.ts) when a study runs: the study's
 * implementation, the harness and the renderers are not what `h2lab study --help` needs.
 */
import { join } from 'node:path';
import {
  checkOutputPath,
  ERROR_CODES,
  H2labError,
  readFlag,
  writeFileAtomic,
  writeWithFallback,
} from '../core/index.ts';
import { SEED_FLAG } from '../load/meta.ts';
import type { StudyResult } from '../model/index.ts';
import { renderStudyHtml, renderStudyMarkdown, renderStudyText } from '../report/index.ts';
import { loadStudy, type StudyDescriptor, startStudy } from '../studies/index.ts';
import { captureRequestFromFlags } from './net-options.ts';
import { exitWithError, outputWidth, untilDoneOrStopped } from './output.ts';
import { progressBar } from './progress.ts';
import type { StudyCommonFlags } from './study.ts';

function writeReports(dir: string, r: StudyResult): void {
  writeFileAtomic(join(dir, 'results.json'), `${JSON.stringify(r, null, 2)}\n`);
  writeFileAtomic(join(dir, 'report.md'), renderStudyMarkdown(r));
  writeFileAtomic(join(dir, 'report.html'), renderStudyHtml(r));
}

/**
 * Runs the study `h2lab study NAME` named, with the options its flags gave (read by
 * `studyOptionsFromFlags` before this module loaded): progress on stderr, results.json after every
 * cell, report.md and report.html, the tables at the end. Loads the study's implementation.
 */
export async function runStudyCommand(
  descriptor: StudyDescriptor,
  flags: StudyCommonFlags,
  options: Record<string, unknown>,
): Promise<void> {
  const seed = flags.seed !== undefined ? (readFlag(SEED_FLAG, flags.seed) as number) : undefined;
  const out = flags.out ?? `h2lab-study-${descriptor.name}`;
  // Before anything runs: a study takes minutes, its output must have somewhere to go.
  checkOutputPath(out, '--out', 'dir');
  if (flags.json && flags.json !== '-') checkOutputPath(flags.json, '--json', 'file');
  const toStdout = flags.json === '-';
  const textOut = toStdout ? process.stderr : process.stdout;
  const study = await loadStudy(descriptor.name);
  if (!study) throw new Error(`study ${descriptor.name} is listed but cannot be loaded`);
  const bar = progressBar(process.stderr);
  const capture = captureRequestFromFlags(flags, true);
  const h = startStudy(study, {
    quick: flags.quick === true,
    ...(capture ? { capture: { ...capture, all: flags.captureAll === true } } : {}),
    ...(seed !== undefined ? { seed } : {}),
    options,
  });
  let writeFailure: string | undefined;
  let latest: StudyResult | undefined;
  h.events.on('update', (r) => {
    latest = r;
    try {
      writeReports(out, r);
    } catch (err) {
      if (writeFailure !== undefined) return;
      writeFailure = (err as NodeJS.ErrnoException).code ?? String(err);
      bar.line(
        `h2lab study: --out ${out}: writing failed (${writeFailure}); the study goes on, and the result is written to a fallback file at the end`,
      );
    }
  });
  if (!flags.quiet) {
    process.stderr.write(
      `h2lab study ${descriptor.name}${flags.quick ? ' --quick' : ''} → ${join(out, 'results.json')}\n`,
    );
    h.events.on('cell-start', ({ id, done, total }) => bar.update(done, total, 'units', id));
    h.events.on('cell-progress', ({ id, done, total }) => bar.update(done, total, 'units', id));
    h.events.on('cell-end', ({ cell, done, total }) => {
      const secs = (cell.durationMs / 1000).toFixed(1);
      bar.line(
        `  ${cell.id}: ${cell.status} in ${secs}s${cell.reason ? ` (${cell.reason})` : ''} [${Math.round(done)}/${Math.round(total)}]`,
      );
    });
    h.events.on('log', (t) => bar.line(`  ${t}`));
  }
  let result: StudyResult;
  try {
    result = await untilDoneOrStopped(
      h.done,
      h.stop,
      bar.line,
      'h2lab study: stopping after the run in progress (a comparison keeps it with its finished runs); finished cells are kept',
      () => {
        // The second Ctrl-C: the cells finished so far, marked interrupted, before the exit.
        if (!latest) return undefined;
        const r: StudyResult = {
          ...structuredClone(latest),
          status: 'interrupted',
          error: {
            code: 'H2LAB_ERR_INTERRUPTED',
            message: 'the study was stopped at once; finished cells are kept',
          },
          finishedAt: new Date().toISOString(),
        };
        writeReports(out, r);
        return `wrote ${join(out, 'results.json')} (status "interrupted", the cells finished so far), report.md and report.html`;
      },
    );
  } finally {
    bar.clear();
  }
  if (!flags.quiet) textOut.write(renderStudyText(result, { width: Math.min(outputWidth(textOut), 100) }));
  const json = `${JSON.stringify(result, null, 2)}\n`;
  if (toStdout) process.stdout.write(json);
  const written = writeWithFallback(join(out, 'results.json'), json, `h2lab-study-${descriptor.name}`);
  let reportsWritten = false;
  if (!written.fallback) {
    try {
      writeReports(out, result);
      reportsWritten = true;
    } catch (err) {
      written.reason = (err as NodeJS.ErrnoException).code ?? String(err);
    }
  }
  const extra =
    flags.json && !toStdout
      ? writeWithFallback(flags.json, json, `h2lab-study-${descriptor.name}`)
      : undefined;
  process.stderr.write(
    `wrote ${[written.path, ...(reportsWritten ? [join(out, 'report.md'), join(out, 'report.html')] : []), ...(extra ? [extra.path] : [])].join(', ')}\n`,
  );
  if (written.fallback || !reportsWritten || extra?.fallback) {
    const option = written.fallback || !reportsWritten ? '--out' : '--json';
    const w = option === '--out' ? written : extra!;
    exitWithError(
      new H2labError(
        'H2LAB_ERR_OUTPUT',
        `${option} ${option === '--out' ? out : flags.json}: writing failed (${w.reason}); ${w.fallback ? `the result was written to ${w.path} instead` : 'results.json was written, the reports were not'}`,
        {
          option,
          fallback: w.path,
          reason: w.reason,
        },
      ),
    );
  }
  if (result.error) {
    process.stderr.write(`h2lab: ${result.error.code}: ${result.error.message}\n`);
    process.exitCode = (ERROR_CODES as Record<string, { exit: number }>)[result.error.code]?.exit ?? 1;
  }
}

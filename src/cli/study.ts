/**
 * `h2lab study NAME`: reruns one of the field studies. One subcommand per registered study (its own
 * flags declared by the study), the same output as compare: results.json after every cell (so Ctrl-C
 * or a crash leaves a valid file), report.md and report.html, the tables and the explanation on the
 * terminal.
 */
import { join } from 'node:path';
import type { Command } from 'commander';
import {
  checkOutputPath,
  ERROR_CODES,
  H2labError,
  readFlag,
  writeFileAtomic,
  writeWithFallback,
} from '../core/index.ts';
import { SEED_FLAG } from '../load/index.ts';
import type { StudyResult } from '../model/index.ts';
import { renderStudyHtml, renderStudyMarkdown, renderStudyText } from '../report/index.ts';
import { listStudies, type Study, startStudy } from '../studies/index.ts';
import { JSON_FLAG, OUT_FLAG, QUIET_FLAG } from './common-flags.ts';
import { addFlags, optionOf, valuesOf } from './flags.ts';
import { exitWithError, outputWidth, untilDoneOrStopped } from './output.ts';
import { progressBar } from './progress.ts';

interface StudyCommonFlags {
  quick?: boolean;
  out?: string;
  json?: string;
  seed?: string;
  quiet?: boolean;
  [key: string]: unknown;
}

/** The study's own flags → the options it was given (by each use's key). Exported for tests. */
export function studyOptionsFromFlags(study: Study, flags: Record<string, unknown>): Record<string, unknown> {
  return valuesOf(flags, study.flags ?? []);
}

function writeReports(dir: string, r: StudyResult): void {
  writeFileAtomic(join(dir, 'results.json'), `${JSON.stringify(r, null, 2)}\n`);
  writeFileAtomic(join(dir, 'report.md'), renderStudyMarkdown(r));
  writeFileAtomic(join(dir, 'report.html'), renderStudyHtml(r));
}

async function runStudyCommand(study: Study, flags: StudyCommonFlags): Promise<void> {
  const options = studyOptionsFromFlags(study, flags);
  const seed = flags.seed !== undefined ? (readFlag(SEED_FLAG, flags.seed) as number) : undefined;
  const out = flags.out ?? `h2lab-study-${study.name}`;
  // Before anything runs: a study takes minutes, its output must have somewhere to go.
  checkOutputPath(out, '--out', 'dir');
  if (flags.json && flags.json !== '-') checkOutputPath(flags.json, '--json', 'file');
  const toStdout = flags.json === '-';
  const textOut = toStdout ? process.stderr : process.stdout;
  const bar = progressBar(process.stderr);
  const h = startStudy(study, {
    quick: flags.quick === true,
    ...(seed !== undefined ? { seed } : {}),
    options,
  });
  let writeFailure: string | undefined;
  h.events.on('update', (r) => {
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
      `h2lab study ${study.name}${flags.quick ? ' --quick' : ''} → ${join(out, 'results.json')}\n`,
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
      'h2lab study: stopping after the cell in progress; finished cells are kept',
    );
  } finally {
    bar.clear();
  }
  if (!flags.quiet) textOut.write(renderStudyText(result, { width: Math.min(outputWidth(textOut), 100) }));
  const json = `${JSON.stringify(result, null, 2)}\n`;
  if (toStdout) process.stdout.write(json);
  const written = writeWithFallback(join(out, 'results.json'), json, `h2lab-study-${study.name}`);
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
    flags.json && !toStdout ? writeWithFallback(flags.json, json, `h2lab-study-${study.name}`) : undefined;
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

export function register(program: Command): void {
  const cmd = program.command('study');
  const names = listStudies().map((s) => s.name);
  // `h2lab study NAME` with a name no study has: say which names there are.
  cmd.on('command:*', (operands: string[]) => {
    exitWithError(
      new H2labError(
        'H2LAB_ERR_USAGE',
        `unknown study '${operands[0]}': use one of ${names.join(', ')}, e.g. h2lab study ${names[0]} --quick`,
      ),
    );
  });
  for (const study of listStudies()) {
    const sub = cmd
      .command(study.name)
      .description(`${study.title} — reruns ${study.source}`)
      .option('--quick', 'a smaller grid that runs in under 2 minutes (the tests use it); same files')
      .addOption(
        optionOf({
          of: OUT_FLAG,
          arg: 'dir',
          description: 'where results.json, report.md and report.html go',
          defaultText: 'h2lab-study-NAME',
        }),
      )
      .addOption(
        optionOf({
          of: JSON_FLAG,
          description: 'also write results.json here; - for stdout (the tables go to stderr)',
        }),
      )
      .addOption(optionOf(SEED_FLAG))
      .addOption(optionOf({ of: QUIET_FLAG, description: 'no progress, no tables' }));
    addFlags(sub, study.flags ?? []);
    sub.action(async (flags: StudyCommonFlags) => runStudyCommand(study, flags));
  }
}

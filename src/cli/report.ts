/**
 * `h2lab report results.json` re-renders a saved comparison (terminal, report.md, report.html) after
 * re-analysing it (`reanalyze` in src/compare); `h2lab report run.json` renders a bench run's
 * `--json` file (its summary, report.md and report.html with the capture's time-sequence graphs);
 * `h2lab report before.json after.json` compares two saved comparisons with the same statistics.
 */

import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { MIN_EFFECT_FLAG } from '../compare/meta.ts';
import { checkOutputPath, invalidOption, readFlag, writeFileAtomic } from '../core/index.ts';
import { OUT_FLAG, QUIET_FLAG } from './common-flags.ts';
import { optionOf } from './flags.ts';
import { outputWidth } from './output.ts';

interface ReportFlags {
  out?: string;
  minEffect?: string;
  quiet?: boolean;
}

function parseMinEffect(text: string | undefined): number | undefined {
  return text === undefined ? undefined : (readFlag(MIN_EFFECT_FLAG, text) as number);
}

export function register(program: Command): void {
  program
    .command('report')
    .argument('<results>', 'results.json written by h2lab compare, or the --json file of h2lab bench')
    .argument('[after]', 'a second results.json: report what changed from the first to this one')
    .addOption(
      optionOf({
        of: OUT_FLAG,
        arg: 'dir',
        description: 'where to write report.md and report.html',
        defaultText: 'next to the results file',
      }),
    )
    .addOption(optionOf({ of: MIN_EFFECT_FLAG, defaultText: 'as saved' }))
    .addOption(optionOf({ of: QUIET_FLAG, description: 'do not print the table' }))
    .action(async (first: string, second: string | undefined, flags: ReportFlags) => {
      // Before anything is rendered: an --out that cannot take the files is a usage error, not a
      // stack trace after the table (nor a hang on /proc).
      const outDir = flags.out ?? dirname(second ?? first);
      checkOutputPath(outDir, flags.out !== undefined ? '--out' : "the results file's directory", 'dir');
      // The analysis and the renderers load when the command runs, not with its flags.
      const { DEFAULT_MIN_EFFECT, diffResults, loadCompareResult, loadReportableResult, reanalyze } =
        await import('../compare/index.ts');
      const {
        loadHtmlAssets,
        renderDiffHtml,
        renderDiffMarkdown,
        renderDiffTerminal,
        renderRunText,
        renderTerminal,
      } = await import('../report/index.ts');
      const { writeRenderedReports, writeRunReports } = await import('./report-files.ts');
      if (second === undefined) {
        const loaded = loadReportableResult(first);
        if (loaded.kind === 'h2lab.run') {
          // One bench run: nothing to re-analyse, and no comparison for --min-effect to decide.
          if (flags.minEffect !== undefined)
            throw invalidOption(
              '--min-effect',
              flags.minEffect,
              'a bench run has no comparison: leave it out',
            );
          const run = loaded.result;
          if (!flags.quiet)
            process.stdout.write(`${renderRunText(run, { width: outputWidth(process.stdout) })}\n`);
          const files = writeRunReports(outDir, run, loadHtmlAssets());
          process.stderr.write(`wrote ${files.md} and ${files.html}\n`);
          return;
        }
        const minEffect = parseMinEffect(flags.minEffect);
        const a = reanalyze(loaded.result, minEffect === undefined ? {} : { minEffect });
        if (!flags.quiet) process.stdout.write(renderTerminal(a, { width: outputWidth(process.stdout) }));
        const files = writeRenderedReports(outDir, a, loadHtmlAssets());
        process.stderr.write(`wrote ${files.md} and ${files.html}\n`);
        return;
      }
      const saved = loadCompareResult(first);
      const b = loadCompareResult(second);
      const minEffect = parseMinEffect(flags.minEffect) ?? DEFAULT_MIN_EFFECT;
      const d = diffResults(saved, b, { minEffect, labels: [first, second] });
      if (!flags.quiet) process.stdout.write(renderDiffTerminal(d));
      const dir = outDir;
      mkdirSync(dir, { recursive: true });
      writeFileAtomic(join(dir, 'diff.md'), renderDiffMarkdown(d));
      writeFileAtomic(join(dir, 'diff.html'), renderDiffHtml(d));
      process.stderr.write(`wrote ${join(dir, 'diff.md')} and ${join(dir, 'diff.html')}\n`);
    });
}

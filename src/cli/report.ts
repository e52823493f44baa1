/**
 * `h2lab report results.json` re-renders a saved comparison (terminal, report.md, report.html) after
 * re-analysing it (`reanalyze` in src/compare);
 * `h2lab report before.json after.json` compares two saved comparisons with the same statistics.
 */

import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_MIN_EFFECT, diffResults, loadCompareResult, reanalyze } from '../compare/index.ts';
import { checkOutputPath, invalidOption, writeFileAtomic } from '../core/index.ts';
import {
  loadHtmlAssets,
  renderDiffHtml,
  renderDiffMarkdown,
  renderDiffTerminal,
  renderTerminal,
} from '../report/index.ts';
import { outputWidth } from './output.ts';
import { writeRenderedReports } from './report-files.ts';

interface ReportFlags {
  out?: string;
  minEffect?: string;
  quiet?: boolean;
}

function parseMinEffect(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const s = text.trim();
  const n = s.endsWith('%') ? Number(s.slice(0, -1)) / 100 : Number(s);
  if (!Number.isFinite(n) || n < 0 || n > 10)
    throw invalidOption('--min-effect', text, 'use a percentage such as 5% or a fraction such as 0.05');
  return n;
}

export function register(program: Command): void {
  program
    .command('report')
    .argument('<results>', 'results.json written by h2lab compare')
    .argument('[after]', 'a second results.json: report what changed from the first to this one')
    .option('--out <dir>', 'where to write report.md and report.html (default: next to the results file)')
    .option('--min-effect <fraction>', 'smallest difference called a difference, e.g. 5% (default: as saved)')
    .option('-q, --quiet', 'do not print the table')
    .action((first: string, second: string | undefined, flags: ReportFlags) => {
      // Before anything is rendered: an --out that cannot take the files is a usage error, not a
      // stack trace after the table (nor a hang on /proc).
      const outDir = flags.out ?? dirname(second ?? first);
      checkOutputPath(outDir, flags.out !== undefined ? '--out' : "the results file's directory", 'dir');
      const saved = loadCompareResult(first);
      if (second === undefined) {
        const minEffect = parseMinEffect(flags.minEffect);
        const a = reanalyze(saved, minEffect === undefined ? {} : { minEffect });
        if (!flags.quiet) process.stdout.write(renderTerminal(a, { width: outputWidth(process.stdout) }));
        const files = writeRenderedReports(outDir, a, loadHtmlAssets());
        process.stderr.write(`wrote ${files.md} and ${files.html}\n`);
        return;
      }
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

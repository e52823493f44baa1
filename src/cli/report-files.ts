/**
 * Writing rendered reports next to a result (a comparison's: shared by `compare` and `report`; a bench
 * run's: by `bench --report` and `report`), each atomically (src/core's writeFileAtomic).
 */
import { join } from 'node:path';
import { writeFileAtomic } from '../core/index.ts';
import type { CompareResult, RunResult } from '../model/index.ts';
import type { HtmlAssets } from '../report/index.ts';
import { renderHtml, renderMarkdown, renderRunHtml, renderRunMarkdown } from '../report/index.ts';

/** Writes `md` as report.md and `html` as report.html into `dir` (made if missing); returns their paths. */
function writeReportPair(dir: string, md: string, html: string): { md: string; html: string } {
  const paths = { md: join(dir, 'report.md'), html: join(dir, 'report.html') };
  writeFileAtomic(paths.md, md);
  writeFileAtomic(paths.html, html);
  return paths;
}

/** Writes a comparison's report.md and report.html into `dir`; returns their paths. */
export function writeRenderedReports(
  dir: string,
  result: CompareResult,
  assets: HtmlAssets,
): { md: string; html: string } {
  return writeReportPair(dir, renderMarkdown(result), renderHtml(result, assets));
}

/** Writes a bench run's report.md and report.html into `dir`; returns their paths. */
export function writeRunReports(
  dir: string,
  result: RunResult,
  assets: HtmlAssets,
): { md: string; html: string } {
  return writeReportPair(dir, renderRunMarkdown(result), renderRunHtml(result, assets));
}

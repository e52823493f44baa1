/**
 * Writing a comparison's rendered reports next to its results.json (shared by `compare` and
 * `report`), each atomically (src/core's writeFileAtomic).
 */
import { join } from 'node:path';
import { writeFileAtomic } from '../core/index.ts';
import type { CompareResult } from '../model/index.ts';
import type { HtmlAssets } from '../report/index.ts';
import { renderHtml, renderMarkdown } from '../report/index.ts';

/** Writes report.md and report.html into `dir`; returns their paths. */
export function writeRenderedReports(
  dir: string,
  result: CompareResult,
  assets: HtmlAssets,
): { md: string; html: string } {
  const md = join(dir, 'report.md');
  const html = join(dir, 'report.html');
  writeFileAtomic(md, renderMarkdown(result));
  writeFileAtomic(html, renderHtml(result, assets));
  return { md, html };
}

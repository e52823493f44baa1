/**
 * Writing a comparison's rendered reports next to its results.json (shared by `compare` and
 * `report`). Each file is written to a temporary name and renamed, so a reader never sees half.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CompareResult } from '../model/index.ts';
import type { HtmlAssets } from '../report/index.ts';
import { renderHtml, renderMarkdown } from '../report/index.ts';

/** Writes `text` to `path` atomically. */
export function writeFileAtomic(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/** Writes report.md and report.html into `dir`; returns their paths. */
export function writeRenderedReports(
  dir: string,
  result: CompareResult,
  assets: HtmlAssets,
): { md: string; html: string } {
  mkdirSync(dir, { recursive: true });
  const md = join(dir, 'report.md');
  const html = join(dir, 'report.html');
  writeFileAtomic(md, renderMarkdown(result));
  writeFileAtomic(html, renderHtml(result, assets));
  return { md, html };
}

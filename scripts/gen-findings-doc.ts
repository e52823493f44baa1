// Writes, for each study in docs/findings.md, from its saved full run under
// test/fixtures/studies/full/ where there is one, else from the saved --quick run under
// test/fixtures/studies/ (scripts/gen-study-fixtures.ts makes both), its words derived by today's
// code (Study.rederive):
//   - the "Row by row against the report" block (<!-- findings:NAME:begin … end -->);
//   - the tables the prose discusses (<!-- tables:NAME:begin … end -->, see TABLES);
//   - every figure of the prose written as `0.89<!--=NAME:SECTION:ROW:COLUMN-->`: the cell of that
//     section's row and column, with the decimals written; ROW is the row's first cell, or cells
//     joined by " & " that the row holds (`node & HTTP/2, one session`).
// So the page says what a real run printed and cannot drift from it. Usage:
//   node --import tsx scripts/gen-findings-doc.ts   (test/docs/findings.test.ts fails when stale)
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseStudyResult, type StudyResult } from '../src/model/index.ts';
import { studyFindingsBlock, studyTablesBlock } from '../src/report/index.ts';
import { loadStudy, rederived } from '../src/studies/index.ts';

/** The command each fixture was made with (scripts/gen-study-fixtures.ts). */
export const FIXTURE_COMMANDS: Record<string, string> = {
  chunks: 'h2lab study chunks --quick',
  echo: 'h2lab study echo --quick',
  proxy: 'h2lab study proxy --quick',
  tiles: 'h2lab study tiles --quick --loopback',
};

/** The command each full run was made with (`gen-study-fixtures.ts --full`). */
export const FULL_COMMANDS: Record<string, string> = {
  chunks: 'h2lab study chunks',
  echo: 'h2lab study echo',
  proxy: 'h2lab study proxy',
  tiles: 'h2lab study tiles --loopback',
};

/** The saved run a study's block comes from: its full run when one is saved, else its --quick run. */
export function findingsSource(name: string, root: URL): { file: string; command: string } {
  const fullFile = `test/fixtures/studies/full/${name}.json`;
  if (FULL_COMMANDS[name] && existsSync(new URL(fullFile, root)))
    return { file: fullFile, command: FULL_COMMANDS[name] };
  return { file: `test/fixtures/studies/${name}.json`, command: FIXTURE_COMMANDS[name]! };
}

/** The sections of each study whose tables the page shows (generated, between tables markers). */
export const TABLES: Record<string, string[]> = {
  chunks: [
    'summary',
    'sweep-rtt50ms+cubic',
    'sweep-rtt50ms+bbr',
    'sweep-rtt50ms+loss1%+cubic',
    'sweep-rtt50ms+loss1%+bbr',
  ],
  echo: ['summary-1024', 'summary-1048576', 'windows-1048576'],
};

/** A study's saved run as the page reads it: its words as today's code derives them. */
async function savedRun(name: string, root: URL): Promise<{ r: StudyResult; file: string; command: string }> {
  const { file, command } = findingsSource(name, root);
  const saved = parseStudyResult(JSON.parse(readFileSync(new URL(file, root), 'utf8')));
  const study = await loadStudy(saved.study);
  return { r: study ? rederived(study, saved) : saved, file, command };
}

/** The saved runs of every study the page shows, read once. */
export async function savedRuns(
  root: URL,
): Promise<Map<string, { r: StudyResult; file: string; command: string }>> {
  const out = new Map<string, { r: StudyResult; file: string; command: string }>();
  for (const name of Object.keys(FIXTURE_COMMANDS)) out.set(name, await savedRun(name, root));
  return out;
}

/** Replaces the block between `<!-- KIND:NAME:begin` and `<!-- KIND:NAME:end -->`; false when absent. */
function replaceBlock(doc: string, kind: string, name: string, block: string): string | undefined {
  const begin = doc.indexOf(`<!-- ${kind}:${name}:begin`);
  if (begin < 0) return undefined;
  const endMark = `<!-- ${kind}:${name}:end -->`;
  const end = doc.indexOf(endMark, begin) + endMark.length;
  return `${doc.slice(0, begin)}${block}${doc.slice(end)}`;
}

const MARKER = /(−|-)?(\d[\d,]*(?:\.(\d+))?)<!--=(\w+):([^:]+):([^:]+):([^>]+?)-->/g;

/** The cell a marker names, or undefined (section, row or column missing). */
export function markedValue(
  r: StudyResult,
  section: string,
  row: string,
  column: string,
): number | undefined {
  const s = r.sections.find((x) => x.id === section);
  const first = s?.table.columns[0]?.key;
  const parts = row.split(' & ');
  const hit = s?.table.rows.find((x) =>
    parts.length > 1
      ? parts.every((p) => Object.values(x).some((v) => String(v) === p))
      : first !== undefined && String(x[first]) === row,
  );
  const v = hit?.[column];
  return typeof v === 'number' ? v : undefined;
}

/** Each marked figure's value in the saved run, written with the decimals the prose uses. */
function withNumbers(doc: string, runs: Map<string, { r: StudyResult }>): string {
  return doc.replace(MARKER, (all, _sign, _n, decimals: string | undefined, name, section, row, column) => {
    const run = runs.get(name);
    const v = run && markedValue(run.r, section, row, column);
    if (v === undefined) throw new Error(`docs/findings.md: ${all} names no cell of the saved ${name} run`);
    const text = v.toLocaleString('en-US', {
      minimumFractionDigits: decimals?.length ?? 0,
      maximumFractionDigits: decimals?.length ?? 0,
    });
    return `${text.replace('-', '−')}<!--=${name}:${section}:${row}:${column}-->`;
  });
}

/**
 * docs/findings.md with each study's blocks and marked figures replaced (a findings block, the first
 * time, put at the end of the study's `## NAME…` section).
 */
export async function withFindingBlocks(doc: string, root: URL): Promise<string> {
  const runs = await savedRuns(root);
  let out = withNumbers(doc, runs);
  for (const [name, { r, file }] of runs) {
    const ids = TABLES[name];
    if (!ids) continue;
    out = replaceBlock(out, 'tables', name, studyTablesBlock(r, ids, file)) ?? out;
  }
  for (const [name, { r, file, command }] of runs) {
    const block = studyFindingsBlock(r, command, file);
    const replaced = replaceBlock(out, 'findings', name, block);
    if (replaced !== undefined) {
      out = replaced;
      continue;
    }
    const heading = out.search(new RegExp(`^## ${name}\\b`, 'm'));
    if (heading < 0) throw new Error(`docs/findings.md has no "## ${name}" section`);
    const next = out.slice(heading + 3).search(/^## /m);
    const at = next < 0 ? out.length : heading + 3 + next;
    out = `${out.slice(0, at).trimEnd()}\n\n${block}\n\n${out.slice(at)}`;
  }
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = new URL('../', import.meta.url);
  const file = new URL('docs/findings.md', root);
  writeFileSync(file, await withFindingBlocks(readFileSync(file, 'utf8'), root));
  console.log(`wrote ${file.pathname}`);
}

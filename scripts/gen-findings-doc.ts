// Writes the "Row by row against the report" block of each study in docs/findings.md from its saved
// full run under test/fixtures/studies/full/ where there is one, else from the saved --quick run under
// test/fixtures/studies/ (scripts/gen-study-fixtures.ts makes both), so the page says what a real run
// printed and cannot drift from it. Usage:
//   node --import tsx scripts/gen-findings-doc.ts   (test/docs/findings.test.ts fails when stale)
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseStudyResult } from '../src/model/index.ts';
import { studyFindingsBlock } from '../src/report/index.ts';

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

/**
 * docs/findings.md with each study's block replaced (or, the first time, put at the end of the
 * study's `## NAME…` section).
 */
export function withFindingBlocks(doc: string, root: URL): string {
  let out = doc;
  for (const name of Object.keys(FIXTURE_COMMANDS)) {
    const { file, command } = findingsSource(name, root);
    const r = parseStudyResult(JSON.parse(readFileSync(new URL(file, root), 'utf8')));
    const block = studyFindingsBlock(r, command, file);
    const begin = out.indexOf(`<!-- findings:${name}:begin`);
    const endMark = `<!-- findings:${name}:end -->`;
    if (begin >= 0) {
      const end = out.indexOf(endMark, begin) + endMark.length;
      out = `${out.slice(0, begin)}${block}${out.slice(end)}`;
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
  writeFileSync(file, withFindingBlocks(readFileSync(file, 'utf8'), root));
  console.log(`wrote ${file.pathname}`);
}

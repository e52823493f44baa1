// docs/findings.md carries, per study, the rows, tables and marked figures of a real saved run
// (test/fixtures/studies/), in today's words: regenerating them must change nothing, so the page
// cannot say what no run said.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { FIXTURE_COMMANDS, TABLES, withFindingBlocks } from '../../scripts/gen-findings-doc.ts';

test('docs/findings.md: every study’s row-by-row block, tables and marked figures are the saved run’s (node --import tsx scripts/gen-findings-doc.ts)', async () => {
  const root = new URL('../../', import.meta.url);
  const doc = readFileSync(new URL('docs/findings.md', root), 'utf8');
  for (const name of Object.keys(FIXTURE_COMMANDS))
    assert.ok(doc.includes(`<!-- findings:${name}:begin`), `no generated block for ${name}`);
  for (const name of Object.keys(TABLES))
    assert.ok(doc.includes(`<!-- tables:${name}:begin`), `no generated tables for ${name}`);
  assert.equal(
    await withFindingBlocks(doc, root),
    doc,
    'docs/findings.md is stale: run scripts/gen-findings-doc.ts',
  );
});

test('docs/findings.md: a figure of the prose typed against its saved run is caught (chunks, 4 in flight)', async () => {
  const root = new URL('../../', import.meta.url);
  const doc = readFileSync(new URL('docs/findings.md', root), 'utf8');
  const marked = '<!--=chunks:summary:4:rtt50ms+cubic-->';
  const saved = new RegExp(`(\\d+\\.\\d+)${marked.replace(/[+]/g, '\\+')}`).exec(doc)?.[1];
  assert.ok(saved, 'the prose marks the saved run’s H1/H2 at 4 in flight');
  const typed = doc.replace(`${saved}${marked}`, `${(Number(saved) + 0.04).toFixed(2)}${marked}`);
  assert.notEqual(await withFindingBlocks(typed, root), typed);
  await assert.rejects(
    withFindingBlocks(typed.replace(marked, '<!--=chunks:summary:5:rtt50ms+cubic-->'), root),
    /names no cell of the saved chunks run/,
  );
});

// docs/findings.md carries, per study, the rows a real saved --quick run printed
// (test/fixtures/studies/): regenerating its blocks must change nothing, so the page cannot say what
// no run said.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { FIXTURE_COMMANDS, withFindingBlocks } from '../../scripts/gen-findings-doc.ts';

test('docs/findings.md: every study’s row-by-row block is the saved run’s (node --import tsx scripts/gen-findings-doc.ts)', () => {
  const root = new URL('../../', import.meta.url);
  const doc = readFileSync(new URL('docs/findings.md', root), 'utf8');
  for (const name of Object.keys(FIXTURE_COMMANDS))
    assert.ok(doc.includes(`<!-- findings:${name}:begin`), `no generated block for ${name}`);
  assert.equal(
    withFindingBlocks(doc, root),
    doc,
    'docs/findings.md is stale: run scripts/gen-findings-doc.ts',
  );
});

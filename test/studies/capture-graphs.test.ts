// `h2lab study chunks --quick --capture` through one 150 ms link: report.html draws the busiest
// connection of the h2 and the h1 representative run, read from their captures, at 1280 and 800 px.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { StudyResult } from '../../src/model/index.ts';
import { missingPrerequisite } from '../../src/net/index.ts';
import { h2lab } from '../helpers/cli.ts';
import { sequenceLayoutAt } from '../helpers/ts-layout.ts';

const CHROMIUM = '/usr/bin/chromium';
const dir = mkdtempSync(join(tmpdir(), 'h2lab-study-tseq-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const skip = missingPrerequisite(true) ?? (existsSync(CHROMIUM) ? undefined : `no Chromium at ${CHROMIUM}`);
if (skip) console.log(`# study time-sequence test skipped: ${skip}`);

test('study chunks --capture: one graph each for the h2 and h1 representative run', { skip }, async () => {
  const out = join(dir, 'out');
  const r = await h2lab(
    ['study', 'chunks', '--quick', '--rtt', '150ms', '--loss', '0', '-c', '4', '--runs', '3', '-q'].concat([
      '--capture',
      join(dir, 'cap'),
      '--out',
      out,
    ]),
    { timeoutMs: 180_000 },
  );
  assert.equal(r.code, 0, r.stderr);
  const result = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as StudyResult;
  assert.equal(result.compares.length, 1);
  const cells = result.compares[0]!.result.cells;
  for (const p of ['h2', 'h1']) {
    const ts = cells.find((c) => c.protocol === p)!.runs.find((x) => x.evidence?.capture?.timeSequence)
      ?.evidence?.capture?.timeSequence;
    assert.ok(ts && ts.connections.length > 0, `${p}: a captured run with graphs`);
  }
  const html = readFileSync(join(out, 'report.html'), 'utf8');
  assert.match(html, /<h2 id="ts">Time-sequence graphs/);
  assert.match(html, /<h3>h2, chunks at 4 over rtt150ms\+cubic<\/h3>/);
  assert.match(html, /<h3>h1, chunks at 4 over rtt150ms\+cubic<\/h3>/);
  // h1's pool opened more connections than the one drawn: the note counts them.
  assert.match(html, /\d+ more connections? of this run not drawn/);
  for (const width of [1280, 800]) {
    const seen = await sequenceLayoutAt(CHROMIUM, join(out, 'report.html'), width);
    assert.ok(seen.overflow <= 0, `${width} px: the page is ${seen.overflow} px too wide`);
    assert.equal(seen.plots, 2, `${width} px`);
    assert.ok(seen.canvases >= 2, `${width} px`);
    assert.equal(seen.outside, 0, `${width} px`);
  }
});

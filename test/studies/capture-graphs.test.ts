// `h2lab study chunks --quick --capture` through one 150 ms link: the finding of its row states the
// slow-start rounds that the capture files of the h1 and h2 representative runs show when read back
// (`timeSequenceFrom`), report.html draws the busiest connection of each and links the finding to
// them, report.md names the graph, at 1280 and 800 px nothing drawn over anything.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { CellResult, StudyResult } from '../../src/model/index.ts';
import { missingPrerequisite, timeSequenceFrom } from '../../src/net/index.ts';
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
  // The rounds the finding states are the ones the capture files show when read back.
  const finding = result.findings.find((f) => f.id === 'sweep-c4')!;
  const roundsIn = (cell: CellResult | undefined) => {
    const file = cell?.runs.find((x) => x.evidence?.capture?.timeSequence)?.evidence?.capture?.file;
    assert.ok(file && existsSync(file), `the representative run's capture ${file}`);
    const conns = timeSequenceFrom(file).timeSequence!.connections.filter(
      (c) => c.transport === 'tcp' && c.rounds.length > 0,
    );
    const rounds = conns.map((c) => c.slowStartRounds);
    return { n: conns.length, lo: Math.min(...rounds), hi: Math.max(...rounds) };
  };
  const h1 = roundsIn(cells.find((c) => c.protocol === 'h1'));
  const h2 = roundsIn(cells.find((c) => c.protocol === 'h2'));
  const span = (x: { lo: number; hi: number }) => (x.lo === x.hi ? `${x.hi}` : `${x.lo}–${x.hi}`);
  assert.equal(h2.n, 1, "HTTP/2's one connection");
  assert.ok(
    finding.explanation.includes(`HTTP/1.1's ${h1.n} connections ${span(h1)} rounds of slow start each`) &&
      finding.explanation.includes(
        `HTTP/2's one connection ${h2.hi} round${h2.hi === 1 ? '' : 's'} of slow start`,
      ),
    `h1 ${JSON.stringify(h1)}, h2 ${JSON.stringify(h2)}: ${finding.explanation}`,
  );
  assert.deepEqual(
    [
      finding.evidence.http1CapturedRoundsLo,
      finding.evidence.http1CapturedRoundsHi,
      finding.evidence.http2CapturedRoundsHi,
    ],
    [h1.lo, h1.hi, h2.hi],
  );
  // A slow-start claim rests on rounds of the window's growth the capture shows HTTP/2 more of.
  if (/^Slow start/.test(finding.explanation)) {
    const extra = Number(finding.evidence.capturedExtraRounds);
    assert.ok(extra >= 1 && extra <= h2.hi, finding.explanation);
  }
  assert.ok(!result.warnings.some((w) => w.includes('a defect of h2lab')), result.warnings.join('\n'));
  const anchor = 'ts-rtt150ms_cubic-c4';
  const html = readFileSync(join(out, 'report.html'), 'utf8');
  assert.match(html, /<h2 id="ts">Time-sequence graphs/);
  assert.match(html, new RegExp(`<h3 id="${anchor}">h2, chunks at 4 over rtt150ms\\+cubic</h3>`));
  assert.match(html, /<h3>h1, chunks at 4 over rtt150ms\+cubic<\/h3>/);
  assert.match(html, new RegExp(`<a href="#${anchor}">time-sequence graphs</a>`));
  // h1's pool opened more connections than the one drawn: the note counts them.
  assert.match(html, /\d+ more connections? of this run not drawn/);
  const md = readFileSync(join(out, 'report.md'), 'utf8');
  assert.match(md, new RegExp(`open report\\.html#${anchor} \\(h2, chunks at 4 over rtt150ms\\+cubic; h1, `));
  for (const width of [1280, 800]) {
    const seen = await sequenceLayoutAt(CHROMIUM, join(out, 'report.html'), width, anchor);
    assert.ok(seen.overflow <= 0, `${width} px: the page is ${seen.overflow} px too wide`);
    assert.equal(seen.plots, 2, `${width} px`);
    assert.ok(seen.canvases >= 2, `${width} px`);
    assert.equal(seen.outside, 0, `${width} px`);
    assert.deepEqual(seen.overlaps, [], `${width} px`);
    // The finding's link brings its graph to the top of the window.
    assert.ok(seen.anchorTop !== undefined && Math.abs(seen.anchorTop) < 2, `${width} px: ${seen.anchorTop}`);
  }
});

// `h2lab compare --budget` end to end, as a child process against the embedded fixture server over
// real loopback sockets. Two strategies unequal on purpose: 8 requests in flight to a route that
// answers after 20 ms, HTTP/1.1 on one connection (one request at a time) against HTTP/2 (all 8 on
// one connection): about 8× the throughput. With --runs 3 (2 kept a side) the rank test cannot pass,
// so the planned runs leave the cell undecided; the budget's extra runs decide it, or, too short,
// end with it undecided and say so.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type CompareResult, compareResultSchema } from '../../src/model/compare.ts';
import { h2lab } from '../helpers/cli.ts';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'h2lab-compare-budget-'));
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

const unequal = (out: string, budget: string) =>
  h2lab(
    [
      'compare',
      '--paths',
      '/slow-headers?ms=20',
      '--protocols',
      'h1,h2',
      '--concurrency',
      '8',
      '--h1-connections',
      '1',
      '--runs',
      '3',
      '--duration',
      '1s',
      '--budget',
      budget,
      '--out',
      out,
    ],
    { timeoutMs: 120_000 },
  );

const h2Cell = (r: CompareResult) => r.cells.find((c) => c.protocol === 'h2')!;

/** Runs the comparison with `budget` into `out`: the exit, the output, the result and its budget. */
async function budgeted(name: string, budget: string) {
  const out = join(dir, name);
  const r = await unequal(out, budget);
  assert.equal(r.code, 0, r.stderr);
  const result = compareResultSchema.parse(JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')));
  assert.ok(result.budget, 'results.json records the budget');
  return { stdout: r.stdout.replace(/\s+/g, ' '), result, b: result.budget };
}

test('--budget decides a difference the planned runs left undecided, and stops once decided', async () => {
  const { stdout: text, result, b } = await budgeted('decides', '40s');
  assert.equal(b.stoppedBy, 'decided', JSON.stringify(b));
  assert.deepEqual(b.undecided, []);
  const h2 = h2Cell(result);
  const extra = b.extraRuns[h2.id] ?? 0;
  assert.ok(extra > 0, `extra runs were made: ${JSON.stringify(b.extraRuns)}`);
  assert.equal(h2.runs.length, 3 + extra);
  assert.ok(h2.runs.length < b.maxRuns, `stopped early: ${h2.runs.length} of at most ${b.maxRuns} runs`);
  assert.ok(b.spentMs < b.ms, `${b.spentMs} ms of ${b.ms}`);
  const rps = result.comparisons.find((c) => c.protocol === 'h2' && c.metric === 'rps')!;
  assert.equal(rps.outcome, 'better');
  assert.ok((rps.pValue ?? 1) < b.alpha, `p ${rps.pValue} against the corrected alpha ${b.alpha}`);
  assert.match(text, /--budget 40s: /);
  assert.match(text, new RegExp(`h2 at c=8 ${extra} extra runs?`));
  assert.match(text, /Bonferroni/);
});

test('a --budget too short to decide ends with the cell undecided and says so', async () => {
  const { stdout, result, b } = await budgeted('spent', '3s');
  assert.equal(b.stoppedBy, 'budget', JSON.stringify(b));
  const h2 = h2Cell(result);
  assert.deepEqual(b.undecided, [h2.id]);
  // A run starts only when its expected length (about 1 s) still fits; it may overrun by its variation.
  assert.ok(b.spentMs < b.ms + 1000, `${b.spentMs} ms of ${b.ms}`);
  assert.ok(result.comparisons.some((c) => c.protocol === 'h2' && c.outcome === 'undecided'));
  assert.match(stdout, /budget spent with h2 at c=8 still undecided/);
  // The answer line says the runs were made, not only advised.
  assert.match(stdout, /c=8 undecided h2 [\d.]+× \([^)]*\); \d+ runs a side under --budget did not tell/);
});

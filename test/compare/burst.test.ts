// `h2lab compare --burst` end to end over real loopback sockets against the embedded fixture server:
// each size workload becomes a burst, one cell per burst size, and the strategies are compared on
// the time until the last response of the burst ended.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { compareResultSchema } from '../../src/model/compare.ts';
import { h2lab } from '../helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'h2lab-compare-burst-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('compare --burst 16,32 --sizes 10KiB on h1 and h2: one cell per N, compared on the completion time', async () => {
  const out = join(dir, 'burst');
  const args = ['--burst', '16,32', '--sizes', '10KiB', '--protocols', 'h1,h2', '--runs', '3', '--out', out];
  const r = await h2lab(['compare', ...args], { timeoutMs: 120_000 });
  assert.equal(r.code, 0, r.stderr);
  const result = compareResultSchema.parse(JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')));
  const w = result.axes.workloads[0]!;
  assert.deepEqual(w.burst, [16, 32]);
  assert.equal(w.label, 'burst of 16/32 × 10 KiB responses');
  assert.deepEqual(result.axes.concurrency, [16, 32], 'the burst sizes are the concurrency axis');
  assert.deepEqual(
    result.cells.map((c) => c.id),
    [
      'bytes-10240/c16/loopback/h1',
      'bytes-10240/c16/loopback/h2',
      'bytes-10240/c32/loopback/h1',
      'bytes-10240/c32/loopback/h2',
    ],
  );
  for (const cell of result.cells) {
    assert.equal(cell.status, 'done', cell.note);
    for (const run of cell.runs) {
      assert.equal(run.schedule.mode, 'burst');
      assert.equal(run.burst?.requests, cell.concurrency);
      assert.equal(run.counts.ok, cell.concurrency, 'one burst per run');
      // Every run opens its connections afresh inside the timed period: h1 its 6, h2 one session.
      assert.equal(run.burst?.connectionsOpened, cell.protocol === 'h1' ? 6 : 1);
    }
    assert.equal(cell.stats?.burstCompletionMs?.n, 2, 'two kept runs');
    assert.equal(cell.stats?.burstConnectionsOpened, cell.protocol === 'h1' ? 6 : 1);
  }
  assert.deepEqual(
    result.comparisons.map((c) => `${c.protocol}/c${c.concurrency}/${c.metric}/${c.higherIsBetter}`),
    ['h2/c16/burstCompletionMs/false', 'h2/c32/burstCompletionMs/false'],
    'only the completion time is compared for a burst',
  );
  for (const c of result.comparisons) {
    const h1 = result.cells.find((x) => x.concurrency === c.concurrency && x.protocol === 'h1')!;
    const h2 = result.cells.find((x) => x.concurrency === c.concurrency && x.protocol === 'h2')!;
    const ratio = h2.stats!.burstCompletionMs!.median / h1.stats!.burstCompletionMs!.median;
    assert.ok(Math.abs(c.interval.ratio - ratio) < 1e-9, 'the ratio is h2 time / h1 time');
  }
  // 80 columns without a terminal: the table may be cut into column groups, words wrap.
  for (const h of [
    'burst N',
    'completion median (min–max)',
    'first response',
    'conns opened in timed period',
  ])
    assert.ok(r.stdout.includes(h), h);
  const flat = r.stdout.replace(/\s+/g, ' ');
  assert.match(flat, /runs per cell \(one burst each on fresh connections, 2 kept\)/);
  assert.match(flat, /handshakes inside \(burst\): each burst opens its connections in the timed period/);
  const md = readFileSync(join(out, 'report.md'), 'utf8');
  assert.match(md, /\| burst N \| strategy \| completion median \(min–max\) \|/);
  const html = readFileSync(join(out, 'report.html'), 'utf8');
  assert.match(html, /Burst completion time relative to h1/);
  assert.match(html, /<th>time vs baseline \(95% CI\)<\/th>/);
});

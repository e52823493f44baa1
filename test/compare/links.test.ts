// compare's linked cells, with the load engine replaced by one real request per run (fast): each
// link is made with the comparison's --seed, --cc and --initcwnd, its own fixture server behind it
// answers at the link's address (verified by the CA issued for it), and the link is recorded per run.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { test } from 'node:test';
import { runComparison, syntheticRunner } from '../../src/compare/index.ts';
import { netSkipReason } from '../net/helpers.ts';

const skip = netSkipReason();

function status(url: string, caFile: string): Promise<number> {
  return new Promise((resolve, reject) => {
    https
      .get(url, { ca: readFileSync(caFile), agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', reject);
  });
}

test('linked cells: the link gets --seed, --cc, --initcwnd; its fixture serves them', { skip }, async () => {
  const synthetic = syntheticRunner({}, { latencyMs: 2 });
  const seen: Array<{ net: string; url: string; status: number }> = [];
  const c = await runComparison(
    {
      protocols: ['h1', 'h2'],
      concurrency: [1],
      runs: 3,
      net: ['loopback', 'relay'],
      seed: 7,
      links: { congestionControl: ['reno'], initialCwnd: 4 },
      workloads: [{ id: 'w', label: 'w', paths: ['/bytes/100'] }],
    },
    {
      runCell: async (cell, ctx) => {
        // Loopback cells trust the embedded server through the runner's own CA option, not ctx.
        const code = ctx.ca ? await status(`${ctx.url}bytes/100`, ctx.ca) : 0;
        seen.push({ net: cell.net, url: ctx.url, status: code });
        return synthetic(cell, ctx);
      },
    },
  );
  const r = await c.done;
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  assert.deepEqual([...new Set(r.cells.map((x) => x.net))].sort(), ['loopback', 'relay+reno']);
  assert.ok(
    r.cells.every((x) => x.status === 'done' && x.runs.length === 3),
    JSON.stringify(r.cells),
  );
  for (const cell of r.cells.filter((x) => x.net === 'relay+reno')) {
    for (const run of cell.runs) {
      assert.equal(run.environment.link?.seed, 7);
      assert.equal(run.environment.link?.initialCwnd, 4);
      assert.equal(run.environment.link?.congestionControl, 'reno');
      assert.equal(run.environment.link?.rttMs, 0);
    }
  }
  const linked = seen.filter((s) => s.net === 'relay+reno');
  assert.equal(linked.length, 6);
  for (const s of linked) {
    assert.match(s.url, /^https:\/\/198\.1[89]\.\d+\.\d+:\d+\/$/);
    assert.equal(s.status, 200, "the link's own fixture answered, verified by its CA");
  }
  const direct = seen.filter((s) => s.net === 'loopback');
  assert.equal(direct.length, 6);
  assert.ok(
    direct.every((s) => s.url.startsWith('https://127.0.0.1:')),
    JSON.stringify(direct),
  );
});

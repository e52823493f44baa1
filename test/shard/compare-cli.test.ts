/**
 * A sharded comparison from the command line: `compare --shards N` on this machine; the cluster's path
 * (`compare --plan-out`, one `shard run` per index, `merge --plan`); and the usage errors, each exit 2
 * with the flag named, before anything runs.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { compareResultSchema } from '../../src/model/index.ts';
import { checkPlan, planShards } from '../../src/shard/index.ts';
import { h2lab } from '../helpers/cli.ts';
import { startFixture } from '../helpers/fixture.ts';

const matrix = ['--protocols', 'h1,h2', '--concurrency', '2', '--runs', '3', '--duration', '200ms'];

test('compare --shards 2: the comparison as two processes, its result and reports as compare writes them', async () => {
  const srv = await startFixture({});
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-cmp-shards-'));
  try {
    const out = join(dir, 'report');
    const r = await h2lab([
      'compare',
      `${srv.tlsUrl}/bytes/256`,
      '--ca',
      srv.caFile!,
      ...matrix,
      '--shards',
      '2',
      '--slot-gap',
      '600ms',
      '--start-grace',
      '5s',
      '--out',
      out,
      '--json',
      '-',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /from 2 shards, 6 runs of 2 cells in slots of 0\.8 s \(4\.8 s in all\), as processes/,
    );
    assert.match(r.stderr, /shards +2 load processes, every run split among them/);
    const result = compareResultSchema.parse(JSON.parse(r.stdout));
    assert.equal(result.status, 'complete');
    assert.equal(result.sharding?.shards, 2);
    assert.equal(result.sharding?.runs.length, 6);
    for (const c of result.cells) assert.equal(c.runs.length, 3);
    assert.ok(existsSync(join(out, 'results.json')));
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    assert.match(html, /Run as 2 shards/);
    assert.match(
      html,
      /<summary>Shards: 2 load processes, 6 merged runs \(run r[0-9a-f]{10}; worst start skew/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await srv.close();
  }
});

test('compare --plan-out → shard run ×2 → merge --plan: the cluster’s path on one machine', async () => {
  const srv = await startFixture({});
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-cmp-plan-'));
  try {
    const planFile = join(dir, 'plan.json');
    const p = await h2lab([
      'compare',
      `${srv.tlsUrl}/bytes/256`,
      '--ca',
      srv.caFile!,
      ...matrix,
      '--shards',
      '2',
      '--slot-gap',
      '600ms',
      // CLI processes start through tsx, seconds apart on a loaded machine: a late shard may still
      // run (test/shard/compare-local.test.ts holds the barrier).
      '--start-in',
      '2s',
      '--start-grace',
      '120s',
      '--run-id',
      'cmp-cli',
      '--plan-out',
      planFile,
    ]);
    assert.equal(p.code, 0, p.stderr);
    assert.match(p.stderr, /plan cmp-cli → .*plan\.json: 2 shards, 6 runs/);
    assert.match(p.stderr, /h2lab k8s run --plan .*plan\.json --image IMAGE/);
    const plan = checkPlan(JSON.parse(readFileSync(planFile, 'utf8')));
    assert.equal(plan.kind, 'h2lab.compare-plan');
    const runs = await Promise.all(
      [0, 1].map((i) =>
        h2lab(['shard', 'run', '--plan', planFile, '--index', String(i), '--out', join(dir, `s${i}.json`)]),
      ),
    );
    for (const r of runs) {
      assert.equal(r.code, 0, r.stderr);
      // The shard's result and tally, gzipped, in chunk lines a log keeps (src/shard/chunks.ts).
      const lines = r.stdout.trimEnd().split('\n');
      for (const [i, l] of lines.entries()) {
        assert.match(
          l,
          new RegExp(`^h2lab-shard cmp-cli \\d ${i + 1}/${lines.length} [0-9a-f]{16} \\S+$`),
          `chunk ${i + 1}`,
        );
      }
    }
    const files = [join(dir, 's0.json'), join(dir, 's1.json')];
    const bare = await h2lab(['merge', ...files]);
    assert.equal(bare.code, 2);
    assert.match(bare.stderr, /is a comparison's: give its plan with --plan FILE/);
    // Another plan's file: refused, named, nothing merged.
    const loadPlan = join(dir, 'load-plan.json');
    writeFileSync(
      loadPlan,
      JSON.stringify(
        planShards(
          { url: `${srv.tlsUrl}/`, rateRps: 10, durationMs: 1000 },
          { shards: 2, startAtEpochMs: 1e12 },
        ),
      ),
    );
    const wrong = await h2lab(['merge', ...files, '--plan', loadPlan]);
    assert.equal(wrong.code, 2, wrong.stderr);
    assert.match(wrong.stderr, /H2LAB_ERR_SHARD_MISMATCH: shard 0 \(run cmp-cli, .*did not run this plan/);
    const m = await h2lab(['merge', ...files, '--plan', planFile, '--out', join(dir, 'rep'), '--json', '-']);
    assert.equal(m.code, 0, m.stderr);
    const result = compareResultSchema.parse(JSON.parse(m.stdout));
    assert.equal(result.status, 'complete');
    assert.equal(result.sharding?.runId, 'cmp-cli');
    assert.ok(existsSync(join(dir, 'rep', 'report.md')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await srv.close();
  }
});

test('usage errors of a sharded comparison: exit 2, the flag named, nothing run', async () => {
  const url = 'https://127.0.0.1:9/';
  const cases: Array<[string[], RegExp]> = [
    [
      ['compare', url, '--plan-out', 'p.json'],
      /--plan-out .*applies to a comparison split into shards: add --shards N/,
    ],
    [['compare', '--shards', '2'], /H2LAB_ERR_SHARD_UNSUPPORTED: url cannot be split into shards/],
    [
      ['compare', url, '--shards', '2', '--start-in', '5s'],
      /--start-in .*apply to a plan written with --plan-out|--start-in .*applies to a plan written with --plan-out/,
    ],
    [
      ['compare', url, '--shards', '2', '--concurrency', '1,8'],
      /H2LAB_ERR_SHARD_TOO_SMALL: --concurrency 1 cannot be split into 2 shards/,
    ],
    [['compare', url, '--shards', '2', '--requests', '100'], /--requests cannot be split into shards/],
    [['compare', url, '--shards', 'two'], /--shards/],
  ];
  for (const [args, message] of cases) {
    const r = await h2lab(args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
  }
});

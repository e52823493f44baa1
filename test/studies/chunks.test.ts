// `h2lab study chunks --quick` end to end through the CLI, over two emulated links (root: skipped with
// the reason otherwise): the shape of the result and the invariants of the report's client, never who
// wins. And the study's bad input, which fails before anything runs.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { parseStudyResult, type StudyResult } from '../../src/model/index.ts';
import { planLinks } from '../../src/net/index.ts';
import { loadStudy } from '../../src/studies/index.ts';
import { h2lab } from '../helpers/cli.ts';
import { netSkipReason } from '../net/helpers.ts';

const dir = mkdtempSync(join(os.tmpdir(), 'h2lab-study-chunks-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('h2lab study chunks: bad input fails before any run', () => {
  test('an unknown congestion control names the flag and the choices (exit 2)', async () => {
    const r = await h2lab(['study', 'chunks', '--cc', 'vegas', '--out', join(dir, 'bad')]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /H2LAB_ERR_INVALID_OPTION: --cc "vegas" is not valid: use a list of /);
    assert.equal(existsSync(join(dir, 'bad')), false, 'nothing written');
  });
  test('an output directory that cannot be made is refused first (exit 2)', async () => {
    const r = await h2lab(['study', 'chunks', '--loopback', '--out', '/proc/h2lab-nope']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /H2LAB_ERR_OUTPUT: --out \/proc\/h2lab-nope/);
  });
  test('an unknown study is a usage error that lists the studies', async () => {
    const r = await h2lab(['study', 'nosuch']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /H2LAB_ERR_USAGE: unknown study 'nosuch': use one of .*chunks/);
  });
});

const skip = netSkipReason();
if (skip) console.log(`# skipped: h2lab study chunks over links: ${skip}`);

describe('h2lab study chunks --quick over emulated links', { skip }, () => {
  let result: StudyResult;
  test('runs end to end and writes results.json, report.md and report.html', {
    timeout: 240_000,
  }, async () => {
    const out = join(dir, 'quick');
    const r = await h2lab(['study', 'chunks', '--quick', '--out', out], { timeoutMs: 230_000 });
    assert.equal(r.code, 0, r.stderr.slice(-3000));
    for (const f of ['results.json', 'report.md', 'report.html']) assert.ok(existsSync(join(out, f)), f);
    result = parseStudyResult(JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')));
    assert.match(r.stdout, /report 001, multi-chunk benchmark/);
    assert.match(r.stdout, /What the measurements say/);
  });

  test('the shape: a section per link and the summary beside the report', () => {
    assert.equal(result.status, 'complete');
    assert.equal(result.mode, 'quick');
    assert.ok(
      result.cells.every((c) => c.status === 'done'),
      JSON.stringify(result.cells),
    );
    const ids = result.sections.map((s) => s.id);
    assert.equal(ids.filter((i) => i.startsWith('sweep-')).length, 2, ids.join());
    const summary = result.sections.find((s) => s.id === 'summary');
    assert.ok(summary?.reference, 'the report table beside the summary');
    assert.deepEqual(
      summary.reference.table.rows.map((r) => r.c),
      [1, 4, 8, 16],
    );
    assert.equal(result.compares.length, 2);
  });

  test('the links are those `h2lab compare --rtt 20ms --loss 0,1% --cc cubic` plans: names, seed, settings', () => {
    const seed = Number(result.options.seed);
    const plan = planLinks(
      ['loopback'],
      { rttMs: [20], loss: [0, 0.01], congestionControl: ['cubic'] },
      seed,
    );
    assert.deepEqual(
      result.compares.map((c) => c.id),
      plan.map((l) => l.name),
    );
    for (const [i, { result: cmp }] of result.compares.entries()) {
      assert.deepEqual(cmp.axes.net, [plan[i]!.name]);
      assert.equal(cmp.options.seed, seed);
      assert.deepEqual(cmp.options.links, plan[i]!.alone.links);
    }
    assert.deepEqual(
      result.sections.filter((s) => s.id.startsWith('sweep-')).map((s) => s.id),
      plan.map((l) => `sweep-${l.name}`),
    );
  });

  test('the findings derive again from the saved comparisons exactly (what regenerates a saved full run)', async () => {
    const study = await loadStudy('chunks');
    assert.ok(study?.rederive);
    const again = study.rederive(result);
    assert.deepEqual(JSON.parse(JSON.stringify(again?.findings)), result.findings);
    assert.deepEqual(again?.explanation, result.explanation);
  });

  test("the report's client: 64 chunks a run, one HTTP/1.1 connection per request in flight", () => {
    for (const { result: cmp } of result.compares) {
      for (const cell of cmp.cells) {
        assert.equal(cell.status, 'done', cell.id);
        for (const run of cell.runs) {
          assert.equal(run.counts.ok, 64, `${cell.id}: every chunk came back`);
          if (run.transport.name === cmp.baseline)
            assert.equal(run.connections.opened, cell.concurrency, `${cell.id}: connections = concurrency`);
          else if (run.transport.connections === 1) assert.equal(run.connections.opened, 1, cell.id);
        }
      }
    }
  });

  test("H1/H2 is the ratio of the table's own two time columns (median H1 time / median H2 time)", () => {
    const links = result.data.links as Array<{
      rows: Array<{
        h1: { seconds: number };
        h2: { seconds: number };
        h2VsH1: { interval: { ratio: number } };
      }>;
    }>;
    for (const { rows } of links)
      for (const row of rows) {
        const expected = row.h1.seconds / row.h2.seconds;
        assert.ok(
          Math.abs(row.h2VsH1.interval.ratio - expected) < 1e-9,
          `H1/H2 ${row.h2VsH1.interval.ratio} against ${row.h1.seconds} s / ${row.h2.seconds} s`,
        );
      }
  });

  test('the lossless link drops nothing, the lossy one drops packets, and the words use the numbers', () => {
    const [lossless, lossy] = result.compares.map((c) => c.result);
    const drops = (cmp: typeof lossless) =>
      cmp!.cells.flatMap((c) => c.runs.map((r) => r.connections.tcp?.linkDrops?.lossPackets ?? 0));
    assert.ok(
      drops(lossless).every((d) => d === 0),
      `no random loss at 0%: ${drops(lossless).join()}`,
    );
    assert.ok(
      drops(lossy).some((d) => d > 0),
      `losses at 1%: ${drops(lossy).join()}`,
    );
    const text = result.explanation.join('\n');
    const sweep = result.sections.find((s) => s.id.startsWith('sweep-'))!;
    const top = sweep.table.rows.at(-1)!;
    assert.ok(
      text.includes(String(top.ratio).split(' ')[0]!),
      `the explanation quotes the measured ratio ${top.ratio}`,
    );
    assert.match(text, /congestion windows summed to \d+ segments/);
    assert.match(text, /dropped \d+(\.\d)? packets a run on the HTTP\/2 connection/);
  });
});

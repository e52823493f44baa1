/**
 * The commands end to end: `h2lab plan` writes a plan, two `h2lab shard run` processes run it against
 * the fixture server, `h2lab merge` merges their files.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { mergedResultSchema } from '../../src/model/index.ts';
import { startClockServer } from '../../src/shard/index.ts';
import { h2lab } from '../helpers/cli.ts';
import { startFixture } from '../helpers/fixture.ts';

test('plan → shard run ×2 → merge: 40 requests in two shards of 20, one merged result', async () => {
  const srv = await startFixture({ tls: false });
  const clock = await startClockServer();
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-shard-cli-'));
  try {
    const planFile = join(dir, 'plan.json');
    const p = await h2lab([
      'plan',
      `${srv.plainUrl}/bytes/64`,
      '-p',
      'h1',
      '--concurrency',
      '4',
      '--connections',
      '2',
      '--requests',
      '40',
      '--shards',
      '2',
      // CLI processes start through tsx, seconds apart on a loaded machine: this test is about the
      // commands, so a late shard may still run (test/shard/local.test.ts holds the barrier).
      '--start-in',
      '1s',
      '--start-grace',
      '120s',
      '--clock-url',
      clock.url,
      '--run-id',
      'cli-test',
      '--out',
      planFile,
    ]);
    assert.equal(p.code, 0, p.stderr);
    assert.match(p.stderr, /run cli-test, 2 shards \(closed loop\)/);
    const runs = await Promise.all(
      [0, 1].map((i) =>
        h2lab(
          [
            'shard',
            'run',
            '--plan',
            planFile,
            '--out',
            join(dir, `s${i}.json`),
            '--termination-log',
            join(dir, `d${i}.json`),
          ],
          {
            env: { ...process.env, JOB_COMPLETION_INDEX: String(i) },
          },
        ),
      ),
    );
    for (const r of runs) {
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^h2lab-shard cli-test \d 1\/1 [0-9a-f]{16} \S+\n$/);
    }
    const digest = JSON.parse(readFileSync(join(dir, 'd1.json'), 'utf8'));
    assert.equal(digest.index, 1);
    assert.equal(digest.total, 20);
    const m = await h2lab(['merge', join(dir, 's0.json'), join(dir, 's1.json'), '--json', '-']);
    assert.equal(m.code, 0, m.stderr);
    const merged = mergedResultSchema.parse(JSON.parse(m.stdout));
    assert.equal(merged.result.counts.total, 40);
    assert.equal(merged.result.schedule.concurrency, 4);
    assert.match(m.stderr, /2 shards merged/);
    // A damaged histogram in one shard's file: bad input like any other bad file (exit 2), naming
    // the file and the shard, no stack trace.
    const s1 = JSON.parse(readFileSync(join(dir, 's1.json'), 'utf8'));
    const run = s1.result ?? s1;
    run.histograms.latency.base64 = `HISTFAAAA${'x'.repeat(40)}`;
    writeFileSync(join(dir, 'bad1.json'), JSON.stringify(s1));
    const bad = await h2lab(['merge', join(dir, 's0.json'), join(dir, 'bad1.json'), '--json', '-']);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(
      bad.stderr,
      /H2LAB_ERR_RESULT_FILE: \S*bad1\.json: shard 1's latency histogram cannot be decoded .*: the file was damaged/,
    );
    assert.doesNotMatch(bad.stderr, /H2LAB_ERR_INTERNAL| {4}at /);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await clock.close();
    await srv.close();
  }
});

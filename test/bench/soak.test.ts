/**
 * bench/soak.ts for a few seconds (one small comparison against the embedded fixture server): it
 * finishes, prints its samples, the RSS and descriptor figures with a verdict, and what was left;
 * as root, the SIGKILLed `compare --net lan` child leaves nothing after `h2lab net clean`.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { netSkipReason } from '../net/helpers.ts';

const script = fileURLToPath(new URL('../../bench/soak.ts', import.meta.url));

test('soak: a few seconds of compare, then (root) a SIGKILLed compare --net leaves nothing after net clean', () => {
  const r = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      script,
      '--seconds',
      '3',
      '--interval',
      '0.5',
      '--runs',
      '3',
      '--duration',
      '100',
      '--concurrency',
      '1',
    ],
    { encoding: 'utf8', timeout: 150_000 },
  );
  const out = r.stdout;
  assert.equal(r.status, 0, `exit ${r.status} ${r.signal ?? ''}\n${out}\n${r.stderr}`);
  assert.match(out, /^soak: 0\.05 min of compare .*warm-up 0\.02 min excluded/m);
  assert.match(out, /^1 comparisons in [\d.]+ min .*: complete 1$/m);
  assert.match(out, /^ time s {3}RSS MiB {2}heap MiB {3}fds {2}server conns$/m);
  assert.ok((out.match(/^ +\d+ +[\d.]+ +[\d.]+ +\d+ +\d+$/gm) ?? []).length >= 3, out);
  const rss =
    /^RSS: first ([\d.]+) MiB, last ([\d.]+) MiB, max ([\d.]+) MiB, drift [+-][\d.]+ %: (flat within 10 %|NOT flat .*)$/m.exec(
      out,
    );
  assert.ok(rss, out);
  assert.ok(Number(rss[3]) >= Number(rss[1]) && Number(rss[1]) > 10, out);
  assert.match(
    out,
    /^fds between comparisons: first \d+, last \d+, max \d+, drift [+-][\d.]+ % \(during: max \d+\): /m,
  );
  assert.match(out, /^verdict: (flat|NOT flat) \(RSS and fds within 10 %\)$/m);
  assert.match(out, /^left by this process: 0 namespaces, 0 devices/m);
  const skip = netSkipReason();
  if (skip) {
    assert.match(out, /^skipped: /m);
    return;
  }
  assert.match(out, /^before the kill: +1 namespaces, 2 devices, [1-9]\d* processes/m);
  assert.match(out, /^h2lab net clean: exit 0, deleted .*h2lab-\d+-0\b/m);
  assert.match(out, /^after net clean: +0 namespaces, 0 devices, 0 processes$/m);
  assert.match(out, /^kill verdict: nothing left after net clean$/m);
});

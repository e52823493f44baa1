// `h2lab net …` and `h2lab bench --net …` as a user runs them.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { h2lab } from '../helpers/cli.ts';
import { netSkipReason, pingSkipReason } from './helpers.ts';

const run = (args: string[], timeoutMs = 60_000) => h2lab(args, { timeoutMs });

const skip = netSkipReason();
if (skip) console.log(`# net CLI tests that need a link skipped: ${skip}`);

describe('h2lab net (no link needed)', () => {
  it('profiles lists every preset; --json resolves them', async () => {
    const r = await run(['net', 'profiles', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const list = JSON.parse(r.stdout) as Array<{ name: string; down: { delayMs: number } }>;
    assert.ok(list.some((p) => p.name === 'wan' && p.down.delayMs === 20));
    assert.ok(list.some((p) => p.name === 'lossy'));
  });

  it('an unknown profile or a bad value exits 2 naming the option', async () => {
    const a = await run(['net', 'run', '--profile', 'moon', '--', 'true']);
    assert.equal(a.code, 2);
    assert.match(a.stderr, /H2LAB_ERR_INVALID_OPTION: --net "moon" is not a known profile/);
    const b = await run(['net', 'run', '--rtt', 'fast', '--', 'true']);
    assert.equal(b.code, 2);
    assert.match(b.stderr, /--rtt "fast" is not valid/);
  });
});

describe('h2lab net run / bench --net', { skip }, () => {
  it('net run runs CMD in the server namespace, gives it the addresses, and returns its exit status', {
    skip: pingSkipReason(),
  }, async () => {
    // Inside the namespace the client address is reachable only through the link: 20 ms away.
    const r = await run([
      'net',
      'run',
      '--rtt',
      '20ms',
      '--',
      'sh',
      '-c',
      'ping -n -c 3 -i 0.05 -q "$H2LAB_NET_CLIENT" | tail -1; exit 7',
    ]);
    assert.equal(r.code, 7, r.stderr);
    const avg = Number(/= [\d.]+\/([\d.]+)\//.exec(r.stdout)?.[1]);
    assert.ok(avg >= 20 && avg < 25, `${r.stdout}`);
    assert.match(r.stderr, /h2lab net: profile custom, backend relay, rtt 20\.0 ms/);
  });

  it('bench --net runs the fixture server behind the link and records the link in the result', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'h2lab-net-test-'));
    try {
      const out = join(dir, 'r.json');
      const r = await run(
        [
          'bench',
          '--net',
          'lan',
          '--rtt',
          '10ms',
          '--cc',
          'reno',
          '-d',
          '1s',
          '--warmup',
          '0',
          '-c',
          '4',
          '-q',
          '--json',
          out,
        ],
        90_000,
      );
      assert.equal(r.code, 0, r.stderr);
      const result = JSON.parse(readFileSync(out, 'utf8'));
      assert.equal(result.environment.link.profile, 'lan+custom');
      assert.equal(result.environment.link.rttMs, 10);
      assert.equal(result.environment.link.backend, 'relay');
      assert.equal(result.environment.congestionControl, 'reno');
      assert.equal(result.target.embedded, true);
      assert.ok(result.counts.ok > 0);
      // Every request crosses the link at least once: nothing can be faster than one RTT.
      assert.ok(result.latencyMs.min >= 10, `min latency ${result.latencyMs.min}`);
      const full = await run(['bench', 'http://127.0.0.1:9/', '--net', 'wan', '-d', '1s']);
      // Another server's URL goes behind the link too; a dead one is a target failure (exit 1),
      // told before any link is made.
      assert.equal(full.code, 1, full.stderr);
      assert.match(
        full.stderr,
        /H2LAB_ERR_TARGET_UNREACHABLE: the target 127\.0\.0\.1:9 could not be reached/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('compare --net runs the linked cells against a fixture behind each link and records it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'h2lab-net-test-'));
    try {
      const r = await run(
        [
          'compare',
          '--net',
          'loopback,lan',
          '--concurrency',
          '2',
          '--sizes',
          '1KiB',
          '--runs',
          '3',
          '--duration',
          '200ms',
          '--out',
          dir,
          '-q',
        ],
        120_000,
      );
      assert.equal(r.code, 0, r.stderr);
      const result = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8'));
      const lan = result.cells.filter((c: { net: string }) => c.net === 'lan');
      assert.equal(lan.length, 3);
      for (const c of lan) {
        const run = c.runs.at(-1);
        assert.equal(run.environment.link.profile, 'lan');
        assert.ok(run.latencyMs.min >= 1, `${c.id}: ${run.latencyMs.min}`);
        assert.ok(run.server.requests > 0, 'the linked fixture server saw the requests');
      }
      const bad = await run(['compare', '--net', 'moon', '--out', dir]);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /not a known profile/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

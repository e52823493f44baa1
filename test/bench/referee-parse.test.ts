/**
 * The referee harness's pure parts: reading h2load's and curl's output (from real runs of both against
 * the fixture server on loopback, and from h2load's unit forms), and when two ratios disagree.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import {
  CURL_WRITE_OUT,
  disagree,
  parseCurlWriteOut,
  parseH2load,
  parseH2loadDuration,
  parseWorkload,
} from '../../bench/referee-parse.ts';
import { bootstrapRatio } from '../../src/compare/inference.ts';
import type { RunningServer } from '../../src/server/index.ts';
import { startFixture } from '../helpers/fixture.ts';

// Asynchronous: the fixture server runs in this process and must answer while the tool waits.
const run = async (cmd: string, args: string[]): Promise<string> =>
  (await promisify(execFile)(cmd, args, { encoding: 'utf8' })).stdout;
const has = (cmd: string): boolean => spawnSync(cmd, ['--version'], { stdio: 'ignore' }).status === 0;

let srv: RunningServer;
before(async () => {
  srv = await startFixture({ tls: false });
});
after(() => srv.close());

test('h2load durations in every unit it prints', () => {
  const near = (a: number, b: number): void => assert.ok(Math.abs(a - b) < 1e-9, `${a} ≠ ${b}`);
  near(parseH2loadDuration('523.40us'), 0.5234);
  near(parseH2loadDuration('324.27ms'), 324.27);
  near(parseH2loadDuration('2.03s'), 2030);
  assert.ok(Number.isNaN(parseH2loadDuration('fast')));
});

test('h2load: a real h2c run against the fixture is read back (count, protocol, duration)', {
  skip: !has('h2load') && 'h2load is not installed (Debian: nghttp2-client)',
}, async () => {
  const out = await run('h2load', ['-c', '1', '-m', '8', '-n', '8', `${srv.plainUrl}/bytes/1024`]);
  const r = parseH2load(out);
  assert.equal(r.total, 8);
  assert.equal(r.succeeded, 8);
  assert.equal(r.failed, 0);
  assert.equal(r.protocol, 'h2c');
  assert.ok(r.durationMs > 0 && r.durationMs < 10_000, `duration ${r.durationMs}`);
  assert.ok(r.connectMeanMs >= 0 && r.connectMeanMs < r.durationMs);
});

test('h2load: output without a "finished in" line is an error, not a number', () => {
  assert.throws(
    () => parseH2load('starting benchmark...\nNo protocol negotiated. Aborted.\n'),
    /finished in/,
  );
});

test('curl: a real --parallel run writes one line per transfer with its connections', {
  skip: !has('curl') && 'curl is not installed',
}, async () => {
  const url = `${srv.plainUrl}/bytes/2048`;
  const out = await run('curl', [
    '-s',
    '--parallel',
    '--parallel-max',
    '2',
    '--http1.1',
    '-w',
    CURL_WRITE_OUT,
    '-o',
    '/dev/null',
    url,
    '-o',
    '/dev/null',
    url,
    '-o',
    '/dev/null',
    url,
  ]);
  const rows = parseCurlWriteOut(out);
  assert.equal(rows.length, 3);
  for (const r of rows) {
    assert.equal(r.status, 200);
    assert.equal(r.bytes, 2048);
    assert.equal(r.httpVersion, '1.1');
    assert.ok(r.totalMs > 0);
  }
  const conns = rows.reduce((a, r) => a + r.connects, 0);
  assert.ok(conns >= 1 && conns <= 3, `connections ${conns}`);
});

test('disagree: only non-overlapping intervals with ≥ 3 runs a side', () => {
  const fast = bootstrapRatio([50, 51, 52, 50], [100, 101, 99, 100]); // ≈ 0.5
  const even = bootstrapRatio([100, 102, 98, 101], [100, 101, 99, 100]); // ≈ 1.0
  const wide = bootstrapRatio([40, 100, 160, 70], [100, 101, 99, 100]);
  assert.equal(disagree(fast, even), 'disagree');
  assert.equal(disagree(fast, wide), 'agree');
  assert.equal(disagree(bootstrapRatio([50, 51], [100, 101]), even), 'too few runs');
});

test('workloads are COUNTxSIZE', () => {
  assert.deepEqual(parseWorkload('64x10KiB'), { count: 64, size: '10KiB' });
  assert.throws(() => parseWorkload('64 objects'), /COUNTxSIZE/);
});

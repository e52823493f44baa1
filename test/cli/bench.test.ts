/**
 * `h2lab bench` as users run it: flags reach the engine, the JSON result is written, exit statuses.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RunResult } from '../../src/model/run.ts';
import { h2lab } from '../helpers/cli.ts';
import { startTestServer } from '../helpers/servers.ts';

const cli = (args: string[]) => h2lab(['bench', ...args]);

test('bench URL --rate runs an open loop and writes the versioned result', async () => {
  const server = await startTestServer('h1');
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-bench-cli-'));
  try {
    const json = join(dir, 'r.json');
    const r = await cli([`${server.url}/bytes/100`, '-p', 'h1', '--rate', '100', '-d', '1s', '--json', json]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /latency \(corrected\)/);
    const result = JSON.parse(readFileSync(json, 'utf8')) as RunResult;
    assert.equal(result.kind, 'h2lab.run');
    assert.equal(result.schedule.mode, 'open');
    assert.equal(result.schedule.rateRps, 100);
    assert.ok(Math.abs(result.counts.total - 100) <= 2, `${result.counts.total} requests at 100/s for 1 s`);
    assert.equal(server.seen.requests, result.counts.total);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  }
});

test('usage errors exit 2 naming the option; an unreachable target exits 1', async () => {
  const bad = await cli(['http://127.0.0.1:9/', '--duration', 'soon']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /H2LAB_ERR_INVALID_OPTION: --duration "soon"/);
  const down = await cli(['http://127.0.0.1:9/', '-p', 'h1', '-n', '5', '-q']);
  assert.equal(down.code, 1);
  assert.match(down.stderr, /H2LAB_ERR_TARGET_UNREACHABLE/);
});

test('bench --burst prints the completion time; contradicting flags exit 2; an unreachable target still exits 1', async () => {
  const server = await startTestServer('h1');
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-bench-cli-'));
  try {
    const json = join(dir, 'b.json');
    const r = await cli([`${server.url}/bytes/100`, '-p', 'h1', '--burst', '12', '--json', json]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /schedule +burst of 12 requests at once, handshakes included/);
    assert.match(r.stdout, /completion time +[\d.]+ (ms|s), t0 → last response end/);
    assert.match(r.stdout, /first response +[\d.]+ (ms|s); 6 connections opened inside the timed period/);
    const result = JSON.parse(readFileSync(json, 'utf8')) as RunResult;
    assert.equal(result.schedule.mode, 'burst');
    assert.equal(result.burst?.requests, 12);
    assert.equal(server.seen.requests, 12);
    assert.equal(server.seen.connections, 6, 'the server accepted the pool of 6, opened by the burst');
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  }
  const bad = await cli(['http://127.0.0.1:9/', '--burst', '8', '-d', '1s']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--duration 1000 cannot be combined with --burst 8/);
  const down = await cli(['http://127.0.0.1:9/', '-p', 'h1', '--burst', '8', '-q']);
  assert.equal(down.code, 1);
  assert.match(down.stderr, /H2LAB_ERR_TARGET_UNREACHABLE/);
});

/**
 * Nothing lost, ever: every output path is checked before any load reaches the target, a write that
 * fails at the end keeps the table and a named fallback file, `--json -` is stdout, and a --samples
 * write that fails mid-run ends the run with a coded error and the partial result.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RunResult } from '../../src/model/run.ts';
import { h2lab } from '../helpers/cli.ts';
import { startTestServer } from '../helpers/servers.ts';

const tempDir = () => mkdtempSync(join(tmpdir(), 'h2lab-out-cli-'));

test('bench refuses an unwritable --json or --samples before sending one request (exit 2, H2LAB_ERR_OUTPUT)', async () => {
  const server = await startTestServer('h1');
  try {
    for (const [option, path] of [
      ['--json', '/proc/h2lab-x.json'],
      ['--json', '/dev/full'],
      ['--samples', '/proc/nope/s.ndjson'],
      ['--samples', '/dev/full'],
    ] as const) {
      const r = await h2lab(['bench', `${server.url}/bytes/10`, '-p', 'h1', '-n', '50', option, path]);
      assert.equal(r.code, 2, `${option} ${path}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`H2LAB_ERR_OUTPUT: ${option} ${path}: .*choose a path`));
      assert.doesNotMatch(r.stderr, /Unhandled|INTERNAL|\n\s+at /);
    }
    assert.equal(server.seen.requests, 0, 'no load was generated');
  } finally {
    await server.close();
  }
});

test('bench --json - writes the JSON to stdout and the table to stderr, and no file named -', async () => {
  const server = await startTestServer('h1');
  const dir = tempDir();
  try {
    const r = await h2lab(['bench', `${server.url}/bytes/10`, '-p', 'h1', '-n', '20', '--json', '-'], {
      cwd: dir,
    });
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout) as RunResult;
    assert.equal(result.counts.total, 20);
    assert.match(r.stderr, /latency/);
    assert.equal(existsSync(join(dir, '-')), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  }
});

test('bench: a --json write failing at the end prints the table and writes a named fallback file', async () => {
  const server = await startTestServer('h1');
  const dir = tempDir();
  try {
    const outDir = join(dir, 'out');
    let replaced = false;
    const r = await h2lab(
      ['bench', `${server.url}/bytes/10`, '-p', 'h1', '-d', '2s', '--json', join(outDir, 'r.json')],
      {
        cwd: dir,
        onStderr: () => {
          // Once the load runs (the check passed), the directory becomes a file: the end write fails.
          if (replaced) return;
          replaced = true;
          writeFileSync(outDir, 'not a directory');
        },
      },
    );
    assert.ok(replaced, 'the run printed progress');
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stdout, /latency/, 'the table is printed');
    const m =
      /H2LAB_ERR_OUTPUT: --json \S+: writing the result failed \((\w+)\); it was written to (\S+) instead/.exec(
        r.stderr,
      );
    assert.ok(m, r.stderr);
    assert.match(m[2]!, /h2lab-result-.*\.json$/);
    const result = JSON.parse(readFileSync(m[2]!, 'utf8')) as RunResult;
    assert.ok(result.counts.total > 0);
    assert.equal(result.counts.total, server.seen.requests);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  }
});

test('bench --samples failing mid-run (EFBIG) ends with H2LAB_ERR_OUTPUT and keeps the partial result', async () => {
  const server = await startTestServer('h1');
  const dir = tempDir();
  try {
    const json = join(dir, 'r.json');
    const r = await h2lab(
      [
        'bench',
        `${server.url}/bytes/10`,
        '-p',
        'h1',
        '-d',
        '5s',
        '--samples',
        join(dir, 's.ndjson'),
        '--json',
        json,
      ],
      { fileSizeLimitBytes: 32 * 1024 },
    );
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /H2LAB_ERR_OUTPUT: --samples \S+: writing failed \(EFBIG\)/);
    assert.doesNotMatch(r.stderr, /Unhandled|\n\s+at /);
    const result = JSON.parse(readFileSync(json, 'utf8')) as RunResult;
    assert.equal(result.error?.code, 'H2LAB_ERR_OUTPUT');
    assert.ok(result.counts.total > 0, 'what was measured is kept');
    assert.ok(result.durationMs < 4000, `stopped early: ${result.durationMs} ms of 5000`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  }
});

test('compare refuses an unwritable --out before the first run, without hanging (exit 2)', async () => {
  const dir = tempDir();
  try {
    const file = join(dir, 'a-file');
    writeFileSync(file, '');
    for (const out of ['/proc/h2lab-x', file]) {
      const r = await h2lab(['compare', '--out', out], { timeoutMs: 30_000 });
      assert.equal(r.timedOut, false);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`H2LAB_ERR_OUTPUT: --out ${out}: `));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('browser refuses an unwritable --json or --out before starting Chromium (exit 2)', async () => {
  for (const [option, path] of [
    ['--json', '/proc/h2lab-x.json'],
    ['--out', '/dev/full'],
  ] as const) {
    const r = await h2lab(['browser', option, path, '--chromium', '/nonexistent/chromium'], {
      timeoutMs: 30_000,
    });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`H2LAB_ERR_OUTPUT: ${option} ${path}: `));
  }
});

/**
 * Failures named right: usage mistakes exit 2 with a code naming the option and the fix, never
 * H2LAB_ERR_INTERNAL, and nothing is silently accepted.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RunResult } from '../../src/model/run.ts';
import { h2lab, h2labInProcess } from '../helpers/cli.ts';
import { startTestServer } from '../helpers/servers.ts';

test("bench 'not a url' is a usage error (2), not an internal one", async () => {
  const r = await h2lab(['bench', 'not a url', '-n', '5']);
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /H2LAB_ERR_INVALID_OPTION: url "not a url" is not valid: give an http:\/\/ or https:\/\//,
  );
  assert.doesNotMatch(r.stderr, /INTERNAL/);
});

test('bench --urls naming a file without a path is a usage error (2)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-usage-cli-'));
  const server = await startTestServer('h1');
  try {
    const urls = join(dir, 'urls.txt');
    writeFileSync(urls, '# nothing here\n\n');
    const r = await h2lab(['bench', server.url, '-p', 'h1', '-n', '5', '--urls', urls]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /H2LAB_ERR_INVALID_OPTION: --urls names a file without a path/);
    assert.equal(server.seen.requests, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  }
});

test('bench -d 1 is one second (as h2load, oha and k6 read it), not 1 ms', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-usage-cli-'));
  const server = await startTestServer('h1');
  try {
    const json = join(dir, 'r.json');
    const r = await h2lab([
      'bench',
      `${server.url}/bytes/10`,
      '-p',
      'h1',
      '-c',
      '2',
      '-d',
      '1',
      '--json',
      json,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(readFileSync(json, 'utf8')) as RunResult;
    assert.ok(
      result.durationMs >= 900 && result.durationMs < 2000,
      `measured period ${result.durationMs} ms`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  }
});

test('h2lab alone prints the help and exits 2, without "(outputHelp)"', async () => {
  const r = await h2lab([]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /Usage: h2lab/);
  assert.match(r.stderr, /bench/);
  assert.doesNotMatch(r.stdout + r.stderr, /outputHelp|H2LAB_ERR/);
});

test('a brace range the shell expanded into several URLs: the usage error names the quoted template', async () => {
  const { shellExpandedHint } = await import('../../src/cli/main.ts');
  const urls = [0, 1, 2, 3].map((i) => `http://127.0.0.1:9/chunks/${i}`);
  assert.match(
    shellExpandedHint(urls),
    /4 URLs .* Quote it \('http:\/\/127\.0\.0\.1:9\/chunks\/\{0\.\.3\}'\)/,
  );
  const tiles = [2200, 2201, 2202].map((x) => `https://h/tiles/12/${x}/1300`);
  assert.match(shellExpandedHint(tiles), /\('https:\/\/h\/tiles\/12\/\{2200\.\.2202\}\/1300'\)/);
  assert.match(shellExpandedHint(['http://a/x', 'http://b/y']), /the URL in single quotes/);
  assert.equal(shellExpandedHint(['http://a/x', 'extra']), '');
  const r = await h2labInProcess(['bench', ...urls, '-d', '1s']);
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /H2LAB_ERR_USAGE: too many arguments for 'bench'\. Expected 1 argument but got 4: 4 URLs/,
  );
});

// `h2lab probe` as a user runs it: the table, --json, and the exit statuses (0 ok, 1 unmet --expect,
// 2 could not probe / usage), each error one line with its code and no stack trace.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { h2lab } from '../helpers/cli.ts';
import { listen } from '../helpers/servers.ts';
import { routes } from './servers.ts';

test('table on stdout, exit 0; --json is the versioned result; an unmet --expect exits 1 and still reports', async () => {
  const s = await listen(http.createServer(routes));
  try {
    const url = `http://127.0.0.1:${s.port}/`;
    const table = await h2lab(['probe', url]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^h2lab probe http:\/\/127\.0\.0\.1/);
    assert.match(table.stdout, /HTTP\/1\.1 keep-alive: honoured/);
    assert.match(table.stdout, /h2c \(prior knowledge\)\s+no/);

    // A --config file (keys are the flag names) under flags that override it.
    const dir = mkdtempSync(join(tmpdir(), 'h2lab-probe-cli-'));
    writeFileSync(join(dir, 'probe.yaml'), 'keep-alive-requests: 2\nexpect: [h2]\n');
    const json = await h2lab([
      'probe',
      url,
      '--json',
      '--config',
      join(dir, 'probe.yaml'),
      '--expect',
      'keepalive,h2c',
    ]);
    rmSync(dir, { recursive: true, force: true });
    assert.equal(json.code, 1);
    const r = JSON.parse(json.stdout);
    assert.equal(r.kind, 'h2lab.probe');
    assert.equal(r.version, 1);
    assert.equal(r.keepAlive.requests, 2, 'from the config file');
    assert.deepEqual(r.expectations.asked, ['keepalive', 'h2c'], 'the flag overrides the file');
    assert.deepEqual(r.expectations.met, ['keepalive']);
    assert.equal(r.expectations.unmet[0].expectation, 'h2c');
    assert.match(json.stderr, /^h2lab: H2LAB_ERR_PROBE_EXPECT_UNMET: 1 expectation\(s\) not met: h2c/m);
  } finally {
    await s.close();
  }
});

test('could-not-probe exits 1 (a target problem, as in bench), usage errors 2; one line with the code, no stack trace', async () => {
  const free = await new Promise<number>((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
  const cases = [
    [['probe', `http://127.0.0.1:${free}/`], 'H2LAB_ERR_PROBE_UNREACHABLE', 1],
    [['probe', 'gopher://x/', '--json'], 'H2LAB_ERR_PROBE_BAD_URL', 2],
    [
      ['probe', `http://127.0.0.1:${free}/`, '--expect', 'h9', '--timeout', '2s'],
      'H2LAB_ERR_INVALID_OPTION',
      2,
    ],
    [['bench', `http://127.0.0.1:${free}/`, '-p', 'h1', '-n', '1', '-q'], 'H2LAB_ERR_TARGET_UNREACHABLE', 1],
  ] as const;
  // Independent processes: run them side by side (each pays the TypeScript loader's start-up).
  const runs = await Promise.all(cases.map(([args]) => h2lab([...args])));
  cases.forEach(([args, code, exit], i) => {
    const r = runs[i]!;
    assert.equal(r.code, exit, `${args.join(' ')}: ${r.stderr}`);
    const lines = r.stderr
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('h2lab:'));
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, new RegExp(`^h2lab: ${code}: `));
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    if ((args as readonly string[]).includes('--json')) assert.equal(JSON.parse(r.stdout).error.code, code);
  });
});

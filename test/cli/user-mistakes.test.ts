// A user's mistake is named as the user's: a stable code, exit 2 for usage, the flag, the value and
// the fix — never H2LAB_ERR_INTERNAL, and never a fix that the command line already applied. Each
// case runs the real CLI.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { compareOptionsFromFlags } from '../../src/cli/compare.ts';
import { resolveCompareOptions } from '../../src/compare/index.ts';
import { chromiumMissing } from '../browser/helpers.ts';
import { type TestCerts, testCerts } from '../helpers/certs.ts';
import { h2lab } from '../helpers/cli.ts';
import { startTestServer, type TestServer } from '../helpers/servers.ts';

let a: TestCerts;
let b: TestCerts;
let server: TestServer;
let garbage = '';

before(async () => {
  [a, b] = [await testCerts(), await testCerts()];
  server = await startTestServer('tls', a);
  garbage = join(a.dir, 'garbage.pem');
  writeFileSync(garbage, '-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n');
});
after(async () => {
  await server.close();
  a.cleanup();
  b.cleanup();
});

const noInternal = (stderr: string) => assert.doesNotMatch(stderr, /H2LAB_ERR_INTERNAL| {4}at /);

for (const command of ['bench', 'compare'] as const) {
  const run = (extra: string[]) =>
    h2lab(
      command === 'bench'
        ? ['bench', server.url, '-k', '-n', '2', ...extra]
        : ['compare', server.url, '-k', '-d', '200ms', '--runs', '3', '-c', '1', ...extra],
    );

  test(`${command}: a --key that is not --cert's is H2LAB_ERR_TLS_KEY_MISMATCH, exit 2, as serve says`, async () => {
    const r = await run(['--cert', a.path.clientPem, '--key', b.path.clientKeyPem]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /H2LAB_ERR_TLS_KEY_MISMATCH: --key \S+client-key\.pem does not belong to --cert \S+client\.pem: pair the certificate with the key/,
    );
    noInternal(r.stderr);
    assert.equal(server.seen.requests, 0, 'refused before any request');
  });

  test(`${command}: garbage inside a PEM block is H2LAB_ERR_TLS_BAD_PEM naming the flag, exit 2`, async () => {
    for (const [flags, named] of [
      [['--cert', garbage, '--key', a.path.clientKeyPem], '--cert'],
      [['--ca', garbage], '--ca'],
    ] as const) {
      const r = await run([...flags]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(`H2LAB_ERR_TLS_BAD_PEM: ${named} \\S+garbage\\.pem is not valid PEM: .*give a PEM file`),
      );
      noInternal(r.stderr);
    }
  });
}

test('compare ftp://… is a usage error naming the URL and the schemes, not "a port that speaks TLS"', async () => {
  const r = await h2lab(['compare', 'ftp://127.0.0.1:21/', '-d', '200ms']);
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /H2LAB_ERR_INVALID_OPTION: url "ftp:\/\/127\.0\.0\.1:21\/" is not valid: give an http:\/\/ or https:\/\/ URL/,
  );
  assert.doesNotMatch(r.stderr, /speaks TLS/);
});

test('a server that closes during the handshake, with -k given: not told to pass --ca or -k', async () => {
  const sockets = new Set<Socket>();
  const closer = createServer((s) => {
    sockets.add(s);
    s.destroy();
  });
  await new Promise<void>((r) => closer.listen(0, '127.0.0.1', r));
  const port = (closer.address() as { port: number }).port;
  try {
    for (const args of [
      ['bench', `https://127.0.0.1:${port}/`, '-k', '-n', '1'],
      ['compare', `https://127.0.0.1:${port}/`, '-k', '-d', '200ms', '--runs', '3', '-c', '1'],
    ]) {
      const r = await h2lab(args);
      assert.equal(r.code, 1, `${args[0]}: a target failure: ${r.stderr}`);
      assert.match(
        r.stderr,
        /H2LAB_ERR_TLS_HANDSHAKE: the server closed the connection during the TLS handshake .*neither --ca nor -k changes it/,
        args[0],
      );
      assert.doesNotMatch(r.stderr, /pass --ca|or -k \(--insecure\)/, args[0]);
    }
  } finally {
    closer.close();
  }
});

test('--timeout 0 names the flag, the value and the least value, in bench and compare', async () => {
  for (const cmd of [
    ['bench', server.url, '-k', '-n', '1'],
    ['compare', server.url, '-k', '-d', '200ms'],
  ]) {
    const r = await h2lab([...cmd, '--timeout', '0']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /H2LAB_ERR_INVALID_OPTION: --timeout "0" is not valid: use at least 1/, cmd[0]);
    assert.doesNotMatch(r.stderr, /timeoutMs|Too small/);
  }
});

test('compare --runs: the range the message gives is the rule (warm-up runs plus 2)', async () => {
  for (const runs of ['0', '2']) {
    const r = await h2lab(['compare', server.url, '-k', '-d', '200ms', '--runs', runs]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `--runs "${runs}" is not valid: use a whole number from 3 to 1000: the first 1 run\\(s\\) are warm-up`,
      ),
    );
  }
  // The least value the message names is accepted, with the warm-up it names.
  assert.equal(resolveCompareOptions(compareOptionsFromFlags(server.url, { runs: '3' } as never)).runs, 3);
  const none = compareOptionsFromFlags(server.url, { runs: '2', warmupRuns: '0' } as never);
  assert.equal(resolveCompareOptions(none).runs, 2);
  assert.throws(
    () => compareOptionsFromFlags(server.url, { runs: '1', warmupRuns: '0' } as never),
    /--runs "1" is not valid: use a whole number from 2 to 1000/,
  );
});

test('probe -k and page record -k are accepted, as bench and compare accept them', async (t) => {
  const p = await h2lab(['probe', server.url, '-k']);
  assert.equal(p.code, 0, p.stderr);
  assert.doesNotMatch(p.stderr, /unknown option/);
  const har = join(a.dir, 'x.har');
  const missing = chromiumMissing();
  if (missing) {
    // page record gets past its flags (and pins the origin's certificate) to the missing Chromium.
    t.diagnostic(`page record not run to the end: ${missing}`);
    const r = await h2lab([
      'page',
      'record',
      server.url,
      '-o',
      har,
      '-k',
      '--chromium',
      '/nonexistent/chromium',
    ]);
    assert.doesNotMatch(r.stderr, /unknown option/);
    assert.match(r.stderr, /H2LAB_ERR_BROWSER_MISSING/);
    return;
  }
  // The test server's certificate is from a CA Chromium does not know: refused without -k.
  const refused = await h2lab(['page', 'record', server.url, '-o', har]);
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, /ERR_CERT_AUTHORITY_INVALID/);
  const r = await h2lab(['page', 'record', server.url, '-o', har, '-k']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /recorded https:\/\/127\.0\.0\.1:\d+\/?: \d+ requests/);
  assert.ok(JSON.parse(readFileSync(har, 'utf8')).log.entries.length >= 1);
});

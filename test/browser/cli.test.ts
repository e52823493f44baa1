// `h2lab browser` as a user runs it: exit statuses, the table, --json and a self-contained --out report.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { spkiPins } from '../../src/browser/chromium.ts';
import { measureBrowser, resolveBrowserOptions } from '../../src/browser/index.ts';
import { isH2labError } from '../../src/core/errors.ts';
import { parseBrowserResult } from '../../src/model/index.ts';
import { startFixtureTarget } from '../../src/server/index.ts';
import { testCerts } from '../helpers/certs.ts';
import { h2lab } from '../helpers/cli.ts';
import { chromiumMissing } from './helpers.ts';

const run = (args: string[]) => h2lab(['browser', ...args], { timeoutMs: 120_000 });

test('usage errors exit 2 with their code', async () => {
  // One process for the exit status; the other usage errors in-process (each CLI start costs seconds).
  const count = await run(['--count', '0']);
  assert.equal(count.code, 2, count.stderr);
  assert.match(count.stderr, /H2LAB_ERR_INVALID_OPTION: --count "0"/);
  await assert.rejects(
    measureBrowser({ chromiumPath: '/nonexistent/chromium', origins: ['http://127.0.0.1:9'] }),
    (e) => {
      assert.ok(isH2labError(e, 'H2LAB_ERR_BROWSER_MISSING'));
      assert.equal(e.exitCode, 2);
      assert.match(e.message, /--chromium \/nonexistent\/chromium/);
      return true;
    },
  );
  assert.throws(() => resolveBrowserOptions({ origins: ['ftp://127.0.0.1:9'] }), /origin "ftp:/);
  assert.throws(() => resolveBrowserOptions({ origins: ['http://127.0.0.1:9/x'] }), /no path/);
});

test('h2lab browser on the fixture: table, --json and a self-contained HTML report', async (t) => {
  const missing = chromiumMissing();
  if (missing) return t.skip(missing);
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-browser-cli-'));
  try {
    const r = await run([
      '--count',
      '12',
      '--runs',
      '2',
      '--no-control',
      '--no-cancel',
      '-q',
      '--out',
      dir,
      '--json',
      join(dir, 'r.json'),
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Burst \(medians over kept runs\)/);
    assert.match(r.stdout, /https:\/\/ h2 +h2 /);
    const json = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8'));
    assert.equal(json.kind, 'h2lab.browser');
    // The written result matches its published schema exactly (strict objects: no field unknown to it).
    parseBrowserResult(json);
    assert.equal(json.options.count, 12);
    assert.deepEqual(JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8')).targets, json.targets);
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    assert.equal((html.match(/<svg /g) ?? []).length, 2, 'one waterfall per target');
    assert.doesNotMatch(html, /(src|href)=["']?(https?:)?\/\//, 'the report loads nothing from the network');
    assert.doesNotMatch(html, /<script/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an https origin Chromium does not trust: every request fails, exit 1, and the fix named', async (t) => {
  const missing = chromiumMissing();
  if (missing) return t.skip(missing);
  const target = await startFixtureTarget({ host: '127.0.0.1', port: 0, tlsPort: 0 }, 'in-process');
  try {
    const r = await run([target.tlsUrl!, '--count', '4', '--runs', '2', '--no-control', '--no-cancel', '-q']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /H2LAB_ERR_TARGET_UNREACHABLE: every request to https:\/\/ h2 failed in Chromium \(net::ERR_CERT_AUTHORITY_INVALID ×8\): .*--trust-cert/,
    );
    assert.doesNotMatch(r.stdout, /NaN/);
  } finally {
    await target.close();
  }
});

test('--trust-cert CA.pem: the origin is verified against the CA and its certificate pinned; a wrong CA is refused before Chromium starts', async (t) => {
  const missing = chromiumMissing();
  if (missing) return t.skip(missing);
  const mine = await testCerts();
  const other = await testCerts();
  const target = await startFixtureTarget(
    { host: '127.0.0.1', port: 0, tlsPort: 0, cert: mine.path.serverPem, key: mine.path.serverKeyPem },
    'in-process',
  );
  let closed = false;
  try {
    const common = ['--count', '4', '--runs', '2', '--no-control', '--no-cancel', '-q'];
    const ok = await run([target.tlsUrl!, '--trust-cert', mine.path.caPem, ...common, '--json', '-']);
    assert.equal(ok.code, 0, ok.stderr);
    const json = JSON.parse(ok.stdout);
    assert.deepEqual(json.burst.summaries[0].protocols, { h2: 4 });
    assert.equal(json.trust.secureContext, true);
    // The pin is the server certificate's key, which Node verified: not the CA's, which Chromium ignores.
    assert.deepEqual(json.trust.spki, spkiPins(mine.serverPem));
    // Without -q, so that the progress would show Chromium being launched.
    const wrong = await run([
      target.tlsUrl!,
      '--trust-cert',
      other.path.caPem,
      ...common.filter((a) => a !== '-q'),
    ]);
    assert.equal(wrong.code, 1, wrong.stderr);
    assert.match(
      wrong.stderr,
      /H2LAB_ERR_TLS_HANDSHAKE: the certificate https:\/\/127\.0\.0\.1:\d+ presents does not verify against the CA of --trust-cert \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\)/,
    );
    assert.doesNotMatch(wrong.stderr, /launching Chromium/);
    closed = true;
    await target.close();
    const dead = await run([target.tlsUrl!, '--trust-cert', mine.path.caPem, ...common]);
    assert.equal(dead.code, 1, dead.stderr);
    assert.match(
      dead.stderr,
      /H2LAB_ERR_TARGET_UNREACHABLE: cannot check the certificate of .* ECONNREFUSED: check the server is running/,
    );
  } finally {
    if (!closed) await target.close();
    mine.cleanup();
    other.cleanup();
  }
});

test('Ctrl-C: stops after the run in progress, prints the runs measured, exit 130', async (t) => {
  const missing = chromiumMissing();
  if (missing) return t.skip(missing);
  let sent = false;
  const r = await h2lab(['browser', '--count', '8', '--runs', '30', '--no-cancel'], {
    timeoutMs: 120_000,
    onStderr: (chunk, child) => {
      // After a few burst runs, as a user would press Ctrl-C.
      if (!sent && /\[5\/\d+\] burst/.test(chunk)) {
        sent = true;
        child.kill('SIGINT');
      }
    },
  });
  assert.ok(sent, r.stderr);
  assert.equal(r.code, 130, r.stderr.slice(-2000));
  assert.match(r.stderr, /stopping after the run in progress/);
  assert.match(r.stderr, /H2LAB_ERR_INTERRUPTED/);
  assert.match(r.stdout, /Burst \(medians over kept runs\)/);
});

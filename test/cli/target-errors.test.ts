/**
 * Target problems named right, over real sockets: the wrong scheme for a port and a missing client
 * certificate each get the code and the fix, exit 1, instead of raw OpenSSL text, an error rate or
 * "check the server is running".
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setupFailureError } from '../../src/transport/index.ts';
import { testCerts } from '../helpers/certs.ts';
import { h2lab } from '../helpers/cli.ts';
import { startTestServer } from '../helpers/servers.ts';

test('bench https:// to a plain port: H2LAB_ERR_TLS_HANDSHAKE "does not speak TLS: use http://", exit 1', async () => {
  const server = await startTestServer('h1');
  try {
    const r = await h2lab(['bench', server.url.replace('http:', 'https:'), '-p', 'h1', '-n', '5', '-q']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /H2LAB_ERR_TLS_HANDSHAKE: the https:\/\/ URL names a port that does not speak TLS .*use http:\/\//,
    );
    assert.doesNotMatch(r.stderr, /ssl3_|openssl|pass --ca/);
  } finally {
    await server.close();
  }
});

test('bench http:// -p h1 to a TLS port: H2LAB_ERR_PROTOCOL_MISMATCH "use https://", exit 1', async () => {
  const certs = await testCerts();
  const server = await startTestServer('tls', certs);
  try {
    const r = await h2lab(['bench', server.url.replace('https:', 'http:'), '-p', 'h1', '-n', '5', '-q']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /H2LAB_ERR_PROTOCOL_MISMATCH: the http:\/\/ URL names a port that speaks TLS.*use https:\/\//,
    );
    assert.equal(server.seen.requests, 0);
  } finally {
    await server.close();
    certs.cleanup();
  }
});

test('http:// to a TLS port: bench -p h2 and compare say "use https://" before any load, not "unreachable" nor "enable HTTP/2", exit 1', async () => {
  const certs = await testCerts();
  const server = await startTestServer('tls', certs);
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-scheme-'));
  try {
    const url = server.url.replace('https:', 'http:');
    const b = await h2lab(['bench', url, '-p', 'h2', '-n', '5', '-q']);
    assert.equal(b.code, 1, b.stderr);
    assert.match(
      b.stderr,
      /H2LAB_ERR_PROTOCOL_MISMATCH: the http:\/\/ URL names a port that speaks TLS.*use https:\/\//,
    );
    assert.doesNotMatch(b.stderr, /could not be reached|enable HTTP\/2/, 'bench names the scheme');
    const c = await h2lab(['compare', `${url}/bytes/10`, '--runs', '3', '--duration', '200ms', '--out', dir]);
    assert.equal(c.code, 1, c.stderr);
    assert.match(
      c.stderr,
      /H2LAB_ERR_PROTOCOL_MISMATCH: the http:\/\/ URL names a port that speaks TLS.*use https:\/\/127\.0\.0\.1:\d+\/bytes\/10/,
    );
    assert.doesNotMatch(
      c.stdout + c.stderr,
      /not offered|enable HTTP/,
      'compare names the scheme, not a protocol',
    );
    assert.equal(server.seen.requests, 0, 'no load');
  } finally {
    await server.close();
    certs.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('compare against an h2-only TLS server: h1 is not offered (ALPN refused), not a certificate failure; the answer shows h2 alone', async () => {
  const certs = await testCerts();
  const server = await startTestServer('tls-h2-only', certs);
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-h2only-'));
  try {
    const c = await h2lab([
      'compare',
      `${server.url}/bytes/10`,
      '--ca',
      certs.path.caPem,
      '--protocols',
      'h1,h2',
      '--concurrency',
      '4',
      '--runs',
      '3',
      '--duration',
      '200ms',
      '--out',
      dir,
    ]);
    assert.equal(c.code, 0, c.stderr);
    const out = c.stdout.replace(/\s+/g, ' ');
    assert.doesNotMatch(
      out,
      /pass --ca|TLS handshake with the target failed|negotiated http\/1\.1/,
      'no certificate advice',
    );
    assert.match(
      out,
      /c=4 not compared h2 [\d,]+ req\/s with nothing to compare against \(h1 did not run\); h1 not offered by the server/,
    );
    const r = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as {
      cells: { protocol: string; status: string; note?: string }[];
    };
    const h1 = r.cells.find((x) => x.protocol === 'h1');
    assert.equal(h1?.status, 'not-offered', JSON.stringify(h1));
    assert.match(h1?.note ?? '', /refused HTTP\/1\.1 in the TLS handshake \(ALPN: no_application_protocol/);
    for (const f of ['report.md', 'report.html'])
      assert.match(readFileSync(join(dir, f), 'utf8'), /h1 not offered by the server/, f);
  } finally {
    await server.close();
    certs.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A short `compare --protocols h1,h2` against a test server of `kind`: its stdout on one line. */
async function compareOneLine(kind: 'h1' | 'h2c', concurrency: string): Promise<string> {
  const server = await startTestServer(kind);
  const dir = mkdtempSync(join(tmpdir(), `h2lab-${kind}only-`));
  try {
    const c = await h2lab([
      'compare',
      `${server.url}/bytes/10`,
      '--protocols',
      'h1,h2',
      '--concurrency',
      concurrency,
      '--runs',
      '3',
      '--duration',
      '200ms',
      '--out',
      dir,
    ]);
    assert.equal(c.code, 0, c.stderr);
    return c.stdout.replace(/\s+/g, ' ');
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('compare against an HTTP/1.1-only server: the answer shows h1 alone and says h2 is not offered, not that h1 did not run', async () => {
  const out = await compareOneLine('h1', '4');
  assert.match(
    out,
    /c=4 not compared (\* )?h1 [\d,]+ req\/s with nothing to compare it against; h2 not offered by the server/,
  );
  assert.doesNotMatch(out, /h1 did not run/);
});

test('compare against an h2c-only port: h1 is not offered with what the server answered (nothing negotiated over cleartext), and a line over several levels says which level it quotes', async () => {
  const out = await compareOneLine('h2c', '1,4');
  assert.match(
    out,
    /HTTP\/1\.1 not offered by the server: requested http\/1\.1 but the server did not answer in HTTP\/1\.1/,
  );
  assert.doesNotMatch(out, /it negotiated http\/1\.1/);
  assert.match(
    out,
    /c=1, 4 not compared (\* )?h2 [\d,]+ req\/s at c=4 with nothing to compare against \(h1 did not run\)/,
  );
});

test('bench to an mTLS server without a client certificate: "requires a client certificate: pass --cert --key", exit 1 (h1 and h2)', async () => {
  const certs = await testCerts();
  const server = await startTestServer('mtls', certs);
  try {
    for (const p of ['h1', 'h2']) {
      const r = await h2lab(['bench', server.url, '--ca', certs.path.caPem, '-p', p, '-n', '5', '-q']);
      assert.equal(r.code, 1, `${p}: ${r.stderr}`);
      assert.match(
        r.stderr,
        /H2LAB_ERR_TLS_HANDSHAKE: the server requires a client certificate .*pass --cert FILE --key FILE/,
        p,
      );
    }
    const ok = await h2lab([
      'bench',
      server.url,
      '--ca',
      certs.path.caPem,
      '--cert',
      certs.path.clientPem,
      '--key',
      certs.path.clientKeyPem,
      '-p',
      'h2',
      '-n',
      '5',
      '-q',
    ]);
    assert.equal(ok.code, 0, `with the client certificate: ${ok.stderr}`);
  } finally {
    await server.close();
    certs.cleanup();
  }
});

test('more connections than the process may open: H2LAB_ERR_FD_LIMIT before any connection, exit 2', async () => {
  const server = await startTestServer('h1');
  try {
    const r = await h2lab(['bench', server.url, '-p', 'h1', '--connections', '1000', '-d', '1s', '-q'], {
      openFilesLimit: 256,
    });
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /H2LAB_ERR_FD_LIMIT: --connections 1000 needs about 1064 open files .* may open 256 \(ulimit -n\): raise the limit \(ulimit -n 2048\)/,
    );
    assert.equal(server.seen.requests, 0, 'no load');
    const c = await h2lab(
      [
        'compare',
        server.url,
        '--protocols',
        'h1,h2',
        '--h1-connections',
        'concurrency',
        '--concurrency',
        '1,500',
        '--runs',
        '3',
      ],
      { openFilesLimit: 256 },
    );
    assert.equal(c.code, 2, c.stderr);
    assert.match(
      c.stderr,
      /H2LAB_ERR_FD_LIMIT: --h1-connections concurrency \(500\) needs about 564 open files/,
    );
    assert.equal(server.seen.requests, 0, 'no load');
  } finally {
    await server.close();
  }
});

test('EMFILE while opening connections is the process limit, not an unreachable target', () => {
  const e = setupFailureError('connect', 'connect EMFILE 127.0.0.1:8080 - Local (undefined:undefined)', 'h1');
  assert.equal(e.code, 'H2LAB_ERR_FD_LIMIT');
  assert.match(e.message, /ran out of file descriptors .*EMFILE.*the target was not the problem/);
  assert.equal(
    setupFailureError('connect', 'connect ECONNREFUSED 127.0.0.1:1', 'h1').code,
    'H2LAB_ERR_TARGET_UNREACHABLE',
  );
});

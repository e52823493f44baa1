// Every route family over every protocol, judged by real peers: curl (HTTP/1.1, h2c prior knowledge,
// h2 and HTTP/1.1 over TLS by ALPN) and nghttp. Also what the server says it saw (/metrics). Each test
// has a server of its own, so none depends on what another did or on their order.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { listeningLines } from '../../src/cli/serve.ts';
import type { RunningServer } from '../../src/server/index.ts';
import { spkiSha256Base64 } from '../../src/tls/index.ts';
import { scrape, startFixture, testHome } from '../helpers/fixture.ts';
import { curl, have, run } from '../helpers/peers.ts';

const home = testHome();
let srv: RunningServer;

beforeEach(async () => {
  srv = await startFixture({ poolSize: 4, tileMs: 5 });
});
afterEach(async () => {
  await srv.close(500);
});

interface Target {
  name: string;
  base: () => string;
  args: () => string[];
  version: string;
  protocol: 'http/1.1' | 'h2' | 'h2c';
}
const targets: Target[] = [
  { name: 'HTTP/1.1 plain', base: () => srv.plainUrl!, args: () => [], version: '1.1', protocol: 'http/1.1' },
  {
    name: 'h2c prior knowledge',
    base: () => srv.plainUrl!,
    args: () => ['--http2-prior-knowledge'],
    version: '2',
    protocol: 'h2c',
  },
  {
    name: 'h2 over TLS (ALPN)',
    base: () => srv.tlsUrl!,
    args: () => ['--cacert', srv.caFile!],
    version: '2',
    protocol: 'h2',
  },
  {
    name: 'HTTP/1.1 over TLS (ALPN)',
    base: () => srv.tlsUrl!,
    args: () => ['--cacert', srv.caFile!, '--http1.1'],
    version: '1.1',
    protocol: 'http/1.1',
  },
];
const sha = (s: string) => createHash('sha256').update(Buffer.from(s, 'latin1')).digest('hex');

/** Every route family once over target `t`, checked as curl sees it. */
async function exercise(t: Target): Promise<void> {
  const b = await curl([...t.args(), `${t.base()}/bytes/1KiB`]);
  assert.equal(b.version, t.version, `curl negotiated HTTP/${b.version}: ${b.run.stderr}`);
  assert.equal(b.status, 200);
  assert.equal(b.body.length, 1024);

  const big = await curl([...t.args(), `${t.base()}/bytes/300KiB`]);
  assert.equal(big.body.length, 300 * 1024, 'streamed bodies larger than the precomputed block');

  const gz = await curl([...t.args(), '--compressed', '-D', '-', `${t.base()}/bytes/10KiB?gzip=1`]);
  assert.match(gz.body, /content-encoding: gzip/i);
  assert.equal(gz.body.slice(gz.body.indexOf('\r\n\r\n') + 4).length, 10 * 1024, 'gzip decodes to n bytes');

  const upload = join(home, `upload-${targets.indexOf(t)}.bin`);
  const payload = Buffer.alloc(512 * 1024, 0).map((_, i) => (i * 7919) & 255);
  writeFileSync(upload, payload);
  const e = await curl([
    ...t.args(),
    '--data-binary',
    `@${upload}`,
    '-H',
    'content-type: application/x-test',
    `${t.base()}/echo`,
  ]);
  assert.equal(e.status, 200);
  assert.equal(
    sha(e.body),
    createHash('sha256').update(payload).digest('hex'),
    'echo returns the upload byte for byte',
  );

  const c = await curl([...t.args(), `${t.base()}/chunks/7`]);
  assert.ok(
    c.body.length >= 20 * 1024 && c.body.length <= 50 * 1024,
    `chunk size ${c.body.length} within 20–50 KiB`,
  );
  const c2 = await curl([...t.args(), `${t.base()}/chunks/7`]);
  assert.equal(sha(c2.body), sha(c.body), 'chunks are deterministic');

  const tile = await curl([...t.args(), '-D', '-', `${t.base()}/tiles/3/1/2`]);
  assert.equal(tile.status, 200);
  assert.match(tile.body, /server-timing: queue;dur=[\d.]+, render;dur=[\d.]+/i);

  assert.equal((await curl([...t.args(), `${t.base()}/healthz`])).body, 'ok\n');
  const page = await curl([...t.args(), `${t.base()}/page/tiles.html?n=17`]);
  assert.match(page.body, /const n = 17,/);
  const m = await curl([...t.args(), `${t.base()}/metrics`]);
  assert.match(m.body, /# TYPE h2lab_requests_total counter/);
  const missing = await curl([...t.args(), `${t.base()}/nope`]);
  assert.equal(missing.status, 404);
}

describe('curl, every route family on every protocol', {
  skip: have('curl') ? false : 'curl is not installed',
}, () => {
  for (const t of targets) {
    test(`${t.name}: negotiates ${t.protocol}, /bytes /echo /chunks /tiles /healthz /page /metrics`, async () => {
      await exercise(t);
    });
  }

  test('HTTP/1.1 absolute form (GET http://host/path?query): routed on its path, as origin form (RFC 9112 §3.2.2)', async () => {
    const base = srv.plainUrl!;
    const r = await curl(['--request-target', `${base}/bytes/64?x=1`, `${base}/`]);
    assert.equal(r.status, 200, r.run.stderr);
    assert.equal(r.body.length, 64);
    const origin = await curl([`${base}/bytes/64?x=1`]);
    assert.equal(r.body, origin.body);
  });

  test('the same /bytes content on every protocol', async () => {
    const digests = new Set<string>();
    for (const t of targets) digests.add(sha((await curl([...t.args(), `${t.base()}/bytes/1KiB`])).body));
    assert.equal(digests.size, 1, `digests: ${[...digests].join(' ')}`);
  });

  test('/metrics counts requests by route and negotiated protocol, and connections by listener', async () => {
    for (const t of targets) await exercise(t);
    const s = await scrape(srv);
    for (const p of ['http/1.1', 'h2', 'h2c'] as const) {
      assert.ok(s.requests.bytes[p] >= 3, `bytes requests over ${p}: ${s.requests.bytes[p]}`);
      assert.ok(s.requests.echo[p] >= 1);
      assert.ok(s.requests.tiles[p] >= 1);
    }
    assert.ok(s.responseBytes.echo.h2 >= 512 * 1024);
    assert.ok(s.connections.total.plain.h2c >= 9 && s.connections.total.plain['http/1.1'] >= 9);
    assert.ok(s.connections.total.tls.h2 >= 9 && s.connections.total.tls['http/1.1'] >= 9);
    assert.equal(s.pool.jobs.completed, 4);
    assert.equal(s.pool.queueSeconds.count, 4);
    assert.equal(s.pool.size, 4);
  });
});

describe('nghttp (nghttp2-client)', { skip: have('nghttp') ? false : 'nghttp is not installed' }, () => {
  test('fetches over h2c and h2, and sees the advertised SETTINGS', async () => {
    const plain = await run('nghttp', ['-nv', `${srv.plainUrl}/bytes/2048`]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /recv \(stream_id=\d+\) :status: 200/);
    assert.match(plain.stdout, /SETTINGS_MAX_CONCURRENT_STREAMS\(0x03\):250/);
    assert.match(plain.stdout, /SETTINGS_MAX_HEADER_LIST_SIZE\(0x06\):32768/);
    const tls = await run('nghttp', ['-n', '--stat', `${srv.tlsUrl}/chunks/1`]);
    assert.equal(tls.code, 0, tls.stderr);
    assert.match(tls.stdout, /\s200\s+\d+K?\s+\/chunks\/1/);
  });
});

test('the SPKI hash matches what openssl computes', {
  skip: have('openssl', 'version') ? false : 'openssl is not installed',
}, async () => {
  const pem = join(home, 'srv.pem');
  writeFileSync(pem, srv.certPem);
  const r = await run('sh', [
    '-c',
    `openssl x509 -in ${pem} -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`,
  ]);
  assert.equal(r.stdout.trim(), spkiSha256Base64(srv.certPem));
});

test('startup lines: exactly one per listener with the real port, then the development CA', () => {
  const caPath = srv.caFile!;
  const lines = listeningLines(srv);
  const plainPort = new URL(srv.plainUrl!).port;
  const tlsPort = new URL(srv.tlsUrl!).port;
  assert.equal(lines[0], `listening http://127.0.0.1:${plainPort} (http/1.1, h2c)`);
  assert.equal(lines[1], `listening https://127.0.0.1:${tlsPort} (h2, http/1.1)`);
  assert.match(lines[2]!, new RegExp(`^development CA ${caPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} `));
  assert.ok(caPath.startsWith(home), 'the CA lives under H2LAB_HOME');
  assert.equal(lines.length, 3);
});

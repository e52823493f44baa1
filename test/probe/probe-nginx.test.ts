// probe() against Debian's nginx in the three configurations the issue names — TLS with http2, TLS
// without http2, and a plain port with http2 (h2c) — plus a plain HTTP/1.1 port: the probe's matrix
// must match each configuration exactly.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { probe } from '../../src/probe/index.ts';
import { testCerts } from '../helpers/certs.ts';
import { freePort, haveNginx, type Nginx, startNginx } from '../helpers/nginx.ts';

const available = haveNginx();
let dir: string;
let nginx: Nginx | undefined;
const port = { tlsH2: 0, tlsOnly: 0, h2c: 0, plain: 0, mtlsOn: 0, mtlsOptional: 0 };

describe('nginx (Debian package) configurations', {
  skip: available ? false : 'nginx is not installed (apt-get install nginx)',
}, () => {
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'h2lab-probe-nginx-'));
    const certs = await testCerts({ leafDays: 20 });
    writeFileSync(join(dir, 'server.pem'), certs.serverPem);
    writeFileSync(join(dir, 'server.key'), certs.serverKeyPem);
    writeFileSync(join(dir, 'ca.pem'), certs.caPem);
    writeFileSync(join(dir, 'client.pem'), certs.clientPem);
    writeFileSync(join(dir, 'client.key'), certs.clientKeyPem);
    certs.cleanup(); // copied into this test's directory
    port.tlsH2 = await freePort();
    port.tlsOnly = await freePort();
    port.h2c = await freePort();
    port.plain = await freePort();
    port.mtlsOn = await freePort();
    port.mtlsOptional = await freePort();
    const site = `
      location = / { return 200 "hello\\n"; }
      location = /text { default_type text/plain; return 200 "${'h2lab '.repeat(400)}"; }`;
    nginx = await startNginx(
      dir,
      `
  ssl_certificate ${join(dir, 'server.pem')};
  ssl_certificate_key ${join(dir, 'server.key')};
  gzip on; gzip_types text/plain; gzip_min_length 100;
  server { listen 127.0.0.1:${port.tlsH2} ssl http2; ${site} }
  server { listen 127.0.0.1:${port.tlsOnly} ssl; ${site} }
  server { listen 127.0.0.1:${port.h2c} http2; ${site} }
  server { listen 127.0.0.1:${port.plain}; ${site} }
  server { listen 127.0.0.1:${port.mtlsOn} ssl http2; ssl_client_certificate ${join(dir, 'ca.pem')}; ssl_verify_client on; ${site} }
  server { listen 127.0.0.1:${port.mtlsOptional} ssl http2; ssl_client_certificate ${join(dir, 'ca.pem')}; ssl_verify_client optional; ${site} }`,
      Object.values(port),
    );
  });
  after(async () => {
    await nginx?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('listen ssl http2: h2 by ALPN, nginx SETTINGS as sent, connection WINDOW_UPDATE, HTTP/1.1 keep-alive', async () => {
    const r = await probe(`https://127.0.0.1:${port.tlsH2}/`, {
      ca: join(dir, 'ca.pem'),
      expect: ['h2', 'http1.1', 'keepalive'],
    });
    assert.equal(r.protocols.h2.supported, true, r.protocols.h2.detail);
    assert.equal(r.protocols['http/1.1'].supported, true);
    assert.equal(r.tls?.alpn.h2.supported, true);
    assert.equal(r.tls?.alpn['http/1.1'].supported, true);
    assert.equal(r.tls?.negotiated.alpn, 'h2');
    assert.equal(r.tls?.versions['TLSv1.2'].supported, true);
    // nginx 1.22 lists TLSv1 in its default ssl_protocols, but OpenSSL 3 has no suite for it at the
    // default security level: the offer is refused with an alert.
    assert.equal(r.tls?.versions.TLSv1.supported, false, r.tls?.versions.TLSv1.detail);
    assert.equal(r.h2?.via, 'h2');
    // nginx 1.22 announces its stream limit (http2_max_concurrent_streams, default 128).
    assert.equal(r.h2?.effective.MAX_CONCURRENT_STREAMS, 128);
    assert.ok(
      r.h2?.connectionWindowUpdateBytes && r.h2.connectionWindowUpdateBytes > 0,
      'nginx enlarges the connection window at once',
    );
    assert.equal(r.keepAlive?.honoured, true);
    assert.match(r.responses[0]?.server ?? '', /^nginx/);
    assert.deepEqual(r.expectations?.unmet, []);
  });

  test('listen ssl (no http2): h2 not offered, HTTP/1.1 only', async () => {
    const r = await probe(`https://127.0.0.1:${port.tlsOnly}/`, {
      ca: join(dir, 'ca.pem'),
      expect: ['no-h2', 'http1.1'],
    });
    assert.equal(r.protocols.h2.supported, false, r.protocols.h2.detail);
    assert.equal(r.tls?.alpn.h2.supported, false);
    assert.equal(r.tls?.alpn['http/1.1'].supported, true);
    assert.equal(r.h2, undefined);
    assert.deepEqual(
      r.responses.map((x) => x.protocol),
      ['http/1.1'],
    );
    assert.ok(r.findings.some((f) => f.id === 'h2-not-offered'));
    assert.deepEqual(r.expectations?.unmet, []);
  });

  test('listen http2 on a plain port: h2c with prior knowledge only (no Upgrade, no HTTP/1.1)', async () => {
    const r = await probe(`http://127.0.0.1:${port.h2c}/`, {
      expect: ['h2c', 'no-h2c-upgrade', 'no-http1.1'],
    });
    assert.equal(r.protocols.h2c.supported, true, r.protocols.h2c.detail);
    assert.equal(r.protocols.h2cUpgrade.supported, false);
    assert.equal(r.protocols['http/1.1'].supported, false);
    assert.equal(r.h2?.via, 'h2c');
    assert.equal(r.h2?.effective.MAX_CONCURRENT_STREAMS, 128);
    assert.deepEqual(
      r.responses.map((x) => [x.protocol, x.status]),
      [['h2c', 200]],
    );
    assert.deepEqual(r.expectations?.unmet, []);
  });

  test('a plain HTTP/1.1 port: keep-alive honoured, no h2c, gzip seen on text', async () => {
    const r = await probe(`http://127.0.0.1:${port.plain}/text`, {
      expect: ['http1.1', 'keepalive', 'no-h2c', 'compression'],
    });
    assert.equal(r.protocols.h2c.supported, false);
    assert.equal(r.protocols.h2cUpgrade.supported, false);
    assert.equal(r.responses[0]?.contentEncoding, 'gzip');
    assert.deepEqual(r.expectations?.unmet, []);
  });

  test('the wrong scheme on nginx ports: clear errors', async () => {
    await assert.rejects(probe(`https://127.0.0.1:${port.plain}/`), { code: 'H2LAB_ERR_PROBE_NOT_TLS' });
    await assert.rejects(probe(`http://127.0.0.1:${port.tlsOnly}/`), { code: 'H2LAB_ERR_PROBE_TLS_PORT' });
  });

  test('ssl_verify_client on: requested in the handshake, required at the HTTP level (400); probed with --cert', async () => {
    const url = `https://127.0.0.1:${port.mtlsOn}/`;
    const bare = await probe(url, { ca: join(dir, 'ca.pem'), expect: ['mtls'] });
    assert.equal(bare.tls?.clientCertificate.requested, true);
    assert.equal(bare.tls?.clientCertificate.required, true, bare.tls?.clientCertificate.detail);
    assert.match(bare.tls?.clientCertificate.detail ?? '', /400/);
    assert.deepEqual(bare.expectations?.unmet, []);
    const withCert = await probe(url, {
      ca: join(dir, 'ca.pem'),
      cert: join(dir, 'client.pem'),
      key: join(dir, 'client.key'),
    });
    assert.deepEqual(
      withCert.responses.map((x) => x.status),
      [200, 200],
    );
  });

  test('ssl_verify_client optional: requested, not required', async () => {
    const r = await probe(`https://127.0.0.1:${port.mtlsOptional}/`, {
      ca: join(dir, 'ca.pem'),
      expect: ['client-cert', 'no-mtls'],
    });
    // Seen once in CI as null ("not told"): the message carries the probe's own account of why.
    assert.equal(r.tls?.clientCertificate.required, false, JSON.stringify(r.tls?.clientCertificate));
    assert.deepEqual(r.expectations?.unmet, []);
  });
});

// probe() against h2lab's own fixture server (src/server) in its configurations: both listeners,
// mTLS required and requested, idle timeouts, and a response whose head comes late; and its results
// validate against the published ProbeResult schema.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ProbeResult, parseProbeResult, probeResultSchema } from '../../src/model/index.ts';
import { probe } from '../../src/probe/index.ts';
import type { RunningServer, ServerOptionsInput } from '../../src/server/index.ts';
import { testCerts } from '../helpers/certs.ts';
import { startFixture } from '../helpers/fixture.ts';

let dir: string;
const file = (name: string) => join(dir, name);

before(async () => {
  const certs = await testCerts({ leafDays: 20 });
  dir = mkdtempSync(join(tmpdir(), 'h2lab-probe-fixture-'));
  writeFileSync(file('ca.pem'), certs.caPem);
  writeFileSync(file('server.pem'), certs.serverPem);
  writeFileSync(file('server.key'), certs.serverKeyPem);
  writeFileSync(file('client.pem'), certs.clientPem);
  writeFileSync(file('client.key'), certs.clientKeyPem);
  certs.cleanup(); // copied into this test's directory
});
after(() => rmSync(dir, { recursive: true, force: true }));

async function withFixture(opts: ServerOptionsInput, fn: (s: RunningServer) => Promise<void>): Promise<void> {
  const s = await startFixture({
    cert: file('server.pem'),
    key: file('server.key'),
    ...opts,
  });
  try {
    await fn(s);
  } finally {
    await s.close(0);
  }
}

describe('fixture server', () => {
  test('plain port: HTTP/1.1 with keep-alive and h2c by prior knowledge (not by Upgrade); its SETTINGS as configured', async () => {
    await withFixture({ tls: false, maxConcurrentStreams: 77 }, async (s) => {
      const r = await probe(`${s.plainUrl}/`, { expect: ['http1.1', 'keepalive', 'h2c', 'no-h2c-upgrade'] });
      assert.equal(r.protocols['http/1.1'].supported, true);
      assert.equal(r.protocols.h2c.supported, true);
      assert.equal(r.protocols.h2cUpgrade.supported, false);
      assert.equal(r.h2?.effective.MAX_CONCURRENT_STREAMS, 77);
      assert.equal(r.h2?.effective.MAX_HEADER_LIST_SIZE, 32 * 1024);
      assert.deepEqual(r.expectations?.unmet, []);
      // What the server saw: the keep-alive requests (+ the Upgrade attempt) over HTTP/1.1, with the
      // upstream check's two reads of /metrics around them, one GET over h2c; the preface-only
      // connections made no request.
      const m = s.metrics();
      const count = (proto: 'http/1.1' | 'h2c') =>
        Object.values(m.requests).reduce((n, row) => n + ((row as Record<string, number>)[proto] ?? 0), 0);
      assert.equal(count('http/1.1'), 3 + 1 + 2, JSON.stringify(m.requests));
      // No proxy in front: the keep-alive requests came on the connection of the first read.
      assert.deepEqual(r.keepAlive?.upstream, { requests: 4, connections: 0, reused: true });
      assert.equal(count('h2c'), 1, JSON.stringify(m.requests));
    });
  });

  test('TLS port: h2 and http/1.1 by ALPN', async () => {
    await withFixture({ plain: false }, async (s) => {
      const r = await probe(`${s.tlsUrl}/`, {
        ca: file('ca.pem'),
        expect: ['h2', 'http1.1', 'keepalive', 'tls1.3'],
      });
      assert.equal(r.tls?.alpn.h2.supported, true);
      assert.equal(r.tls?.alpn['http/1.1'].supported, true);
      assert.equal(r.h2?.effective.MAX_CONCURRENT_STREAMS, 250);
      assert.deepEqual(r.expectations?.unmet, []);
    });
  });

  test('mTLS required: detected without a certificate; probed with one', async () => {
    await withFixture({ plain: false, clientAuth: 'require', ca: file('ca.pem') }, async (s) => {
      const bare = await probe(`${s.tlsUrl}/`, { ca: file('ca.pem'), expect: ['mtls'] });
      assert.equal(bare.tls?.clientCertificate.required, true, bare.tls?.clientCertificate.detail);
      assert.deepEqual(bare.expectations?.unmet, []);
      const withCert = await probe(`${s.tlsUrl}/`, {
        ca: file('ca.pem'),
        cert: file('client.pem'),
        key: file('client.key'),
      });
      assert.equal(withCert.h2?.effective.MAX_CONCURRENT_STREAMS, 250);
      assert.equal(withCert.keepAlive?.honoured, true);
    });
  });

  test('mTLS requested: a certificate is asked for but not required', async () => {
    await withFixture({ plain: false, clientAuth: 'request', ca: file('ca.pem') }, async (s) => {
      const r = await probe(`${s.tlsUrl}/`, { ca: file('ca.pem'), expect: ['client-cert', 'no-mtls'] });
      assert.equal(r.tls?.clientCertificate.requested, true);
      assert.equal(r.tls?.clientCertificate.required, false);
      assert.deepEqual(r.expectations?.unmet, []);
    });
  });

  test('--wait-idle sees the configured idle timeouts (HTTP/1.1 close, HTTP/2 GOAWAY); --large sees a late head', async () => {
    await withFixture({ tls: false, keepAliveTimeoutMs: 300, h2IdleTimeoutMs: 400 }, async (s) => {
      const r = await probe(`${s.plainUrl}/`, { waitIdleMs: 3000, largePath: '/slow-headers?ms=300' });
      const h1 = r.idle?.find((i) => i.protocol === 'http/1.1');
      const h2 = r.idle?.find((i) => i.protocol === 'h2c');
      assert.ok(
        h1?.closedAfterMs && h1.closedAfterMs > 200 && h1.closedAfterMs < 2500,
        JSON.stringify(r.idle),
      );
      assert.ok(
        h2?.closedAfterMs && h2.closedAfterMs > 300 && h2.closedAfterMs < 2500,
        JSON.stringify(r.idle),
      );
      assert.equal(h2?.how, 'goaway');
      assert.equal(r.large?.verdict, 'late', r.large?.detail);
    });
  });
});

describe('the result as data', () => {
  /** The result as a reader of `h2lab probe --json` gets it. */
  const roundTrip = (r: ProbeResult): unknown => JSON.parse(JSON.stringify(r));
  const fits = (r: ProbeResult) => {
    const parsed = probeResultSchema.safeParse(roundTrip(r));
    assert.ok(parsed.success, `${r.url}: ${parsed.success ? '' : parsed.error.message}`);
    return parseProbeResult(roundTrip(r));
  };

  test('results validate against the schema: plain with idle timeouts and a late head, TLS with an unmet expectation, mTLS required', async () => {
    await withFixture({ keepAliveTimeoutMs: 300, h2IdleTimeoutMs: 400 }, async (s) => {
      const plain = fits(
        await probe(`${s.plainUrl}/`, { waitIdleMs: 1500, largePath: '/slow-headers?ms=200' }),
      );
      assert.ok(
        plain.idle?.length && plain.large && plain.h2 && plain.keepAlive,
        'idle, large, h2, keep-alive',
      );
      const tls = fits(await probe(`${s.tlsUrl}/`, { ca: file('ca.pem'), expect: ['h2', 'tls1.3', 'h2c'] }));
      assert.ok(tls.tls?.certificate.chain.length, 'a certificate chain');
      assert.ok(tls.expectations?.unmet.length, 'h2c over TLS is an unmet expectation');
    });
    await withFixture({ plain: false, clientAuth: 'require', ca: file('ca.pem') }, async (s) => {
      const bare = fits(await probe(`${s.tlsUrl}/`, { ca: file('ca.pem') }));
      assert.equal(bare.tls?.clientCertificate.required, true);
    });
  });

  test('the schema is strict: a field the model does not know fails', async () => {
    await withFixture({ plain: false }, async (s) => {
      const json = roundTrip(await probe(`${s.tlsUrl}/`, { ca: file('ca.pem') })) as Record<string, unknown>;
      assert.ok(probeResultSchema.safeParse(json).success);
      assert.equal(probeResultSchema.safeParse({ ...json, extra: 1 }).success, false);
      const tls = { ...(json.tls as Record<string, unknown>), sessionTicket: true };
      assert.equal(probeResultSchema.safeParse({ ...json, tls }).success, false);
    });
  });
});

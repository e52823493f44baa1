/**
 * The shared transport conformance suite: every registered strategy (h1, h2, h2-pool, and any later
 * one) over cleartext, TLS and mutual TLS, against real loopback servers, checking what the client
 * measured against what the server saw, and that each strategy does what it declares.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RequestSpec, Sample } from '../../src/model/index.ts';
import {
  createTransport,
  H2_CLIENTS,
  type H2ClientImpl,
  listStrategies,
  requestedWire,
  type Strategy,
} from '../../src/transport/index.ts';
import type { Transport } from '../../src/transport/types.ts';
import { h3SkipReason } from '../h3/helpers.ts';
import { type TestCerts, testCerts } from '../helpers/certs.ts';
import { type ServerKind, startH3TestServer, startTestServer, type TestServer } from '../helpers/servers.ts';

let certs: TestCerts;
before(async () => {
  certs = await testCerts();
});
after(() => certs.cleanup());

type Target = 'cleartext' | 'tls' | 'mtls';
const TARGETS: Target[] = ['cleartext', 'tls', 'mtls'];

function serverKind(s: Strategy, target: Target): ServerKind {
  if (target === 'cleartext') return s.requests.cleartext === 'http/1.1' ? 'h1' : 'h2c';
  return target;
}

/** QUIC strategies run over TLS only (QUIC is always encrypted; the binding sends no client certificate). */
const targetsOf = (s: Strategy): Target[] => (s.quic ? ['tls'] : TARGETS);
const startFor = (s: Strategy, target: Target) =>
  s.quic ? startH3TestServer(certs) : startTestServer(serverKind(s, target), certs);
for (const s of listStrategies())
  if (s.quic)
    console.log(`# ${s.name}: cleartext and mtls not run (HTTP/3 has no cleartext; no client certificates)`);
/** Why the QUIC strategies cannot run here (the HTTP/3 binding does not load), as every h3 test skips. */
const quicSkip = await h3SkipReason();
if (quicSkip) console.log(`# QUIC strategies skipped: ${quicSkip}`);

function expectedProtocol(s: Strategy, target: Target): string {
  return requestedWire(s, target === 'cleartext' ? 'http://x' : 'https://x');
}

function tlsFor(target: Target) {
  if (target === 'cleartext') return {};
  return {
    tls: {
      ca: certs.caPem,
      ...(target === 'mtls' ? { cert: certs.clientPem, key: certs.clientKeyPem } : {}),
    },
  };
}

let seq = 0;
function get(tr: Transport, path: string, extra: Partial<RequestSpec> = {}): Promise<Sample> {
  const now = performance.now();
  return tr.request({ method: 'GET', path, ...extra }, { seq: seq++, intendedMs: now, queuedMs: now });
}

// Every HTTP/2 case runs on both clients: h2lab's own (the default) and node:http2.
type Variant = [Strategy, H2ClientImpl | undefined];
const VARIANTS: Variant[] = listStrategies().flatMap((s): Variant[] =>
  s.http2 ? H2_CLIENTS.map((c): Variant => [s, c]) : [[s, undefined]],
);

for (const [strategy, client] of VARIANTS) {
  const name = strategy.name;
  for (const target of targetsOf(strategy)) {
    describe(`${name}${client ? ` (${client} client)` : ''} over ${target}`, {
      skip: strategy.quic ? quicSkip : undefined,
    }, () => {
      let server: TestServer;
      let tr: Transport;
      before(async () => {
        server = await startFor(strategy, target);
        tr = createTransport(name, {
          url: server.url,
          connections: 3,
          ...(client ? { h2Client: client } : {}),
          ...tlsFor(target),
        });
        await tr.open();
      });
      after(async () => {
        await tr.close();
        await server.close();
      });

      test('a GET returns the status, the body size and the negotiated protocol', async () => {
        const s = await get(tr, '/bytes/1000');
        assert.equal(s.error, undefined, s.errorDetail);
        assert.equal(s.status, 200);
        assert.equal(s.bytesIn, 1000);
        assert.equal(s.protocol, expectedProtocol(strategy, target));
        assert.equal(tr.negotiated(), expectedProtocol(strategy, target));
        assert.ok(s.headersMs! >= s.sentMs && s.endMs >= s.headersMs!, 'times are ordered');
        if (strategy.http2) assert.equal(typeof s.streamId, 'number');
        assert.equal(tr.name, name, 'the transport reports its registry key');
        assert.equal(tr.requested, expectedProtocol(strategy, target), 'it requests what it declares');
      });

      test('the first request on a connection carries its connect (and TLS) time', async () => {
        // Request 1 above rode the connection open() made; a fresh transport shows it again.
        const t2 = createTransport(name, {
          url: server.url,
          connections: 1,
          ...(target !== 'cleartext'
            ? {
                tls: {
                  ca: certs.caPem,
                  ...(target === 'mtls' ? { cert: certs.clientPem, key: certs.clientKeyPem } : {}),
                },
              }
            : {}),
        });
        await t2.open();
        const s = await get(t2, '/');
        await t2.close();
        assert.equal(s.newConnection, true);
        assert.ok(s.connectMs !== undefined && s.connectMs >= 0);
        if (target === 'cleartext') assert.equal(s.tlsMs, undefined);
        else assert.ok(s.tlsMs !== undefined && s.tlsMs > 0);
      });

      test('a header value with CR/LF is never written: the request fails as other, the server sees nothing', async () => {
        const before = server.seen.requests;
        const s = await get(tr, '/', { headers: { 'x-note': 'a\r\nx-smuggled: 1' } });
        assert.equal(s.error, 'other', JSON.stringify(s));
        assert.match(s.errorDetail ?? '', /x-note/);
        const ok = await get(tr, '/');
        assert.equal(ok.error, undefined, 'the connection is still good');
        assert.equal(server.seen.requests - before, 1, 'only the good request reached the server');
      });

      test('40 concurrent requests all complete and the server saw each exactly once', async () => {
        const before = server.seen.requests;
        const samples = await Promise.all(Array.from({ length: 40 }, (_, i) => get(tr, `/bytes/${i * 100}`)));
        for (const [i, s] of samples.entries()) {
          assert.equal(s.error, undefined, s.errorDetail);
          assert.equal(s.bytesIn, i * 100);
        }
        assert.equal(server.seen.requests - before, 40);
        const conns = new Set(samples.map((s) => s.connectionId));
        const fixed = strategy.connections.fixed;
        if (fixed !== undefined)
          assert.equal(conns.size, fixed, `${name} uses ${fixed}, whatever it is asked`);
        else assert.ok(conns.size <= 3, `at most 3 connections, saw ${conns.size}`);
        const st = tr.stats();
        if (!strategy.multiplexed)
          assert.equal(st.peakStreamsPerConnection, 1, `${name} never has two requests on one connection`);
        else assert.ok(st.peakStreamsPerConnection > 1, `${name} multiplexes`);
      });

      test('a POST body is sent in full', async () => {
        const before = server.seen.bytesIn;
        const body = new Uint8Array(10_240).fill(65);
        const s = await get(tr, '/echo', { method: 'POST', body });
        assert.equal(s.error, undefined, s.errorDetail);
        assert.equal(s.bytesOut, 10_240);
        assert.equal(s.bytesIn, '10240'.length);
        assert.equal(server.seen.bytesIn - before, 10_240);
      });

      test('a chunked response of 100000 bytes is counted exactly', async () => {
        const s = await get(tr, '/chunked/100000');
        assert.equal(s.error, undefined, s.errorDetail);
        assert.equal(s.bytesIn, 100_000);
      });

      test('HEAD has no body and the connection stays usable', async () => {
        const s = await get(tr, '/', { method: 'HEAD' });
        assert.equal(s.status, 200);
        assert.equal(s.bytesIn, 0);
        const next = await get(tr, '/bytes/10');
        assert.equal(next.bytesIn, 10);
        assert.equal(next.error, undefined);
      });

      test('HTTP errors are responses, not transport failures', async () => {
        const s = await get(tr, '/status/503');
        assert.equal(s.status, 503);
        assert.equal(s.error, undefined);
      });

      test('a request slower than the timeout fails as timeout, and the next one succeeds', async () => {
        const t2 = createTransport(name, {
          url: server.url,
          connections: 1,
          timeoutMs: 300,
          ...tlsFor(target),
        });
        await t2.open();
        try {
          const s = await get(t2, '/delay/1500');
          assert.equal(s.error, 'timeout');
          // Sweep granularity is timeout / 8: allow that plus a noisy machine.
          const took = s.endMs - s.sentMs;
          assert.ok(took >= 290 && took < 1200, `timed out after ${took} ms`);
          const next = await get(t2, '/bytes/10');
          assert.equal(next.error, undefined, next.errorDetail);
        } finally {
          await t2.close();
        }
      });
    });
  }
}

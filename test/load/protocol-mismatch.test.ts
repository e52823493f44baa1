/**
 * Strict protocol assertion: asking for one protocol and getting another fails the run at once with
 * H2LAB_ERR_PROTOCOL_MISMATCH naming both — through the library and through the CLI (exit 1).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runLoad } from '../../src/load/index.ts';
import { type TestCerts, testCerts } from '../helpers/certs.ts';
import { h2lab } from '../helpers/cli.ts';
import { startTestServer } from '../helpers/servers.ts';

let certs: TestCerts;
before(async () => {
  certs = await testCerts();
});
after(() => certs.cleanup());

test('h2 against a TLS server offering only http/1.1 in ALPN fails with the mismatch, naming both', async () => {
  const server = await startTestServer('tls-h1-only', certs);
  try {
    const r = await runLoad({ url: `${server.url}/`, protocol: 'h2', ca: certs.path.caPem, requests: 10 })
      .done;
    assert.equal(r.error?.code, 'H2LAB_ERR_PROTOCOL_MISMATCH');
    assert.match(r.error!.message, /requested h2 but the server negotiated http\/1\.1/);
    assert.equal(r.protocol.requested, 'h2');
    assert.equal(r.protocol.negotiated, 'http/1.1');
    assert.equal(r.counts.total, 0);
    assert.equal(server.seen.requests, 0, 'no request went out over the wrong protocol');
  } finally {
    await server.close();
  }
});

test('h2c prior knowledge against an HTTP/1.1-only port fails with the mismatch', async () => {
  const server = await startTestServer('h1');
  try {
    for (const protocol of ['h2', 'h2-pool'] as const) {
      const r = await runLoad({ url: `${server.url}/`, protocol, requests: 10 }).done;
      assert.equal(r.error?.code, 'H2LAB_ERR_PROTOCOL_MISMATCH', protocol);
      assert.match(r.error!.message, /requested h2c but the server negotiated http\/1\.1/);
      assert.equal(r.protocol.negotiated, 'http/1.1');
    }
  } finally {
    await server.close();
  }
});

test('h1 against an h2c-only port fails with the mismatch instead of counting garbage', async () => {
  const server = await startTestServer('h2c');
  try {
    const r = await runLoad({ url: `${server.url}/`, protocol: 'h1', requests: 50, connections: 2 }).done;
    assert.equal(r.error?.code, 'H2LAB_ERR_PROTOCOL_MISMATCH');
    assert.match(r.error!.message, /did not answer in HTTP\/1\.1/);
    assert.ok(r.counts.total <= 2, `stopped at once (${r.counts.total} requests)`);
  } finally {
    await server.close();
  }
});

test('the CLI exits 1 with the code on a mismatch, and 0 when the protocol is right', async () => {
  const server = await startTestServer('tls-h1-only', certs);
  try {
    // Asynchronous: the server lives in this process and must keep answering.
    const cli = (protocol: string) =>
      h2lab(['bench', `${server.url}/`, '-p', protocol, '-n', '20', '--ca', certs.path.caPem, '-q']);
    const bad = await cli('h2');
    assert.equal(bad.code, 1, bad.stderr);
    assert.match(
      bad.stderr,
      /H2LAB_ERR_PROTOCOL_MISMATCH: requested h2 but the server negotiated http\/1\.1/,
    );
    const good = await cli('h1');
    assert.equal(good.code, 0, good.stderr);
  } finally {
    await server.close();
  }
});

test('h1 to a TLS port over http:// stops early with the mismatch instead of reconnecting for the whole run', async () => {
  const server = await startTestServer('tls', certs);
  try {
    const t0 = performance.now();
    const r = await runLoad({
      url: `${server.url.replace('https:', 'http:')}/`,
      protocol: 'h1',
      durationMs: 5000,
    }).done;
    const ms = performance.now() - t0;
    assert.equal(r.error?.code, 'H2LAB_ERR_PROTOCOL_MISMATCH');
    assert.match(r.error!.message, /use https:\/\//);
    // Before: ~870 connections in a 10 s run, each failing as `reset`; now the diagnosis after 20
    // failures without a success stops it (30 connections and 0.5 s, measured).
    assert.ok(r.connections.opened < 200, `${r.connections.opened} connections opened`);
    assert.ok(ms < 4000, `stopped after ${ms.toFixed(0)} ms of a 5 s run`);
    assert.equal(r.counts.ok, 0);
    assert.equal(r.counts.total, r.counts.failed);
  } finally {
    await server.close();
  }
});

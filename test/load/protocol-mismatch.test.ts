/**
 * Strict protocol assertion: asking for one protocol and getting another fails the run at once with
 * H2LAB_ERR_PROTOCOL_MISMATCH naming both — through the library and through the CLI (exit 1).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runLoad } from '../../src/load/index.ts';
import { type TestCerts, testCerts } from '../helpers/certs.ts';
import { h2lab } from '../helpers/cli.ts';
import { freePort } from '../helpers/nginx.ts';
import { have } from '../helpers/peers.ts';
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

test('a burst over h2c (sessions opened on demand) against an HTTP/1.1-only port says the mismatch once', async () => {
  const server = await startTestServer('h1');
  try {
    for (const protocol of ['h2', 'h2-pool'] as const) {
      const r = await runLoad({ url: `${server.url}/`, protocol, burst: 8 }).done;
      assert.equal(r.error?.code, 'H2LAB_ERR_PROTOCOL_MISMATCH', protocol);
      assert.match(
        r.error!.message,
        /^requested h2c but the server negotiated http\/1\.1 \(the server answered/,
      );
      assert.equal(r.error!.message.match(/requested/g)?.length, 1, r.error!.message);
      assert.equal(r.error!.details?.negotiated, 'http/1.1');
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

test('h1 against an HTTP/2-only TLS server (nghttpd: no ALPN for http/1.1, closes HTTP/1.1 requests unanswered): the mismatch within a few connections, not an error rate after thousands', {
  skip: have('nghttpd') ? false : 'nghttpd (Debian package nghttp2-server) is not installed',
}, async () => {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-nghttpd-'));
  writeFileSync(join(dir, 'index.html'), 'hello');
  const child = spawn(
    'nghttpd',
    ['--address=127.0.0.1', '-d', dir, String(port), certs.path.serverKeyPem, certs.path.serverPem],
    { stdio: 'ignore' },
  );
  try {
    // nghttpd prints nothing when ready: wait until its port takes a connection.
    for (let i = 0; i < 50; i++) {
      const up = await new Promise<boolean>((res) => {
        const s = net.connect(port, '127.0.0.1', () => {
          s.destroy();
          res(true);
        });
        s.on('error', () => res(false));
      });
      if (up) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const r = await runLoad({
      url: `https://127.0.0.1:${port}/index.html`,
      protocol: 'h1',
      ca: certs.path.caPem,
      durationMs: 5000,
      maxErrorRate: 1,
    }).done;
    assert.equal(r.error?.code, 'H2LAB_ERR_PROTOCOL_MISMATCH', JSON.stringify(r.error));
    assert.match(r.error?.message ?? '', /speaks only HTTP\/2 .*--protocol h2/);
    // Within the diagnosis' wait (a few hundred connections on a quiet machine, 31 on a busy one),
    // not the error rate's thousands (1,097 in 3 s before).
    assert.ok(r.connections.opened < 1000, `${r.connections.opened} connections before it stopped`);
    assert.ok(r.durationMs < 3000, `stopped after ${r.durationMs} ms of a 5 s run`);
    const h2 = await runLoad({
      url: `https://127.0.0.1:${port}/index.html`,
      protocol: 'h2',
      ca: certs.path.caPem,
      requests: 20,
    }).done;
    assert.equal(h2.counts.ok, 20, 'the same server over h2');
  } finally {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});

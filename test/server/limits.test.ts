// Limits a hostile or careless peer meets (server-notes.md): every one is an option, so these tests
// use small values and stay fast. Bounds are generous for a loaded 2-core machine.
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import type { RunningServer } from '../../src/server/index.ts';
import { startFixture } from '../helpers/fixture.ts';
import { have, run } from '../helpers/peers.ts';

let srv: RunningServer;
before(async () => {
  srv = await startFixture({
    port: 0,
    tls: false,
    h2IdleTimeoutMs: 300,
    prefaceTimeoutMs: 300,
    keepAliveTimeoutMs: 300,
    headersTimeoutMs: 400,
    maxConcurrentStreams: 5,
    maxHeaderListSizeBytes: 4096,
    graceMs: 300,
  });
});
after(async () => {
  await srv.close(200);
});

/** Opens a TCP connection, writes `bytes`, resolves with how long until the server closed it. */
function closedAfter(bytes: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const url = new URL(srv.plainUrl!);
    const t0 = performance.now();
    const s = connect({ host: url.hostname, port: Number(url.port) }, () => {
      if (bytes) s.write(bytes);
    });
    s.resume();
    s.on('error', () => {});
    s.on('close', () => resolve(performance.now() - t0));
    setTimeout(() => {
      s.destroy();
      reject(new Error('the server kept the connection open for 5 s'));
    }, 5000);
  });
}

test('a silent TCP connection is closed after --preface-timeout', async () => {
  const ms = await closedAfter('');
  assert.ok(ms >= 250 && ms < 2500, `closed after ${ms.toFixed(0)} ms (timeout 300 ms)`);
});

test('half an HTTP/2 preface, then silence: closed after --preface-timeout', async () => {
  const ms = await closedAfter('PRI * HTTP/2.0\r\n');
  assert.ok(ms >= 250 && ms < 2500, `closed after ${ms.toFixed(0)} ms`);
});

test('an idle HTTP/1.1 keep-alive connection is closed after --keep-alive-timeout', async () => {
  const ms = await closedAfter('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
  assert.ok(ms >= 250 && ms < 2500, `closed after ${ms.toFixed(0)} ms (timeout 300 ms)`);
});

test('a request head that never ends (slowloris) is cut after --headers-timeout', async () => {
  const ms = await closedAfter('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ');
  assert.ok(ms >= 350 && ms < 3000, `closed after ${ms.toFixed(0)} ms (timeout 400 ms)`);
});

test('an idle HTTP/2 session gets GOAWAY(NO_ERROR) and is closed after --h2-idle-timeout', async () => {
  const s = http2.connect(srv.plainUrl!);
  s.on('error', () => {});
  const t0 = performance.now();
  const goaway = new Promise<number>((r) => s.once('goaway', (code) => r(code)));
  await new Promise((r) => s.once('connect', r));
  assert.equal(await goaway, http2.constants.NGHTTP2_NO_ERROR);
  await new Promise((r) => s.once('close', r));
  const ms = performance.now() - t0;
  assert.ok(ms >= 250 && ms < 2500, `closed after ${ms.toFixed(0)} ms`);
});

test('SETTINGS advertise the limits; a header list over the limit is refused with ENHANCE_YOUR_CALM', async () => {
  const s = http2.connect(srv.plainUrl!);
  s.on('error', () => {});
  try {
    const settings = await new Promise<http2.Settings>((r) => s.once('remoteSettings', r));
    assert.equal(settings.maxConcurrentStreams, 5);
    assert.equal(settings.maxHeaderListSize, 4096);
    const get = (headers: Record<string, string>) =>
      new Promise<number | undefined>((resolve) => {
        const q = s.request({ ':path': '/healthz', ...headers });
        q.on('error', () => {});
        q.resume();
        q.on('close', () => resolve(q.rstCode));
      });
    // RFC 9113 §6.5.3: our SETTINGS bind the peer only once acknowledged; the first request above
    // made sure of that.
    assert.equal(await get({}), 0);
    assert.equal(await get({ 'x-big': 'a'.repeat(8000) }), http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
  } finally {
    s.destroy();
  }
});

test('h2load: streams beyond the advertised limit are refused, the rest succeed', {
  skip: have('h2load', '--version') ? false : 'h2load is not installed',
}, async () => {
  // -m 50 opens 50 streams in its first flight, before our SETTINGS (limit 5) reach it: nghttp2
  // refuses the extra ones (REFUSED_STREAM, RFC 9113 §5.1.2); after that h2load keeps to 5.
  const r = await run('h2load', ['-n', '200', '-c', '1', '-m', '50', `${srv.plainUrl}/bytes/64`]);
  const m = /(\d+) succeeded, (\d+) failed/.exec(r.stdout);
  assert.ok(m, r.stdout);
  assert.equal(Number(m[1]) + Number(m[2]), 200);
  assert.ok(Number(m[2]) <= 45, `${m[2]} failed: at most the 45 streams over the limit in the first flight`);
});

// Graceful shutdown: in-flight requests finish within the grace period, new connections are refused,
// HTTP/2 sessions get GOAWAY; what outlives the grace is cut. And the CLI does it on SIGTERM.
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { h2labServe } from '../helpers/cli.ts';
import { startFixture } from '../helpers/fixture.ts';

function h1Get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          body += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

test('close(): in-flight HTTP/1.1 and HTTP/2 requests complete, GOAWAY is sent, new connections are refused', async () => {
  const srv = await startFixture({ tls: false });
  const h1 = h1Get(`${srv.plainUrl}/slow-headers?ms=400`);
  const session = http2.connect(srv.plainUrl!);
  session.on('error', () => {});
  const goaway = new Promise<number>((r) => session.once('goaway', (code) => r(code)));
  const q = session.request({ ':path': '/slow-headers?ms=400' });
  const h2 = new Promise<number>((resolve) => {
    q.on('response', (h) => resolve(Number(h[':status'])));
  });
  q.resume();
  await sleep(100);
  const t0 = performance.now();
  const closed = srv.close(3000);
  await sleep(20);
  await assert.rejects(h1Get(`${srv.plainUrl}/healthz`), /ECONNREFUSED/);
  assert.equal((await h1).status, 200);
  assert.equal(await h2, 200);
  assert.equal(await goaway, http2.constants.NGHTTP2_NO_ERROR);
  await closed;
  const ms = performance.now() - t0;
  assert.ok(ms < 2500, `close() resolved ${ms.toFixed(0)} ms after it was called (requests needed ~300 ms)`);
});

test('close(grace): a request that outlives the grace is cut and close() still resolves', async () => {
  const srv = await startFixture({ tls: false });
  const hang = h1Get(`${srv.plainUrl}/hang`).then(
    () => 'answered',
    () => 'cut',
  );
  await sleep(100);
  const t0 = performance.now();
  await srv.close(300);
  const ms = performance.now() - t0;
  assert.equal(await hang, 'cut');
  assert.ok(ms >= 250 && ms < 2500, `close(300) took ${ms.toFixed(0)} ms`);
});

test('h2lab serve: SIGTERM lets an in-flight request finish, then exits 0', async () => {
  const p = await h2labServe(['--port', '0', '--no-tls']);
  const inflight = h1Get(`${p.plainUrl}/slow-headers?ms=700`);
  await sleep(200);
  const stopped = p.stop('SIGTERM');
  assert.equal((await inflight).status, 200);
  const { code, stderr } = await stopped;
  assert.equal(code, 0, stderr);
  assert.match(stderr, /SIGTERM: closing/);
});

// Large bodies stream in both directions without buffering, and clients that vanish halfway through
// an upload or a download leave nothing behind (no crash, nothing in flight, the server keeps serving).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningServer } from '../../src/server/index.ts';
import { startFixture, testHome } from '../helpers/fixture.ts';
import { have, run } from '../helpers/peers.ts';

const home = testHome();
let srv: RunningServer;
const BIG = 64 * 1024 * 1024;
const upload = join(home, 'big.bin');
let digest = '';

before(async () => {
  srv = await startFixture({ tls: false });
  // 64 MiB of a repeating non-trivial pattern, written in pieces.
  const block = Buffer.alloc(1024 * 1024).map((_, i) => (i * 31 + (i >> 10)) & 255);
  const h = createHash('sha256');
  const out = createWriteStream(upload);
  for (let i = 0; i < BIG / block.length; i++) {
    h.update(block);
    if (!out.write(block)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r) => out.end(() => r()));
  digest = h.digest('hex');
});
after(async () => {
  await srv.close(200);
});

async function idle(): Promise<void> {
  for (let i = 0; i < 200 && srv.metrics().inFlight > 0; i++) await sleep(10);
  assert.equal(srv.metrics().inFlight, 0, 'nothing left in flight');
}

describe('64 MiB through /echo (curl, streamed upload)', {
  skip: have('curl') ? false : 'curl is not installed',
}, () => {
  for (const [label, args] of [
    ['HTTP/1.1', []],
    ['h2c', ['--http2-prior-knowledge']],
  ] as const) {
    test(`${label}: the body comes back byte for byte`, async () => {
      // -T streams the file (PUT) instead of reading it into memory first.
      const r = await run(
        'sh',
        ['-c', `curl -sS ${args.join(' ')} -T ${upload} ${srv.plainUrl}/echo | sha256sum`],
        120_000,
      );
      assert.equal(r.stdout.split(' ')[0], digest, r.stderr);
      await idle();
    });
  }
});

describe('clients that vanish halfway', () => {
  test('HTTP/1.1: upload and download cut off mid-body', async () => {
    const req = http.request(`${srv.plainUrl}/echo`, {
      method: 'POST',
      headers: { 'content-length': String(BIG) },
    });
    req.on('error', () => {});
    req.write(Buffer.alloc(256 * 1024));
    await sleep(100);
    req.destroy();
    const dl = http.get(`${srv.plainUrl}/bytes/50MiB`, (res) => {
      res.once('data', () => dl.destroy());
    });
    dl.on('error', () => {});
    await sleep(200);
    await idle();
    const ok = await fetch(`${srv.plainUrl}/healthz`);
    assert.equal(ok.status, 200);
  });

  test('HTTP/2: RST_STREAM mid-upload and mid-download, then the session is destroyed mid-body', async () => {
    const s = http2.connect(srv.plainUrl!);
    s.on('error', () => {});
    const up = s.request({ ':path': '/echo', ':method': 'POST' });
    up.on('error', () => {});
    up.write(Buffer.alloc(256 * 1024));
    const down = s.request({ ':path': '/bytes/50MiB' });
    down.on('error', () => {});
    await new Promise((r) => down.once('data', r));
    up.close(http2.constants.NGHTTP2_CANCEL);
    down.close(http2.constants.NGHTTP2_CANCEL);
    const again = s.request({ ':path': '/bytes/50MiB?gzip=1', 'accept-encoding': 'gzip' });
    again.on('error', () => {});
    await new Promise((r) => again.once('data', r));
    s.destroy();
    await sleep(200);
    await idle();
    assert.ok((srv.metrics().rstStream['8'] ?? 0) >= 2, JSON.stringify(srv.metrics().rstStream));
    const ok = await fetch(`${srv.plainUrl}/healthz`);
    assert.equal(ok.status, 200);
  });
});

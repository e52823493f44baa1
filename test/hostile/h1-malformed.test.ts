// Malformed and smuggling-shaped HTTP/1.1 (RFC 9112 §6.1, §6.3, §3.2): each must get a 400 and the
// connection closed, so nothing after it is read as a second request; a normal request works after.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { RunningServer } from '../../src/server/index.ts';
import { startFixture } from '../helpers/fixture.ts';
import { connectPeer, fdsBackTo, normalRequestOk, openFds, plainPort, within } from './attacker.ts';

let srv: RunningServer;
before(async () => {
  srv = await startFixture({ tls: false });
});
after(() => srv.close(200));

const SMUGGLED = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';
const SHAPES: Array<[string, string]> = [
  [
    'Content-Length and Transfer-Encoding',
    `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${SMUGGLED}`,
  ],
  [
    'two different Content-Length',
    'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 40\r\n\r\nabcd',
  ],
  [
    'Transfer-Encoding: identity, chunked',
    `POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\n${SMUGGLED}`,
  ],
  [
    'two Transfer-Encoding fields',
    `POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${SMUGGLED}`,
  ],
  [
    'Transfer-Encoding: xchunked',
    'POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n',
  ],
  [
    'Transfer-Encoding: chunked, identity',
    'POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n',
  ],
  [
    'a bad chunk size',
    'POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n',
  ],
  [
    'a chunk size with a sign',
    'POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n\r\n',
  ],
  ['a negative Content-Length', 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n'],
  ['two Host fields', 'GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n'],
  ['no Host', 'GET /healthz HTTP/1.1\r\n\r\n'],
  ['a space before the colon', 'GET /healthz HTTP/1.1\r\nHost : x\r\n\r\n'],
  ['obs-fold', 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n'],
  ['an invalid method', 'G@T /healthz HTTP/1.1\r\nHost: x\r\n\r\n'],
  ['an unknown HTTP version', 'GET /healthz HTTP/1.7\r\nHost: x\r\n\r\n'],
  ['a NUL in a header value', 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n'],
  ['garbage', '\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03garbage\r\n\r\n'],
  ['a 100 KB header', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(100_000)}\r\n\r\n`],
];

async function send(raw: string): Promise<{ status: number; closedMs: number; responses: number }> {
  const peer = await connectPeer({ port: plainPort(srv), raw: true });
  let got = '';
  peer.socket.on('data', (d: Buffer) => {
    got += d.toString('latin1');
  });
  await peer.write(Buffer.from(raw, 'latin1'));
  const closedMs = await within(peer.closed, 2000, Number.NaN);
  peer.destroy();
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0),
    closedMs,
    responses: got.match(/HTTP\/1\.1 \d{3}/g)?.length ?? 0,
  };
}

for (const [name, raw] of SHAPES) {
  test(`HTTP/1.1 ${name}: 400 (or 431) and closed, nothing smuggled`, async (t) => {
    const fds = openFds();
    const r = await send(raw);
    t.diagnostic(`status ${r.status}, ${r.responses} response(s), closed at ${r.closedMs.toFixed(0)} ms`);
    assert.ok(r.status === 400 || r.status === 431, `status ${r.status}`);
    assert.equal(r.responses, 1, 'exactly one response: nothing after it was read as a request');
    assert.ok(r.closedMs < 1000, `closed at ${r.closedMs} ms`);
    assert.ok((await fdsBackTo(fds)) <= fds + 2);
  });
}

test('a normal request after the malformed ones', async () => {
  assert.ok(await normalRequestOk(srv));
});

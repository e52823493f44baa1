// Slow and silent peers: HTTP/1.1 heads and bodies dripped a byte at a time, an h2 preface and no
// more, SETTINGS then silence, TCP to the TLS port and nothing, half a TLS record. Each is closed
// within its (shortened) timeout; a normal request works meanwhile; no socket is left.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { RunningServer } from '../../src/server/index.ts';
import { startFixture } from '../helpers/fixture.ts';
import {
  CLIENT_PREFACE,
  Code,
  connectPeer,
  fdsBackTo,
  normalRequestOk,
  openFds,
  type Peer,
  plainPort,
  preface,
  settingsAck,
  tlsPort,
  within,
} from './attacker.ts';

const TIMEOUT_MS = 600; // --preface-timeout and --headers-timeout in this file
const REQUEST_TIMEOUT_MS = 900; // --request-timeout
const SLACK_MS = 700; // timer granularity (Node checks HTTP/1.1 timeouts every ~150 ms) and a loaded machine

let srv: RunningServer;
before(async () => {
  srv = await startFixture({
    prefaceTimeoutMs: TIMEOUT_MS,
    headersTimeoutMs: TIMEOUT_MS,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
  });
});
after(async () => {
  await srv.close(200);
});

/** Writes `bytes` one byte per `everyMs` until the server closes or `maxMs` passed. */
async function drip(peer: Peer, bytes: Buffer, everyMs: number, maxMs: number): Promise<void> {
  const end = performance.now() + maxMs;
  for (let i = 0; i < bytes.length && !peer.isClosed() && performance.now() < end; i++) {
    await peer.write(bytes.subarray(i, i + 1));
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

async function closedWithin(name: string, peer: Peer, boundMs: number, t: { diagnostic(s: string): void }) {
  const ms = await within(peer.closed, boundMs + 2000, Number.NaN);
  t.diagnostic(`${name}: closed at ${ms.toFixed(0)} ms (bound ${boundMs} ms)`);
  assert.ok(ms <= boundMs, `${name}: closed at ${ms} ms, bound ${boundMs} ms`);
  peer.destroy();
}

test('HTTP/1.1 head dripped a byte per 100 ms: cut after --headers-timeout', async (t) => {
  const fds = openFds();
  const peer = await connectPeer({ port: plainPort(srv), raw: true });
  void drip(
    peer,
    Buffer.from(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ${'a'.repeat(200)}\r\n\r\n`),
    100,
    5000,
  );
  assert.ok(await normalRequestOk(srv));
  await closedWithin('h1 head drip', peer, TIMEOUT_MS + SLACK_MS, t);
  assert.ok((await fdsBackTo(fds)) <= fds + 2);
});

test('HTTP/1.1 body dripped a byte per 100 ms: cut after --request-timeout', async (t) => {
  const fds = openFds();
  const peer = await connectPeer({ port: plainPort(srv), raw: true });
  await peer.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n');
  void drip(peer, Buffer.alloc(1000, 0x61), 100, 5000);
  assert.ok(await normalRequestOk(srv));
  await closedWithin('h1 body drip', peer, REQUEST_TIMEOUT_MS + SLACK_MS, t);
  assert.ok((await fdsBackTo(fds)) <= fds + 2);
});

test('h2: the preface and nothing else: closed after --preface-timeout', async (t) => {
  const peer = await connectPeer({ port: plainPort(srv) });
  await peer.write(CLIENT_PREFACE);
  await closedWithin('h2 preface only', peer, TIMEOUT_MS + SLACK_MS, t);
});

test('h2: SETTINGS then silence: GOAWAY(NO_ERROR) and closed after --preface-timeout', async (t) => {
  const peer = await connectPeer({ port: plainPort(srv) });
  await peer.write(Buffer.concat([preface(), settingsAck()]));
  await closedWithin('h2 SETTINGS then silence', peer, TIMEOUT_MS + SLACK_MS, t);
  assert.equal(peer.goaway?.code, Code.NO_ERROR);
});

test('TLS port: TCP and silence, and half a TLS record: closed after --preface-timeout (a real handshake timeout)', async (t) => {
  const fds = openFds();
  const silent = await connectPeer({ port: tlsPort(srv), raw: true });
  const half = await connectPeer({ port: tlsPort(srv), raw: true });
  // A TLS record header announcing 512 bytes of handshake, and 10 of them.
  await half.write(Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00]), Buffer.alloc(10, 1)]));
  assert.ok(await normalRequestOk(srv));
  await closedWithin('TLS silent', silent, TIMEOUT_MS + SLACK_MS, t);
  await closedWithin('TLS half record', half, TIMEOUT_MS + SLACK_MS, t);
  assert.ok((await fdsBackTo(fds)) <= fds + 2);
});

test('TLS port: 1 KiB of garbage is refused at once', async (t) => {
  const fds = openFds();
  const peer = await connectPeer({ port: tlsPort(srv), raw: true });
  await peer.write(Buffer.from(Array.from({ length: 1024 }, (_, i) => (i * 131 + 7) & 0xff)));
  await closedWithin('TLS garbage', peer, 500, t);
  assert.ok((await fdsBackTo(fds)) <= fds + 2);
});

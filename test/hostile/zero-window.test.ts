// Zero-window readers: peers that ask for large responses on many streams and never read. They
// are not abusive by their frames, and the guard's stall probe must not take them for a session
// nghttp2 terminated (their bytes wait in the socket). Memory stays bounded by flow control.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { RunningServer } from '../../src/server/index.ts';
import { startFixture } from '../helpers/fixture.ts';
import {
  connectPeer,
  fdsBackTo,
  normalRequestOk,
  openFds,
  type Peer,
  plainPort,
  preface,
  requestHeaders,
  settingsAck,
  tlsPort,
  windowUpdate,
} from './attacker.ts';

const CONNECTIONS = 10;
const STREAMS = 10;
const MIB = 2 ** 20;

let srv: RunningServer;
before(async () => {
  srv = await startFixture();
});
after(async () => {
  await srv.close(200);
});

async function zeroWindow(tls: boolean): Promise<Peer> {
  const peer = await connectPeer(
    tls
      ? { port: tlsPort(srv), tls: { ca: srv.caPem, alpn: ['h2'] }, noRead: true }
      : { port: plainPort(srv), noRead: true },
  );
  const h = requestHeaders();
  const reqs: Buffer[] = [];
  for (let i = 0; i < STREAMS; i++) reqs.push(h(2 * i + 1, '/bytes/1MiB'));
  // Windows of 16 MiB (stream and connection): the server may send it all; only TCP stops it.
  await peer.write(
    Buffer.concat([preface([[4, 16 * MIB]]), windowUpdate(0, 16 * MIB), settingsAck(), ...reqs]),
  );
  return peer;
}

for (const tls of [false, true]) {
  test(`${CONNECTIONS} zero-window readers × ${STREAMS} streams of 1 MiB (${tls ? 'h2 over TLS' : 'h2c'}): kept open, not taken for stalled, < 4 MiB each`, async (t) => {
    const fds = openFds();
    const stalled0 = srv.guardCounts().stalled;
    const rss0 = process.memoryUsage().rss;
    const peers = await Promise.all(Array.from({ length: CONNECTIONS }, () => zeroWindow(tls)));
    await new Promise((r) => setTimeout(r, 2000)); // ten probe ticks
    const perConn = (process.memoryUsage().rss - rss0) / CONNECTIONS;
    const open = peers.filter((p) => !p.isClosed()).length;
    t.diagnostic(
      `${open} of ${CONNECTIONS} open after 2 s; RSS +${(perConn / MIB).toFixed(2)} MiB per connection (both ends); stalled +${srv.guardCounts().stalled - stalled0}`,
    );
    assert.equal(open, CONNECTIONS);
    assert.equal(
      srv.guardCounts().stalled,
      stalled0,
      'no zero-window reader was taken for a stalled session',
    );
    assert.ok(perConn < 4 * MIB, `${perConn} bytes per connection`);
    assert.ok(await normalRequestOk(srv));
    for (const p of peers) p.destroy();
    assert.ok((await fdsBackTo(fds)) <= fds + 2);
  });
}

test('--headers-timeout above --request-timeout is refused with the option named', async () => {
  await assert.rejects(
    startFixture({ tls: false, headersTimeoutMs: 5000, requestTimeoutMs: 1000 }),
    (e: Error & { code?: string }) => {
      assert.equal(e.code, 'H2LAB_ERR_INVALID_OPTION');
      assert.match(e.message, /--headers-timeout 5000 .*--request-timeout \(1000\)/);
      return true;
    },
  );
});

// Header abuse: an HPACK bomb (a 4 KB entry indexed once, referenced many times per stream, on
// 2000 streams: a few bytes each on the wire, 40 KB each decoded) and a CONTINUATION flood (a header
// block that never ends). Both must end the connection within 1 s; nginx beside it. Header lists
// above --max-header-list-size are refused even in a client's first flight, and a
// client that skips stream ids is served, not taken for one whose streams were refused (item 4).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { RunningServer } from '../../src/server/index.ts';
import { startFixture } from '../helpers/fixture.ts';
import {
  bombBlock,
  Code,
  connectPeer,
  END_HEADERS,
  END_STREAM,
  encodeFrame,
  FrameType,
  fdsBackTo,
  flood,
  hpackIndexedLiteral,
  largeHeaderList,
  normalRequestOk,
  openFds,
  type Peer,
  plainPort,
  preface,
  requestHeaders,
  settingsAck,
  startNginxH2,
  until,
  within,
} from './attacker.ts';

let srv: RunningServer;
let ng: Awaited<ReturnType<typeof startNginxH2>>;
before(async () => {
  srv = await startFixture({ tls: false });
  ng = await startNginxH2();
});
after(async () => {
  await srv.close(200);
  await ng?.stop();
});

const STREAMS = 2000;
const REFS = 10; // 10 × (4000 + 6 + 32) bytes decoded per stream > the 32 KiB header list limit

async function bomb(port: number): Promise<{ peer: Peer; sent: number; closedMs: number }> {
  const peer = await connectPeer({ port });
  const insert = hpackIndexedLiteral('x-bomb', 'a'.repeat(4000));
  await peer.write(Buffer.concat([preface(), settingsAck()]));
  const sent = await flood(
    peer,
    (i) =>
      encodeFrame(
        FrameType.HEADERS,
        END_STREAM | END_HEADERS,
        2 * i + 1,
        bombBlock(REFS, i === 0 ? insert : undefined),
      ),
    STREAMS,
    3000,
    100,
    5,
  );
  return { peer, sent, closedMs: await within(peer.closed, 2000, Number.NaN) };
}

test(`HPACK bomb, ${STREAMS} streams × ${REFS} references to a 4 KB entry: GOAWAY (the guard's ENHANCE_YOUR_CALM or Node's) and closed within 1 s`, async (t) => {
  const fds = openFds();
  const rss0 = process.memoryUsage().rss;
  const attack = bomb(plainPort(srv));
  assert.ok(await normalRequestOk(srv));
  const { peer, sent, closedMs } = await attack;
  t.diagnostic(
    `h2lab: ${sent} streams sent; ${peer.rstReceived} RST_STREAM; GOAWAY ${peer.goaway?.code} at ${peer.goaway?.atMs.toFixed(0)} ms; closed at ${closedMs.toFixed(0)} ms; RSS +${((process.memoryUsage().rss - rss0) / 2 ** 20).toFixed(1)} MiB; guard ${JSON.stringify(srv.guardCounts().enhanceYourCalm)}`,
  );
  // The guard's refused-stream count is read every 200 ms; nghttp2/Node end the session on their own
  // (INTERNAL_ERROR) after about 600 refused streams, and whichever comes first sends the GOAWAY.
  assert.ok(
    peer.goaway?.code === Code.ENHANCE_YOUR_CALM || peer.goaway?.code === Code.INTERNAL_ERROR,
    `GOAWAY code ${peer.goaway?.code}`,
  );
  assert.ok(peer.goaway!.atMs < 1000 && closedMs - peer.goaway!.atMs < 1000);
  assert.ok(await normalRequestOk(srv));
  assert.ok((await fdsBackTo(fds)) <= fds + 2);
  if (ng) {
    const r = await bomb(ng.port);
    r.peer.destroy();
    t.diagnostic(
      `nginx: ${r.sent} streams sent; ${r.peer.rstReceived} RST_STREAM; GOAWAY ${r.peer.goaway?.code ?? '-'} at ${r.peer.goaway?.atMs.toFixed(0) ?? '-'} ms; closed at ${r.closedMs.toFixed(0)} ms`,
    );
  }
});

async function continuationFlood(port: number): Promise<{ peer: Peer; sent: number; closedMs: number }> {
  const peer = await connectPeer({ port });
  // A header block that is never finished (no END_HEADERS): each CONTINUATION adds a 100-byte field.
  const field = Buffer.concat([
    Buffer.from([0x00, 3]),
    Buffer.from('x-c'),
    Buffer.from([100]),
    Buffer.alloc(100, 0x62),
  ]);
  await peer.write(
    Buffer.concat([
      preface(),
      settingsAck(),
      encodeFrame(FrameType.HEADERS, END_STREAM, 1, Buffer.from([0x82, 0x86, 0x84])),
    ]),
  );
  const sent = await flood(peer, () => encodeFrame(FrameType.CONTINUATION, 0, 1, field), 100_000, 2000, 1000);
  return { peer, sent, closedMs: await within(peer.closed, 2000, Number.NaN) };
}

test('CONTINUATION flood (no END_HEADERS): closed within 1 s', async (t) => {
  const fds = openFds();
  const { peer, sent, closedMs } = await continuationFlood(plainPort(srv));
  t.diagnostic(
    `h2lab: ${sent} CONTINUATION written; GOAWAY ${peer.goaway?.code ?? '-'}; closed at ${closedMs.toFixed(0)} ms`,
  );
  assert.ok(closedMs < 1000, `closed at ${closedMs} ms`);
  assert.ok(await normalRequestOk(srv));
  assert.ok((await fdsBackTo(fds)) <= fds + 2);
  if (ng) {
    const r = await continuationFlood(ng.port);
    r.peer.destroy();
    t.diagnostic(
      `nginx: ${r.sent} CONTINUATION written; GOAWAY ${r.peer.goaway?.code ?? '-'}; closed at ${r.closedMs.toFixed(0)} ms`,
    );
  }
});

/** One large header list on a fresh connection; `ackFirst` waits for our SETTINGS ACK to be read. */
async function largeList(port: number, kb: number, ackFirst: boolean) {
  const peer = await connectPeer({ port });
  await peer.write(Buffer.concat([preface(), ackFirst ? settingsAck() : Buffer.alloc(0)]));
  if (ackFirst) await new Promise((r) => setTimeout(r, 50));
  await peer.write(largeHeaderList(1, kb));
  await until(() => peer.headersReceived > 0 || peer.rstReceived > 0 || peer.goaway !== undefined, 1000);
  const r = { heads: peer.headersReceived, rst: peer.rstCodes[0], goaway: peer.goaway?.code };
  peer.destroy();
  return r;
}

for (const kb of [39, 63, 98]) {
  test(`a ${kb} KB header list (HEADERS + CONTINUATION) above --max-header-list-size 32 KiB is refused, before and after the SETTINGS ACK`, async (t) => {
    const refused0 = srv.guardCounts().headerListTooLarge;
    for (const ackFirst of [false, true]) {
      const r = await largeList(plainPort(srv), kb, ackFirst);
      t.diagnostic(`h2lab, ACK ${ackFirst ? 'first' : 'not sent'}: ${JSON.stringify(r)}`);
      assert.equal(r.heads, 0, 'no response head');
      assert.ok(
        r.rst === Code.ENHANCE_YOUR_CALM || r.goaway === Code.ENHANCE_YOUR_CALM,
        `refused with ENHANCE_YOUR_CALM: ${JSON.stringify(r)}`,
      );
    }
    // The first flight reaches JavaScript (Node enforces the setting once acknowledged only).
    assert.ok(srv.guardCounts().headerListTooLarge > refused0);
    assert.ok(await normalRequestOk(srv));
    if (ng) t.diagnostic(`nginx, ACK not sent: ${JSON.stringify(await largeList(ng.port, kb, false))}`);
  });
}

test('a client whose first request uses stream id 203, then 1001, is served (skipped ids are not refused streams)', async (t) => {
  const peer = await connectPeer({ port: plainPort(srv) });
  const headers = requestHeaders();
  await peer.write(Buffer.concat([preface(), settingsAck(), headers(203)]));
  await until(() => peer.headersReceived >= 1 || peer.isClosed(), 1000);
  await new Promise((r) => setTimeout(r, 450)); // two guard ticks
  await peer.write(headers(1001));
  await until(() => peer.headersReceived >= 2 || peer.isClosed(), 1000);
  await new Promise((r) => setTimeout(r, 450));
  t.diagnostic(
    `heads ${peer.headersReceived}; GOAWAY ${peer.goaway?.code ?? '-'}; closed ${peer.isClosed()}`,
  );
  assert.equal(peer.headersReceived, 2);
  assert.equal(peer.goaway, undefined);
  assert.ok(!peer.isClosed());
  peer.destroy();
});

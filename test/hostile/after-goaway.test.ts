// nghttp2 inside Node sends GOAWAY on its own for protocol errors (too many SETTINGS entries, DATA on
// stream 0, an oversized or undecodable header block) and then stops reading and writing, but Node
// keeps the socket. The guard must close every such socket within about 1 s, whether the attacker
// leaves (the socket would sit in CLOSE-WAIT) or stays and keeps writing.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { RunningServer } from '../../src/server/index.ts';
import { startFixture } from '../helpers/fixture.ts';
import {
  connectPeer,
  END_HEADERS,
  encodeFrame,
  FrameType,
  fdsBackTo,
  flood,
  normalRequestOk,
  openFds,
  ping,
  plainPort,
  preface,
  settingsAck,
  until,
  within,
} from './attacker.ts';

let srv: RunningServer;
before(async () => {
  srv = await startFixture({ tls: false });
});
after(() => srv.close(200));

const TRIGGERS: Array<{ name: string; bytes: () => Buffer }> = [
  {
    name: '40 SETTINGS entries',
    bytes: () => preface(Array.from({ length: 40 }, (_, i) => [3, 100 + i] as const)),
  },
  {
    name: 'DATA on stream 0',
    bytes: () =>
      Buffer.concat([preface(), settingsAck(), encodeFrame(FrameType.DATA, 0, 0, Buffer.alloc(8))]),
  },
  {
    // A 1 MB header value in HEADERS + CONTINUATION: more than nghttp2 decodes (COMPRESSION_ERROR).
    name: 'a 1 MB header',
    bytes: () => {
      const value = Buffer.alloc(1 << 20, 0x61);
      const len = [
        0x7f,
        ...(() => {
          const out: number[] = [];
          let v = value.length - 127;
          while (v >= 128) {
            out.push((v & 0x7f) | 0x80);
            v >>>= 7;
          }
          out.push(v);
          return out;
        })(),
      ];
      const block = Buffer.concat([
        Buffer.from([0x82, 0x86, 0x84, 0x00, 5, ...Buffer.from('x-big')]),
        Buffer.from(len),
        value,
      ]);
      const frames: Buffer[] = [preface(), settingsAck()];
      for (let off = 0; off < block.length; off += 16_384) {
        const last = off + 16_384 >= block.length;
        const type = off === 0 ? FrameType.HEADERS : FrameType.CONTINUATION;
        frames.push(encodeFrame(type, last ? END_HEADERS : 0, 1, block.subarray(off, off + 16_384)));
      }
      return Buffer.concat(frames);
    },
  },
];

for (const trig of TRIGGERS) {
  test(`${trig.name}: 200 attackers who leave at once after nghttp2's GOAWAY leave no socket within 1.5 s`, async (t) => {
    const fds = openFds();
    const peers = await Promise.all(Array.from({ length: 200 }, () => connectPeer({ port: plainPort(srv) })));
    const payload = trig.bytes();
    await Promise.all(peers.map((p) => p.write(payload)));
    await until(() => peers.every((p) => p.goaway || p.isClosed()), 3000);
    const codes = new Set(peers.map((p) => p.goaway?.code));
    const t0 = performance.now();
    for (const p of peers) p.socket.end(); // leave politely: FIN, then wait for the server
    const left = await fdsBackTo(fds, 3000);
    const ms = performance.now() - t0;
    t.diagnostic(
      `GOAWAY codes ${[...codes].join(',')}; fds ${fds} → ${left} after ${ms.toFixed(0)} ms; guard stalled=${srv.guardCounts().stalled}`,
    );
    assert.ok(left <= fds + 2, `fds ${fds} → ${left}`);
    assert.ok(ms < 1500, `${ms.toFixed(0)} ms`);
    for (const p of peers) p.destroy();
    assert.ok(await normalRequestOk(srv));
  });
}

test('an attacker who stays after the GOAWAY and keeps writing is closed within 1.5 s', async (t) => {
  const fds = openFds();
  const peer = await connectPeer({ port: plainPort(srv) });
  await peer.write(TRIGGERS[0]!.bytes());
  const sent = await flood(peer, (i) => ping(i), 1_000_000, 4000, 1000, 2);
  const closedMs = await within(peer.closed, 2000, Number.NaN);
  t.diagnostic(
    `GOAWAY ${peer.goaway?.code} at ${peer.goaway?.atMs.toFixed(0)} ms; ${sent} PINGs written; closed at ${closedMs.toFixed(0)} ms`,
  );
  assert.ok(peer.goaway, 'GOAWAY seen');
  assert.ok(closedMs - peer.goaway!.atMs < 1500, `closed ${closedMs - peer.goaway!.atMs} ms after GOAWAY`);
  assert.ok((await fdsBackTo(fds)) <= fds + 2);
});

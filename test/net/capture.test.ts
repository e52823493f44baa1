// The link's capture stage and its pcapng writer: what tshark (a reader no one here wrote) makes of
// the file — interfaces, timestamps, lengths, snap length, each packet's fate as its comment, and
// what the size cap cut.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { LinkCapture } from '../../src/net/capture.ts';
import { quicHandshakeOnly, quicPaddingAt } from '../../src/net/quic-datagram.ts';
import { tsharkFields, tsharkSkipReason } from './helpers.ts';

/** An IPv4 + TCP segment of `len` bytes from client port `sport`. */
function segment(len: number, sport: number): Buffer {
  const b = Buffer.alloc(len);
  b[0] = 0x45;
  b.writeUInt16BE(len, 2);
  b[8] = 64;
  b[9] = 6;
  Buffer.from([198, 18, 0, 1]).copy(b, 12);
  Buffer.from([198, 18, 0, 2]).copy(b, 16);
  b.writeUInt16BE(sport, 20);
  b.writeUInt16BE(443, 22);
  b[32] = 0x50; // data offset 5 words
  b[33] = 0x10; // ACK
  return b;
}

/**
 * An IPv4 + UDP datagram from port 443 of QUIC v1 long-header packets (`types`: 0 Initial, 2
 * Handshake; 8-byte DCID, 20-byte SCID, `body` bytes of 0xaa each), then `tail`.
 */
function quicDatagram(types: number[], body: number, tail: Buffer): Buffer {
  const packets = types.map((type) => {
    const h = Buffer.alloc(1 + 4 + 1 + 8 + 1 + 20);
    h[0] = 0xc0 | (type << 4);
    h.writeUInt32BE(1, 1);
    h[5] = 8;
    h[14] = 20;
    // Initial: a zero-length token; then the length as a 2-byte varint.
    const length = Buffer.from([0x40 | (body >> 8), body & 255]);
    return Buffer.concat([
      h,
      type === 0 ? Buffer.from([0]) : Buffer.alloc(0),
      length,
      Buffer.alloc(body, 0xaa),
    ]);
  });
  const payload = Buffer.concat([...packets, tail]);
  const ip = Buffer.alloc(28);
  ip[0] = 0x45;
  ip.writeUInt16BE(28 + payload.length, 2);
  ip[8] = 64;
  ip[9] = 17;
  Buffer.from([198, 18, 0, 2]).copy(ip, 12);
  Buffer.from([198, 18, 0, 1]).copy(ip, 16);
  ip.writeUInt16BE(443, 20);
  ip.writeUInt16BE(40000, 22);
  ip.writeUInt16BE(8 + payload.length, 24);
  return Buffer.concat([ip, payload]);
}

describe('QUIC datagrams read without keys', () => {
  it('zero padding is found after coalesced Initial and Handshake packets, and nowhere else', () => {
    const padded = quicDatagram([0, 2], 100, Buffer.alloc(300));
    const packets = 28 + (35 + 1 + 2 + 100) + (35 + 2 + 100);
    assert.equal(quicPaddingAt(padded, 0, padded.length), packets);
    // A coalesced short-header packet, no padding, a TCP segment, a packet running past the end.
    const short = quicDatagram([0], 100, Buffer.from([0x40, 1, 2, 0, 0]));
    const whole = quicDatagram([2], 100, Buffer.alloc(0));
    for (const b of [short, whole, segment(1200, 40000), padded.subarray(0, 100)])
      assert.equal(quicPaddingAt(b, 0, b.length), b.length);
    // The handshake's datagrams hold long-header packets only, padding aside.
    assert.deepEqual(
      [padded, whole, padded.subarray(0, packets), short, segment(1200, 40000)].map((b) =>
        quicHandshakeOnly(b, 0, b.length),
      ),
      [true, true, true, false, false],
    );
  });
});

const dir = mkdtempSync(join(tmpdir(), 'h2lab-capture-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('link capture (no devices)', { skip: tsharkSkipReason() }, () => {
  it('writes each packet with its direction, arrival time, length and fate, as tshark reads it', () => {
    const epochMs = 1_700_000_000_000;
    const c = new LinkCapture({ snapBytes: 96, maxBytes: 1 << 20, monotonicToEpochMs: 5000 - epochMs });
    // A slab with the packet at an offset, as the relay reads it.
    const slab = Buffer.alloc(4096);
    segment(1500, 40000).copy(slab, 2048);
    c.record(0, slab, 2048, 1500, 5000.5, 5100.75, 'loss', 0.25);
    c.record(1, segment(60, 40001), 0, 60, 5001, undefined, 'loss', 0);
    c.record(1, segment(60, 40002), 0, 60, 5002, undefined, 'queue', 0);
    const file = join(dir, 'unit.pcapng');
    const s = c.writeTo(file);
    assert.deepEqual(s.packets, { up: 1, down: 2 });
    assert.deepEqual(s.dropped, { loss: 1, queue: 1 });
    assert.equal(s.truncatedPackets, 1);
    assert.equal(s.packetsNotRecorded, 0);
    assert.equal(s.bytes, statSync(file).size);
    const rows = tsharkFields(file, [
      'frame.interface_name',
      'frame.time_epoch',
      'frame.len',
      'frame.cap_len',
      'tcp.srcport',
      'frame.comment',
    ]);
    assert.deepEqual(
      rows.map((r) => [r[0], r[2], r[3], r[4], r[5]]),
      [
        ['up', '1500', '96', '40000', 'up: delay 100.250 ms (queue 0.250 ms)'],
        ['down', '60', '60', '40001', 'down: dropped (loss)'],
        ['down', '60', '60', '40002', 'down: dropped (queue full)'],
      ],
    );
    assert.equal(Number(rows[0]![1]), (epochMs + 0.5) / 1000);
    assert.equal(Number(rows[2]![1]), (epochMs + 2) / 1000);
  });

  it("keeps a QUIC datagram's packets but not the zero padding after them, and says so", () => {
    const c = new LinkCapture({ snapBytes: 65535, maxBytes: 1 << 20, monotonicToEpochMs: 0 });
    const padded = quicDatagram([0, 2], 100, Buffer.alloc(300));
    c.record(1, padded, 0, padded.length, 1, 21, 'loss', 0);
    const file = join(dir, 'quic.pcapng');
    const s = c.writeTo(file);
    assert.equal(s.truncatedPackets, 0, 'not a cut of the snap length');
    const rows = tsharkFields(file, ['frame.len', 'frame.cap_len', 'udp.length', 'frame.comment']);
    assert.deepEqual(rows, [
      [
        String(padded.length),
        String(padded.length - 300),
        String(padded.length - 20),
        'down: delay 20.000 ms (queue 0.000 ms); 300 bytes of zero padding not kept',
      ],
    ]);
    const r = spawnSync('capinfos', ['-k', file], { encoding: 'utf8' });
    if (r.status === 0) assert.match(r.stdout, /1 QUIC datagrams without the zero padding/);
  });

  it('stops at the size cap, counts what it did not record and says so in the file', () => {
    const c = new LinkCapture({ snapBytes: 256, maxBytes: 64 * 1024, monotonicToEpochMs: 0 });
    const p = segment(1500, 40000);
    for (let i = 0; i < 1000; i++) c.record(i % 2 ? 1 : 0, p, 0, 1500, i, i + 10, 'loss', 0);
    const file = join(dir, 'cap.pcapng');
    const s = c.writeTo(file);
    const kept = s.packets.up + s.packets.down;
    assert.ok(kept > 100 && kept < 1000, `${kept} packets kept`);
    assert.equal(kept + s.packetsNotRecorded, 1000);
    assert.ok(s.bytes <= 64 * 1024, `${s.bytes} bytes`);
    assert.equal(tsharkFields(file, ['frame.number']).length, kept);
    const r = spawnSync('capinfos', ['-k', file], { encoding: 'utf8' });
    if (r.status === 0) assert.match(r.stdout, new RegExp(`${s.packetsNotRecorded} packets not recorded`));
  });

  it('fills more than one chunk without losing a packet', () => {
    const c = new LinkCapture({ snapBytes: 1500, maxBytes: 8 << 20, monotonicToEpochMs: 0 });
    const p = segment(1400, 40000);
    for (let i = 0; i < 3000; i++) c.record(0, p, 0, 1400, i, i + 1, 'loss', 0);
    const file = join(dir, 'chunks.pcapng');
    assert.equal(c.writeTo(file).packets.up, 3000);
    const rows = tsharkFields(file, ['frame.cap_len', 'frame.comment']);
    assert.equal(rows.length, 3000);
    assert.ok(rows.every((r) => r[0] === '1400' && r[1] === 'up: delay 1.000 ms (queue 0.000 ms)'));
  });
});

// The relay's per-packet trace: record layout, ICMP echo identity, capacity; and a live link's trace
// of ping probes (read → due → write in order, due = read + the one-way delay).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { createLink, linkWarnings, PACKET_FIELDS, WAKE_FIELDS, WAKE_TIMER } from '../../src/net/index.ts';
import { icmpEcho, RelayTrace } from '../../src/net/relay-trace.ts';
import { pingSkipReason } from './helpers.ts';

/** A minimal IPv4 + ICMP echo packet. */
function echo(type: number, seq: number): Buffer {
  const b = Buffer.alloc(84);
  b[0] = 0x45; // IPv4, 20-byte header
  b[9] = 1; // ICMP
  b[20] = type;
  b.writeUInt16BE(seq, 26);
  return b;
}

describe('relay trace (no devices)', () => {
  it('identifies ICMP echo requests and replies, nothing else', () => {
    assert.equal(icmpEcho(echo(8, 7), 0, 84), 8 * 65536 + 7);
    assert.equal(icmpEcho(echo(0, 65535), 0, 84), 65535);
    assert.equal(icmpEcho(echo(3, 1), 0, 84), -1); // unreachable
    const tcp = echo(8, 1);
    tcp[9] = 6;
    assert.equal(icmpEcho(tcp, 0, 84), -1);
    assert.equal(icmpEcho(echo(8, 1), 0, 20), -1); // too short
    // At an offset inside a slab, as the relay reads them.
    const slab = Buffer.alloc(4096);
    echo(8, 42).copy(slab, 2048);
    assert.equal(icmpEcho(slab, 2048, 84), 8 * 65536 + 42);
  });

  it('records packets and callbacks in order and counts what did not fit', () => {
    const t = new RelayTrace(2);
    const a = t.packet(0, 84, 1, 6, -1);
    const b = t.packet(1, 1500, 2, 7, 5);
    assert.equal(t.packet(0, 52, 3, 8, -1), -1);
    t.written(a, 6.01, 6.02);
    t.written(b, 7.1, 7.2);
    t.written(-1, 9, 9); // a packet that was not recorded: ignored
    t.wake(WAKE_TIMER, 6, 6.005, 6.03, 1);
    const d = t.data();
    assert.equal(d.missed, 1);
    assert.deepEqual([...d.packets], [0, 84, 1, 6, 6.01, 6.02, -1, 1, 1500, 2, 7, 7.1, 7.2, 5]);
    assert.equal(d.packets.length, 2 * PACKET_FIELDS.length);
    assert.deepEqual([...d.wakes], [WAKE_TIMER, 6, 6.005, 6.03, 1]);
    assert.equal(d.wakes.length, WAKE_FIELDS.length);
  });
});

describe('link warnings (no devices)', () => {
  it('name a late relay, a long relay GC pause, refused packets and a saturated relay; nothing when fine', () => {
    const late = { count: 1000, p50: 0.01, p99: 1.5, p999: 4, max: 9 };
    assert.deepEqual(
      linkWarnings({
        releaseLateMs: { ...late, p99: 0.08 },
        relayGc: { count: 3, totalMs: 2, maxMs: 0.7 },
        relayCpu: 0.4,
      }),
      [],
    );
    const w = linkWarnings({
      releaseLateMs: late,
      relayGc: { count: 2, totalMs: 12, maxMs: 10.2 },
      relayCpu: 0.95,
    });
    assert.equal(w.length, 3);
    assert.match(w[0]!, /1% of packets more than 1\.5 ms/);
    assert.match(w[1]!, /paused up to 10\.2 ms for garbage collection/);
    assert.match(w[2]!, /95% of a core/);
  });
});

const skip = pingSkipReason();
describe('relay trace (live link)', { skip }, () => {
  it('traces ping probes: due = read + one-way delay, written at or after due − slack', async () => {
    const link = await createLink({ profile: { rttMs: 10 }, relayTraceCapacity: 10_000 });
    try {
      const r = spawnSync('ping', ['-n', '-q', '-c', '20', '-i', '0.01', link.serverAddress], {
        encoding: 'utf8',
        timeout: 20_000,
      });
      assert.match(r.stdout, / 20 received/);
      const t = (await link.relayTrace())!;
      const F = PACKET_FIELDS.length;
      const probes: number[] = [];
      for (let i = 0; i < t.packets.length / F; i++) if (t.packets[i * F + 6]! >= 0) probes.push(i);
      assert.equal(probes.length, 40, 'each request and reply recorded once');
      for (const i of probes) {
        const [, , arrival, due, ws, we] = t.packets.subarray(i * F, i * F + F);
        assert.ok(Math.abs(due! - arrival! - 5) < 1e-6, `due ${due} − arrival ${arrival} should be 5 ms`);
        assert.ok(ws! >= due! - 0.1 - 1e-6, 'not written before due − slack');
        assert.ok(we! >= ws!);
      }
      assert.ok(t.wakes.length > 0);
      assert.equal(await createLinkWithoutTrace(), undefined);
    } finally {
      await link.close();
    }
  });
});

/** A link without `relayTraceCapacity` has no trace to give. */
async function createLinkWithoutTrace(): Promise<unknown> {
  const link = await createLink({ profile: 'relay' });
  try {
    return await link.relayTrace();
  } finally {
    await link.close();
  }
}

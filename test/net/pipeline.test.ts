// The link model with an injected clock: no devices, no root. Each condition alone, then composed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { createRng } from '../../src/core/rng.ts';
import { delay } from '../../src/net/conditions/delay.ts';
import { gilbertElliott, gilbertElliottTransitions } from '../../src/net/conditions/gilbert-elliott.ts';
import { jitter } from '../../src/net/conditions/jitter.ts';
import { loss } from '../../src/net/conditions/loss.ts';
import { rate } from '../../src/net/conditions/rate.ts';
import { DROP } from '../../src/net/conditions/types.ts';
import { createLinkPipeline, PacketQueue } from '../../src/net/pipeline.ts';
import { resolveProfile } from '../../src/net/profiles.ts';

describe('conditions', () => {
  it('delay adds a constant', () => {
    const d = delay(20);
    assert.equal(d.admit(1500, 100), 120);
    assert.equal(d.admit(40, 100.5), 120.5);
  });

  it('i.i.d. loss drops the configured fraction (±4 standard deviations)', () => {
    const l = loss(0.01, createRng(7));
    const n = 200_000;
    let dropped = 0;
    for (let i = 0; i < n; i++) if (l.admit(1500, i) === DROP) dropped++;
    const sd = Math.sqrt(n * 0.01 * 0.99);
    assert.ok(Math.abs(dropped - n * 0.01) < 4 * sd, `dropped ${dropped} of ${n}`);
  });

  it('Gilbert–Elliott loss has the mean rate and the mean burst length asked for', () => {
    const ge = gilbertElliott({ loss: 0.02, burstPackets: 5 }, createRng(3));
    const n = 400_000;
    let dropped = 0;
    let bursts = 0;
    let inBurst = false;
    for (let i = 0; i < n; i++) {
      const lost = ge.admit(1500, i) === DROP;
      if (lost) dropped++;
      if (lost && !inBurst) bursts++;
      inBurst = lost;
    }
    const rateMeasured = dropped / n;
    const burstMeasured = dropped / bursts;
    assert.ok(Math.abs(rateMeasured - 0.02) < 0.02 * 0.15, `loss ${rateMeasured}`);
    assert.ok(Math.abs(burstMeasured - 5) < 5 * 0.15, `burst ${burstMeasured}`);
    const { p, r } = gilbertElliottTransitions({ loss: 0.02, burstPackets: 5 });
    assert.ok(Math.abs(p / (p + r) - 0.02) < 1e-12);
  });

  it('rate serialises back to back at the configured rate', () => {
    const r = rate({ rateBitsPerSec: 12e6, queueBytes: 1e6 }); // 1500 B = 1 ms
    assert.equal(r.admit(1500, 0), 1);
    assert.equal(r.admit(1500, 0), 2);
    assert.equal(r.admit(1500, 0.5), 3);
    assert.equal(r.admit(1500, 10), 11); // idle link: starts at arrival
  });

  it('rate drops the tail when the queue is full, and the queue drains at the rate', () => {
    const r = rate({ rateBitsPerSec: 12e6, queueBytes: 4500 }); // room for 3 packets
    assert.equal(r.admit(1500, 0), 1);
    assert.equal(r.admit(1500, 0), 2);
    assert.equal(r.admit(1500, 0), 3);
    assert.equal(r.admit(1500, 0), DROP);
    assert.equal(r.admit(1500, 1), 4); // one left the queue: room again
    assert.equal(r.admit(1500, 1), DROP);
  });

  it('rate never lets more than rate·t + queue bytes out in any window (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 40, max: 1500 }), fc.double({ min: 0, max: 5, noNaN: true })), {
          maxLength: 300,
        }),
        (pkts) => {
          const r = rate({ rateBitsPerSec: 8e6, queueBytes: 20_000 }); // 1 byte per µs
          let t = 0;
          const out: Array<[number, number]> = [];
          for (const [size, gap] of pkts) {
            t += gap;
            const due = r.admit(size, t);
            if (due !== DROP) out.push([due, size]);
          }
          // Departures are in order and spaced by at least their serialisation time.
          for (let i = 1; i < out.length; i++) {
            assert.ok(out[i]![0] - out[i - 1]![0] >= ((out[i]![1] * 8) / 8e6) * 1000 - 1e-9);
          }
        },
      ),
    );
  });

  it('jitter stays within [0, 2J], keeps order unless reorder is set', () => {
    const j = jitter({ jitterMs: 5 }, createRng(1));
    let last = 0;
    for (let i = 0; i < 10_000; i++) {
      const at = i * 0.1;
      const out = j.admit(100, at);
      assert.ok(out >= at && out <= at + 10 + 1e-9);
      assert.ok(out >= last);
      last = out;
    }
    const jr = jitter({ jitterMs: 5, reorder: true }, createRng(1));
    let reordered = 0;
    last = 0;
    for (let i = 0; i < 10_000; i++) {
      const out = jr.admit(100, i * 0.1);
      if (out < last) reordered++;
      last = out;
    }
    assert.ok(reordered > 1000, `reordered ${reordered}`);
  });
});

describe('link model', () => {
  it('a profile resolves into both directions; the named presets all resolve', () => {
    const wan = resolveProfile('wan');
    assert.equal(wan.down.delayMs, 20);
    assert.equal(wan.up.rateBitsPerSec, 50e6);
    assert.equal(wan.down.queueBytes, 250_000); // one BDP
    const m = resolveProfile('mobile-4g');
    assert.equal(m.up.rateBitsPerSec, 5e6);
    assert.equal(m.down.rateBitsPerSec, 20e6);
    const custom = resolveProfile('wan', { lossDown: 0.01 });
    assert.equal(custom.name, 'wan+custom');
    assert.equal(custom.down.loss, 0.01);
    assert.equal(custom.up.loss, 0);
    assert.throws(() => resolveProfile('nope'), /not a known profile: use one of/);
    assert.throws(() => resolveProfile({ rttMs: 10, jitterMs: 6 }), /jitterMs/);
    assert.throws(
      () => resolveProfile({ rttMs: 10, bogus: 1 } as never),
      (e: Error & { code?: string }) => e.code === 'H2LAB_ERR_INVALID_OPTION',
    );
  });

  it('composes loss → rate → delay: one 1500-byte packet at 12 Mbit/s and 10 ms one way is due at 11 ms', () => {
    const model = createLinkPipeline(resolveProfile({ rttMs: 20, rateBitsPerSec: 12e6 }), 1);
    assert.equal(model.up.admit(1500, 0), 11);
    assert.equal(model.up.admit(1500, 0), 12);
    assert.equal(model.down.admit(1500, 0), 11); // directions are independent
  });

  it('a bulk transfer through the model gets the rate, never more; excess is dropped at the shared queue', () => {
    const model = createLinkPipeline(
      resolveProfile({ rttMs: 40, rateBitsPerSec: 50e6, queueBytes: 64 * 1024 }),
      1,
    );
    // Two flows offering 80 Mbit/s together for one second.
    let delivered = 0;
    let lastDue = 0;
    for (let i = 0; i < 2 * 3333; i++) {
      const due = model.down.admit(1500, i * 0.15);
      if (due !== DROP) {
        delivered += 1500;
        lastDue = due;
      }
    }
    const bitsPerSec = (delivered * 8) / ((lastDue - 20) / 1000);
    assert.ok(bitsPerSec <= 50e6 * 1.0001 && bitsPerSec > 49e6, `${bitsPerSec}`);
    assert.ok(model.down.stats.droppedQueue > 0);
    assert.equal(model.down.stats.droppedLoss, 0);
  });

  it('the same seed drops the same packets', () => {
    const run = (seed: number) => {
      const m = createLinkPipeline(resolveProfile({ loss: 0.05 }), seed);
      return Array.from({ length: 500 }, (_, i) => m.down.admit(100, i) === DROP);
    };
    assert.deepEqual(run(5), run(5));
    assert.notDeepEqual(run(5), run(6));
  });
});

describe('PacketQueue', () => {
  it('pops in due order, equal times in arrival order, and grows', () => {
    const q = new PacketQueue(16, 2);
    const src = Buffer.alloc(16);
    const dues = [5, 1, 3, 3, 9, 0, 3];
    dues.forEach((d, i) => {
      src[0] = i;
      q.push(src, 0, 1 + i, d);
    });
    assert.equal(q.size, 7);
    const order: number[] = [];
    while (q.size > 0) {
      const slot = q.pop();
      order.push(q.slab[q.offsetOf(slot)]!);
    }
    assert.deepEqual(order, [5, 1, 2, 3, 6, 0, 4]);
    assert.equal(q.bytes, 0);
  });

  it('matches a sort for random due times (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 200 }), (dues) => {
        const q = new PacketQueue(8, 1);
        const src = Buffer.alloc(8);
        dues.forEach((d, i) => {
          src.writeUInt32LE(i, 0);
          q.push(src, 0, 4, d);
        });
        const got: number[] = [];
        while (q.size > 0) got.push(q.slab.readUInt32LE(q.offsetOf(q.pop())));
        const want = dues
          .map((d, i) => [d, i] as const)
          .sort((a, b) => a[0] - b[0] || a[1] - b[1])
          .map((x) => x[1]);
        assert.deepEqual(got, want);
      }),
    );
  });
});

describe('the queue wait the capture stage reads', () => {
  it('is what each packet waits behind the ones before it, serialisation excluded', () => {
    // 8 Mbit/s: a 1000-byte packet takes 1 ms on the wire.
    const r = rate({ rateBitsPerSec: 8e6, queueBytes: 10_000 });
    assert.equal(r.admit(1000, 0), 1);
    assert.equal(r.lastWaitMs, 0);
    assert.equal(r.admit(1000, 0), 2);
    assert.equal(r.lastWaitMs, 1);
    assert.equal(r.admit(1000, 0.5), 3);
    assert.equal(r.lastWaitMs, 1.5);
    // An idle link: no wait.
    assert.equal(r.admit(1000, 10), 11);
    assert.equal(r.lastWaitMs, 0);
  });

  it('reaches the pipeline through its bottleneck; 0 without one', () => {
    const spec = { delayMs: 10, jitterMs: 0, reorder: false, loss: 0, burstPackets: 1 };
    const linked = createLinkPipeline(
      { up: { ...spec, rateBitsPerSec: 8e6, queueBytes: 10_000 }, down: spec },
      1,
    );
    linked.up.admit(1000, 0);
    assert.equal(linked.up.admit(1000, 0), 12);
    assert.equal(linked.up.lastQueueMs, 1);
    linked.down.admit(1000, 0);
    assert.equal(linked.down.lastQueueMs, 0);
  });
});

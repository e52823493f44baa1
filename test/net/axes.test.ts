// Link conditions as compare axes: the plan (pure), and a comparison over two planned links whose
// every run records the link it went through (root: skipped with the reason otherwise).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runComparison } from '../../src/compare/run.ts';
import { sizeWorkload } from '../../src/compare/workloads.ts';
import { planLinks } from '../../src/net/index.ts';
import { netSkipReason } from './helpers.ts';

describe('planLinks', () => {
  it('crosses loss on one direction: --loss-down and --loss-up are axes too', () => {
    const plan = planLinks(['loopback'], { rttMs: [50], lossDown: [0, 0.02], lossUp: [0.01] }, 1);
    assert.deepEqual(
      plan.map((l) => l.name),
      ['rtt50ms+lossup1%', 'rtt50ms+lossup1%+lossdown2%'],
    );
    const spec = plan[1]!.options.profile as { lossUp?: number; lossDown?: number };
    assert.equal(spec.lossUp, 0.01);
    assert.equal(spec.lossDown, 0.02);
  });

  it('crosses the axis lists with each other and with named profiles, in order', () => {
    const plan = planLinks(
      ['loopback'],
      { rttMs: [20, 200], loss: [0, 0.02], congestionControl: ['cubic', 'bbr'] },
      3,
    );
    assert.deepEqual(
      plan.map((l) => l.name),
      [
        'rtt20ms+cubic',
        'rtt20ms+bbr',
        'rtt20ms+loss2%+cubic',
        'rtt20ms+loss2%+bbr',
        'rtt200ms+cubic',
        'rtt200ms+bbr',
        'rtt200ms+loss2%+cubic',
        'rtt200ms+loss2%+bbr',
      ],
    );
    assert.ok(plan.every((l) => l.options.seed === 3));
    assert.deepEqual(plan[3]!.options.profile, { rttMs: 20, loss: 0.02 });
    assert.equal(plan[3]!.options.congestionControl, 'bbr');
    const onWan = planLinks(['wan', 'loopback'], { loss: [0.01], initialCwnd: 4 }, 1);
    assert.deepEqual(
      onWan.map((l) => [l.name, l.options.profile, l.options.overrides, l.options.initialCwnd]),
      [['wan+loss1%', 'wan', { loss: 0.01 }, 4]],
    );
    assert.deepEqual(
      planLinks(['loopback'], { rateBitsPerSec: [10e6, 1.5e6] }, 1).map((l) => l.name),
      ['10mbit', '1500kbit'],
    );
  });

  it('no link asked for: none planned; TCP settings without a link, a repeat or a bad combination: a clear error', () => {
    assert.deepEqual(planLinks(['loopback'], undefined, 1), []);
    assert.throws(
      () => planLinks(['loopback'], { congestionControl: ['cubic'] }, 1),
      /--cc .* add --net PROFILE or --rtt/,
    );
    assert.throws(() => planLinks(['loopback'], { rttMs: [20, 20] }, 1), /rtt20ms appears twice/);
    assert.throws(
      () => planLinks(['loopback'], { rttMs: [10], jitterMs: [20] }, 1),
      /jitterMs must not exceed half/,
    );
    assert.throws(() => planLinks(['nowhere'], { loss: [0.01] }, 1), /not a known profile/);
  });
  it("each link's `alone` plans that link and no other: the same name, seed and settings (a study's one comparison per link)", () => {
    for (const [net, axes] of [
      [
        ['loopback'],
        { rttMs: [20, 50], loss: [0, 0.01], congestionControl: ['cubic', 'bbr'], rateBitsPerSec: [10e6] },
      ],
      [['wan', 'lan'], { loss: [0, 0.02], initialCwnd: 4, queueBytes: 64_000, slowStartAfterIdle: false }],
      [['wan'], undefined],
    ] as const) {
      const plan = planLinks(net, axes as Parameters<typeof planLinks>[1], 7);
      assert.ok(plan.length > 1 || axes === undefined, `${net}: ${plan.length} links`);
      for (const l of plan) {
        const again = planLinks(l.alone.net ?? ['loopback'], l.alone.links, 7);
        assert.deepEqual(again, [l], l.name);
      }
    }
  });
});

describe('compare over planned links', { skip: netSkipReason() }, () => {
  it('runs every cell on its own link and records the link, its seed and its congestion control', async () => {
    const c = await runComparison({
      protocols: ['h1', 'h2'],
      concurrency: [4],
      workloads: [sizeWorkload(1024)],
      links: { rttMs: [40], loss: [0, 0.01], congestionControl: ['reno'] },
      runs: 2,
      warmupRuns: 0,
      durationMs: 400,
      seed: 7,
    });
    const r = await c.done;
    assert.equal(r.status, 'complete', JSON.stringify(r.error));
    // No loopback cells: only the links asked for.
    assert.deepEqual(r.axes.net, ['rtt40ms+reno', 'rtt40ms+loss1%+reno']);
    for (const cell of r.cells) {
      assert.equal(cell.status, 'done', `${cell.id}: ${cell.note}`);
      for (const run of cell.runs) {
        const link = run.environment.link!;
        assert.equal(link.profile, cell.net);
        assert.equal(link.rttMs, 40);
        assert.equal(link.seed, 7);
        assert.equal(link.congestionControl, 'reno');
        assert.equal(link.loss ?? 0, cell.net.includes('loss1%') ? 0.01 : 0);
        // A request cannot be answered faster than the link's round trip.
        assert.ok(run.ttfbMs.p50 >= 39, `${cell.id}: ttfb p50 ${run.ttfbMs.p50} ms`);
      }
    }
  });

  it("names the mechanism with the kernel's numbers: six congestion windows against one, and the losses", async () => {
    const c = await runComparison({
      protocols: ['h1', 'h2'],
      concurrency: [6],
      workloads: [sizeWorkload(256 * 1024)],
      links: { rttMs: [40], loss: [0.02], congestionControl: ['cubic'] },
      runs: 2,
      warmupRuns: 0,
      requests: 12,
      seed: 5,
    });
    const r = await c.done;
    assert.equal(r.status, 'complete', JSON.stringify(r.error));
    for (const cell of r.cells) {
      const tcp = cell.runs[0]!.connections.tcp;
      assert.equal(
        tcp?.client?.connections,
        cell.protocol === 'h1' ? 6 : 1,
        `${cell.id}: ${JSON.stringify(tcp?.client)}`,
      );
      assert.ok(tcp?.server, `${cell.id}: no server-side TCP facts`);
      assert.ok(tcp?.linkDrops, `${cell.id}: no link drops`);
    }
    const text = r.verdict!.workloads[0]!.paragraphs.join(' ');
    assert.match(
      text,
      /Mechanism \(TCP, from the kernel\)\. At c=6: h1's six connections held six congestion windows/,
    );
    assert.match(text, /the server retransmitted \d+ segments on h1's six connections/);
    assert.match(text, /the emulated link dropped \d+ packets/);
  });
});

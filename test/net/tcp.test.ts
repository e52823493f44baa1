// Kernel TCP through the emulated link behaves like TCP on a real path: the rate limit holds, loss-based
// congestion control follows the Mathis model, parallel flows multiply throughput under loss, and BBR
// closes that gap. Transfers are short (seconds), so tolerances are wide but the effects are large.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLink, type LinkOptions } from '../../src/net/index.ts';
import { bulkDownload, netSkipReason, startPeer } from './helpers.ts';

const skip = netSkipReason();
if (skip) console.log(`# net tcp tests skipped: ${skip}`);

const mbit = (x: number) => `${(x / 1e6).toFixed(2)} Mbit/s`;

/** Creates a link, starts the peer in it, downloads on `flows` connections. */
async function measure(opts: LinkOptions, flows: number, durationMs: number, warmupMs: number) {
  const link = await createLink(opts);
  const peer = await startPeer(link);
  try {
    const r = await bulkDownload(link.serverAddress, peer.tcpPort, { flows, durationMs, warmupMs });
    return { ...r, link, stats: await link.stats() };
  } finally {
    await peer.stop();
    await link.close();
  }
}

describe('TCP through the emulated link', { skip }, () => {
  it('a bulk transfer through a 50 Mbit/s link reaches 90–100% of it and never exceeds it', async () => {
    const r = await measure({ profile: { rttMs: 20, rateBitsPerSec: 50e6 } }, 1, 3000, 1000);
    // Goodput is TCP payload; the link counts IP packets (1500 bytes carry 1448 bytes of payload).
    const ipRate = r.totalBitsPerSec * (1500 / 1448);
    console.log(
      `# 50 Mbit/s link: goodput ${mbit(r.totalBitsPerSec)}, on the wire ${mbit(ipRate)} (${((ipRate / 50e6) * 100).toFixed(1)}%), highest 1 s window ${mbit(r.maxWindowBitsPerSec)} goodput; relay CPU ${((r.stats.relayCpu ?? 0) * 100).toFixed(1)}%`,
    );
    assert.ok(ipRate >= 0.9 * 50e6, `too slow: ${mbit(ipRate)}`);
    // The model never exceeds the rate (unit-tested exactly); 2% here covers bytes that were already
    // in the receive buffer at the warm-up boundary and the measured span's edges.
    assert.ok(ipRate <= 50e6 * 1.02, `faster than the link: ${mbit(ipRate)}`);
    // A one-second window can exceed the rate only by what a stall of the receiver's or the relay's
    // process (a busy 2-core host) holds back and then hands over at once.
    assert.ok(r.maxWindowBitsPerSec * (1500 / 1448) <= 50e6 * 1.05, `window ${mbit(r.maxWindowBitsPerSec)}`);
  });

  it('under 1% loss at 100 ms RTT: reno follows Mathis, six flows get ≈ six times one, bbr closes the gap', async () => {
    const link = (cc: 'reno' | 'bbr'): LinkOptions => ({
      profile: { rttMs: 100, rateBitsPerSec: 100e6, lossDown: 0.01 },
      congestionControl: cc,
      seed: 7,
    });
    // One flow's throughput under loss varies a lot over seconds (three 10 s flows once gave 1.19,
    // 0.47 and 0.72 Mbit/s, mean 0.56× Mathis), so "one flow" is the mean of five 12 s single-flow
    // links with different loss draws, side by side with the six-flow link (independent links;
    // reno's flows are light, a relay needs a few % of a core for each).
    const seeds = [7, 8, 9, 10, 11];
    const renoRuns = await Promise.all([
      ...seeds.map((seed) => measure({ ...link('reno'), seed }, 1, 12_000, 2000)),
      measure(link('reno'), 6, 12_000, 2000),
    ]);
    const reno1 = {
      totalBitsPerSec:
        renoRuns.slice(0, seeds.length).reduce((a, r) => a + r.totalBitsPerSec, 0) / seeds.length,
      link: renoRuns[0]!.link,
    };
    const reno6 = renoRuns[seeds.length]!;
    const [bbr1, bbr6] = await Promise.all([
      measure(link('bbr'), 1, 5000, 2000),
      measure(link('bbr'), 6, 5000, 2000),
    ]);
    const mss = 1448;
    const mathis = ((mss * 8) / 0.1) * (1.22 / Math.sqrt(0.01));
    console.log('# | congestion control | 1 flow | 6 flows (total) | 6 / 1 |');
    console.log(
      `# | reno | ${mbit(reno1.totalBitsPerSec)} | ${mbit(reno6.totalBitsPerSec)} | ${(reno6.totalBitsPerSec / reno1.totalBitsPerSec).toFixed(2)} |`,
    );
    console.log(
      `# | bbr | ${mbit(bbr1.totalBitsPerSec)} | ${mbit(bbr6.totalBitsPerSec)} | ${(bbr6.totalBitsPerSec / bbr1.totalBitsPerSec).toFixed(2)} |`,
    );
    console.log(
      `# Mathis estimate for one reno flow: ${mbit(mathis)}; single reno runs ${renoRuns
        .slice(0, seeds.length)
        .map((r) => mbit(r.totalBitsPerSec))
        .join(', ')}; six flows each ${reno6.perFlowBitsPerSec.map(mbit).join(', ')}`,
    );
    assert.equal(reno1.link.info.congestionControl, 'reno');
    assert.equal(bbr1.link.info.congestionControl, 'bbr');
    assert.ok(
      Math.abs(reno1.totalBitsPerSec / mathis - 1) <= 0.35,
      `reno one flow ${mbit(reno1.totalBitsPerSec)} vs Mathis ${mbit(mathis)}`,
    );
    const ratio = reno6.totalBitsPerSec / reno1.totalBitsPerSec;
    assert.ok(ratio >= 4 && ratio <= 8.5, `reno six/one = ${ratio.toFixed(2)}`);
    // BBR does not read loss as congestion: one flow gets most of what six get, and far more than reno.
    assert.ok(
      bbr1.totalBitsPerSec >= 0.6 * bbr6.totalBitsPerSec,
      `bbr one ${mbit(bbr1.totalBitsPerSec)} vs six ${mbit(bbr6.totalBitsPerSec)}`,
    );
    assert.ok(bbr1.totalBitsPerSec >= 10 * reno1.totalBitsPerSec);
  });
});

// The netem backend (veth + tc netem): its tc arguments always; a live link only where the kernel
// has sch_netem (not on every machine: the test says so when it skips). Whether it has is found here
// without h2lab, so the backend choice is checked against the kernel, not against itself.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { quantileNearestRank as quantile } from '../../src/core/index.ts';
import { createLink, netemAvailable, resolveProfile } from '../../src/net/index.ts';
import { netemArgs } from '../../src/net/netem.ts';
import { netSkipReason } from './helpers.ts';

/**
 * Whether this kernel has a working netem qdisc, established without h2lab's code: in a network
 * namespace of its own (unshare(1), not `ip netns`), 25 ms of netem on lo must show in ping's RTT
 * (≥ 45 ms: request and reply both leave through lo). `undefined` with the reason when the fact
 * cannot be established here (no unshare, not allowed).
 */
function kernelNetem(): { present: boolean | undefined; why: string } {
  const script =
    'ip link set lo up && tc qdisc add dev lo root netem delay 25ms && ping -n -q -c 3 -i 0.2 -W 2 127.0.0.1';
  const r = spawnSync('unshare', ['-n', 'sh', '-c', script], { encoding: 'utf8', timeout: 20_000 });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  if (r.status !== 0 && /qdisc kind is unknown/i.test(out)) {
    return { present: false, why: 'tc: "Specified qdisc kind is unknown" (no sch_netem)' };
  }
  const avg = Number(/= [\d.]+\/([\d.]+)\//.exec(out)?.[1]);
  if (r.status === 0 && avg >= 45) return { present: true, why: `ping on netem'd lo: avg ${avg} ms` };
  return { present: undefined, why: `could not tell (exit ${r.status}): ${out.trim().slice(0, 200)}` };
}

describe('netem backend', () => {
  it('turns a direction into tc-netem arguments (delay, uniform jitter, loss models, rate + limit)', () => {
    const p = resolveProfile({
      rttMs: 40,
      jitterMs: 5,
      loss: 0.01,
      rateBitsPerSec: 50e6,
      queueBytes: 150_000,
    });
    assert.deepEqual(netemArgs(p.down, 1500), [
      'netem',
      'delay',
      '20ms',
      '5ms',
      'distribution',
      'uniform',
      'loss',
      'random',
      '1.000000%',
      'rate',
      '50000000bit',
      'limit',
      '100',
    ]);
    const ge = netemArgs(resolveProfile({ loss: 0.02, burstPackets: 4 }).up, 1500);
    // p = loss·r/(1−loss) with r = 1/4: 0.5102%; r = 25%; loss 100% in Bad, 0% in Good.
    assert.deepEqual(ge.slice(1), [
      'loss',
      'gemodel',
      '0.510204%',
      '25.000000%',
      '100%',
      '0%',
      'limit',
      '100000',
    ]);
  });

  it('a live netem link has the configured RTT', async (t) => {
    const skip = netSkipReason();
    if (skip) return t.skip(skip);
    const netem = kernelNetem();
    if (netem.present !== true) return t.skip(`this kernel has no working netem qdisc: ${netem.why}`);
    const link = await createLink({ profile: { rttMs: 30 }, backend: 'netem' });
    try {
      assert.equal(link.info.backend, 'netem');
      const r = spawnSync('ping', ['-n', '-c', '10', '-i', '0.05', link.serverAddress], { encoding: 'utf8' });
      const rtts = [...r.stdout.matchAll(/time=([\d.]+) ms/g)].map((m) => Number(m[1]));
      assert.ok(Math.abs(quantile(rtts, 0.25) - 30) <= 1, rtts.join(' '));
    } finally {
      await link.close();
    }
  });

  it('auto picks netem where the kernel has it, else the relay, and records which', async (t) => {
    const skip = netSkipReason();
    if (skip) return t.skip(skip);
    const netem = kernelNetem();
    if (netem.present === undefined) return t.skip(netem.why);
    t.diagnostic(`netem: ${netem.present ? 'present' : 'absent'} (${netem.why})`);
    assert.equal(await netemAvailable(), netem.present, 'netemAvailable() disagrees with the kernel');
    const link = await createLink({ profile: 'lan', backend: 'auto' });
    try {
      assert.equal(link.info.backend, netem.present ? 'netem' : 'relay');
    } finally {
      await link.close();
    }
  });
});

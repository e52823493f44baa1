// The netem backend (veth + tc netem): its tc arguments always; a live link only where the kernel
// has sch_netem (not on every machine: the test says so when it skips).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { quantileNearestRank as quantile } from '../../src/core/index.ts';
import { createLink, netemAvailable, resolveProfile } from '../../src/net/index.ts';
import { netemArgs } from '../../src/net/netem.ts';
import { netSkipReason } from './helpers.ts';

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
    if (!(await netemAvailable()))
      return t.skip('this kernel has no netem qdisc (sch_netem); auto uses the relay');
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

  it('auto picks netem where present, else the relay, and records which', async (t) => {
    const skip = netSkipReason();
    if (skip) return t.skip(skip);
    const link = await createLink({ profile: 'lan', backend: 'auto' });
    try {
      assert.equal(link.info.backend, (await netemAvailable()) ? 'netem' : 'relay');
    } finally {
      await link.close();
    }
  });
});

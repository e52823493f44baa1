// The emulated link end to end: real namespaces, TUN devices, the relay process, kernel TCP.
// RTT, jitter and loss as a ping-like client and TCP handshakes see them; cleanup; exit 2 without root.
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { setTimeout as sleepMs } from 'node:timers/promises';
import { medianInterpolated as median, quantileNearestRank as quantile } from '../../src/core/index.ts';
import { createLink, type Link, sweepNamespaces } from '../../src/net/index.ts';
import { listH2labNamespaces } from '../../src/net/netns.ts';
import { h2lab, otherUserSkipReason } from '../helpers/cli.ts';
import { pingSkipReason, startPeer } from './helpers.ts';

const skip = pingSkipReason();
if (skip) console.log(`# net link tests skipped: ${skip}`);

interface PingStats {
  sent: number;
  received: number;
  rtts: number[];
}

function ping(address: string, count: number, intervalS: number): PingStats {
  const r = spawnSync('ping', ['-n', '-c', String(count), '-i', String(intervalS), '-W', '2', address], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  const rtts = [...r.stdout.matchAll(/time=([\d.]+) ms/g)].map((m) => Number(m[1]));
  const sum = /(\d+) packets transmitted, (\d+) received/.exec(r.stdout);
  return { sent: Number(sum?.[1] ?? 0), received: Number(sum?.[2] ?? 0), rtts };
}

function curlConnectMs(url: string): number {
  const r = spawnSync('curl', ['-s', '-o', '/dev/null', '--max-time', '5', '-w', '%{time_connect}', url], {
    encoding: 'utf8',
  });
  return Number(r.stdout) * 1000;
}

function devExists(name: string): boolean {
  return existsSync(`/sys/class/net/${name}`);
}

describe('emulated link (relay backend): delay, jitter and loss as configured', { skip }, () => {
  it('RTT through each profile matches within ±1 ms or 2% (ping and TCP handshake)', async () => {
    const names = ['relay', 'lan', 'wan', 'intercontinental', 'lossy'];
    // One link at a time: the measurements (curl, ping) run one after another anyway. Several links
    // at once are tested in concurrent.test.ts.
    for (const profile of names) {
      const link = await createLink({ profile, backend: 'relay' });
      try {
        const peer = await startPeer(link);
        try {
          const want = link.profile.rttMs;
          const tol = Math.max(1, want * 0.02);
          // The TCP handshake as curl times it (time_connect, measured in C around connect()).
          const connects: number[] = [];
          for (let i = 0; i < 15; i++)
            connects.push(curlConnectMs(`http://${link.serverAddress}:${peer.h1Port}/bytes/1`));
          // Scheduling delays on a busy host only ever add time (the delay line is a floor), so the
          // link's RTT is estimated by a low quantile; the median is printed too.
          // A lost SYN (lossy profile) costs a 1 s retransmission: not an RTT sample.
          const ok = connects.filter((x) => x < want + 500);
          const tcp = Math.min(...ok); // best of 15 handshakes, like ping's min
          const p = ping(link.serverAddress, 21, 0.02);
          assert.ok(p.rtts.length >= 10, `${link.profile.name}: ping got ${p.rtts.length}/21 replies`);
          const icmp = quantile(p.rtts, 0.25)!;
          console.log(
            `# ${link.profile.name}: configured ${want} ms; ping p25 ${icmp.toFixed(3)} / median ${median(p.rtts).toFixed(3)} ms; TCP connect min ${tcp.toFixed(3)} / median ${median(ok).toFixed(3)} ms`,
          );
          assert.ok(
            Math.min(...p.rtts) >= want - 0.1,
            `${link.profile.name}: a ping came back faster than the link allows`,
          );
          assert.ok(Math.abs(icmp - want) <= tol, `${link.profile.name}: ping ${icmp} vs ${want} ±${tol}`);
          assert.ok(Math.abs(tcp - want) <= tol, `${link.profile.name}: tcp ${tcp} vs ${want} ±${tol}`);
        } finally {
          await peer.stop();
        }
      } finally {
        await link.close();
      }
    }
  });

  it('jitter and loss come out as configured (statistical tolerance)', async () => {
    // Jitter: one-way delay uniform in [D−J, D+J] each way → RTT stdev J·√(2/3).
    const jl = await createLink({ profile: { rttMs: 40, jitterMs: 6 }, backend: 'relay', seed: 11 });
    // Loss 5% each way → a ping round trip survives with 0.95² = 90.25%.
    const ll = await createLink({ profile: { rttMs: 2, loss: 0.05 }, backend: 'relay', seed: 12 });
    try {
      // The round trip adds two uniform ±6 ms draws: a triangular distribution on 40 ± 12 ms, whose
      // 10th and 25th percentiles are 28 + 12·√0.2 ≈ 33.37 ms and 28 + 12·√0.5 ≈ 36.49 ms. The lower
      // half is checked: host scheduling noise only adds time, so it pollutes the upper tail.
      const pj = ping(jl.serverAddress, 200, 0.02);
      const p10 = quantile(pj.rtts, 0.1);
      const p25 = quantile(pj.rtts, 0.25);
      console.log(
        `# jitter ±6 ms: RTT p10 ${p10.toFixed(2)} (expected 33.37), p25 ${p25.toFixed(2)} (36.49), median ${median(pj.rtts).toFixed(2)} (40), min ${Math.min(...pj.rtts)} (≥ 28), max ${Math.max(...pj.rtts)}`,
      );
      assert.ok(Math.abs(p10 - (28 + 12 * Math.sqrt(0.2))) < 1.5, `p10 ${p10}`);
      assert.ok(Math.abs(p25 - (28 + 12 * Math.sqrt(0.5))) < 1.5, `p25 ${p25}`);
      assert.ok(Math.min(...pj.rtts) >= 40 - 12 - 0.1, `min ${Math.min(...pj.rtts)}`);
      assert.ok(Math.abs(median(pj.rtts) - 40) < 3, `median ${median(pj.rtts)}`);

      const pl = ping(ll.serverAddress, 600, 0.005);
      const lossRate = 1 - pl.received / pl.sent;
      const expected = 1 - 0.95 ** 2;
      const sdl = Math.sqrt((expected * (1 - expected)) / pl.sent);
      console.log(
        `# loss 5% each way: round-trip loss ${(lossRate * 100).toFixed(2)}% (expected ${(expected * 100).toFixed(2)}% ± ${(4 * sdl * 100).toFixed(2)})`,
      );
      assert.ok(Math.abs(lossRate - expected) < 4 * sdl, `loss ${lossRate}`);
      const s = await ll.stats();
      assert.ok((s.up?.droppedLoss ?? 0) > 0 && (s.down?.droppedLoss ?? 0) > 0);
    } finally {
      await jl.close();
      await ll.close();
    }
  });
});

describe('emulated link (relay backend): kernel knobs, cleanup and prerequisites', { skip }, () => {
  it('records the pinned kernel knobs, and they are in force on both ends', async () => {
    const link = await createLink({
      profile: 'wan',
      congestionControl: 'reno',
      initialCwnd: 20,
      slowStartAfterIdle: false,
    });
    try {
      assert.equal(link.info.congestionControl, 'reno');
      assert.equal(link.info.slowStartAfterIdle, false);
      assert.equal(link.info.initialCwnd, 20);
      assert.equal(link.info.backend, 'relay');
      assert.match(link.serverAddress, /^198\.1[89]\./);
      const hostRoute = execFileSync('ip', ['route', 'get', link.serverAddress], { encoding: 'utf8' });
      assert.match(hostRoute, /initcwnd 20/);
      assert.match(hostRoute, /congctl reno/);
      const nsCc = execFileSync(
        'ip',
        ['netns', 'exec', link.namespace, 'sysctl', '-n', 'net.ipv4.tcp_congestion_control'],
        {
          encoding: 'utf8',
        },
      );
      assert.equal(nsCc.trim(), 'reno');
    } finally {
      await link.close();
    }
  });

  it('cubic is allowed for the run and the global allowed list is restored after', async () => {
    const key = '/proc/sys/net/ipv4/tcp_allowed_congestion_control';
    const before = execFileSync('cat', [key], { encoding: 'utf8' }).trim();
    const link = await createLink({ profile: 'lan', congestionControl: 'cubic' });
    try {
      assert.equal(link.info.congestionControl, 'cubic');
    } finally {
      await link.close();
    }
    const after = execFileSync('cat', [key], { encoding: 'utf8' }).trim();
    // Another run may have widened it meanwhile; ours must not have stayed behind.
    if (!before.includes('cubic'))
      assert.ok(after === before || after.split(' ').length > before.split(' ').length + 1);
  });

  it('close() removes the namespace and both devices', async () => {
    const link: Link = await createLink({ profile: 'lan' });
    const dev = `h2l${process.pid.toString(36)}`;
    assert.ok((await listH2labNamespaces()).includes(link.namespace));
    await link.close();
    assert.ok(!(await listH2labNamespaces()).includes(link.namespace));
    const left = execFileSync('ip', ['-o', 'link'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes(dev));
    assert.deepEqual(left, []);
    await link.close(); // idempotent
  });

  it('clientNamespace: the client device lives there only, a process there crosses the link, close() removes it', async () => {
    const link = await createLink({ profile: 'lan', backend: 'relay', clientNamespace: true });
    const cns = link.clientNamespace!;
    try {
      assert.equal(cns, `${link.namespace}c`);
      const hostLinks = execFileSync('ip', ['-o', 'link'], { encoding: 'utf8' });
      const nsLinks = execFileSync('ip', ['-n', cns, '-o', 'link'], { encoding: 'utf8' });
      const dev = /\d+: (h2l\w+c)[:@]/.exec(nsLinks)?.[1];
      assert.ok(dev, `the client device is in ${cns}: ${nsLinks}`);
      assert.ok(!hostLinks.includes(`${dev}:`), "the client device is not in the host's namespace");
      const peer = await startPeer(link);
      try {
        const c = link.spawnInClient('curl', [
          '-s',
          '-o',
          '/dev/null',
          '--max-time',
          '5',
          '-w',
          '%{http_code} %{time_connect} %{local_ip}',
          `http://${link.serverAddress}:${peer.h1Port}/bytes/1`,
        ]);
        let out = '';
        c.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
        });
        await new Promise((r) => c.once('exit', r));
        const [code, connectS, local] = out.split(' ');
        assert.equal(code, '200', out);
        assert.equal(local, link.clientAddress, 'the request left from the link client address');
        assert.ok(
          Number(connectS) * 1000 >= link.profile.rttMs - 0.1,
          `connect ${connectS} s crossed the link`,
        );
      } finally {
        await peer.stop();
      }
    } finally {
      await link.close();
    }
    assert.ok(!(await listH2labNamespaces()).includes(cns), 'the client namespace is deleted');
    await assert.rejects(
      createLink({ profile: 'lan', target: '127.0.0.1', targetPort: 9, clientNamespace: true }),
      (e: Error & { code?: string }) =>
        e.code === 'H2LAB_ERR_INVALID_OPTION' && /clientNamespace/.test(e.message),
      'a gateway keeps its client side in the host namespace',
    );
  });

  it('after a crash (SIGKILL) the TUN device dies with the relay and the next run sweeps the namespace', async () => {
    let err = '';
    let child: ChildProcess | undefined;
    let up: () => void = () => {};
    const isUp = new Promise<void>((r) => {
      up = r;
    });
    const ran = h2lab(['net', 'run', '--profile', 'lan', '--', 'sleep', '30'], {
      timeoutMs: 60_000,
      onStart: (c) => {
        child = c;
      },
      onStderr: (d) => {
        err += d;
        if (/namespace h2lab-/.test(err)) up();
      },
    });
    const came = await Promise.race([isUp.then(() => true), sleepMs(20_000, false, { ref: false })]);
    assert.ok(came, `net run did not come up: ${err}`);
    const ns = /namespace (h2lab-\d+-\d+)/.exec(err)![1]!;
    const nsPids = () =>
      execFileSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
    // The line above comes just before the command starts: wait for it to be in the namespace.
    for (let i = 0; i < 50 && nsPids().length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    const dev = `h2l${child!.pid!.toString(36)}0c`;
    assert.ok(devExists(dev), `${dev} should exist while running`);
    child!.kill('SIGKILL');
    await ran;
    // The relay notices its parent is gone (IPC channel closed) and exits; the kernel drops the TUN.
    for (let i = 0; i < 50 && devExists(dev); i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(!devExists(dev), 'client TUN device must vanish with the relay');
    assert.ok((await listH2labNamespaces()).includes(ns), 'the namespace outlives a SIGKILL');
    // The `sleep` the killed run started is orphaned inside the namespace; the sweep ends it too
    // (deleting a namespace alone would leave it running, unreachable).
    const orphans = nsPids();
    assert.ok(orphans.length > 0, 'the killed run left its command in the namespace');
    const swept = await sweepNamespaces();
    assert.ok(swept.includes(ns));
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 20 && orphans.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(orphans.filter(alive), [], 'processes left in the swept namespace');
  });

  it('without root, `h2lab net run` exits 2 with H2LAB_ERR_NET_UNAVAILABLE naming root', {
    skip: otherUserSkipReason() ?? false,
  }, async () => {
    const r = await h2lab(['net', 'run', '--profile', 'wan', '--', 'true'], {
      uid: 65534,
      gid: 65534,
      env: { ...process.env, HOME: '/tmp' },
      timeoutMs: 30_000,
    });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /H2LAB_ERR_NET_UNAVAILABLE: .*root/);
  });
});

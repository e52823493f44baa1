// Several links up at once, each carrying traffic: what a compare run over several profiles, or two
// users on one host, does. With every thread of each relay realtime, two relays once spun at 95% of
// a core each (their main threads waiting for GC helper threads that a realtime thread on the same
// core never let run) and every other link stalled. Bounded: a relay that spins is killed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { createLink, type Link } from '../../src/net/index.ts';
import { bulkDownload, type Peer, pingSkipReason, startPeer } from './helpers.ts';

const skip = pingSkipReason();
if (skip) console.log(`# net concurrent-links test skipped: ${skip}`);

const LINKS = 7;
const TRAFFIC_MS = 10_000;
const CLK_TCK = 100; // /proc/<pid>/stat counts CPU in USER_HZ ticks, 100 on Linux

/** utime + stime of a process, in ticks, or undefined when it is gone. */
function cpuTicks(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** Scheduling policy of each thread of a process (0 SCHED_OTHER, 1 SCHED_FIFO), by thread id. */
function threadPolicies(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    out.set(Number(tid), Number(fields[38])); // field 41 of stat(5), counted after the comm field
  }
  return out;
}

function pingReplies(address: string): number {
  const r = spawnSync('ping', ['-n', '-q', '-c', '10', '-i', '0.05', '-W', '2', address], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  return Number(/(\d+) received/.exec(r.stdout)?.[1] ?? 0);
}

describe('several links at once', { skip }, () => {
  it(`${LINKS} links with traffic through each: no relay spins, every link keeps forwarding`, async () => {
    const links: Link[] = [];
    const peers: Peer[] = [];
    let monitor: NodeJS.Timeout | undefined;
    try {
      // All at once, as in a run that sets up several profiles side by side.
      const settled = await Promise.allSettled(
        Array.from({ length: LINKS }, (_, i) =>
          createLink({
            profile: { rttMs: 100, rateBitsPerSec: 100e6, lossDown: 0.01 },
            congestionControl: 'reno',
            seed: 30 + i,
          }),
        ),
      );
      for (const s of settled) if (s.status === 'fulfilled') links.push(s.value);
      for (const s of settled) if (s.status === 'rejected') throw s.reason;
      const pids = links.map((l) => l.relayPid!);

      // The relay's main thread (thread id = pid) is the only realtime thread: Node's helper threads
      // (GC, compiler, thread pool) stay ordinary, so a realtime thread never waits on one it starves.
      for (const [i, pid] of pids.entries()) {
        const policies = threadPolicies(pid);
        if (links[i]!.info.relayPriority === 'realtime') assert.equal(policies.get(pid), 1, 'main thread');
        const rtHelpers = [...policies].filter(([tid, pol]) => tid !== pid && pol !== 0);
        assert.deepEqual(rtHelpers, [], `relay ${pid}: realtime helper threads`);
        assert.match(readFileSync(`/proc/${pid}/cmdline`, 'utf8'), /--single-threaded-gc/);
      }

      for (const link of links) peers.push(await startPeer(link));
      // Sample each relay's CPU every second; a relay above 60% of a core for two samples in a row is
      // spinning (these links carry ~1.4 Mbit/s each: a relay needs a few %). Kill it so the test
      // ends in bounded time and say so.
      const spins = new Map<number, number>();
      const spun: string[] = [];
      let last = pids.map(cpuTicks);
      let lastAt = performance.now();
      monitor = setInterval(() => {
        const now = pids.map(cpuTicks);
        const secs = (performance.now() - lastAt) / 1000;
        lastAt = performance.now();
        for (const [i, pid] of pids.entries()) {
          const share = ((now[i] ?? 0) - (last[i] ?? 0)) / CLK_TCK / secs;
          spins.set(pid, share > 0.6 ? (spins.get(pid) ?? 0) + 1 : 0);
          if ((spins.get(pid) ?? 0) >= 2 && !spun.some((s) => s.startsWith(`${pid} `))) {
            spun.push(`${pid} at ${(share * 100).toFixed(0)}% of a core`);
            for (const p of pids) {
              try {
                process.kill(p, 'SIGKILL');
              } catch {}
            }
          }
        }
        last = now;
      }, 1000);
      const results = await Promise.all(
        links.map((l, i) =>
          bulkDownload(l.serverAddress, peers[i]!.tcpPort, {
            flows: 1,
            durationMs: TRAFFIC_MS,
            warmupMs: 1000,
          }),
        ),
      );
      clearInterval(monitor);
      const replies = links.map((l) => pingReplies(l.serverAddress));
      const rates = results.map((r) => r.totalBitsPerSec / 1e6);
      const cpu = await Promise.all(links.map(async (l) => (await l.stats()).relayCpu ?? Number.NaN));
      console.log(
        `# ${LINKS} links at once: Mbit/s ${rates.map((r) => r.toFixed(2)).join(' ')}; ping replies ${replies.join(' ')}; relay CPU ${cpu.map((c) => `${(c * 100).toFixed(1)}%`).join(' ')}`,
      );
      assert.deepEqual(spun, [], 'relays spinning');
      // Reno at 100 ms RTT and 1% loss gets ~1.4 Mbit/s (Mathis); a stalled link gets almost nothing.
      for (const [i, r] of rates.entries()) assert.ok(r > 0.4, `link ${i}: ${r.toFixed(2)} Mbit/s`);
      for (const [i, n] of replies.entries()) assert.ok(n >= 5, `link ${i}: ${n}/10 ping replies`);
    } finally {
      clearInterval(monitor);
      await Promise.all(peers.map((p) => p.stop()));
      await Promise.all(links.map((l) => l.close()));
    }
  });
});

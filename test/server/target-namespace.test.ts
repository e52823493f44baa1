// The fixture as a target inside a link's server namespace: started over typed IPC (no `cli/main`
// child, no stdout parsed), it serves at the link's address through the link's delay, verifies by
// the CA issued for that address, and its metrics count what the load sent. Also what
// `bench --net` runs: runLoadThroughLink records the link and the server's view.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { runLoad, runLoadThroughLink } from '../../src/load/index.ts';
import { browserNetwork, createLink } from '../../src/net/index.ts';
import { metricsDelta, serverViewOf, startFixtureTarget } from '../../src/server/index.ts';
import { netSkipReason } from '../net/helpers.ts';

const skip = netSkipReason();
if (skip) console.log(`# namespace placement tests skipped: ${skip}`);

/** pid and command line of each child of this process (Linux /proc). */
function children(): Array<{ pid: number; argv: string }> {
  const out: Array<{ pid: number; argv: string }> = [];
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid)
        out.push({
          pid: Number(pid),
          argv: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' '),
        });
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

const RTT_MS = 20;

describe('fixture target in a network namespace', { skip }, () => {
  it('runs the target entry (not cli/main) in the namespace, serves through the link, and its metrics count the run', async () => {
    const link = await createLink({ profile: { rttMs: RTT_MS }, backend: 'relay' });
    try {
      const t = await startFixtureTarget({ poolSize: 4 }, { link });
      try {
        assert.equal(t.placement, 'namespace');
        assert.equal(new URL(t.tlsUrl!).hostname, link.serverAddress);
        assert.equal(new URL(t.plainUrl!).hostname, link.serverAddress);
        const kids = children();
        assert.ok(!kids.some((k) => k.argv.includes('cli/main')), kids.map((k) => k.argv).join('\n'));
        const entry = kids.filter((k) => k.argv.includes('server/target-entry'));
        assert.equal(entry.length, 1, kids.map((k) => k.argv).join('\n'));
        const ns = execFileSync('ip', ['netns', 'identify', String(entry[0]!.pid)], {
          encoding: 'utf8',
        }).trim();
        assert.equal(ns, link.namespace, 'the server process lives in the link namespace');

        await t.metrics.reset();
        const before = await t.metrics.read();
        const r = await runLoad(
          { protocol: 'h2', requests: 40, concurrency: 4, serverMetrics: false },
          { target: t },
        ).done;
        const after = await t.metrics.read();
        assert.equal(r.error, undefined, JSON.stringify(r.error));
        assert.equal(r.target.embedded, true);
        assert.equal(r.protocol.negotiated, 'h2');
        assert.equal(r.counts.ok, 40);
        // Every request crosses the link: nothing is faster than one RTT.
        assert.ok(r.latencyMs.min >= RTT_MS - 0.5, `min latency ${r.latencyMs.min} ms`);
        const view = serverViewOf(metricsDelta(before, after));
        assert.equal(view.requests, 40, 'the server counted what the client sent');
        assert.equal(view.bytesOut, r.throughput.bytesIn);
        // A process of its own: its CPU is the child's whole process, none of it the client's.
        assert.equal(view.cpuScope, 'process');
        assert.ok(view.cpuSeconds! > 0, `server CPU ${view.cpuSeconds} s`);
        assert.ok(view.eventLoopUtilization! > 0 && view.eventLoopUtilization! <= 1);
        assert.equal(t.failure(), undefined);
      } finally {
        await t.close();
      }
      assert.ok(!children().some((k) => k.argv.includes('server/target-entry')), 'close() ended the child');
    } finally {
      await link.close();
    }
  });

  it('in a private namespace (where Chromium runs): 127.0.0.1 there, unreachable here, metrics over IPC', async () => {
    const net = await browserNetwork(undefined);
    try {
      assert.ok(net.serverNamespace && net.netns, 'a private namespace as root');
      const t = await startFixtureTarget({ poolSize: 2, tileMs: 5 }, { namespace: net.serverNamespace });
      try {
        assert.equal(t.placement, 'namespace');
        assert.equal(new URL(t.plainUrl!).hostname, '127.0.0.1');
        // Not this host's 127.0.0.1: nothing answers there on that port.
        const here = await fetch(`${t.plainUrl}/metrics?format=json`).then(
          (r) => `answered ${r.status}`,
          () => 'unreachable',
        );
        assert.equal(here, 'unreachable');
        // From inside the namespace a client reaches it, and the metrics (read over IPC) count it.
        await t.metrics.reset();
        const before = await t.metrics.read();
        execFileSync('ip', [
          'netns',
          'exec',
          net.netns,
          'curl',
          '-sf',
          '-o',
          '/dev/null',
          `${t.plainUrl}/tiles/1/0/0`,
        ]);
        const view = serverViewOf(metricsDelta(before, await t.metrics.read()));
        assert.equal(view.requests, 1);
        assert.equal(t.metrics.owned, true);
      } finally {
        await t.close();
      }
      await assert.rejects(t.metrics.read(), /could not be read/);
    } finally {
      await net.close();
    }
  });

  it('runLoadThroughLink: the load behind a link, the link and the server view in the result', async () => {
    let seen: string[] = [];
    const run = runLoadThroughLink(
      { protocol: 'h1', requests: 30, concurrency: 3, seed: 7, url: '/bytes/2048' },
      { profile: { rttMs: RTT_MS }, backend: 'relay', initialCwnd: 4 },
      { onLink: () => (seen = children().map((k) => k.argv)) },
    );
    const r = await run.done;
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.ok(!seen.some((a) => a.includes('cli/main')), seen.join('\n'));
    assert.ok(
      seen.some((a) => a.includes('server/target-entry')),
      seen.join('\n'),
    );
    assert.equal(r.environment.link?.rttMs, RTT_MS);
    assert.equal(r.environment.link?.seed, 7, "the load's seed seeds the link");
    assert.equal(r.environment.link?.initialCwnd, 4);
    assert.equal(r.target.embedded, true);
    assert.match(r.target.url, /^https:\/\/198\.1[89]\.\d+\.\d+:\d+\/bytes\/2048$/);
    assert.equal(r.server?.requests, 30);
    assert.ok(r.latencyMs.min >= RTT_MS - 0.5, `min latency ${r.latencyMs.min} ms`);
    // Another server's URL goes through the link's gateway; a dead one is told before any link.
    await assert.rejects(
      runLoadThroughLink({ url: 'http://127.0.0.1:9/' }, { profile: 'wan' }).done,
      (err: Error & { code?: string }) =>
        err.code === 'H2LAB_ERR_TARGET_UNREACHABLE' &&
        /127\.0\.0\.1:9 could not be reached/.test(err.message),
    );
  });
});

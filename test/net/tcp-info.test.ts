// TCP_INFO and the relay's per-flow drops through an emulated link, against the fixture server in
// the link's namespace: a reading per connection on both ends (h1 × 6 → six, h2 → one), nothing lost
// on a clean link, and on a lossy one the server's retransmissions agree with what the link dropped
// on each connection. Needs root and the native addon (skipped with the reason otherwise).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runLoad } from '../../src/load/index.ts';
import type { RunResult } from '../../src/model/run.ts';
import { attachLinkDrops, type LinkOptions } from '../../src/net/index.ts';
import { tcpFactSentences } from '../../src/report/tcp-facts.ts';
import { withLinkedTarget } from '../../src/server/index.ts';
import { netSkipReason } from './helpers.ts';

const skip = netSkipReason();
if (skip) console.log(`# net tcp-info tests skipped: ${skip}`);

/** h1 × 6 then h2 through one link, each `requests` × `path`, with the link's drops attached. */
async function h1AndH2(link: LinkOptions, path: string, requests: number): Promise<[RunResult, RunResult]> {
  return withLinkedTarget(link, async ({ link: l, target: fixture }) => {
    const out: RunResult[] = [];
    for (const protocol of ['h1', 'h2'] as const) {
      const r = await runLoad({
        protocol,
        connections: 6,
        concurrency: 6,
        requests,
        warmupMs: 0,
        url: `${fixture.tlsUrl}${path}`,
        ca: fixture.caFile,
        serverMetrics: true,
      }).done;
      assert.equal(r.error, undefined, JSON.stringify(r.error));
      attachLinkDrops(r, await l.stats());
      out.push(r);
    }
    return out as [RunResult, RunResult];
  });
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe('TCP facts through an emulated link', { skip }, () => {
  it('a clean 40 ms link: one reading per connection on each end (h1 × 6 → 6, h2 → 1), no retransmission, no drop', async () => {
    const [h1, h2] = await h1AndH2({ profile: { rttMs: 40 } }, '/bytes/128KiB', 12);
    for (const [r, n] of [
      [h1, 6],
      [h2, 1],
    ] as const) {
      const tcp = r.connections.tcp;
      assert.equal(tcp?.client?.connections, n, `${r.transport.name} client readings`);
      assert.equal(tcp?.server?.connections, n, `${r.transport.name} server readings`);
      assert.equal(tcp?.linkDrops?.connections, n);
      assert.equal(tcp.server.retransmittedSegments, 0);
      assert.equal(tcp.linkDrops.lossPackets + tcp.linkDrops.queuePackets, 0);
      // The kernel's smoothed RTT is the link's 40 ms plus a little host time.
      assert.ok(
        tcp.server.rttMs.median >= 39 && tcp.server.rttMs.median < 60,
        `rtt ${tcp.server.rttMs.median}`,
      );
      console.log(
        `# clean ${r.transport.name}: server cwnd Σ ${tcp.server.cwndSegments.sum} segments (${tcp.server.cwndBytesSum} B), RTT median ${tcp.server.rttMs.median} ms`,
      );
    }
    const said = tcpFactSentences(h1, h2);
    assert.ok(!said.some((s) => s.includes('retransmitted')), said.join('\n'));
    assert.ok(!said.some((s) => s.includes('dropped')), said.join('\n'));
  });

  it('a 40 ms link with 2% loss: every connection lost packets, and the server retransmitted about what the link dropped downstream', async () => {
    const [h1, h2] = await h1AndH2({ profile: { rttMs: 40, loss: 0.02 }, seed: 3 }, '/bytes/256KiB', 12);
    for (const r of [h1, h2]) {
      const tcp = r.connections.tcp!;
      const drops = tcp.linkDrops!;
      const retrans = tcp.server!.retransmittedSegments;
      console.log(
        `# 2% loss ${r.transport.name}: link dropped ${drops.downPackets} down / ${drops.upPackets} up, per connection ${drops.perConnection.map((c) => c.lossDown + c.lossUp).join(', ')}; server retransmitted ${retrans} of ${tcp.server!.segmentsOut} segments`,
      );
      for (const c of drops.perConnection) assert.ok(c.lossUp + c.lossDown > 0, `no drop on ${c.clientPort}`);
      assert.equal(drops.queuePackets, 0, 'no rate limit, no queue');
      assert.ok(retrans > 0);
      // Each data segment dropped downstream is sent again once; a dropped retransmission counts twice
      // in both, a spurious retransmission (an ACK lost upstream) only on the server.
      assert.ok(
        Math.abs(retrans - drops.downPackets) <= 0.5 * drops.downPackets + 5,
        `${retrans} vs ${drops.downPackets}`,
      );
      const perConn = sum(tcp.server!.perConnection.map((c) => c.retransmittedSegments));
      assert.equal(perConn, retrans);
    }
    const said = tcpFactSentences(h1, h2);
    console.log(`# ${said.join('\n# ')}`);
    assert.ok(
      said.some(
        (s) =>
          s.startsWith('the server retransmitted') &&
          s.includes("on h2's connection each loss held back every stream"),
      ),
      said.join('\n'),
    );
    assert.ok(said.some((s) => s.startsWith('the emulated link dropped')));
  });
});

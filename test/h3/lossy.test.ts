// h3 and h2 through the same lossy emulated link (the TUN relay forwards IP packets, so QUIC's UDP
// crosses the same delay and loss as TCP): both complete every request, and each result records its
// loss — TCP's from the kernel and the link's per-connection drops, QUIC's from the link's UDP flows.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatBytes } from '../../src/core/index.ts';
import { runLoadThroughLink } from '../../src/load/index.ts';
import { parseRunResult, type RunResult } from '../../src/model/index.ts';
import { controllerWindowSentence, headOfLineSentence } from '../../src/report/tcp-facts.ts';
import { testHome } from '../helpers/fixture.ts';
import { netSkipReason } from '../net/helpers.ts';
import { h3SkipReason } from './helpers.ts';

const skip = netSkipReason() ?? (await h3SkipReason());
if (skip) console.log(`# h3 lossy-link test skipped: ${skip}`);

// 40 ms RTT, 2 % loss each way: at ~100 packets per protocol a few are lost (seeded, so the same
// ones every time); bounded by count (80 requests) and the run's own timeouts.
// TCP pinned to BBR, so its controller differs from QUIC's (the binding's CUBIC) whatever the host's.
const LINK = {
  profile: { rttMs: 40, loss: 0.02 },
  backend: 'relay' as const,
  congestionControl: 'bbr' as const,
};

describe('h2 and h3 through a lossy relay link', { skip }, () => {
  const results = new Map<string, RunResult>();
  for (const protocol of ['h2', 'h3']) {
    it(`${protocol}: every request completes and the result records the loss`, async () => {
      testHome();
      const r = parseRunResult(
        JSON.parse(
          JSON.stringify(
            await runLoadThroughLink(
              { protocol, requests: 80, concurrency: 8, seed: 3, url: '/bytes/20000' },
              LINK,
            ).done,
          ),
        ),
      );
      assert.equal(r.error, undefined, JSON.stringify(r.error));
      assert.equal(r.counts.ok, 80);
      assert.equal(r.server?.requests, 80, 'the server in the namespace saw each once');
      assert.equal(r.environment.link?.loss, 0.02);
      assert.equal(r.protocol.negotiated, protocol);
      results.set(protocol, r);
      if (protocol === 'h3') {
        const q = r.connections.quic;
        assert.ok(q?.linkDrops, 'QUIC drops from the link');
        assert.ok(q.linkDrops.flows >= 1);
        assert.ok(q.linkDrops.lossPackets > 0, `lost ${q.linkDrops.lossPackets} of ~${q.packetsSent} sent`);
        assert.ok(q.rttMs.median >= 35, `QUIC's RTT ${q.rttMs.median} ms sees the link`);
      } else {
        const d = r.connections.tcp?.linkDrops;
        assert.ok(d, 'TCP drops from the link');
        assert.ok(d.lossPackets > 0, `lost ${d.lossPackets}`);
      }
    });
  }

  it("the verdict's head-of-line sentence: each side's drops as measured, all streams against one", () => {
    const h2 = results.get('h2');
    const h3 = results.get('h3');
    assert.ok(h2 && h3, 'both runs above completed');
    const lostH2 = h2.connections.tcp!.linkDrops!.lossPackets + h2.connections.tcp!.linkDrops!.queuePackets;
    const lostH3 = h3.connections.quic!.linkDrops!.lossPackets + h3.connections.quic!.linkDrops!.queuePackets;
    const s = headOfLineSentence(h2, h3);
    if (Math.max(lostH2, lostH3) < 5) {
      assert.equal(s, undefined, 'nothing to say below the threshold');
      return;
    }
    assert.ok(s, 'said');
    assert.ok(s.includes(`dropped ${lostH2} packet`), s);
    assert.ok(s.includes(`and ${lostH3} of h3's`), s);
    assert.ok(s.includes(`up to ${h2.connections.peakStreamsPerConnection} streams`), s);
    assert.match(s, /only the stream whose data it carried/);
  });

  it("the congestion windows of QUIC's and TCP's senders, said only where their controllers differ", () => {
    const h2 = results.get('h2');
    const h3 = results.get('h3');
    assert.ok(h2 && h3, 'both runs above completed');
    assert.equal(h2.environment.link?.congestionControl, 'bbr');
    const quic = h3.connections.quic?.server;
    assert.ok(quic?.cwndBytes, "the QUIC server's windows were read");
    assert.equal(quic.congestionControl, 'cubic');
    const tcp = h2.connections.tcp!.server!;
    const tw = tcp.cwndBytesSum / tcp.connections;
    const qw = quic.cwndBytes.median;
    const s = controllerWindowSentence([h2], [h3]);
    if (Math.max(tw, qw) / Math.min(tw, qw) < 1.5) assert.equal(s, undefined, `${tw} against ${qw}`);
    else {
      assert.ok(s, 'said');
      assert.ok(s.includes(`window of ${formatBytes(qw)}`), s);
      assert.ok(s.includes(`against ${formatBytes(tw)}`), s);
      assert.match(
        s,
        /\(cubic, the binding's, user space\).*\(bbr, the kernel's\).*under the link's 2% loss/,
      );
    }
    // A QUIC window a quarter of TCP's is said, with the ratio; the same controller on both says nothing.
    const small = structuredClone(h3);
    small.connections.quic!.server!.cwndBytes = { median: tw / 4, max: tw / 4 };
    assert.match(controllerWindowSentence([h2], [small]) ?? '', /4\.0× smaller under the link's 2% loss/);
    const same = structuredClone(h2);
    same.environment.link!.congestionControl = 'cubic';
    assert.equal(controllerWindowSentence([same], [small]), undefined);
  });
});

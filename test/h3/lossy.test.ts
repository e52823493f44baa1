// h3 and h2 through the same lossy emulated link (the TUN relay forwards IP packets, so QUIC's UDP
// crosses the same delay and loss as TCP): both complete every request, and each result records its
// loss — TCP's from the kernel and the link's per-connection drops, QUIC's from the link's UDP flows.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadBinding } from '../../src/h3/index.ts';
import { runLoadThroughLink } from '../../src/load/index.ts';
import { parseRunResult } from '../../src/model/index.ts';
import { testHome } from '../helpers/fixture.ts';
import { netSkipReason } from '../net/helpers.ts';

const skip =
  netSkipReason() ??
  (await loadBinding().then(
    () => undefined,
    (err: Error) => err.message,
  ));
if (skip) console.log(`# h3 lossy-link test skipped: ${skip}`);

// 40 ms RTT, 2 % loss each way: at ~100 packets per protocol a few are lost (seeded, so the same
// ones every time); bounded by count (80 requests) and the run's own timeouts.
const LINK = { profile: { rttMs: 40, loss: 0.02 }, backend: 'relay' as const };

describe('h2 and h3 through a lossy relay link', { skip }, () => {
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
});

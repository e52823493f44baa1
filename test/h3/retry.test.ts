// Retry as a recorded choice: the fixture's QUIC server answers without Retry unless --quic-retry
// asks for it, and a run through a 60 ms link records which — from the server's own /metrics — with
// the handshake the client's stack timed: 1 round trip without Retry, 2 with. The settings block
// says both.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareOptionsFromFlags } from '../../src/cli/compare.ts';
import { runLoadThroughLink } from '../../src/load/index.ts';
import { runSettings } from '../../src/report/settings.ts';
import { testHome } from '../helpers/fixture.ts';
import { netSkipReason } from '../net/helpers.ts';
import { h3SkipReason } from './helpers.ts';

const skip = netSkipReason() ?? (await h3SkipReason());
if (skip) console.log(`# h3 Retry test skipped: ${skip}`);

const RTT = 60;

describe('QUIC Retry, off by default, on with --quic-retry', { skip }, () => {
  it('compare takes --quic-retry', () => {
    assert.equal(compareOptionsFromFlags(undefined, { out: 'x', quicRetry: true }).quicRetry, true);
  });

  for (const quicRetry of [false, true]) {
    it(`quicRetry ${quicRetry}: ${quicRetry ? 2 : 1} round trip(s) to set up, recorded and said`, async () => {
      testHome();
      const r = await runLoadThroughLink(
        { protocol: 'h3', requests: 2, concurrency: 1, url: '/bytes/1024', quicRetry },
        { profile: { rttMs: RTT }, backend: 'relay' },
      ).done;
      assert.equal(r.error, undefined, JSON.stringify(r.error));
      const q = r.connections.quic;
      assert.ok(q?.server, "the fixture's QUIC facts");
      assert.equal(q.server.retry, quicRetry, 'the server says whether it sent a Retry');
      // The client's stack times its handshake from before its first packet (the binding's set-up,
      // measured 7–42 ms), so its ratio sits above the round trips: 1.35–1.4 without Retry and
      // 2.05–2.9 with it at 60 ms, five runs each.
      const trips = q.perConnection[0]!.handshakeMs / RTT;
      if (quicRetry) assert.ok(trips >= 1.9, `handshake ${trips.toFixed(2)} round trips`);
      else assert.ok(trips >= 0.9 && trips < 1.75, `handshake ${trips.toFixed(2)} round trips`);
      const row = runSettings(r).find((s) => s.name === 'QUIC');
      assert.ok(row, 'a QUIC line in the settings');
      assert.match(
        row.value,
        quicRetry ? /Retry on \(--quic-retry\): 2 round trips/ : /no Retry: 1 round trip/,
      );
      assert.match(row.value, /by the client's stack \(\d\.\d round trips\)/);
      assert.ok(!runSettings(r).some((s) => s.name === 'Nagle'), 'no TCP setting for a QUIC-only run');
    });
  }
});

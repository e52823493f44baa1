// tcpFactSentences: a sentence with its numbers for each material difference between two runs' TCP
// facts, and none below the thresholds. The runs are real (a short loopback run each); their
// `connections.tcp` is then set to the facts each case needs, so every threshold is crossed exactly.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { runLoad } from '../../src/load/index.ts';
import type { RunResult, TcpConnectionInfo, TcpFacts } from '../../src/model/run.ts';
import { summarizeTcp } from '../../src/net/tcp-info.ts';
import { renderRunText } from '../../src/report/run-text.ts';
import { representativeRun, TCP_FACT_THRESHOLDS, tcpFactSentences } from '../../src/report/tcp-facts.ts';

let h1Base: RunResult;
let h2Base: RunResult;

before(async () => {
  const run = (protocol: 'h1' | 'h2') =>
    runLoad({ protocol, connections: 6, concurrency: 6, requests: 12, url: '/bytes/1024' }).done;
  h1Base = await run('h1');
  h2Base = await run('h2');
});

const conn = (clientPort: number, over: Partial<TcpConnectionInfo> = {}): TcpConnectionInfo => ({
  clientPort,
  serverPort: 443,
  readAt: 'close',
  cwndSegments: 10,
  mssBytes: 1448,
  rttMs: 40,
  rttVarMs: 5,
  retransmittedSegments: 0,
  lostSegments: 0,
  consecutiveTimeouts: 0,
  caState: 'open',
  segmentsOut: 1000,
  segmentsIn: 500,
  busyMs: 1000,
  rwndLimitedMs: 0,
  ...over,
});

/** A copy of `base` whose server (and client) side holds `n` connections made by `each`. */
function withTcp(
  base: RunResult,
  n: number,
  each: (i: number) => Partial<TcpConnectionInfo>,
  extra: Partial<TcpFacts> = {},
) {
  const r = structuredClone(base);
  const list = Array.from({ length: n }, (_, i) => conn(40000 + i, each(i)));
  r.connections.tcp = { client: summarizeTcp(list)!, server: summarizeTcp(list)!, ...extra };
  return r;
}

describe('tcpFactSentences', () => {
  it('nothing to say when the facts are alike, or when a run has none', () => {
    const a = withTcp(h1Base, 6, () => ({}));
    const b = withTcp(h2Base, 6, () => ({}));
    assert.deepEqual(tcpFactSentences(a, b), []);
    const none = structuredClone(h2Base);
    delete none.connections.tcp;
    assert.deepEqual(tcpFactSentences(a, none), []);
  });

  it('six windows against one: the sums, the segments, and whose windows they are', () => {
    const h1 = withTcp(h1Base, 6, () => ({ cwndSegments: 50 }));
    const h2 = withTcp(h2Base, 1, () => ({ cwndSegments: 60 }));
    const [s] = tcpFactSentences(h1, h2);
    assert.equal(
      s,
      "h1's six connections held six congestion windows at the end (the server's, carrying the responses): six (sum 424 KiB, 300 segments) against h2's one (84.8 KiB, 60 segments)",
    );
    // Only the client's end known, on a download: the client's windows carried requests, so silent.
    const clientOnly = (r: RunResult) => {
      const c = structuredClone(r);
      delete c.connections.tcp!.server;
      return c;
    };
    assert.ok(!tcpFactSentences(clientOnly(h1), clientOnly(h2)).some((x) => x.includes('congestion window')));
    // Below the ratio: silent.
    const close = withTcp(h2Base, 1, () => ({
      cwndSegments: Math.ceil(300 / TCP_FACT_THRESHOLDS.cwndRatio) + 1,
    }));
    assert.ok(!tcpFactSentences(h1, close).some((x) => x.includes('congestion window')));
  });

  it('a run of several bursts compares its windows per burst, not summed across bursts', () => {
    const h1 = withTcp(h1Base, 18, () => ({ cwndSegments: 50 }));
    h1.burst = {
      requests: 6,
      bursts: 3,
      handshakes: 'include',
      completionMs: 100,
      failed: 0,
      connectionsOpened: 18,
      perBurst: [],
    };
    const h2 = withTcp(h2Base, 3, () => ({ cwndSegments: 60 }));
    h2.burst = {
      requests: 6,
      bursts: 3,
      handshakes: 'include',
      completionMs: 100,
      failed: 0,
      connectionsOpened: 3,
      perBurst: [],
    };
    const [s] = tcpFactSentences(h1, h2);
    assert.equal(
      s,
      "h1's six connections held six congestion windows at the end (the server's, carrying the responses; per burst, the mean of 3 bursts): six (sum 424 KiB, 300 segments) against h2's one (84.8 KiB, 60 segments)",
    );
  });

  it('retransmissions: counts per connection, the share of segments, and head-of-line blocking on the multiplexed one', () => {
    const h1 = withTcp(h1Base, 6, (i) => ({ retransmittedSegments: i, cwndSegments: 10 }));
    const h2 = withTcp(h2Base, 1, () => ({ retransmittedSegments: 14, segmentsOut: 1400, cwndSegments: 60 }));
    const said = tcpFactSentences(h1, h2).find((x) => x.includes('retransmitted'));
    assert.equal(
      said,
      "the server retransmitted 15 segments on h1's six connections (0, 1, 2, 3, 4, 5), 0.25% of 6000 sent, and 14 on h2's one connection, 1.0% of 1400 sent; on h2's connection each loss held back every stream until its retransmission arrived, about one RTT (40.0 ms; losses in one round trip share it)",
    );
    // Fewer than minRetransmits on both sides: silent.
    const few = withTcp(h2Base, 1, () => ({ retransmittedSegments: TCP_FACT_THRESHOLDS.minRetransmits - 1 }));
    const clean = withTcp(h1Base, 6, () => ({}));
    assert.ok(!tcpFactSentences(clean, few).some((x) => x.includes('retransmitted')));
  });

  it("the link's drops, per connection and by cause", () => {
    const drops = (perConn: number[], queue = 0): TcpFacts['linkDrops'] => ({
      connections: perConn.length,
      lossPackets: perConn.reduce((a, b) => a + b, 0),
      queuePackets: queue,
      upPackets: 0,
      downPackets: perConn.reduce((a, b) => a + b, 0) + queue,
      perConnection: perConn.map((n, i) => ({
        clientPort: 40000 + i,
        lossUp: 0,
        lossDown: n,
        queueUp: 0,
        queueDown: i === 0 ? queue : 0,
      })),
    });
    const h1 = withTcp(h1Base, 6, () => ({}), { linkDrops: drops([1, 0, 2, 0, 1, 1]) });
    const h2 = withTcp(h2Base, 1, () => ({ cwndSegments: 60 }), { linkDrops: drops([9], 3) });
    const said = tcpFactSentences(h1, h2).find((x) => x.startsWith('the emulated link'));
    assert.equal(
      said,
      "the emulated link dropped 5 packets of h1's six connections (1, 0, 2, 0, 1, 1), all by random loss; 12 packets of h2's one connection, 9 by random loss, 3 at the full queue",
    );
  });

  it('RTT inflation only beyond 1.5× and 5 ms', () => {
    const a = withTcp(h1Base, 6, () => ({ rttMs: 40 }));
    const b = withTcp(h2Base, 6, () => ({ rttMs: 90 }));
    assert.ok(tcpFactSentences(a, b).some((x) => x.includes('median smoothed RTT of 90.0 ms')));
    const small = withTcp(h2Base, 6, () => ({ rttMs: 44 }));
    assert.ok(!tcpFactSentences(a, small).some((x) => x.includes('RTT of')));
    // 1.5× of a loopback RTT is no queue worth naming.
    const lo = withTcp(h1Base, 6, () => ({ rttMs: 0.2 }));
    const lo2 = withTcp(h2Base, 6, () => ({ rttMs: 0.9 }));
    assert.ok(!tcpFactSentences(lo, lo2).some((x) => x.includes('RTT of')));
  });

  it("a sender held back by its peer's TCP receive window for a material share of its sending time", () => {
    const a = withTcp(h1Base, 6, () => ({ busyMs: 1000, rwndLimitedMs: 0 }));
    const b = withTcp(h2Base, 6, () => ({ busyMs: 1000, rwndLimitedMs: 500 }));
    assert.ok(
      tcpFactSentences(a, b).includes(
        "h2's server was limited by the client's TCP receive window for 50% of its sending time (the other run 0%)",
      ),
      tcpFactSentences(a, b).join('\n'),
    );
    const slight = withTcp(h2Base, 6, () => ({ busyMs: 1000, rwndLimitedMs: 100 }));
    assert.ok(!tcpFactSentences(a, slight).some((x) => x.includes('receive window')));
  });

  it("a cell's runs speak through the run with the median latency", () => {
    const runs = [30, 10, 20].map((p50, i) => {
      const r = withTcp(h2Base, 1, () => ({ cwndSegments: 60 + i }));
      r.latencyMs.p50 = p50;
      return r;
    });
    assert.equal(representativeRun(runs), runs[2]);
    const h1 = withTcp(h1Base, 6, () => ({ cwndSegments: 50 }));
    const [s] = tcpFactSentences([h1], runs);
    assert.match(s ?? '', /against h2's one \(87\.7 KiB, 62 segments\)/);
    assert.deepEqual(tcpFactSentences([], runs), []);
  });

  it('the run text shows each end and the drops', () => {
    const r = withTcp(h2Base, 1, () => ({ cwndSegments: 60, retransmittedSegments: 3 }));
    // Wide, so each row is one line to match; the default width (80) wraps values under themselves.
    const text = renderRunText(r, { width: 200 });
    assert.ok(
      renderRunText(r)
        .split('\n')
        .every((l) => [...l].length <= 80),
    );
    assert.match(
      text,
      /TCP, server side\s+1 read, cwnd at the end Σ 60 segments \(84\.8 KiB\), median 60, 3 retransmitted \(0\.30%\), RTT median 40\.0 ms/,
    );
    assert.match(text, /TCP, client side/);
  });
});

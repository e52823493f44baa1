// The relay's per-flow drop table and the joins that name a run's connections in it: packets built
// byte by byte (RFC 791 / RFC 9293 headers), no devices, no root.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serverTcpReadings, tcpFactsOf } from '../../src/load/tcp.ts';
import { FlowDropTable } from '../../src/net/flows.ts';
import { DOWN, UP } from '../../src/net/relay-trace.ts';
import { linkDropsFor, matchServerReadings, summarizeTcp, type TcpReading } from '../../src/net/tcp-info.ts';

/** An IPv4 packet of `len` bytes carrying a TCP (6) or UDP (17) header with these ports. */
function packet(o: {
  src: number[];
  dst: number[];
  sport: number;
  dport: number;
  proto?: number;
  len?: number;
}) {
  const len = o.len ?? 60;
  const b = Buffer.alloc(len + 8);
  const at = 8; // not at the slab's start, as in the relay
  b[at] = 0x45; // version 4, IHL 5
  b.writeUInt16BE(len, at + 2);
  b[at + 9] = o.proto ?? 6;
  b.set(o.src, at + 12);
  b.set(o.dst, at + 16);
  b.writeUInt16BE(o.sport, at + 20);
  b.writeUInt16BE(o.dport, at + 22);
  return { buf: b, offset: at, len };
}

const CLIENT = [198, 18, 0, 1];
const SERVER = [198, 18, 0, 2];

describe('FlowDropTable', () => {
  it('names both directions of a connection as one flow, from the client end, by cause', () => {
    const t = new FlowDropTable();
    const up = packet({ src: CLIENT, dst: SERVER, sport: 40000, dport: 443 });
    const down = packet({ src: SERVER, dst: CLIENT, sport: 443, dport: 40000 });
    t.drop(UP, 'loss', up.buf, up.offset, up.len);
    t.drop(DOWN, 'loss', down.buf, down.offset, down.len);
    t.drop(DOWN, 'loss', down.buf, down.offset, down.len);
    t.drop(DOWN, 'queue', down.buf, down.offset, down.len);
    const other = packet({ src: SERVER, dst: CLIENT, sport: 443, dport: 40001 });
    t.drop(DOWN, 'queue', other.buf, other.offset, other.len);
    assert.deepEqual(t.flows(), [
      {
        protocol: 6,
        clientAddress: '198.18.0.1',
        clientPort: 40000,
        serverAddress: '198.18.0.2',
        serverPort: 443,
        lossUp: 1,
        lossDown: 2,
        queueUp: 0,
        queueDown: 1,
      },
      {
        protocol: 6,
        clientAddress: '198.18.0.1',
        clientPort: 40001,
        serverAddress: '198.18.0.2',
        serverPort: 443,
        lossUp: 0,
        lossDown: 0,
        queueUp: 0,
        queueDown: 1,
      },
    ]);
    assert.equal(t.untracked, 0);
  });

  it('is bounded: drops of flows past the bound, and of what is not IPv4, count as untracked', () => {
    const t = new FlowDropTable(2);
    for (const port of [1, 2, 3, 3]) {
      const p = packet({ src: CLIENT, dst: SERVER, sport: port, dport: 80 });
      t.drop(UP, 'loss', p.buf, p.offset, p.len);
    }
    const v6 = Buffer.alloc(60);
    v6[0] = 0x60;
    t.drop(UP, 'loss', v6, 0, 60);
    assert.equal(t.flows().length, 2);
    assert.equal(t.untracked, 3);
  });

  it('ICMP and UDP get their own flows (ICMP without ports)', () => {
    const t = new FlowDropTable();
    const icmp = packet({ src: CLIENT, dst: SERVER, sport: 0x0800, dport: 0, proto: 1 });
    const udp = packet({ src: CLIENT, dst: SERVER, sport: 5000, dport: 53, proto: 17 });
    t.drop(UP, 'loss', icmp.buf, icmp.offset, icmp.len);
    t.drop(UP, 'loss', udp.buf, udp.offset, udp.len);
    const f = t.flows();
    assert.deepEqual(
      f.map((x) => [x.protocol, x.clientPort, x.serverPort]),
      [
        [1, 0, 0],
        [17, 5000, 53],
      ],
    );
  });
});

const reading = (clientPort: number, over: Partial<TcpReading> = {}): TcpReading => ({
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
  segmentsOut: 100,
  segmentsIn: 50,
  atEpochMs: 1000,
  ...over,
});

describe('joining a run’s connections', () => {
  it('the server reading of each client connection: same ports, taken during the run, the latest', () => {
    const client = [reading(40000), reading(40001)];
    const server = [
      reading(40000, { atEpochMs: 500, cwndSegments: 1 }), // an earlier run on the same port
      reading(40000, { atEpochMs: 1500, cwndSegments: 20, readAt: 'open' }),
      reading(40000, { atEpochMs: 1600, cwndSegments: 30 }),
      reading(40001, { serverPort: 8080, atEpochMs: 1600 }), // the other listener: not this connection
      reading(50000, { atEpochMs: 1600 }), // a metrics scrape
    ];
    const m = matchServerReadings(client, server, 1000);
    assert.deepEqual(
      m.map((r) => [r.clientPort, r.cwndSegments]),
      [[40000, 30]],
    );
  });

  it("the link's drops per connection, zeros where the link dropped nothing, TCP flows only", () => {
    const flows = [
      {
        protocol: 6,
        clientAddress: 'c',
        clientPort: 40000,
        serverAddress: 's',
        serverPort: 443,
        lossUp: 1,
        lossDown: 4,
        queueUp: 0,
        queueDown: 2,
      },
      {
        protocol: 17,
        clientAddress: 'c',
        clientPort: 40001,
        serverAddress: 's',
        serverPort: 443,
        lossUp: 9,
        lossDown: 9,
        queueUp: 0,
        queueDown: 0,
      },
    ];
    const d = linkDropsFor([reading(40000), reading(40001)], flows);
    assert.deepEqual(d, {
      connections: 2,
      lossPackets: 5,
      queuePackets: 2,
      upPackets: 1,
      downPackets: 6,
      perConnection: [
        { clientPort: 40000, lossUp: 1, lossDown: 4, queueUp: 0, queueDown: 2 },
        { clientPort: 40001, lossUp: 0, lossDown: 0, queueUp: 0, queueDown: 0 },
      ],
    });
    assert.equal(linkDropsFor([reading(40000)], undefined), undefined, 'no flow table (netem): no facts');
  });

  it('a summary: sums and medians over every reading, at most 64 listed, nothing when nothing was read', () => {
    const rs = Array.from({ length: 70 }, (_, i) =>
      reading(40000 + i, { cwndSegments: i + 1, retransmittedSegments: i % 2, rttMs: 40 + i }),
    );
    const s = summarizeTcp(rs, 3)!;
    assert.equal(s.connections, 70);
    assert.equal(s.unread, 3);
    assert.equal(s.cwndSegments.sum, (70 * 71) / 2);
    assert.equal(s.cwndSegments.median, 35.5);
    assert.equal(s.cwndSegments.max, 70);
    assert.equal(s.cwndBytesSum, ((70 * 71) / 2) * 1448);
    assert.equal(s.retransmittedSegments, 35);
    assert.equal(s.segmentsOut, 7000);
    assert.equal(s.rttMs.median, 74.5);
    assert.equal(s.perConnection.length, 64);
    assert.equal(s.perConnectionOmitted, 6);
    assert.ok(!('atEpochMs' in s.perConnection[0]!), 'the reading time stays out of results');
    assert.equal(summarizeTcp([]), undefined);
  });

  it('no client readings (not Linux, no addon): no TCP facts at all, whatever the server says', () => {
    const transport = {
      opened: 1,
      inFlight: 0,
      peakInFlight: 1,
      peakStreamsPerConnection: 1,
      capHits: 0,
      requestsPerConnection: { mean: 1, max: 1, connections: 1, requests: 1 },
    };
    const metrics = { tcp: { connections: [reading(40000)], unread: 0 } };
    assert.equal(tcpFactsOf([transport], metrics, 0), undefined);
    const facts = tcpFactsOf([{ ...transport, tcp: { readings: [reading(40000)], unread: 0 } }], metrics, 0);
    assert.equal(facts?.client?.connections, 1);
    assert.equal(facts?.server?.connections, 1);
  });

  it("a server's metrics: valid readings kept (unknown fields dropped), invalid ones left out", () => {
    const got = serverTcpReadings({
      tcp: { connections: [{ ...reading(1), futureField: 7 }, { clientPort: 'x' }], unread: 0 },
    });
    assert.equal(got?.length, 1);
    assert.ok(!('futureField' in got![0]!));
    assert.equal(serverTcpReadings({}), undefined);
  });
});

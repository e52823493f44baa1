/**
 * TCP_INFO per connection over real loopback sockets against the embedded fixture server: one
 * reading per client connection (h1 × 6 → six, h2 → one) and the server's reading of each, found by
 * client port in its /metrics. Needs Linux and the native addon; skipped with the reason otherwise.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import { observe, runLoad } from '../../src/load/index.ts';
import { runResultSchema } from '../../src/model/index.ts';
import { readTcpInfo, TcpLog, tcpInfoAvailable } from '../../src/net/tcp-info.ts';
import { metricsClient, metricsUrlOf } from '../../src/server/index.ts';
import { startFixture } from '../helpers/fixture.ts';

const skip = tcpInfoAvailable()
  ? undefined
  : 'TCP_INFO needs Linux and the native addon (npm run build:native)';
if (skip) console.log(`# tcp-info tests skipped: ${skip}`);

describe('TCP_INFO of a run’s connections (loopback, embedded fixture server)', { skip }, () => {
  const cases = [
    { protocol: 'h1', plain: false, client: 'h2lab', want: 6 },
    { protocol: 'h2', plain: false, client: 'h2lab', want: 1 },
    { protocol: 'h2', plain: true, client: 'node', want: 1 },
  ] as const;
  for (const c of cases) {
    it(`${c.protocol}${c.plain ? ' (h2c)' : ''} on the ${c.client} client: ${c.want} client reading(s), each matched by the server's`, async () => {
      const r = await runLoad({
        protocol: c.protocol,
        connections: 6,
        concurrency: 6,
        requests: 36,
        url: '/bytes/64KiB',
        h2Client: c.client,
        ...(c.plain ? { embeddedListener: 'plain' as const } : {}),
      }).done;
      assert.equal(r.error, undefined, JSON.stringify(r.error));
      const tcp = r.connections.tcp;
      assert.ok(tcp?.client, 'client readings');
      assert.equal(tcp.client.connections, c.want);
      assert.equal(tcp.client.perConnection.length, c.want);
      assert.ok(tcp.server, 'server readings from its /metrics');
      assert.equal(tcp.server.connections, c.want);
      const clientPorts = tcp.client.perConnection.map((x) => x.clientPort).sort();
      assert.deepEqual(tcp.server.perConnection.map((x) => x.clientPort).sort(), clientPorts);
      // The server sent the bodies: its acknowledged bytes cover them; the client's received bytes too.
      const acked = tcp.server.perConnection.reduce((a, x) => a + (x.bytesAcked ?? 0), 0);
      const received = tcp.client.perConnection.reduce((a, x) => a + (x.bytesReceived ?? 0), 0);
      assert.ok(acked >= 36 * 65536, `server acked ${acked}`);
      assert.ok(received >= 36 * 65536, `client received ${received}`);
      for (const x of [...tcp.client.perConnection, ...tcp.server.perConnection]) {
        assert.ok(x.cwndSegments > 0 && x.mssBytes > 0, JSON.stringify(x));
        // Loopback drops nothing, but a busy host can still fire tail-loss probes (seen: 1; 3 at load
        // average 14), which retransmit without a loss: the kernel's own count of lost segments is 0.
        assert.ok(x.retransmittedSegments <= 2 || x.lostSegments === 0, JSON.stringify(x));
      }
      assert.ok(runResultSchema.safeParse(r).success, 'the result still fits its schema');
    });
  }
});

describe('bursts', { skip }, () => {
  it("a run of three bursts on fresh connections reads every burst's connections (3 × 6 for h1)", async () => {
    const r = await runLoad({ protocol: 'h1', connections: 6, burst: 6, bursts: 3, url: '/bytes/16KiB' })
      .done;
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.equal(r.connections.opened, 18);
    assert.equal(r.connections.tcp?.client?.connections, 18);
    assert.equal(r.connections.tcp?.server?.connections, 18);
  });
});

describe('the server side for a caller that reads the metrics itself (compare)', { skip }, () => {
  it('observe matches the run’s connections in the server’s metrics', async () => {
    const srv = await startFixture();
    try {
      const r = await runLoad({
        protocol: 'h1',
        connections: 3,
        concurrency: 3,
        requests: 9,
        url: `${srv.plainUrl}/bytes/32KiB`,
        serverMetrics: false,
      }).done;
      assert.equal(r.connections.tcp?.client?.connections, 3);
      const before = r.connections.tcp?.server;
      assert.equal(before, undefined, 'serverMetrics: false reads nothing of the server');
      await observe(r, { metrics: { client: metricsClient(metricsUrlOf(srv.plainUrl!)) } });
      assert.equal(r.connections.tcp?.server?.connections, 3);
      assert.ok(runResultSchema.safeParse(r).success);
    } finally {
      await srv.close();
    }
  });
});

describe('TcpLog', { skip }, () => {
  it('reads a socket as it is destroyed, and the open ones on demand; a closed socket reads as nothing', async () => {
    const server = net.createServer((s) => {
      // The client destroys its end with data unread: the kernel answers with RST.
      s.on('error', () => {});
      s.end(Buffer.alloc(200_000));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    const log = new TcpLog('client');
    const connect = () =>
      new Promise<net.Socket>((resolve) => {
        const s = net.connect(port, '127.0.0.1', () => resolve(s));
        s.resume();
      });
    try {
      const a = await connect();
      const b = await connect();
      log.watch(a);
      log.watch(b);
      const clientPortA = a.localPort;
      assert.equal(log.readings().length, 2);
      assert.ok(log.readings().every((x) => x.readAt === 'open'));
      a.destroy();
      assert.equal(readTcpInfo(a, 'client'), undefined, 'no fd after destroy');
      const after = log.readings();
      assert.equal(after.length, 2);
      const closed = after.find((x) => x.readAt === 'close');
      assert.equal(closed?.clientPort, clientPortA);
      assert.equal(closed?.serverPort, port);
      b.destroy();
      assert.equal(log.unread, 0);
    } finally {
      server.close();
    }
  });

  it("the server's /metrics?format=json lists its connections with the client's port", async () => {
    const srv = await startFixture();
    try {
      const sock = await new Promise<net.Socket>((resolve) => {
        const u = new URL(srv.plainUrl!);
        const s = net.connect(Number(u.port), '127.0.0.1', () => resolve(s));
      });
      sock.write('GET /bytes/10 HTTP/1.1\r\nhost: x\r\n\r\n');
      await new Promise((r) => sock.once('data', r));
      const snap = srv.metrics();
      const mine = snap.tcp?.connections.find((x) => x.clientPort === sock.localPort);
      assert.ok(mine, JSON.stringify(snap.tcp));
      assert.equal(mine.readAt, 'open');
      assert.ok(mine.bytesAcked !== undefined && mine.bytesAcked > 10);
      sock.destroy();
    } finally {
      await srv.close();
    }
  });
});

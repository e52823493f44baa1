// HTTP/3 end to end over real UDP sockets on loopback: the fixture's h3 listener (same routes and
// counters as h1/h2, on the TLS port's number, advertised by Alt-Svc), the h3 and h3-pool strategies
// against it (GET, POST, the peer's stream limit, QUIC facts), a load run's result, Debian's ngtcp2
// client as a peer no one here wrote, and the path where the binding cannot load (a real failed
// import in a child process: compare's h3 cells are not-offered with the reason, h1 runs).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { request } from 'node:https';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { H3_BINDING_ENV } from '../../src/h3/index.ts';
import { runLoad } from '../../src/load/index.ts';
import { parseRunResult, type RequestSpec, type Sample } from '../../src/model/index.ts';
import { renderRunText } from '../../src/report/index.ts';
import type { RunningServer } from '../../src/server/index.ts';
import { createTransport, type Transport } from '../../src/transport/index.ts';
import { scrape, startFixture, testHome } from '../helpers/fixture.ts';
import { have, run } from '../helpers/peers.ts';
import { h3SkipReason } from './helpers.ts';

const binding = await h3SkipReason();
if (binding) console.log(`# h3 tests skipped: ${binding}`);

let seq = 0;
function send(tr: Transport, path: string, extra: Partial<RequestSpec> = {}): Promise<Sample> {
  const now = performance.now();
  return tr.request({ method: 'GET', path, ...extra }, { seq: seq++, intendedMs: now, queuedMs: now });
}

function https(url: string, ca: string): Promise<Record<string, string | string[] | undefined>> {
  return new Promise((resolve, reject) => {
    request(url, { ca }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.headers));
    })
      .on('error', reject)
      .end();
  });
}

describe('HTTP/3 against the fixture server', { skip: binding }, () => {
  let srv: RunningServer;
  before(async () => {
    srv = await startFixture({ h3: true, maxConcurrentStreams: 20 });
  });
  after(() => srv.close());

  test('h3 listens on the TLS port number over UDP, and the TLS listener advertises it', async () => {
    assert.ok(srv.h3Url, srv.h3Unavailable);
    assert.equal(new URL(srv.h3Url).port, new URL(srv.tlsUrl!).port);
    const h = await https(`${srv.tlsUrl}/bytes/10`, srv.caPem!);
    assert.equal(h['alt-svc'], `h3=":${new URL(srv.h3Url).port}"; ma=86400`);
  });

  test('a GET and a POST over h3: the client and the server count the same', async () => {
    srv.resetMetrics();
    const tr = createTransport('h3', { url: srv.h3Url!, connections: 1, tls: { ca: srv.caPem! } });
    await tr.open();
    try {
      const g = await send(tr, '/bytes/1000');
      assert.equal(g.error, undefined, g.errorDetail);
      assert.equal(g.status, 200);
      assert.equal(g.bytesIn, 1000);
      assert.equal(g.protocol, 'h3');
      assert.equal(tr.negotiated(), 'h3');
      const body = new Uint8Array(10_240).fill(65);
      const p = await send(tr, '/echo', { method: 'POST', body });
      assert.equal(p.error, undefined, p.errorDetail);
      assert.equal(p.status, 200);
      assert.equal(p.bytesOut, 10_240);
      assert.equal(p.bytesIn, 10_240, 'the echo streams the body back');
      const m = await scrape(srv);
      assert.equal(m.requests.bytes.h3, 1);
      assert.equal(m.requests.echo.h3, 1);
      assert.equal(m.responseBytes.bytes.h3, 1000);
      assert.equal(m.connections.total.quic.h3, 1, 'one QUIC connection');
    } finally {
      await tr.close();
    }
  });

  test("60 at once on one connection: the peer's stream limit (20) is learned and nothing fails", async () => {
    const tr = createTransport('h3', { url: srv.h3Url!, connections: 1, tls: { ca: srv.caPem! } });
    await tr.open();
    try {
      const before = (await scrape(srv)).requests.bytes.h3;
      const samples = await Promise.all(Array.from({ length: 60 }, (_, i) => send(tr, `/bytes/${i * 10}`)));
      for (const [i, s] of samples.entries()) {
        assert.equal(s.error, undefined, s.errorDetail);
        assert.equal(s.bytesIn, i * 10);
      }
      assert.equal((await scrape(srv)).requests.bytes.h3 - before, 60, 'the server saw each once');
      const st = tr.stats();
      assert.equal(new Set(samples.map((s) => s.connectionId)).size, 1);
      assert.equal(st.serverMaxConcurrentStreams, 20, 'the limit learned');
      assert.ok(st.peakStreamsPerConnection > 1, 'it multiplexes');
      const q = st.quic?.[0];
      assert.ok(q, 'a QUIC reading');
      assert.ok(q.handshakeMs > 0 && q.packetsSent > 0 && q.packetsReceived > 0 && q.cwndBytes > 0);
    } finally {
      await tr.close();
    }
  });

  test('h3-pool spreads requests over its connections', async () => {
    const tr = createTransport('h3-pool', { url: srv.h3Url!, connections: 3, tls: { ca: srv.caPem! } });
    await tr.open();
    try {
      const samples = await Promise.all(Array.from({ length: 30 }, () => send(tr, '/bytes/100')));
      for (const s of samples) assert.equal(s.error, undefined, s.errorDetail);
      assert.equal(new Set(samples.map((s) => s.connectionId)).size, 3);
      assert.equal(tr.stats().quic?.length, 3);
    } finally {
      await tr.close();
    }
  });

  test('h3 against a port with nothing on UDP fails to connect; an http:// URL is refused', async () => {
    assert.throws(
      () => createTransport('h3', { url: srv.plainUrl!, connections: 1 }),
      (err: Error & { code?: string }) =>
        err.code === 'H2LAB_ERR_INVALID_OPTION' && /https:/.test(err.message),
    );
    const udpless = createTransport('h3', {
      url: `https://127.0.0.1:${new URL(srv.plainUrl!).port}`,
      connections: 1,
      connectTimeoutMs: 500,
      tls: { ca: srv.caPem! },
    });
    await assert.rejects(udpless.open(), (err: Error & { code?: string }) => {
      assert.match(String(err.code), /TARGET_UNREACHABLE|TLS_HANDSHAKE/);
      return true;
    });
  });

  test('a certificate the client does not trust is named, with --ca and -k, not "unreachable"', async () => {
    const untrusted = createTransport('h3', { url: srv.h3Url!, connections: 1, connectTimeoutMs: 3000 });
    await assert.rejects(untrusted.open(), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'H2LAB_ERR_TLS_HANDSHAKE', err.message);
      assert.match(err.message, /certificate is not trusted.*--ca FILE.*-k/);
      return true;
    });
  });
});

describe('a load run over h3 (embedded fixture)', { skip: binding }, () => {
  test('records the negotiated h3, the QUIC facts and the congestion controller', async () => {
    testHome();
    const result = await runLoad({ protocol: 'h3', requests: 200, concurrency: 8 }).done;
    const r = parseRunResult(JSON.parse(JSON.stringify(result)));
    assert.equal(r.error, undefined, r.error?.message);
    assert.equal(r.protocol.negotiated, 'h3');
    assert.equal(r.counts.ok, 200);
    assert.equal(r.transport.quic?.congestionControl, 'cubic');
    assert.equal(r.transport.quic?.window?.preset, 'browser', 'the default window preset, recorded');
    assert.equal(r.transport.window, undefined, 'HTTP/2 windows are HTTP/2 runs’ only');
    assert.match(r.transport.quic?.binding ?? '', /@currentspace\/http3@/);
    assert.equal(r.connections.quic?.connections, 1);
    assert.ok((r.connections.quic?.packetsSent ?? 0) > 0);
    assert.equal(r.server?.requests, 200, 'the server saw every request');
    // The controller is the binding's documented default, and the result says that is how it is known.
    assert.match(
      r.transport.quic?.congestionControlSource ?? '',
      /^not readable from the binding \(no setter or getter\): the binding's documented default, quiche/,
    );
    // The server's side, read from its stack through /metrics and matched by the client's UDP port.
    const client = r.connections.quic!.perConnection[0]!;
    const server = r.connections.quic?.server;
    assert.ok(server, "the fixture's own reading of the connection");
    assert.equal(server.retry, false, 'no Retry by default');
    assert.equal(server.connections, 1);
    const s = server.perConnection[0]!;
    assert.equal(s.clientPort, client.clientPort);
    assert.ok(s.cwndBytes > 0 && s.rttMs >= 0);
    assert.ok(s.bytesSent >= 200 * 1024, `the server sent the responses: ${s.bytesSent} B`);
    assert.ok(s.packetsReceived <= client.packetsSent + 5, 'what the server received, the client sent');
    // bench's text gives a QUIC client QUIC's facts, not the kernel's TCP ones.
    const text = renderRunText(r, { width: 200 });
    assert.match(text, /QUIC, server side/);
    assert.match(text, /QUIC, client side/);
    assert.doesNotMatch(
      text,
      /TCP_NODELAY|TCP, client side|congestion control +(TCP )?(bbr|cubic|reno) \(the host's default/,
    );
  });
});

describe("Debian's ngtcp2 client (gtlsclient) against the fixture's h3 listener", { skip: binding }, () => {
  const peer = have('gtlsclient', '--help')
    ? undefined
    : 'gtlsclient (apt-get install ngtcp2-client) not found';
  if (peer) console.log(`# ngtcp2 interop skipped: ${peer}`);
  test('it negotiates h3 and receives the body', { skip: peer }, async () => {
    const srv = await startFixture({ h3: true });
    try {
      const port = new URL(srv.h3Url!).port;
      const r = await run('gtlsclient', [
        '--exit-on-all-streams-close',
        '--no-quic-dump',
        '127.0.0.1',
        port,
        `https://127.0.0.1:${port}/bytes/4096`,
      ]);
      const out = r.stdout + r.stderr;
      assert.equal(r.code, 0, out.slice(-2000));
      assert.match(out, /Negotiated ALPN is h3/);
      assert.match(out, /\[:status: 200\]/);
      assert.match(out, /body 4096 bytes|content-length: 4096/);
      assert.equal((await scrape(srv)).requests.bytes.h3, 1, 'the server counted it as h3');
    } finally {
      await srv.close();
    }
  });
});

describe('without the binding', () => {
  test("compare runs h1 and marks h3's cells not-offered with the loader's reason", () => {
    const child = fileURLToPath(new URL('./fixtures/compare-h1-h3.ts', import.meta.url));
    const r = spawnSync(process.execPath, ['--import', 'tsx', child], {
      env: { ...process.env, H2LAB_HOME: testHome(), [H3_BINDING_ENV]: '@h2lab/no-such-h3-binding' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr);
    const cells = JSON.parse(r.stdout.trim().split('\n').pop()!) as Array<{
      protocol: string;
      status: string;
      note?: string;
      code?: string;
    }>;
    const h1 = cells.filter((c) => c.protocol === 'h1');
    const h3 = cells.filter((c) => c.protocol !== 'h1');
    assert.ok(h1.length > 0 && h1.every((c) => c.status === 'done'), JSON.stringify(h1));
    assert.ok(h3.length > 0);
    for (const c of h3) {
      assert.equal(c.status, 'not-offered', JSON.stringify(c));
      assert.equal(c.code, 'H2LAB_ERR_H3_UNAVAILABLE');
      assert.match(c.note ?? '', /@h2lab\/no-such-h3-binding/);
    }
  });
});

/**
 * The load client under faults: every request it issues is accounted for, in the class
 * that says what went wrong, over real loopback sockets.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { test } from 'node:test';
import fc from 'fast-check';
import type { H2labError } from '../../src/core/index.ts';
import { runLoad } from '../../src/load/index.ts';
import { scrape, startFixture } from '../helpers/fixture.ts';
import { startMisbehaving } from '../helpers/misbehaving.ts';

/** The fixture's handler runs for one route, all protocols (its own count, from /metrics). */
async function handled(srv: Awaited<ReturnType<typeof startFixture>>, route: string): Promise<number> {
  const m = await scrape(srv);
  const row = (m.requests as Record<string, Record<string, number>>)[route] ?? {};
  return Object.values(row).reduce((a, b) => a + b, 0);
}

test('short-body: an HTTP/2 response shorter than its content-length is a protocol failure, not a 200', async () => {
  const s = await startMisbehaving('short-body');
  try {
    // node:http2's nghttp2 checks content-length itself and resets the stream (PROTOCOL_ERROR), which
    // reaches h2lab as a reset: a failure too, in a coarser class.
    for (const [protocol, h2Client, cls] of [
      ['h2', 'h2lab', 'protocol'],
      ['h2-pool', 'h2lab', 'protocol'],
      ['h2', 'node', 'reset'],
    ] as const) {
      const r = await runLoad({
        url: `${s.url}/`,
        protocol,
        h2Client,
        requests: 30,
        concurrency: 3,
        maxErrorRate: 1,
      }).done;
      const label = `${protocol}/${h2Client}: ${JSON.stringify(r.counts)}`;
      assert.equal(r.counts.total, 30, label);
      assert.equal(r.counts.ok, 0, label);
      assert.deepEqual(r.counts.byFailure, { [cls]: 30 }, label);
    }
  } finally {
    await s.close();
  }
});

test('-H values with CR or LF are refused at option parse, naming the header; nothing reaches the wire', async () => {
  let bytes = '';
  const server = net.createServer((s) => {
    s.on('data', (b: Buffer) => {
      bytes += b.toString('latin1');
      s.end('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  try {
    for (const value of ['a\r\nx-smuggled: 1', 'a\nb', 'a\rb', 'a\0b']) {
      await assert.rejects(
        async () => runLoad({ url, protocol: 'h1', requests: 1, headers: { 'x-note': value } }).done,
        (e: H2labError) => {
          assert.equal(e.code, 'H2LAB_ERR_INVALID_OPTION');
          assert.match(e.message, /x-note/);
          return true;
        },
        JSON.stringify(value),
      );
    }
    await assert.rejects(
      async () => runLoad({ url, protocol: 'h1', requests: 1, headers: { 'bad name': 'v' } }).done,
      /H2LAB_ERR_INVALID_OPTION|bad name/,
    );
    assert.equal(bytes, '', 'no request was written');
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test('REFUSED_STREAM: attempts count every send, equal to the streams the server saw', async () => {
  const s = await startMisbehaving('resets-stream');
  try {
    for (const protocol of ['h2', 'h2-pool'] as const) {
      const before = s.streams;
      const r = await runLoad({
        url: `${s.url}/refuse`,
        protocol,
        requests: 20,
        concurrency: 4,
        maxErrorRate: 1,
      }).done;
      assert.equal(r.counts.retried, 20);
      assert.equal(r.counts.attempts, 60, JSON.stringify(r.counts));
      assert.equal(s.streams - before, r.counts.attempts);
      assert.equal(r.counts.unprocessed ?? 0, 0);
    }
  } finally {
    await s.close();
  }
});

test('/goaway on every response: h2 and h2-pool retry every stream the server did not process, and none is lost', async () => {
  const srv = await startFixture({ tls: false });
  try {
    for (const protocol of ['h2', 'h2-pool'] as const) {
      const before = await handled(srv, 'goaway');
      const r = await runLoad({
        url: `${srv.plainUrl}/goaway`,
        protocol,
        requests: 1000,
        concurrency: 16,
        maxErrorRate: 1,
      }).done;
      const ran = (await handled(srv, 'goaway')) - before;
      const label = `${protocol}: ${JSON.stringify(r.counts)}, server ran ${ran}`;
      assert.equal(r.counts.total, 1000, label);
      assert.deepEqual(r.counts.byFailure, {}, label);
      assert.equal(r.counts.ok, 1000, label);
      assert.equal(ran, 1000, `each request ran exactly once on the server: ${label}`);
      // Every attempt is counted: the ones GOAWAY named unprocessed never reached a handler.
      assert.ok((r.counts.attempts ?? 0) >= 1000 + (r.counts.retried ?? 0), label);
      assert.equal((r.counts.attempts ?? 0) - (r.counts.unprocessed ?? 0), ran, label);
      assert.ok((r.counts.unprocessed ?? 0) > 0, label);
    }
  } finally {
    await srv.close();
  }
});

test('a 1.5 s outage: reconnects back off, so connect failures count attempts, not spins', async () => {
  const sockets = new Set<net.Socket>();
  let handled = 0;
  let outage: NodeJS.Timeout | undefined;
  // The outage begins once the run is under way (the server's 200th request), not at a fixed time a
  // busy machine may reach before the run has sent anything; it lasts 1.5 s.
  const goDown = (): void => {
    srv.close();
    for (const s of sockets) s.destroy();
    outage = setTimeout(() => {
      srv = make();
      srv.listen(port, '127.0.0.1');
    }, 1500);
  };
  const make = (): http.Server => {
    const srv = http.createServer((_req, res) => {
      if (++handled === 200) setImmediate(goDown);
      res.end('ok');
    });
    srv.on('connection', (s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    return srv;
  };
  let srv = make();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  try {
    const r = await runLoad({
      url: `http://127.0.0.1:${port}/`,
      protocol: 'h1',
      connections: 4,
      concurrency: 4,
      // A count, not a duration: the run outlasts the outage however slowly this machine runs it.
      requests: 5000,
      maxErrorRate: 1,
    }).done;
    const connect = r.counts.byFailure.connect ?? 0;
    console.log(`# outage: ${JSON.stringify(r.counts)}, server handled ${handled}`);
    const label = `${JSON.stringify(r.counts)}, server handled ${handled}`;
    // Per slot, a 1.5 s outage with a 50 ms base doubling to 1 s is at most ~7 attempts.
    assert.ok(connect > 0 && connect <= 4 * 10, `connect failures ${connect}: ${label}`);
    assert.ok(r.counts.ok > 0, `it recovered after the outage: ${label}`);
    assert.equal(r.counts.total, r.counts.ok + Object.values(r.counts.byFailure).reduce((a, b) => a + b, 0));
    assert.equal(r.transport.reconnect?.maxMs, 1000, 'the backoff is recorded');
    // The outage itself: one period, from the first failed attempt to the reconnection, about 1.5 s:
    // less the time the client took to see its sockets go, plus up to the backoff's last delay (the
    // cap the run records), with the requests that failed meanwhile.
    const periods = r.connections.outages?.periods ?? [];
    assert.equal(periods.length, 1, JSON.stringify(r.connections.outages));
    const o = periods[0]!;
    assert.ok(o.endMs !== undefined, 'it ended');
    const lasted = o.endMs! - o.startMs;
    const cap = r.transport.reconnect!.maxMs;
    assert.ok(lasted >= 1000 && lasted <= 1500 + 1.5 * cap, `lasted ${lasted} ms (backoff cap ${cap} ms)`);
    assert.ok(
      o.failedRequests > 0 && o.failedRequests <= r.counts.failed,
      `${o.failedRequests} of ${r.counts.failed}`,
    );
  } finally {
    if (outage) clearTimeout(outage);
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => srv.close(() => r()));
  }
});

/** Every handler run the fixture counted, all routes and protocols. */
async function handledAll(srv: Awaited<ReturnType<typeof startFixture>>): Promise<number> {
  const m = await scrape(srv);
  let n = 0;
  for (const row of Object.values(m.requests as Record<string, Record<string, number>>))
    for (const v of Object.values(row)) n += v;
  return n;
}

test('property: under a random schedule of fault routes every request is accounted for, and every attempt the server ran', async () => {
  const srv = await startFixture({ tls: false });
  const routes = [
    '/',
    '/bytes/100',
    '/reset',
    '/reset?after=headers',
    '/goaway',
    '/hang',
    '/slow-headers?ms=30',
  ];
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('h1', 'h2', 'h2-pool'),
        fc.array(fc.constantFrom(...routes), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 5, max: 40 }),
        fc.integer({ min: 1, max: 6 }),
        async (protocol, paths, requests, concurrency) => {
          const before = await handledAll(srv);
          const r = await runLoad({
            url: `${srv.plainUrl}/`,
            protocol,
            paths,
            requests,
            concurrency,
            timeoutMs: 200,
            maxErrorRate: 1,
          }).done;
          // The scrape itself is one handler run (/metrics), counted after `before` was read.
          const ran = (await handledAll(srv)) - before - 1;
          const c = r.counts;
          const label = `${protocol} ${JSON.stringify(paths)} n=${requests} c=${concurrency}: ${JSON.stringify(c)}, server ran ${ran}`;
          const failures = Object.values(c.byFailure).reduce((a, b) => a + b, 0);
          assert.equal(c.total, requests, label);
          const responses = Object.values(c.byStatus).reduce((a, b) => a + b, 0);
          // total = responses (by status) + failures (by class): none lost, none counted twice.
          assert.equal(c.total, responses + failures, label);
          assert.equal(c.ok + c.failed, c.total, label);
          assert.equal((c.attempts ?? 0) - (c.unprocessed ?? 0), ran, label);
        },
      ),
      { numRuns: 15, seed: 17 },
    );
  } finally {
    await srv.close();
  }
});

test('--give-up: a 7 s outage ends the run at the 5 s default, and not with reconnectGiveUpMs 15 s (recorded, then recovered)', async () => {
  let srv: http.Server | undefined;
  const sockets = new Set<net.Socket>();
  let handled = 0;
  // The outage begins at the server's 100th request of each run (once the run is under way, however
  // slowly this machine starts it), not at a fixed time; the server that comes back stays.
  const make = async (port = 0, goDown = true): Promise<number> => {
    handled = 0;
    srv = http.createServer((_q, r) => {
      if (++handled === 100 && goDown) setImmediate(down);
      r.end('ok');
    });
    srv.on('connection', (s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((r) => srv!.listen(port, '127.0.0.1', r));
    return (srv.address() as AddressInfo).port;
  };
  let back: NodeJS.Timeout | undefined;
  let backAfterMs: number | undefined;
  function down(): void {
    srv?.close();
    for (const s of sockets) s.destroy();
    if (backAfterMs !== undefined) back = setTimeout(() => void make(port, false), backAfterMs);
  }
  const port = await make();
  const run = (giveUp?: number) =>
    runLoad({
      url: `http://127.0.0.1:${port}/`,
      protocol: 'h1',
      connections: 2,
      concurrency: 2,
      // Bounds only: the first run ends by giving up, the second after its requests.
      requests: 3000,
      durationMs: 60_000,
      maxErrorRate: 1,
      ...(giveUp !== undefined ? { reconnectGiveUpMs: giveUp } : {}),
    }).done;
  try {
    // The server stays down until the run has given up.
    const short = await run();
    assert.equal(short.error?.code, 'H2LAB_ERR_TARGET_UNREACHABLE', JSON.stringify(short.error));
    assert.match(short.error?.message ?? '', /every attempt failed for 5000 ms.*--give-up/);
    assert.equal(short.connections.outages?.periods[0]?.endMs, undefined, 'still down when it stopped');
    // Down for 7 s this time: longer than the default give-up, within 15 s.
    backAfterMs = 7000;
    await make(port);
    const long = await run(15_000);
    assert.equal(long.error, undefined, JSON.stringify(long.error));
    assert.equal(long.transport.reconnect?.giveUpMs, 15_000, 'recorded');
    const o = long.connections.outages?.periods[0];
    assert.ok(
      o?.endMs !== undefined && o.endMs - o.startMs > 5000,
      `an outage longer than the default give-up, recorded: ${JSON.stringify(long.connections.outages)}`,
    );
    assert.ok(long.counts.ok > 100, 'it recovered');
  } finally {
    if (back) clearTimeout(back);
    backAfterMs = undefined;
    down();
  }
});

test('a server gone for good: after giveUpMs the run stops with TARGET_UNREACHABLE and keeps what it measured', async () => {
  // The server goes at its 100th request: the run has measured something, however slowly it started.
  let handled = 0;
  let goneAt = Number.NaN;
  const srv = http.createServer((_q, r) => {
    r.end('ok');
    if (++handled === 100) {
      setImmediate(() => {
        goneAt = performance.now();
        srv.close();
        srv.closeAllConnections();
      });
    }
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  const r = await runLoad({
    url: `http://127.0.0.1:${port}/`,
    protocol: 'h1',
    connections: 4,
    concurrency: 4,
    requests: 20_000,
    maxErrorRate: 1,
  }).done;
  const took = performance.now() - goneAt;
  const c = r.counts;
  assert.equal(r.error?.code, 'H2LAB_ERR_TARGET_UNREACHABLE', JSON.stringify(r.error));
  assert.match(r.error?.message ?? '', /every attempt failed for 5000 ms/);
  assert.ok(c.ok > 0, 'what was measured before the server went is kept');
  assert.ok(c.total < 20_000, `stopped early: ${c.total}`);
  const failed = Object.values(c.byFailure).reduce((a, b) => a + (b ?? 0), 0);
  assert.equal(c.ok + failed, c.total, JSON.stringify(c));
  // Failures are one per attempt (backoff) plus the few in flight when the run stopped, not a spin.
  assert.ok((c.byFailure.connect ?? 0) < 200, JSON.stringify(c.byFailure));
  // From the server's going, not the run's start (which a busy machine may stretch).
  assert.ok(took >= 5000 && took < 5000 + 4000, `${Math.round(took)} ms after the server went`);
  assert.equal(r.transport.reconnect?.giveUpMs, 5000);
});

/**
 * The engine against h2lab's own fixture server (the embedded target): what the client counted equals
 * what the server's /metrics counted, exactly; an injected server delay shows in the percentiles; the
 * fixture's misbehaving routes are counted in the right failure class while the run goes on.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type LoadOptionsInput, runLoad } from '../../src/load/index.ts';
import type { RunningServer } from '../../src/server/index.ts';
import { startFixture } from '../helpers/fixture.ts';

// One fixture server for the file (in this process: starting it per run in its own thread, as the
// embedded target does, costs seconds under tsx). The last test drives the embedded target itself.
let server: RunningServer;
before(async () => {
  server = await startFixture();
});
after(() => server.close(0));

function on(listener: 'tls' | 'plain', path: string, o: LoadOptionsInput): LoadOptionsInput {
  const base = listener === 'tls' ? server.tlsUrl : server.plainUrl;
  return {
    ...o,
    url: `${base}${path}`,
    serverMetrics: true,
    ...(listener === 'tls' ? { ca: server.caFile! } : {}),
  };
}

const cases = [
  { protocol: 'h1', listener: 'tls' },
  { protocol: 'h2', listener: 'tls' },
  { protocol: 'h2-pool', listener: 'tls' },
  { protocol: 'h1', listener: 'plain' },
  { protocol: 'h2', listener: 'plain' },
] as const;

for (const c of cases) {
  test(`${c.protocol} over the ${c.listener} listener: request and byte counts equal the server's /metrics`, async () => {
    const r = await runLoad(
      on(c.listener, '/bytes/{1000..1099}', { protocol: c.protocol, requests: 400, concurrency: 8 }),
    ).done;
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.equal(r.counts.total, 400);
    assert.ok(r.server, 'the server view was read');
    assert.equal(r.server.requests, r.counts.total, 'requests: client = server');
    assert.equal(r.server.bytesOut, r.throughput.bytesIn, 'bytes: client = server');
    assert.equal(r.throughput.bytesIn, 4 * (1000 * 100 + (99 * 100) / 2));
  });
}

test('latency agrees with a server-side delay of 50 ms (tolerance: −1 ms, +40 ms at p50)', async () => {
  const r = await runLoad(on('tls', '/slow-headers?ms=50', { protocol: 'h2', requests: 80, concurrency: 8 }))
    .done;
  assert.equal(r.error, undefined);
  assert.ok(r.latencyMs.min >= 49, `min ${r.latencyMs.min} ms is never below the delay`);
  assert.ok(r.latencyMs.p50 < 90, `p50 ${r.latencyMs.p50} ms is close to the delay`);
  assert.ok(r.ttfbMs.p50 >= 49 && r.ttfbMs.p50 < 90, `time to headers p50 ${r.ttfbMs.p50} ms`);
});

test('resets and hangs are counted as reset and timeout, and the run continues', async () => {
  // h2 resets are covered by the resets-stream fixture (misbehaving.test.ts).
  const reset = await runLoad(on('plain', '/reset', { protocol: 'h1', requests: 30, concurrency: 3 })).done;
  assert.equal(reset.counts.total, 30);
  assert.equal(reset.counts.byFailure.reset, 30, JSON.stringify(reset.counts));
  for (const protocol of ['h1', 'h2'] as const) {
    const hang = await runLoad(on('tls', '/hang', { protocol, requests: 4, concurrency: 2, timeoutMs: 300 }))
      .done;
    assert.equal(hang.counts.byFailure.timeout, 4, `${protocol}: ${JSON.stringify(hang.counts)}`);
    assert.equal(hang.error?.code, 'H2LAB_ERR_ERROR_RATE', 'nothing succeeded: the run failed');
  }
});

test('reset after headers (h1: connection closed mid-body) is a reset with the bytes received so far', async () => {
  const r = await runLoad(
    on('plain', '/reset?after=headers', { protocol: 'h1', requests: 10, concurrency: 2 }),
  ).done;
  assert.equal(r.counts.byFailure.reset, 10, JSON.stringify(r.counts));
  assert.equal(r.throughput.bytesIn, 10 * 100, 'the partial bodies are counted');
});

test('GOAWAY after every response: h2 opens new sessions, h1 shows one request per connection', async () => {
  const h2 = await runLoad(
    on('tls', '/goaway', { protocol: 'h2', requests: 40, concurrency: 1, maxErrorRate: 1 }),
  ).done;
  // A request sent before the GOAWAY arrives, on a stream above its last id, was not processed:
  // it is counted as goaway (RFC 9113 §6.8), never silently retried.
  assert.equal(h2.counts.ok + (h2.counts.byFailure.goaway ?? 0), 40, JSON.stringify(h2.counts));
  assert.ok(h2.counts.ok >= 20, JSON.stringify(h2.counts));
  assert.equal(h2.server?.requests, h2.counts.ok, 'the server processed exactly the ones counted ok');
  assert.ok(h2.connections.opened >= 20, `${h2.connections.opened} sessions opened`);
  const h1 = await runLoad(on('plain', '/goaway', { protocol: 'h1', requests: 40, connections: 2 })).done;
  assert.equal(h1.counts.ok, 40, JSON.stringify(h1.counts));
  assert.equal(h1.connections.requestsPerConnection.max, 1, 'Connection: close is honoured');
  assert.ok(h1.connections.opened >= 40);
});

test('the embedded target: no URL starts the fixture server in its own thread and reads its metrics', async () => {
  const r = await runLoad({ protocol: 'h2', requests: 100, concurrency: 10 }).done;
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  assert.equal(r.target.embedded, true);
  assert.match(r.target.url, /^https:\/\/127\.0\.0\.1:\d+\/bytes\/1024$/);
  assert.equal(r.protocol.negotiated, 'h2');
  assert.equal(r.server?.requests, 100);
  assert.equal(r.throughput.bytesIn, 100 * 1024);
});

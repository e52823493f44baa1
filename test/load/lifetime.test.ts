/**
 * Connection lifetime: --max-age retires pooled connections, --idle-timeout closes idle ones, the
 * server's HTTP/2 idle timeout ends sessions with GOAWAY; the server sees the new connections and the
 * run's `connections.lifetimes` says which ended each connection, and when.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runLoad } from '../../src/load/index.ts';
import { testCerts } from '../helpers/certs.ts';
import { startFixture } from '../helpers/fixture.ts';
import { startTestServer } from '../helpers/servers.ts';

test('--max-age 200ms: h1 connections are replaced while the run goes on, no request fails', async () => {
  const server = await startTestServer('h1');
  try {
    const r = await runLoad({
      url: `${server.url}/delay/10`,
      protocol: 'h1',
      connections: 2,
      durationMs: 1200,
      maxAgeMs: 200,
    }).done;
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.equal(r.counts.failed, 0);
    // 1.2 s / 200 ms ≈ 6 generations of 2 connections; allow a slow machine.
    assert.ok(r.connections.opened >= 6, `${r.connections.opened} connections opened`);
    assert.equal(server.seen.connections, r.connections.opened, 'the server saw each of them');
    const lives = r.connections.lifetimes?.connections ?? [];
    const retired = lives.filter((l) => l.closedBy === 'max-age');
    assert.ok(retired.length >= 4, JSON.stringify(lives));
    for (const l of retired)
      assert.ok(l.closedMs - l.openedMs >= 200, `retired at ${l.closedMs - l.openedMs} ms`);
    assert.equal(lives.at(-1)?.closedBy, 'run-end', 'the last generation was open when the run ended');
  } finally {
    await server.close();
  }
});

// A multiplexed session under steady load never reaches zero streams: --max-age takes an aged one out
// of service (no new streams), opens a fresh one beside it and closes the old one once its streams
// end, so no session outlives max-age by more than the requests it was carrying.
const ageCases = [
  ...(['h2', 'h2-pool'] as const).flatMap((protocol) => [false, true].map((tls) => ({ protocol, tls }))),
  { protocol: 'h2' as const, tls: false, h2Client: 'node' as const },
];
for (const { protocol, tls, h2Client } of ageCases.map((c) => ({ h2Client: undefined, ...c }))) {
  const on = `${tls ? 'TLS' : 'h2c'}${h2Client ? `, --h2-client ${h2Client}` : ''}`;
  test(`--max-age 300ms bounds every ${protocol} session under steady load (${on})`, async () => {
    const certs = tls ? await testCerts() : undefined;
    const server = await startTestServer(tls ? 'tls' : 'h2c', certs);
    try {
      const maxAgeMs = 300;
      const r = await runLoad({
        url: `${server.url}/delay/5`,
        protocol,
        ...(protocol === 'h2-pool' ? { connections: 2 } : {}),
        ...(certs ? { ca: certs.path.caPem } : {}),
        ...(h2Client ? { h2Client } : {}),
        concurrency: 4,
        durationMs: 1200,
        maxAgeMs,
      }).done;
      assert.equal(r.error, undefined, JSON.stringify(r.error));
      assert.equal(r.counts.failed, 0);
      const lives = r.connections.lifetimes?.connections ?? [];
      const retired = lives.filter((l) => l.closedBy === 'max-age');
      // 1.2 s / 300 ms: three generations retired per session slot; allow a slow machine two.
      assert.ok(retired.length >= 2 * (protocol === 'h2-pool' ? 2 : 1), JSON.stringify(lives));
      // One request's time: the slowest request of the run (the streams an aged session still carries).
      const bound = maxAgeMs + r.latencyMs.max;
      const oldest = Math.max(...lives.map((l) => l.closedMs - l.openedMs));
      assert.ok(
        oldest <= bound,
        `oldest session ${oldest.toFixed(0)} ms > ${bound.toFixed(0)} ms: ${JSON.stringify(lives)}`,
      );
      for (const l of retired) assert.ok(l.closedMs - l.openedMs >= maxAgeMs, JSON.stringify(l));
      assert.equal(server.seen.connections, r.connections.opened, 'the server saw each session');
      // h2lab's client ends each session it retires with GOAWAY(NO_ERROR) (RFC 9113 §6.8);
      // node:http2's is destroyed.
      const noError = server.seen.clientGoaways?.[0] ?? 0;
      if (!h2Client)
        assert.ok(noError >= retired.length, `server saw ${noError} GOAWAY(NO_ERROR) for ${retired.length}`);
    } finally {
      await server.close();
      await certs?.cleanup();
    }
  });
}

test('--idle-timeout 100ms: an h2 session idle between sparse requests is closed and reopened', async () => {
  const server = await startTestServer('h2c');
  try {
    // Open loop, 4 requests per second: 250 ms gaps, longer than the idle timeout.
    const r = await runLoad({
      url: `${server.url}/`,
      protocol: 'h2',
      rateRps: 4,
      durationMs: 1500,
      idleTimeoutMs: 100,
    }).done;
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.equal(r.counts.failed, 0);
    assert.ok(r.connections.opened >= 3, `${r.connections.opened} sessions opened`);
    assert.ok(r.connections.requestsPerConnection.max <= 2, 'sessions did not outlive their idle time');
    const idle = (r.connections.lifetimes?.connections ?? []).filter((l) => l.closedBy === 'idle-timeout');
    assert.ok(idle.length >= 2, JSON.stringify(r.connections.lifetimes));
    // The sweep runs every idleTimeout / 4 (25 ms here); allow a busy machine.
    for (const l of idle) {
      const quiet = l.closedMs - l.lastActiveMs;
      assert.ok(quiet >= 100 && quiet < 400, `closed ${quiet.toFixed(0)} ms after its last request`);
    }
  } finally {
    await server.close();
  }
});

test("the server's --h2-idle-timeout: idle sessions end by its GOAWAY(NO_ERROR), recorded with the time", async () => {
  const srv = await startFixture({ tls: false, h2IdleTimeoutMs: 300 });
  try {
    // 1 request a second: each session goes quiet for ~1 s, longer than the server's 300 ms.
    const r = await runLoad({
      url: `${srv.plainUrl}/bytes/100`,
      protocol: 'h2',
      rateRps: 1,
      durationMs: 1800,
    }).done;
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.equal(r.counts.failed, 0);
    const lives = r.connections.lifetimes?.connections ?? [];
    const ended = lives.filter((l) => l.closedBy === 'goaway');
    assert.ok(ended.length >= 1, JSON.stringify(lives));
    for (const l of ended) {
      assert.equal(l.goawayCode, 0);
      const quiet = l.goawayMs! - l.lastActiveMs;
      assert.ok(quiet >= 250 && quiet < 900, `GOAWAY ${quiet.toFixed(0)} ms after the last response`);
      assert.ok(l.closedMs >= l.goawayMs!);
    }
    assert.ok(r.connections.opened >= 2, 'a new session after the server ended the first');
  } finally {
    await srv.close();
  }
});

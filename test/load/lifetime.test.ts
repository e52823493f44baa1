/**
 * Client-side connection lifetime: --max-age retires pooled connections, --idle-timeout closes idle
 * ones; the server sees the new connections.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runLoad } from '../../src/load/index.ts';
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
  } finally {
    await server.close();
  }
});

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
  } finally {
    await server.close();
  }
});

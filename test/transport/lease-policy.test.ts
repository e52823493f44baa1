// h2-pool's `lease` policy: K sessions, each carrying one stream at a time — a pool that leases an
// HTTP/2 connection like an HTTP/1.1 one (the echo study's "library pool"). Against the fixture: 8
// requests in flight on 2 sessions never put two streams on one session, the callers wait in the
// client, and the server saw exactly those 2 connections.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runLoad } from '../../src/load/index.ts';
import { startFixture } from '../helpers/fixture.ts';

test('lease: one stream per session at a time, callers queue for an idle session', async () => {
  const srv = await startFixture({ tls: false, poolSize: 16, tileMs: 5 });
  try {
    const r = await runLoad({
      url: `${srv.plainUrl}/tiles/3/1/1`,
      protocol: 'h2-pool',
      policy: 'lease',
      connections: 2,
      concurrency: 8,
      durationMs: 400,
    }).done;
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.ok(r.counts.ok > 10, `${r.counts.ok} responses`);
    assert.equal(r.connections.opened, 2, `sessions opened: ${r.connections.opened}`);
    assert.equal(r.connections.peakStreamsPerConnection, 1, 'never two streams on one session');
    // 8 callers, 2 sessions: most of each request's time is the wait for one.
    assert.ok(
      r.clientQueueMs.p50 > 5,
      `client queue p50 ${r.clientQueueMs.p50} ms: the callers did not wait for a session`,
    );
  } finally {
    await srv.close(200);
  }
});

// Cancellation frees the backend pool: pool size 1, a long tile runs, a second waits; the client of
// the first goes away (HTTP/1.1: socket closed; HTTP/2: RST_STREAM CANCEL) and the second starts at
// once — not when the first would have finished. /metrics counts the cancellation.
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningServer } from '../../src/server/index.ts';
import { scrape, startFixture } from '../helpers/fixture.ts';

const TILE_MS = 1500;
// How late the second tile may start after the cancel: generous for a loaded 2-core machine, and
// still far below the ~1300 ms it would wait if the first tile kept its worker.
const START_BOUND_MS = 400;

interface Client {
  /** Starts a tile request; resolves with the response's server-timing queue duration. */
  get(path: string): { done: Promise<{ status: number; queueMs: number }>; cancel: () => void };
  close(): void;
}

function h1Client(base: string): Client {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
  return {
    get(path) {
      let req!: http.ClientRequest;
      const done = new Promise<{ status: number; queueMs: number }>((resolve, reject) => {
        req = http.get(`${base}${path}`, { agent }, (res) => {
          res.resume();
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, queueMs: queueMs(res.headers['server-timing']) }),
          );
        });
        req.on('error', reject);
      });
      // HTTP/1.1 has no way to cancel one request but closing its connection.
      return { done, cancel: () => req.destroy() };
    },
    close: () => agent.destroy(),
  };
}

function h2Client(base: string): Client {
  const session = http2.connect(base);
  session.on('error', () => {});
  return {
    get(path) {
      const req = session.request({ ':path': path });
      const done = new Promise<{ status: number; queueMs: number }>((resolve, reject) => {
        let status = 0;
        let timing: string | undefined;
        req.on('response', (h) => {
          status = Number(h[':status']);
          timing = h['server-timing'] as string | undefined;
        });
        req.on('error', reject);
        req.resume();
        req.on('end', () => resolve({ status, queueMs: queueMs(timing) }));
      });
      // RST_STREAM(CANCEL), RFC 9113 §6.4 / §8.7: the connection stays up.
      return { done, cancel: () => req.close(http2.constants.NGHTTP2_CANCEL) };
    },
    close: () => session.close(),
  };
}

function queueMs(h: string | string[] | undefined): number {
  const m = /queue;dur=([\d.]+)/.exec(String(h));
  return m ? Number(m[1]) : Number.NaN;
}

async function until(cond: () => Promise<boolean>, maxMs = 3000): Promise<void> {
  const end = Date.now() + maxMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not reached');
    await sleep(10);
  }
}

const cases: Array<{ name: string; make: (s: RunningServer) => Client; protocol: 'http/1.1' | 'h2c' }> = [
  { name: 'HTTP/1.1 (socket close)', make: (s) => h1Client(s.plainUrl!), protocol: 'http/1.1' },
  { name: 'HTTP/2 (RST_STREAM CANCEL)', make: (s) => h2Client(s.plainUrl!), protocol: 'h2c' },
];

for (const c of cases) {
  describe(`cancellation frees the pool: ${c.name}`, () => {
    let srv: RunningServer;
    before(async () => {
      srv = await startFixture({ tls: false, poolSize: 1, tileMs: TILE_MS });
    });
    after(() => srv.close(200));

    test('a running tile is aborted and the queued one starts within the bound', async () => {
      const client = c.make(srv);
      try {
        const first = client.get('/tiles/1/0/0');
        first.done.catch(() => {});
        await until(async () => (await scrape(srv)).pool.busy === 1);
        const second = client.get('/tiles/1/0/1');
        await until(async () => (await scrape(srv)).pool.queued === 1);
        const queuedAt = performance.now();
        await sleep(100);
        const cancelAt = performance.now();
        first.cancel();
        const r = await second.done;
        const finishedAt = performance.now();
        assert.equal(r.status, 200);
        const startedAfterCancel = r.queueMs - (cancelAt - queuedAt);
        assert.ok(
          startedAfterCancel < START_BOUND_MS,
          `second tile started ${startedAfterCancel.toFixed(0)} ms after the cancel (bound ${START_BOUND_MS} ms)`,
        );
        // End-to-end, as the client saw it: one service time after the cancel, not after the first tile.
        assert.ok(
          finishedAt - cancelAt < TILE_MS + START_BOUND_MS,
          `finished ${(finishedAt - cancelAt).toFixed(0)} ms after cancel`,
        );
        const s = await scrape(srv);
        assert.equal(s.cancellations[c.protocol].running, 1, JSON.stringify(s.cancellations));
        assert.equal(s.pool.jobs.aborted, 1);
        assert.equal(s.pool.jobs.completed, 1);
        if (c.protocol !== 'http/1.1')
          assert.equal(s.rstStream['8'], 1, `RST_STREAM by code: ${JSON.stringify(s.rstStream)}`);
      } finally {
        client.close();
      }
    });

    test('a queued tile is dropped without doing work', async () => {
      srv.resetMetrics();
      const client = c.make(srv);
      try {
        const first = client.get('/tiles/2/0/0');
        await until(async () => (await scrape(srv)).pool.busy === 1);
        const second = client.get('/tiles/2/0/1');
        second.done.catch(() => {});
        await until(async () => (await scrape(srv)).pool.queued === 1);
        second.cancel();
        await until(async () => (await scrape(srv)).pool.queued === 0);
        assert.equal((await first.done).status, 200);
        const s = await scrape(srv);
        assert.equal(s.cancellations[c.protocol].queued, 1);
        assert.equal(s.pool.jobs.dropped, 1);
        assert.equal(s.pool.jobs.completed, 1);
        assert.equal(s.pool.serviceSeconds.count, 1, 'the dropped job never held a worker');
      } finally {
        client.close();
      }
    });
  });
}

describe('--ignore-cancel keeps rendering for nobody', () => {
  let srv: RunningServer;
  before(async () => {
    srv = await startFixture({ tls: false, poolSize: 1, tileMs: 800, ignoreCancel: true });
  });
  after(() => srv.close(200));

  test('the second tile waits for the abandoned one; the job counts as unwanted', async () => {
    const client = h2Client(srv.plainUrl!);
    try {
      const first = client.get('/tiles/1/0/0');
      first.done.catch(() => {});
      await until(async () => (await scrape(srv)).pool.busy === 1);
      const t0 = performance.now();
      const second = client.get('/tiles/1/0/1');
      await sleep(100);
      first.cancel();
      const r = await second.done;
      assert.ok(r.queueMs > 500, `queued ${r.queueMs} ms: the worker stayed busy with the abandoned tile`);
      assert.ok(performance.now() - t0 > 1200);
      const s = await scrape(srv);
      assert.equal(s.pool.jobs.unwanted, 1);
      assert.equal(s.cancellations.h2c.running, 1);
    } finally {
      client.close();
    }
  });
});

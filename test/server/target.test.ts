// The fixture as a target (src/server/target.ts): each placement serves its listeners, gives its CA
// and an owned metrics client; the one metrics client reads the JSON snapshot, resets it, and its
// delta and server view count exactly what was sent. Real sockets on 127.0.0.1, free ports.
import assert from 'node:assert/strict';
import https from 'node:https';
import { describe, it } from 'node:test';
import {
  histogramQuantile,
  metricsClient,
  metricsDelta,
  serverViewOf,
  startFixtureTarget,
} from '../../src/server/index.ts';

function get(url: string, ca?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    https
      .get(url, { ca, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', reject);
  });
}

for (const placement of ['in-process', 'thread'] as const) {
  describe(`fixture target, ${placement}`, () => {
    it('serves both listeners on 127.0.0.1, verifies by its CA, and its metrics count the requests', async () => {
      const t = await startFixtureTarget({ poolSize: 2, tileMs: 5 }, placement);
      try {
        assert.equal(t.placement, placement);
        assert.match(t.plainUrl!, /^http:\/\/127\.0\.0\.1:\d+$/);
        assert.match(t.tlsUrl!, /^https:\/\/127\.0\.0\.1:\d+$/);
        assert.ok(t.caPem?.includes('BEGIN CERTIFICATE'));
        assert.equal(t.metrics.owned, true);
        await t.metrics.reset();
        const before = await t.metrics.read();
        for (let i = 0; i < 5; i++) assert.equal(await get(`${t.tlsUrl}/bytes/1000`, t.caPem), 200);
        const res = await fetch(`${t.plainUrl}/tiles/1/2/3`);
        await res.arrayBuffer();
        const delta = metricsDelta(before, await t.metrics.read());
        assert.equal(delta.requests.bytes['http/1.1'], 5);
        assert.equal(delta.requests.tiles['http/1.1'], 1);
        const view = serverViewOf(delta);
        // /metrics reads are h2lab's own: not in the view.
        assert.equal(view.requests, 6);
        assert.equal(view.poolSize, 2);
        assert.ok(view.bytesOut! >= 5000, `bytes out ${view.bytesOut}`);
        assert.equal(t.failure(), undefined);
      } finally {
        await t.close();
      }
    });
  });
}

describe('the one metrics client', () => {
  it('delta: counters subtract, gauges and the histogram bounds keep the latest; quantiles interpolate', async () => {
    const t = await startFixtureTarget({ poolSize: 1, tileMs: 20 }, 'in-process');
    try {
      const before = await t.metrics.read();
      // Three tiles at once on a pool of one: two wait about 20 and 40 ms for the worker.
      await Promise.all(
        [0, 1, 2].map((i) => fetch(`${t.plainUrl}/tiles/1/${i}/0`).then((r) => r.arrayBuffer())),
      );
      const after = await t.metrics.read();
      const d = metricsDelta(before, after);
      assert.equal(d.pool.queueSeconds.count, 3);
      assert.equal(d.pool.size, 1, 'a gauge is not subtracted');
      assert.deepEqual(
        d.pool.queueSeconds.buckets.map((b) => b.le),
        after.pool.queueSeconds.buckets.map((b) => b.le),
      );
      const p90 = histogramQuantile(d.pool.queueSeconds, 0.9)!;
      assert.ok(p90 > 0.01 && p90 <= 0.1, `p90 queue ${p90} s`);
      assert.equal(histogramQuantile(metricsDelta(after, after).pool.queueSeconds, 0.5), undefined);
      const view = serverViewOf(d);
      assert.ok(view.poolQueueMs!.mean > 5, `mean queue ${view.poolQueueMs!.mean} ms`);
    } finally {
      await t.close();
    }
  });

  it('names the option and the fix when the endpoint is not an h2lab server; tryRead and reset never throw', async () => {
    const t = await startFixtureTarget({ tls: false }, 'in-process');
    try {
      const wrong = metricsClient(`${t.plainUrl}/bytes/10`);
      await assert.rejects(wrong.read(), (e: Error & { code?: string }) => {
        assert.equal(e.code, 'H2LAB_ERR_SERVER_METRICS');
        assert.match(e.message, /--metrics-url .*\/bytes\/10 answered 200 without h2lab metrics/);
        return true;
      });
      assert.equal(await wrong.tryRead(), undefined);
      const closed = metricsClient('http://127.0.0.1:9/metrics', { owned: true, timeoutMs: 500 });
      assert.equal(await closed.tryRead(), undefined);
      await closed.reset();
    } finally {
      await t.close();
    }
  });
});

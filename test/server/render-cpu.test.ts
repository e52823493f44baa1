// `--tile-render cpu`: each tile burns its --tile-ms as CPU time on a render thread pinned to
// --render-cores. Four tiles at once on one core take about four times as long each as one tile
// alone (the kernel shares the core); a running CPU tile whose client goes away stops burning and
// frees its worker at once. Timings read from the server's own Server-Timing header.
import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startFixture } from '../helpers/fixture.ts';

const TILE_CPU_MS = 40;

function renderMs(h: string | string[] | undefined, part: 'queue' | 'render'): number {
  const m = new RegExp(`${part};dur=([\\d.]+)`).exec(String(h));
  return m ? Number(m[1]) : Number.NaN;
}

/** Fetches `n` tiles at once over HTTP/1.1 (one socket each); the render and queue times the server gave. */
async function tiles(
  base: string,
  n: number,
  tag: string,
): Promise<Array<{ render: number; queue: number }>> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: n });
  try {
    return await Promise.all(
      Array.from(
        { length: n },
        (_, i) =>
          new Promise<{ render: number; queue: number }>((resolve, reject) => {
            http
              .get(`${base}/tiles/${tag}/${i}/0`, { agent }, (res) => {
                res.resume();
                res.on('end', () =>
                  resolve({
                    render: renderMs(res.headers['server-timing'], 'render'),
                    queue: renderMs(res.headers['server-timing'], 'queue'),
                  }),
                );
              })
              .on('error', reject);
          }),
      ),
    );
  } finally {
    agent.destroy();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

describe('--tile-render cpu (pinned render threads)', () => {
  test('four busy workers on one core: each tile takes at least twice its CPU time', async () => {
    const srv = await startFixture({
      tls: false,
      poolSize: 4,
      tileMs: TILE_CPU_MS,
      tileRender: 'cpu',
      renderCores: 1,
    });
    try {
      await tiles(srv.plainUrl!, 1, '3'); // warm the threads' code
      const alone = median((await tiles(srv.plainUrl!, 1, '4')).map((t) => t.render));
      const shared = median((await tiles(srv.plainUrl!, 4, '5')).map((t) => t.render));
      console.log(`# one tile alone ${alone.toFixed(1)} ms; four on one core ${shared.toFixed(1)} ms each`);
      assert.ok(alone >= TILE_CPU_MS * 0.9, `a tile alone took ${alone} ms, less than its CPU time`);
      // Four threads on one core: ~4× each; 2× leaves room for a loaded machine either way.
      assert.ok(shared >= alone * 2, `four on one core took ${shared} ms each against ${alone} ms alone`);
    } finally {
      await srv.close(200);
    }
  });

  test('a running CPU tile whose client went away frees its worker at once', async () => {
    const srv = await startFixture({
      tls: false,
      poolSize: 1,
      tileMs: 1500,
      tileRender: 'cpu',
      renderCores: 1,
    });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
    try {
      const first = http.get(`${srv.plainUrl}/tiles/6/0/0`, { agent });
      first.on('error', () => {});
      await sleep(150);
      const second = tiles(srv.plainUrl!, 1, '7');
      await sleep(100);
      first.destroy();
      const [r] = await second;
      // Without the cancellation the second tile would queue for ~1.2 s more.
      assert.ok(
        r!.queue < 700,
        `the queued tile waited ${r!.queue} ms after the first one's client went away`,
      );
    } finally {
      agent.destroy();
      await srv.close(200);
    }
  });

  test('more render cores than the machine has is refused, naming the option', async () => {
    await assert.rejects(
      startFixture({ tls: false, tileRender: 'cpu', renderCores: 1000 }),
      /--render-cores 1000 is not valid/,
    );
  });
});

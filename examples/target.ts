// The fixture as a target: start it once (here in a worker thread), hand it to several runs, read
// the server's own view of each run through its metrics client.
import { runLoad, startFixtureTarget } from 'h2lab';

const target = await startFixtureTarget({ poolSize: 4, tileMs: 5 }, 'thread');
try {
  for (const protocol of ['h1', 'h2'] as const) {
    const result = await runLoad(
      {
        url: '/tiles/7/1/1',
        protocol,
        concurrency: 16,
        durationMs: 800,
      },
      { target },
    ).done;
    console.log(
      `${protocol}: ${result.counts.ok} ok, server queue mean ${result.server?.poolQueueMs?.mean.toFixed(1) ?? '?'} ms`,
    );
  }
  const tiles = (await target.metrics.read()).requests.tiles;
  console.log(`server answered ${tiles['http/1.1'] + tiles.h2} tile requests`);
} finally {
  await target.close();
}

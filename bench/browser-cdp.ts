// What CDP's network instrumentation costs a page: the same burst of fetch() calls on two pages of one
// Chromium against the fixture's h2 port, one with the Network domain enabled (as `h2lab browser`
// measures) and one without. Prints medians of the page's issue-loop time (the 121 fetch() calls
// themselves) and of the spread of send times (Resource Timing requestStart, last − first), and ratios.
// Usage: node --import tsx bench/browser-cdp.ts [--runs 7] [--count 121]
import { parseArgs } from 'node:util';
import {
  CollectedPage,
  launchChromium,
  spkiPins,
  startFixtureInProcess as startFixture,
} from '../src/browser/index.ts';
import { burstScript, burstUrls, type PageBurstReport } from '../src/browser/page-scripts.ts';
import { medianInterpolated as median } from '../src/core/index.ts';
import { browserNetwork } from '../src/net/index.ts';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '7' }, count: { type: 'string', default: '121' } },
});
const runs = Number(values.runs);
const count = Number(values.count);

// As `h2lab browser` runs them: the fixture and Chromium in a namespace of their own when root.
const net = await browserNetwork(undefined);
const fixture = await startFixture(
  { poolSize: 4, tileMs: 20, maxConcurrentStreams: 256, ignoreCancel: false },
  net.serverNamespace,
);
const browser = await launchChromium({
  executablePath: '/usr/bin/chromium',
  spki: spkiPins(fixture.certPem),
  ...(net.netns ? { netns: net.netns } : {}),
});
try {
  const origin = new URL(fixture.tlsUrl!).origin;
  const withCdp = await CollectedPage.open(browser.context, origin);
  const without = await CollectedPage.open(browser.context, origin);
  await without.stopCollecting();
  const m: Record<'cdp' | 'plain', { loop: number[]; spread: number[] }> = {
    cdp: { loop: [], spread: [] },
    plain: { loop: [], spread: [] },
  };
  // Run 0 of each warms its page; then alternate so both see the same machine.
  for (let i = 0; i <= runs; i++) {
    for (const [name, page] of [
      ['cdp', withCdp],
      ['plain', without],
    ] as const) {
      const r = await page.evaluate<PageBurstReport>(
        burstScript(burstUrls(origin, '/tiles/7/{x}/{y}', count, `${name}-${i}`)),
      );
      if (i === 0) continue;
      const sends = r.resourceTiming.map((e) => e.requestStart);
      m[name].loop.push(r.issueLoopMs);
      m[name].spread.push(Math.max(...sends) - Math.min(...sends));
    }
  }
  const f = (x: number) => `${x.toFixed(1)} ms`;
  console.log(`${count} fetch() calls, ${runs} bursts each, h2 on one connection`);
  console.log(
    `issue loop   with CDP ${f(median(m.cdp.loop))}  without ${f(median(m.plain.loop))}  ratio ${(median(m.cdp.loop) / median(m.plain.loop)).toFixed(2)}`,
  );
  console.log(
    `send spread  with CDP ${f(median(m.cdp.spread))}  without ${f(median(m.plain.spread))}  ratio ${(median(m.cdp.spread) / median(m.plain.spread)).toFixed(2)}`,
  );
} finally {
  await browser.close();
  await fixture.close();
  await net.close();
}

// The comparison's renderers: terminal and Markdown text, the self-contained HTML page opened in real
// headless Chromium (charts drawn, screenshot non-empty), and
// `h2lab report` re-rendering and diffing saved files.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { compare } from '../../src/compare/engine.ts';
import { reanalyze } from '../../src/compare/reanalyze.ts';
import { writeResultsAtomic } from '../../src/compare/results-file.ts';
import { syntheticRunner } from '../../src/compare/synthetic.ts';
import type { CompareResult } from '../../src/model/compare.ts';
import { loadHtmlAssets } from '../../src/report/assets.ts';
import { renderHtml } from '../../src/report/render-html.ts';
import { renderMarkdown, renderTerminal } from '../../src/report/render-text.ts';
import { h2lab } from '../helpers/cli.ts';

const CHROMIUM = process.env.H2LAB_CHROMIUM ?? '/usr/bin/chromium';
let dir: string;
let result: CompareResult;

const workloads = [
  {
    id: 'small',
    label: '1 KiB responses',
    paths: ['/bytes/1024'],
    responseSizeBytes: 1024,
    kind: 'interactive' as const,
  },
  { id: 'tiles', label: 'tiles', paths: ['/tiles'], kind: 'backend' as const },
];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'h2lab-report-'));
  result = await compare(
    { protocols: ['h1', 'h2', 'h2-pool'], concurrency: [1, 8, 64], workloads, runs: 5 },
    {
      target: { url: 'https://127.0.0.1:8443/', embedded: true },
      runCell: syntheticRunner({
        h1: { latencyMs: 6, contention: 0.1, clientQueueShare: 0.5, serverQueueShare: 0.05 },
        h2: { latencyMs: 6, contention: 0.04, serverQueueShare: 0.5 },
        'h2-pool': { latencyMs: 6, notOffered: true },
      }),
    },
  ).done;
});
after(() => rmSync(dir, { recursive: true, force: true }));

test('terminal and Markdown show every cell, the ratio with its interval, and the verdict', () => {
  const text = renderTerminal(result);
  assert.match(text, /req\/s median \(min–max\)/);
  assert.match(text, /baseline/);
  assert.match(text, /\d\.\d\d× \(\d\.\d\d–\d\.\d\d\)\s+better/);
  assert.match(text, /not offered by the server/);
  assert.match(text, /Verdict/);
  assert.match(text, /Recommendation/);
  // Words wrap at 80 columns: read the verdict as one line.
  assert.match(text.replace(/\s+/g, ' '), /the queue moved to the backend pool \(8 workers\)/);
  const long = text.split('\n').filter((l) => [...l].length > 80);
  assert.deepEqual(long, [], 'every line fits 80 columns (tables are cut into column groups)');
  const wide = renderTerminal(result, { width: 160 });
  assert.ok(
    wide.split('\n').some((l) => [...l].length > 100),
    'a wide terminal gets the table in one piece',
  );
  const md = renderMarkdown(result);
  assert.match(md, /^# HTTP\/2 vs HTTP\/1\.1/);
  assert.match(md, /\| conc \| strategy \|/);
  assert.match(md, /Where the time went/);
  assert.equal((md.match(/^## /gm) ?? []).length >= 4, true);
});

test('the HTML is self-contained: no external script, style or image', () => {
  const html = renderHtml(result, loadHtmlAssets());
  assert.doesNotMatch(html, /<(script|link|img)[^>]+(src|href)=["']?https?:/i);
  assert.match(html, /uPlot/);
  assert.match(html, /<svg class="ratio"/);
  assert.match(html, /<svg class="bars"/);
  // The data island cannot close its script element early.
  const island = html.slice(
    html.indexOf('id="h2lab-data"'),
    html.indexOf('</script>', html.indexOf('id="h2lab-data"')),
  );
  assert.doesNotMatch(island.slice(20), /<\//);
});

test('the HTML opens in headless Chromium with every chart drawn', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`Chromium not found at ${CHROMIUM} (install Debian's chromium or set H2LAB_CHROMIUM)`);
    return;
  }
  const { chromium } = await import('playwright-core');
  const file = join(dir, 'report.html');
  writeFileSync(file, renderHtml(result, loadHtmlAssets()));
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1320, height: 1000 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    // Offline: any request that leaves the file would fail the page.
    await page.route(/^https?:/, (route) => {
      errors.push(`network request: ${route.request().url()}`);
      return route.abort();
    });
    await page.goto(`file://${file}`);
    await page.waitForSelector('body[data-charts="drawn"]', { timeout: 15_000 });
    const stats = await page.evaluate(() => {
      const canvases = Array.from(document.querySelectorAll('canvas')).map((c) => {
        const ctx = c.getContext('2d')!;
        const d = ctx.getImageData(0, 0, c.width, c.height).data;
        let inked = 0;
        for (let i = 3; i < d.length; i += 4) if (d[i]! > 0) inked++;
        return { w: c.width, h: c.height, inked };
      });
      return {
        canvases,
        // One mark per interval: a dot (decided, undecided) or a square (no clear difference).
        ratioDots: document.querySelectorAll(
          'svg.ratio[data-metric="rps"] circle, svg.ratio[data-metric="rps"] rect',
        ).length,
        latencyPlots: document.querySelectorAll('svg.ratio[data-metric="latencyP50Ms"]').length,
        bars: document.querySelectorAll('svg.bars rect').length,
      };
    });
    assert.deepEqual(errors, []);
    // Per workload: one throughput chart and one percentile chart per concurrency level.
    assert.equal(stats.canvases.length, workloads.length * (1 + 3));
    for (const c of stats.canvases)
      assert.ok(c.inked > 500, `a chart canvas is (nearly) empty: ${JSON.stringify(c)}`);
    assert.equal(
      stats.ratioDots,
      workloads.length * 3,
      'one interval per concurrency for h2 (h2-pool not offered)',
    );
    assert.equal(stats.latencyPlots, workloads.length, 'a median-latency interval plot per workload');
    assert.ok(stats.bars >= workloads.length * 3 * 2);
    const png = await page.screenshot({ fullPage: true });
    assert.ok(png.length > 50_000, `screenshot is ${png.length} bytes`);
    writeFileSync(join(dir, 'report.png'), png);
  } finally {
    await browser.close();
  }
});

test('several networks: a chart per network titled with its link; nothing clipped or wider than 1280 or 800 px', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`Chromium not found at ${CHROMIUM} (install Debian's chromium or set H2LAB_CHROMIUM)`);
    return;
  }
  const { chromium } = await import('playwright-core');
  // The saved grid: 64 × 10 KiB through four links (200 ms, 10 Mbit/s, loss 0 and 2%, cubic and reno).
  const grid = reanalyze(
    JSON.parse(
      readFileSync(new URL('../fixtures/report/grid.json', import.meta.url), 'utf8'),
    ) as CompareResult,
  );
  const file = join(dir, 'grid.html');
  writeFileSync(file, renderHtml(grid, loadHtmlAssets()));
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    for (const width of [1280, 800]) {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      await page.goto(`file://${file}`);
      await page.waitForSelector('body[data-charts="drawn"]', { timeout: 15_000 });
      const seen = await page.evaluate(() => {
        const d = document.documentElement;
        const clipped = Array.from(document.querySelectorAll('svg text'))
          .filter((el) => {
            const b = el.getBoundingClientRect();
            const s = (el as SVGTextElement).ownerSVGElement!.getBoundingClientRect();
            return b.left < s.left - 0.5 || b.right > s.right + 0.5;
          })
          .map((el) => el.textContent);
        const titles = Array.from(document.querySelectorAll('.uplot .u-title')).map((el) => el.textContent);
        return { scroll: d.scrollWidth, client: d.clientWidth, clipped, titles };
      });
      assert.ok(
        seen.scroll <= seen.client,
        `${width} px: the page is ${seen.scroll - seen.client} px too wide`,
      );
      assert.deepEqual(seen.clipped, [], `${width} px`);
      for (const net of grid.axes.net) {
        assert.equal(
          seen.titles.filter((x) => x?.startsWith('Burst completion time') && x.endsWith(`— ${net}`)).length,
          1,
          `${width} px: ${net}`,
        );
        assert.equal(
          seen.titles.filter((x) => x?.startsWith('Latency percentiles') && x.endsWith(`— ${net}`)).length,
          1,
        );
      }
      await page.close();
    }
  } finally {
    await browser.close();
  }
});

test('h2lab report re-renders a saved file and compares two saved files', async () => {
  const a = join(dir, 'a', 'results.json');
  writeResultsAtomic(a, result);
  const r1 = await h2lab(['report', a]);
  assert.equal(r1.code, 0, r1.stderr);
  assert.match(r1.stdout, /Verdict/);
  assert.ok(existsSync(join(dir, 'a', 'report.html')) && existsSync(join(dir, 'a', 'report.md')));
  const r2 = await h2lab(['report', a, a, '--out', join(dir, 'd')]);
  assert.equal(r2.code, 0, r2.stderr);
  // A file against itself: nothing improved or got worse; what the runs cannot bound within
  // --min-effect is undecided, the rest no clear difference.
  assert.match(r2.stdout, /No clear difference between|Undecided in \d+ of/);
  assert.doesNotMatch(r2.stdout, /improved|got worse/);
  assert.ok(existsSync(join(dir, 'd', 'diff.html')));
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, '{"kind":"h2lab.page"}');
  const r3 = await h2lab(['report', bad]);
  assert.equal(r3.code, 2);
  assert.match(
    r3.stderr,
    /H2LAB_ERR_RESULT_FILE: .*is not a result h2lab report renders \(kind "h2lab.page"/,
  );
  // A run inside the file is held to the run's schema: a negative count is refused, naming the field.
  const negative = structuredClone(result);
  const run = negative.cells.find((c) => c.runs.length > 0)!.runs[0]!;
  run.counts.ok = -5;
  const neg = join(dir, 'negative.json');
  writeFileSync(neg, JSON.stringify(negative));
  const r4 = await h2lab(['report', neg, '--out', join(dir, 'neg')]);
  assert.equal(r4.code, 2, r4.stderr);
  assert.match(r4.stderr, /H2LAB_ERR_RESULT_FILE: .*field cells\.\d+\.runs\.0\.counts\.ok: .*>=0/);
  assert.ok(!existsSync(join(dir, 'neg', 'report.md')), 'nothing rendered');
  // An --out that cannot take the files: refused before anything is rendered (it hung on /proc and
  // was H2LAB_ERR_INTERNAL with a stack trace under /dev/full), for one file and for a diff.
  for (const args of [[a], [a, a]]) {
    for (const out of ['/proc/h2lab-x', '/dev/full/x']) {
      const r = await h2lab(['report', ...args, '--out', out], { timeoutMs: 30_000 });
      assert.equal(r.timedOut, false, out);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`H2LAB_ERR_OUTPUT: --out ${out}: `));
      assert.doesNotMatch(r.stderr + r.stdout, / {4}at |Verdict/);
    }
  }
});

// report.html of every study, laid out by real Chromium at 1280 and 800 px wide (the saved --quick
// and full runs of test/fixtures/studies/): no table, finding, chart or paragraph drawn over another,
// at 1280 px no table cut off by its box (every column visible without scrolling), at both widths no
// horizontal scrolling of the page, a chart in every section whose table has a number and one for
// the findings, no chart label outside its picture, and the first table within the first screen.
// A screenshot of each page is left in the temporary directory for a human to look at.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ChromiumHandle, launchChromium } from '../../src/browser/index.ts';
import { DEFAULT_CHROMIUM_PATH, parseStudyResult } from '../../src/model/index.ts';
import { loadHtmlAssets, renderStudyHtml } from '../../src/report/index.ts';
import { chromiumMissing } from '../browser/helpers.ts';
import { overlapsOf } from '../helpers/overlaps.ts';

const STUDIES = ['tiles', 'echo', 'proxy', 'proxy.upstream-rtt', 'chunks'];
const skip = chromiumMissing();
const assets = loadHtmlAssets();

interface Layout {
  overlaps: string[];
  cutOff: string[];
  /** The page's width beyond the window's (0: no horizontal scrolling). */
  overflow: number;
  /** Sections (and the findings) whose table has a number but that have no chart. */
  uncharted: string[];
  /** Chart labels drawn outside their picture. */
  clipped: string[];
  firstTableTop: number;
  charts: number;
  waterfalls: number;
}

/** What must not be drawn over anything else. */
const OVERLAP_SELECTOR = 'table, .finding, .explain p, h2, .note, svg.chart, .chart.line, .waterfall';

/** Runs in the page: every table its box cuts off, the charts and where they drew. */
function measure(): Omit<Layout, 'overlaps'> {
  const cutOff = Array.from(document.querySelectorAll('.pair > div'))
    .filter((d) => d.scrollWidth > d.clientWidth + 1)
    .map((d) => `${d.closest('section')?.id}: ${d.scrollWidth} px in ${d.clientWidth} px`);
  const uncharted = Array.from(document.querySelectorAll('main > section'))
    .filter((sec) => Array.from(sec.querySelectorAll('td')).some((td) => /\d/.test(td.textContent ?? '')))
    .filter((sec) => sec.querySelectorAll('svg.chart, .chart.line canvas').length === 0)
    .map((sec) => sec.id);
  const clipped: string[] = [];
  for (const svg of Array.from(document.querySelectorAll<SVGSVGElement>('svg.chart'))) {
    const vb = svg.viewBox.baseVal;
    for (const t of Array.from(svg.querySelectorAll<SVGTextElement>('text'))) {
      const b = t.getBBox();
      if (b.x < vb.x - 0.5 || b.x + b.width > vb.x + vb.width + 0.5 || b.y < vb.y - 0.5)
        clipped.push(`${svg.closest('section')?.id}: "${t.textContent}"`);
    }
  }
  for (const u of Array.from(document.querySelectorAll('.chart.line'))) {
    const c = u.querySelector('canvas');
    if (c && c.getBoundingClientRect().right > u.getBoundingClientRect().right + 1)
      clipped.push(`${u.id}: the canvas is wider than its box`);
    // uPlot drew its lines: enough pixels with ink.
    const d = c?.getContext('2d')?.getImageData(0, 0, c.width, c.height).data;
    let inked = 0;
    for (let i = 3; d && i < d.length; i += 4) if (d[i]! > 0) inked++;
    if (inked < 500) clipped.push(`${u.id}: the line chart is (nearly) empty (${inked} px)`);
  }
  return {
    cutOff,
    overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    uncharted,
    clipped,
    firstTableTop: document.querySelector('table')?.getBoundingClientRect().top ?? Infinity,
    charts: document.querySelectorAll('svg.chart, .chart.line canvas').length,
    waterfalls: document.querySelectorAll('.waterfall svg').length,
  };
}

interface SavedBursts {
  data: {
    burst: Record<string, { burst: { runs: Array<{ stats: { wallMs: number }; requests: unknown[] }> } }>;
  };
}

/**
 * The saved full tiles run with requests put back into its bursts (the fixture drops them to stay
 * small), so its waterfalls are drawn: 121 a run, spread over its wall time on six connections.
 */
function withRequests(raw: SavedBursts): SavedBursts {
  for (const b of Object.values(raw.data.burst))
    for (const run of b.burst.runs)
      run.requests = Array.from({ length: 121 }, (_, i) => {
        const startMs = i * 0.1;
        const sendMs = startMs + (i / 121) * run.stats.wallMs * 0.6;
        const endMs = sendMs + run.stats.wallMs * 0.3;
        return {
          index: i,
          url: `/tiles/7/${i}/0`,
          startMs,
          sendMs,
          headersMs: endMs - 1,
          endMs,
          totalMs: endMs - startMs,
          stalledMs: sendMs - startMs,
          wireMs: endMs - sendMs,
          connectionId: String(i % 6),
          protocol: 'h2',
        };
      });
  return raw;
}

describe('report.html of each study in Chromium', { skip }, () => {
  let chromium: ChromiumHandle;
  before(async () => {
    chromium = await launchChromium({ executablePath: DEFAULT_CHROMIUM_PATH });
  });
  after(async () => {
    await chromium?.close();
  });

  // Each study's saved --quick run, and its saved full run where there is one (more rows, longer cells).
  const saved = STUDIES.flatMap((name) =>
    [`${name}.json`, `full/${name}.json`]
      .filter((f) => existsSync(new URL(`../fixtures/studies/${f}`, import.meta.url)))
      .map((f) => ({
        name: f.startsWith('full/') ? `${name} (full run)` : name,
        file: f,
        fill: (x: SavedBursts) => x,
      })),
  );
  saved.push({ name: 'tiles (full run, with its requests)', file: 'full/tiles.json', fill: withRequests });
  for (const { name, file, fill } of saved)
    for (const width of [1280, 800])
      test(`${name} at ${width} px: nothing drawn over anything, no overflow, a chart per table${width === 1280 ? ', no table cut off' : ''}`, async () => {
        const r = parseStudyResult(
          fill(JSON.parse(readFileSync(new URL(`../fixtures/studies/${file}`, import.meta.url), 'utf8'))),
        );
        const page = await chromium.context.newPage();
        try {
          await page.setViewportSize({ width, height: 900 });
          await page.setContent(renderStudyHtml(r, assets));
          if (await page.$('.chart.line'))
            await page.waitForSelector('body[data-charts="drawn"]', { timeout: 10_000 });
          const shot = join(tmpdir(), `h2lab-study-${name.replace(/\W+/g, '-')}-${width}.png`);
          await page.screenshot({ path: shot, fullPage: true });
          const layout: Layout = {
            ...(await page.evaluate(measure)),
            overlaps: await page.evaluate(overlapsOf, OVERLAP_SELECTOR),
          };
          assert.deepEqual(
            layout.overlaps,
            [],
            `${name} at ${width} px (${shot}): ${layout.overlaps.join('; ')}`,
          );
          assert.equal(layout.overflow, 0, `${name} at ${width} px (${shot}): the page scrolls sideways`);
          assert.deepEqual(
            layout.uncharted,
            [],
            `${name} at ${width} px (${shot}): sections without a chart`,
          );
          assert.deepEqual(
            layout.clipped,
            [],
            `${name} at ${width} px (${shot}): labels outside their chart`,
          );
          assert.ok(
            layout.charts >= r.sections.length,
            `${name}: ${layout.charts} charts for ${r.sections.length} tables`,
          );
          assert.ok(
            layout.firstTableTop < 900,
            `${name} at ${width} px (${shot}): the first table starts at ${layout.firstTableTop} px, below the first screen`,
          );
          if (width === 1280)
            assert.deepEqual(
              layout.cutOff,
              [],
              `${name} at ${width} px (${shot}): ${layout.cutOff.join('; ')}`,
            );
        } finally {
          await page.close();
        }
      });
});

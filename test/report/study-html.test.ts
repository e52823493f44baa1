// report.html of every study, laid out by real Chromium at 1280 and 800 px wide (the saved --quick
// runs of test/fixtures/studies/): no table, finding or paragraph drawn over another, and at 1280 px
// no table cut off by its box (every column visible without scrolling). A screenshot of each page is
// left in the temporary directory for a human to look at.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ChromiumHandle, launchChromium } from '../../src/browser/index.ts';
import { DEFAULT_CHROMIUM_PATH, parseStudyResult } from '../../src/model/index.ts';
import { renderStudyHtml } from '../../src/report/index.ts';
import { chromiumMissing } from '../browser/helpers.ts';

const STUDIES = ['tiles', 'echo', 'proxy', 'chunks'];
const skip = chromiumMissing();

interface Layout {
  overlaps: string[];
  cutOff: string[];
}

/** Runs in the page: every pair of laid-out boxes that intersect, and every table its box cuts off. */
function measure(): Layout {
  const boxes = Array.from(document.querySelectorAll('table, .finding, .explain p, h2, .note')).map(
    (el, i) => ({
      el,
      name: `${el.tagName.toLowerCase()}#${i} ${(el.closest('section')?.id ?? el.className) || ''}`,
      r: el.getBoundingClientRect(),
    }),
  );
  const overlaps: string[] = [];
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i]!;
      const b = boxes[j]!;
      if (a.el.contains(b.el) || b.el.contains(a.el)) continue;
      const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
      const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
      if (w > 1 && h > 1) overlaps.push(`${a.name} × ${b.name}`);
    }
  const cutOff = Array.from(document.querySelectorAll('.pair > div'))
    .filter((d) => d.scrollWidth > d.clientWidth + 1)
    .map((d) => `${d.closest('section')?.id}: ${d.scrollWidth} px in ${d.clientWidth} px`);
  return { overlaps, cutOff };
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
      .map((f) => ({ name: f.startsWith('full/') ? `${name} (full run)` : name, file: f })),
  );
  for (const { name, file } of saved)
    for (const width of [1280, 800])
      test(`${name} at ${width} px: nothing drawn over anything${width === 1280 ? ', no table cut off' : ''}`, async () => {
        const r = parseStudyResult(
          JSON.parse(readFileSync(new URL(`../fixtures/studies/${file}`, import.meta.url), 'utf8')),
        );
        const page = await chromium.context.newPage();
        try {
          await page.setViewportSize({ width, height: 900 });
          await page.setContent(renderStudyHtml(r));
          const shot = join(tmpdir(), `h2lab-study-${file.replace(/\W+/g, '-')}-${width}.png`);
          await page.screenshot({ path: shot, fullPage: true });
          const layout = await page.evaluate(measure);
          assert.deepEqual(
            layout.overlaps,
            [],
            `${name} at ${width} px (${shot}): ${layout.overlaps.join('; ')}`,
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

// How a report.html's time-sequence graphs lay out in headless Chromium at one viewport width.
import { overlapsOf } from './overlaps.ts';

/**
 * Loads `file` at `width` px, waits for the graphs to be drawn, and returns how much wider than the
 * window the page is, the uPlot plots and canvases drawn, the plots that reach past its edge, and
 * every pair of headings, notes, findings and graphs drawn over each other. With `anchor`, it then
 * follows the page's link to `#anchor` and says where the anchored heading landed (`anchorTop`, px
 * from the window's top; undefined when the page has no such link or heading).
 */
export async function sequenceLayoutAt(chromiumPath: string, file: string, width: number, anchor?: string) {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    await page.goto(`file://${file}`);
    await page.waitForSelector('body[data-ts="drawn"]', { timeout: 15_000 });
    const layout = await page.evaluate(() => {
      const d = document.documentElement;
      const plots = Array.from(document.querySelectorAll('.chart.ts .uplot'));
      return {
        overflow: d.scrollWidth - d.clientWidth,
        plots: plots.length,
        canvases: document.querySelectorAll('.chart.ts canvas').length,
        outside: plots.filter((p) => p.getBoundingClientRect().right > d.clientWidth + 0.5).length,
      };
    });
    const overlaps = await page.evaluate(overlapsOf, 'h2, h3, p.note, .finding, .chart.ts, table');
    let anchorTop: number | undefined;
    const link = anchor ? page.locator(`a[href="#${anchor}"]`).first() : undefined;
    if (anchor && link && (await link.count()) > 0) {
      await link.click();
      anchorTop = await page.evaluate(
        (id) => document.getElementById(id)?.getBoundingClientRect().top,
        anchor,
      );
    }
    return { ...layout, overlaps, anchorTop };
  } finally {
    await browser.close();
  }
}

// How a report.html's time-sequence graphs lay out in headless Chromium at one viewport width.

/**
 * Loads `file` at `width` px, waits for the graphs to be drawn, and returns how much wider than the
 * window the page is, the uPlot plots and canvases drawn, and the plots that reach past its edge.
 */
export async function sequenceLayoutAt(chromiumPath: string, file: string, width: number) {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    await page.goto(`file://${file}`);
    await page.waitForSelector('body[data-ts="drawn"]', { timeout: 15_000 });
    return await page.evaluate(() => {
      const d = document.documentElement;
      const plots = Array.from(document.querySelectorAll('.chart.ts .uplot'));
      return {
        overflow: d.scrollWidth - d.clientWidth,
        plots: plots.length,
        canvases: document.querySelectorAll('.chart.ts canvas').length,
        outside: plots.filter((p) => p.getBoundingClientRect().right > d.clientWidth + 0.5).length,
      };
    });
  } finally {
    await browser.close();
  }
}

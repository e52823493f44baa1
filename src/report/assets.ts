/**
 * Reads the chart library that the HTML report inlines (uPlot, an installed dependency), so the
 * renderer itself stays a pure function and the page needs no network to open.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { HtmlAssets } from './render-html.ts';

const require = createRequire(import.meta.url);

/** uPlot's minified IIFE build and its stylesheet, as strings. */
export function loadHtmlAssets(): HtmlAssets {
  return {
    uplotJs: readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'),
    uplotCss: readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8'),
  };
}

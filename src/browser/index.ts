/**
 * The browser subsystem's public face: real Chromium over CDP, the burst and cancellation experiments.
 */

export { BASE_CHROMIUM_FLAGS, type ChromiumHandle, launchChromium, spkiPins } from './chromium.ts';
export { CollectedPage } from './collector.ts';
export { deriveFindings } from './findings.ts';
export {
  type BrowserProgress,
  type FixtureHandle,
  type FixtureStartOptions,
  type MeasureBrowserHooks,
  measureBrowser,
  type StartFixture,
} from './measure.ts';
export {
  type BrowserOptions,
  type BrowserOptionsInput,
  BrowserOptionsSchema,
  DEFAULT_CHROMIUM_PATH,
  DEFAULT_PATH_TEMPLATE,
  FixtureOptionsSchema,
  resolveBrowserOptions,
} from './options.ts';
export type * from './result.ts';
export { BROWSER_RESULT_VERSION } from './result.ts';
export { browserResultJsonSchema, browserResultSchema, parseBrowserResult } from './result-schema.ts';
export { histogramQuantile, type MetricSnapshot, parsePrometheusText } from './server-metrics.ts';
export { peakConcurrency, quantile, type Spread, spread } from './stats.ts';

/**
 * The browser subsystem's public face: real Chromium over CDP, the burst and cancellation experiments.
 */

export { BASE_CHROMIUM_FLAGS, type ChromiumHandle, launchChromium, spkiPins } from './chromium.ts';
export { CollectedPage } from './collector.ts';
export { deriveFindings } from './findings.ts';
export {
  type BrowserProgress,
  type FixtureStartOptions,
  type MeasureBrowserHooks,
  measureBrowser,
  type StartFixture,
  startFixtureInProcess,
} from './measure.ts';
export { resolveBrowserOptions } from './options.ts';
export { peakConcurrency, spread } from './stats.ts';

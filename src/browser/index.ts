/**
 * The browser subsystem's public face: real Chromium over CDP, the burst and cancellation experiments.
 */

export { type BurstRepeat, runBurst, runBurstRepeated, summarizeBurst } from './burst.ts';
export {
  BASE_CHROMIUM_FLAGS,
  type ChromiumHandle,
  checkChromium,
  launchChromium,
  spkiPins,
  WEBGL_CHROMIUM_FLAGS,
} from './chromium.ts';
export { CollectedPage } from './collector.ts';
export { deriveFindings } from './findings.ts';
export {
  dragSteps,
  MAP_MOVES,
  MAP_MOVES_QUICK,
  MAP_START,
  type MapSessionSpec,
  type MapView,
  mapPageUrl,
  mapServerView,
  runMapSession,
} from './map-session.ts';
export {
  type BrowserProgress,
  type FixtureStartOptions,
  type MeasureBrowserHooks,
  measureBrowser,
  type StartFixture,
  startFixtureInProcess,
} from './measure.ts';
export { CHROMIUM_FLAG, MAX_STREAMS_FLAG, POOL_FLAG, TRUST_CERT_FLAG } from './meta.ts';
export { resolveBrowserOptions } from './options.ts';
export { peakConcurrency, spread } from './spread.ts';
export { trustPins, verifiedPin } from './trust.ts';

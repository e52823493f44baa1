/**
 * The browser subsystem's public face: real Chromium over CDP, the burst and cancellation experiments.
 */

export { type BurstRepeat, runBurstRepeated, summarizeBurst } from './burst.ts';
export { type ChromiumHandle, checkChromium, launchChromium, spkiPins } from './chromium.ts';
export { CollectedPage } from './collector.ts';
export { MAP_MOVES, MAP_MOVES_QUICK, runMapSession } from './map-session.ts';
export { type MeasureBrowserHooks, measureBrowser, startFixtureInProcess } from './measure.ts';
export { CHROMIUM_FLAG, MAX_STREAMS_FLAG, POOL_FLAG, TRUST_CERT_FLAG } from './meta.ts';
export { resolveBrowserOptions } from './options.ts';
export { trustPins, verifiedPin } from './trust.ts';

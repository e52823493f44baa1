/**
 * `h2lab page`: record a real page as a HAR and replay it under HTTP/1.1, HTTP/2 and HTTP/3 through
 * the same emulated link, with Chromium as the client, and say why it loaded faster or slower.
 */

export { analyzePage, originProtocols } from './analyze.ts';
export { type CapturedLoad, type CapturedRequest, capturePageLoad } from './capture.ts';
export {
  HAR_LIMITS,
  HAR_MAX_BODY_FLAG,
  HAR_MAX_TOTAL_FLAG,
  type Har,
  type HarEntry,
  type HarLimits,
  harOf,
  MAX_REPLAY_ORIGINS,
  type ReplaySite,
  readHar,
  siteOfHar,
} from './har.ts';
export { type Recording, type RecordOptions, recordPage } from './record.ts';
export {
  pageRequestsOf,
  type ReplayHooks,
  replayPage,
  resolvePageReplayOptions,
} from './replay.ts';

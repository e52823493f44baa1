export {
  HAR_LIMITS,
  HAR_MAX_BODY_FLAG,
  HAR_MAX_TOTAL_FLAG,
  type Har,
  MAX_REPLAY_ORIGINS,
  readHar,
} from './har.ts';
export { recordPage } from './record.ts';
export { type ReplayHooks, replayPage } from './replay.ts';

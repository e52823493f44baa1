/**
 * The load engine's public face: `runLoad(opts) → { done, events, stop }`, its options schema and the
 * statistics helpers that other subsystems (compare, report) reuse to merge histograms.
 */

export { arrivalTimes, ownArrivals } from './arrivals.ts';
export { PREFLIGHT_QUIC_MS, preflightQuic, preflightTarget } from './diagnose.ts';
export { type LoadDeps, type LoadRun, runLoad, split } from './engine.ts';
export { judgeClient } from './judge.ts';
export { measurePath, runLoadThroughLink } from './linked.ts';
export { CONCURRENCY_FLAG, LOAD_DEFAULTS, RATE_FLAG, WINDOW_FLAG, WORKERS_FLAG } from './meta.ts';
export { type CaptureRequest, capturedRun, observe } from './observe.ts';

export {
  checkHeaderFields,
  checkTargetUrl,
  type LoadOptionsInput,
  type ResolvedLoadOptions,
  registeredStrategySchema,
  resolveLoadOptions,
} from './options.ts';
export type { LoadProgress } from './progress.ts';
export { toRunResult } from './result.ts';
export {
  decodeHistogram,
  encodeHistogram,
  HISTOGRAM_SETTINGS,
  newHistogram,
  SampleStats,
  summarizeHistogram,
  UsRecorder,
} from './stats.ts';
export {
  decodeTally,
  emptyTally,
  encodeTally,
  mergeAll,
  mergeTallies,
  type RunTally,
  receiveTally,
  shipTally,
} from './tally.ts';
export { checkWorkloadSize } from './workload.ts';

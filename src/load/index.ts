/**
 * The load engine's public face: `runLoad(opts) → { done, events, stop }`, its options schema and the
 * statistics helpers that other subsystems (compare, report) reuse to merge histograms.
 */

export { arrivalTimes, type OwnArrival, ownArrivals } from './arrivals.ts';
export { PREFLIGHT_QUIC_MS, preflightQuic, preflightTarget } from './diagnose.ts';
export {
  EMBEDDED_DEFAULT_PATH,
  isEmbedded,
  type LoadDeps,
  type LoadRun,
  runLoad,
  split,
} from './engine.ts';
export { judgeClient } from './judge.ts';
export { type LinkedLoadHooks, measurePath, runLoadThroughLink } from './linked.ts';
export {
  type CaptureRequest,
  capturedRun,
  captureFileName,
  type Observed,
  observe,
} from './observe.ts';
export * from './options.ts';
export {
  checkHeaderFields,
  checkTargetUrl,
  LOAD_DEFAULTS,
  type LoadOptions,
  type LoadOptionsInput,
  LoadOptionsSchema,
  type ResolvedLoadOptions,
  registeredStrategySchema,
  resolveLoadOptions,
} from './options.ts';
export type { LoadProgress } from './progress.ts';
export { environmentOf, type ResultContext, toRunResult } from './result.ts';
export {
  addCounts,
  type Counts,
  countsSection,
  decodeHistogram,
  emptyCounts,
  encodeHistogram,
  HISTOGRAM_SETTINGS,
  newHistogram,
  recordMs,
  SampleStats,
  summarizeHistogram,
  UsRecorder,
} from './stats.ts';
export {
  type BurstRecord,
  decodeTally,
  type EncodedTally,
  emptyTally,
  encodeTally,
  mergeAll,
  mergeTallies,
  type ProcessReading,
  type RunTally,
  receiveTally,
  type ServerReadings,
  shipTally,
} from './tally.ts';
export { attachServerTcp, attachServerTcpFromLink, serverTcpReadings } from './tcp.ts';
export { checkWorkloadSize, expandTemplate, splitUrl } from './workload.ts';

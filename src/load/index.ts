/**
 * The load engine's public face: `runLoad(opts) → { done, events, stop }`, its options schema and the
 * statistics helpers that other subsystems (compare, report) reuse to merge histograms.
 */

export { arrivalTimes, type OwnArrival, ownArrivals } from './arrivals.ts';
export { preflightTarget } from './diagnose.ts';
export {
  EMBEDDED_DEFAULT_PATH,
  isEmbedded,
  judgeClient,
  type LoadDeps,
  type LoadRun,
  runLoad,
  split,
} from './engine.ts';
export { type LinkedLoadHooks, measurePath, runLoadThroughLink } from './linked.ts';
export {
  checkHeaderFields,
  LOAD_DEFAULTS,
  type LoadOptions,
  type LoadOptionsInput,
  LoadOptionsSchema,
  type ResolvedLoadOptions,
  registeredStrategySchema,
  resolveLoadOptions,
} from './options.ts';
export type { LoadProgress } from './progress.ts';
export {
  addCounts,
  type Counts,
  countsOfResult,
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
export { attachServerTcp, attachServerTcpFrom, attachServerTcpFromLink, serverTcpReadings } from './tcp.ts';
export { checkWorkloadSize, expandTemplate, splitUrl } from './workload.ts';

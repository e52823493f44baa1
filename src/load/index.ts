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
  ARRIVALS,
  ARRIVALS_FLAG,
  BODY_FLAG,
  BODY_SIZE_FLAG,
  BURST_FLAG,
  BURST_GAP_FLAG,
  BURST_HANDSHAKES,
  BURST_HANDSHAKES_FLAG,
  BURSTS_FLAG,
  CONCURRENCY_FLAG,
  CONNECT_TIMEOUT_FLAG,
  CONNECTION_WINDOW_FLAG,
  CONNECTIONS_FLAG,
  DURATION_FLAG,
  GIVE_UP_FLAG,
  H2_CLIENT_FLAG,
  HEADER_FLAG,
  IDLE_TIMEOUT_FLAG,
  LOAD_DEFAULTS,
  LOAD_FLAGS,
  MAX_AGE_FLAG,
  MAX_ERROR_RATE_FLAG,
  METHOD_FLAG,
  PICK_FLAG,
  PICKS,
  POLICY_FLAG,
  PROTOCOL_FLAG,
  parseHeaders,
  RATE_FLAG,
  REQUESTS_FLAG,
  SEED_FLAG,
  STREAM_WINDOW_FLAG,
  URLS_FLAG,
  WARMUP_FLAG,
  WINDOW_FLAG,
  WORKERS_FLAG,
} from './meta.ts';
export {
  type CaptureRequest,
  capturedRun,
  captureFileName,
  type Observed,
  observe,
} from './observe.ts';

export {
  checkHeaderFields,
  checkTargetUrl,
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

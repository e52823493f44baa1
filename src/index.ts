/**
 * h2lab's programmatic API: one coherent set, documented entry by entry in docs/api.md (with a
 * runnable example each, test/docs/api-examples.test.ts). The folders' own faces (their index.ts)
 * offer more to each other; only what is here is the package's promise: the model (every type, the
 * result schemas, their parsers and versions), errors and named quantiles, targets (the fixture
 * server and the fixture as a target), links, the strategy registry, the runs and one `render`.
 * Shard and Kubernetes plumbing sit under two namespaces, `shard` and `k8s` (src/index-shard.ts,
 * src/index-k8s.ts), not among the flat names.
 */

export { type MeasureBrowserHooks, measureBrowser } from './browser/index.ts';
export {
  type CompareOptionsInput,
  diffResults,
  loadCompareResult,
  type RunComparisonHooks,
  reanalyze,
  runComparison,
  type StartedComparison,
} from './compare/index.ts';
export {
  ERROR_CODES,
  type ErrorCode,
  H2labError,
  isH2labError,
  medianInterpolated,
  medianNearestRank,
  quantileInterpolated,
  quantileNearestRank,
  VERSION,
} from './core/index.ts';
export * as k8s from './index-k8s.ts';
export * as shard from './index-shard.ts';
export {
  type LoadDeps,
  type LoadOptionsInput,
  type LoadProgress,
  type LoadRun,
  runLoad,
  runLoadThroughLink,
} from './load/index.ts';
export type * from './model/index.ts';
export {
  BROWSER_RESULT_VERSION,
  browserResultSchema,
  COMPARE_RESULT_VERSION,
  compareResultSchema,
  PAGE_RESULT_VERSION,
  PROBE_RESULT_VERSION,
  pageResultSchema,
  parseBrowserResult,
  parseCompareResult,
  parsePageResult,
  parseProbeResult,
  parseRunResult,
  parseSample,
  probeResultSchema,
  publishedJsonSchemas,
  RUN_RESULT_VERSION,
  runResultSchema,
  sampleSchema,
} from './model/index.ts';
export { checkNetAvailable, createLink, type Link, type LinkOptions, profileNames } from './net/index.ts';
export { type Har, type ReplayHooks, readHar, recordPage, replayPage } from './page/index.ts';
export { type ProbeOptionsInput, probe } from './probe/index.ts';
export {
  buildVerdict,
  type RenderableResult,
  type RenderFormat,
  type RenderOptions,
  render,
  renderFormatsOf,
} from './report/index.ts';
export {
  type FixtureTarget,
  metricsClient,
  type RunningServer,
  type ServerMetricsClient,
  type ServerOptionsInput,
  startFixtureTarget,
  startServer,
  withLinkedTarget,
} from './server/index.ts';
export { type CertificateSet, ensureDevCertificates, generateCertificates } from './tls/index.ts';
export {
  baselineStrategy,
  createTransport,
  DEFAULT_STRATEGY,
  findStrategy,
  getStrategy,
  listStrategies,
  registerStrategy,
  type Strategy,
  type StrategyBuild,
  strategyLabel,
  strategyNames,
  type Transport,
  type TransportOptions,
  type TransportStats,
} from './transport/index.ts';

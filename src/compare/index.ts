/**
 * The comparison subsystem: the matrix of cells, fair interleaved runs, statistics across runs, the
 * re-analysis of a saved result, and a synthetic runner for trying it without a server.
 */
export {
  type AnalyzeOptions,
  analyze,
  BURST_METRICS,
  breakdownOf,
  cellStats,
  compareSamples,
  isBurstWorkload,
  keptRuns,
  METRICS,
  metricOf,
  metricSummary,
  metricsFor,
  type SampleComparison,
} from './analyze.ts';
export { diffResults } from './diff.ts';
export {
  type Cell,
  type CellRunner,
  type CompareDeps,
  type CompareEvents,
  type CompareHandle,
  compare,
  finishCompareResult,
  isProtocolNotOffered,
  newCompareResult,
  planCells,
  prepareMatrix,
  type RoundContext,
  recordRun,
  refreshCompareResult,
  runOrder,
  withRequest,
} from './engine.ts';
export {
  checkConditions,
  EXPECT_FORMS,
  EXPECT_METRICS,
  type ExpectCondition,
  evaluateConditions,
  expectationsFailed,
  parseCondition,
  type Relation,
} from './expect.ts';
export {
  type BootstrapOptions,
  bootstrapRatio,
  type ClassifyOptions,
  classifyRatio,
  DEFAULT_MIN_EFFECT,
  type Decided,
  type DecideOptions,
  decide,
  mannWhitneyP,
  type Outcome,
  type RatioInterval,
  runsNeeded,
  type Summary,
  separation,
  summarize,
  withinMinEffect,
} from './inference.ts';
export {
  type CellRunContext,
  cellLoadOptions,
  type LoadRunnerOptions,
  loadRunner,
  loadRunnerOptionsOf,
} from './load-runner.ts';
export * from './options.ts';
export {
  COMPARE_DEFAULTS,
  type CompareOptions,
  type CompareOptionsInput,
  compareOptionsSchema,
  defaultFixtureWorkloads,
  FIXTURE_ROUTES,
  MAX_COMPARE_WORKLOADS,
  resolveCompareOptions,
  sizeWorkload,
  urlWorkloads,
} from './options.ts';
export { type ReanalyzeOptions, reanalyze } from './reanalyze.ts';
export { loadCompareResult, resultsJson, writeResultsAtomic } from './results-file.ts';
export { COMPARE_FIXTURE, type RunComparisonHooks, runComparison, type StartedComparison } from './run.ts';
export { type SyntheticProfile, syntheticRun, syntheticRunner } from './synthetic.ts';

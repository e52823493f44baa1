/**
 * The comparison subsystem: the matrix of cells, fair interleaved runs, statistics across runs, the
 * re-analysis of a saved result, and a synthetic runner for trying it without a server.
 */
export { compareSamples, keptRuns, type SampleComparison } from './analyze.ts';
export { diffResults } from './diff.ts';
export {
  type Cell,
  compare,
  finishCompareResult,
  newCompareResult,
  prepareMatrix,
  recordRun,
  refreshCompareResult,
  runOrder,
} from './engine.ts';
export { evaluateConditions, expectationsFailed, parseCondition } from './expect.ts';
export {
  bootstrapRatio,
  DEFAULT_MIN_EFFECT,
  decide,
  type Outcome,
  type RatioInterval,
  summarize,
} from './inference.ts';
export { cellLoadOptions, loadRunnerOptionsOf } from './load-runner.ts';
export { COMPARE_DEFAULTS, RUNS_FLAG, sizeWorkload, urlWorkloads } from './meta.ts';
export { type CompareOptions, type CompareOptionsInput, resolveCompareOptions } from './options.ts';
export { reanalyze } from './reanalyze.ts';
export {
  loadCompareResult,
  loadReportableResult,
  resultsJson,
  writeResultsAtomic,
} from './results-file.ts';
export { type RunComparisonHooks, runComparison, type StartedComparison } from './run.ts';
export { syntheticRunner } from './synthetic.ts';

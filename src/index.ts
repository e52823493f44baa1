/**
 * h2lab's programmatic API. Everything the CLI does, a script can do through these exports.
 */

export * from './browser/index.ts';
export * from './compare/index.ts';
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
export * from './load/index.ts';
export * from './net/index.ts';
export * from './probe/index.ts';
export * from './report/index.ts';
export { renderBrowserHtml, renderBrowserText, renderRunText } from './report/index.ts';
export * from './server/index.ts';
export * from './tls/index.ts';
export type { Strategy, StrategyBuild, Transport, TransportStats } from './transport/index.ts';
export {
  baselineStrategy,
  createTransport,
  DEFAULT_STRATEGY,
  findStrategy,
  getStrategy,
  listStrategies,
  POOL_POLICIES,
  registerStrategy,
  resolveWindow,
  strategyLabel,
  strategyNames,
  type TransportOptions,
  WINDOW_PRESETS,
  WINDOW_SIZES,
  type WindowPreset,
} from './transport/index.ts';

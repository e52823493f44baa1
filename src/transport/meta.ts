/**
 * The transports' light face (docs/design.md, "Start-up: what a command's help loads"): the strategy
 * registry with the built-ins' descriptors, and the named choices (policies, clients, window presets),
 * loading no transport. A command's flags import this; what builds or runs a transport imports
 * src/transport/index.ts, which re-exports all of it.
 */

export {
  DEFAULT_WINDOW_PRESET,
  H2_CLIENTS,
  type H2ClientImpl,
  POOL_POLICIES,
  type PoolPolicy,
  WINDOW_PRESETS,
} from './presets.ts';
export {
  baselineStrategy,
  DEFAULT_STRATEGY,
  defaultMatrixStrategies,
  findStrategy,
  getStrategy,
  isBuiltInStrategy,
  listStrategies,
  multiplexedStrategy,
  registerStrategy,
  requestedWire,
  strategyLabel,
  strategyNames,
  usesQuic,
} from './registry.ts';
export type { Strategy, StrategyBuild } from './strategy.ts';

/**
 * The comparison's light face (docs/design.md, "Start-up: what a command's help loads"): its flags,
 * their defaults and the workloads `--sizes` makes, loading no schema, no zod and no engine. A
 * command's flags import this; what runs a comparison imports src/compare/index.ts.
 */
export {
  BANDWIDTH_FLAG,
  BASELINE_FLAG,
  BUDGET_FLAG,
  CC_FLAG,
  COMPARE_DEFAULTS,
  COMPARE_RUNS,
  COMPARE_WORKERS_MAX,
  EXPECT_FLAG,
  EXPECT_UNDECIDED_FLAG,
  H1_CONNECTIONS_FLAG,
  H2_POOL_POLICY_FLAG,
  H2_SESSIONS_FLAG,
  INITCWND_FLAG,
  JITTER_FLAG,
  LOSS_DOWN_FLAG,
  LOSS_FLAG,
  LOSS_UP_FLAG,
  MAX_COMPARE_WORKLOADS,
  MIN_EFFECT_FLAG,
  NET_BACKEND_FLAG,
  PATHS_FLAG,
  PROTOCOLS_FLAG,
  QUEUE_FLAG,
  RTT_FLAG,
  RUNS_FLAG,
  SIZES_FLAG,
  SLOW_START_AFTER_IDLE_FLAG,
  WARMUP_RUNS_FLAG,
} from './flags.ts';
export { sizeWorkload, urlWorkloads } from './workloads.ts';

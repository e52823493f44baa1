/**
 * One run spread over many load machines: the plan, one shard's run with its start barrier and clock
 * offset, the chunked output that survives a log pipeline, the collector and the exact merge, and a
 * local runner that executes a plan as processes on this machine (docs/kubernetes.md); for a load run
 * and for a comparison, whose runs the shards take in fixed time slots.
 */

// Its renderer lives in src/report (merged-text.ts) with the others; re-exported for the CLI's import.
export { renderMergedText } from '../report/index.ts';
export {
  CHUNK_PAYLOAD_CHARS,
  CHUNK_PREFIX,
  DIGEST_MAX_BYTES,
  encodeShardOutput,
  ShardCollector,
} from './chunks.ts';
export { type ClockServer, localNow, measureClockOffset, startClockServer } from './clock.ts';
export { mergeCompareShards } from './compare-merge.ts';
export {
  COMPARE_PLAN_DEFAULTS,
  type ComparePlanInput,
  comparePlanLengthMs,
  planCompareShards,
} from './compare-plan.ts';
export { runCompareShard } from './compare-run.ts';
export { type EmitOptions, runAndEmitShard, shardError } from './emit.ts';
export {
  type LocalCompareRun,
  type LocalRun,
  type LocalShards,
  runComparePlanLocally,
  runPlanLocally,
} from './local.ts';
export { MERGE_DEFAULTS, type MergeOptions, mergeShards } from './merge.ts';
export {
  canonicalJson,
  checkPlan,
  PLAN_DEFAULTS,
  type PlanInput,
  planHash,
  planShards,
  readPlanFile,
  shardLoadOptions,
  splitLoad,
} from './plan.ts';
export { runShard, type ShardDeps, startBarrier } from './run.ts';

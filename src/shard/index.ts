/**
 * One run spread over many load machines: the plan, one shard's run with its start barrier and clock
 * offset, the chunked output that survives a log pipeline, the collector and the exact merge, and a
 * local runner that executes a plan as processes on this machine (docs/kubernetes.md).
 */
export {
  CHUNK_PAYLOAD_CHARS,
  CHUNK_PREFIX,
  DIGEST_MAX_BYTES,
  encodeShardOutput,
  ShardCollector,
} from './chunks.ts';
export { type ClockServer, localNow, measureClockOffset, startClockServer } from './clock.ts';
export { type EmitOptions, runAndEmitShard } from './emit.ts';
export { type LocalRun, runPlanLocally } from './local.ts';
export { MERGE_DEFAULTS, type MergeOptions, mergeShards } from './merge.ts';
export {
  canonicalJson,
  checkPlan,
  PLAN_DEFAULTS,
  type PlanInput,
  planHash,
  planShards,
  readPlanFile,
} from './plan.ts';
export { renderMergedText } from './render.ts';
export { runShard, type ShardDeps } from './run.ts';

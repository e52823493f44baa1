/**
 * One run spread over many load machines: the plan, one shard's run with its start barrier and clock
 * offset, the chunked output that survives a log pipeline, the collector and the exact merge, and a
 * local runner that executes a plan as processes on this machine (docs/kubernetes.md); for a load run
 * and for a comparison, whose runs the shards take in fixed time slots.
 */

// Its renderer lives in src/report (merged-text.ts) with the others; re-exported for the CLI's import.
export { renderMergedText } from '../report/index.ts';
export { CHUNK_PAYLOAD_CHARS, encodeShardOutput, ShardCollector } from './chunks.ts';
export { measureClockOffset, startClockServer } from './clock.ts';
export { mergeCompareShards } from './compare-merge.ts';
export { comparePlanLengthMs, planCompareShards } from './compare-plan.ts';
export { runCompareShard } from './compare-run.ts';
export { runAndEmitShard, shardError } from './emit.ts';
export { runComparePlanLocally, runPlanLocally } from './local.ts';
export { type MergeOptions, mergeShards } from './merge.ts';
export { checkPlan, type PlanInput, planShards, readPlanFile } from './plan.ts';
export { runShard } from './run.ts';

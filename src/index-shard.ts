/**
 * `shard` in the package's API (`import { shard } from 'h2lab'`): one run or one comparison over many
 * load machines (docs/kubernetes.md) — the plan, one shard's run, its chunked output and collector,
 * the exact merge, the local runner and the reference clock. The folder's face (src/shard/index.ts)
 * offers more to the CLI and k8s; only these are the package's promise (docs/api.md).
 */
export {
  encodeShardOutput,
  mergeCompareShards,
  mergeShards,
  planCompareShards,
  planShards,
  runComparePlanLocally,
  runCompareShard,
  runPlanLocally,
  runShard,
  ShardCollector,
  startClockServer,
} from './shard/index.ts';

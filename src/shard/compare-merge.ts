/**
 * A sharded comparison as one CompareResult: every slot's runs, one per shard, merged exactly as a
 * load run's shards are (src/shard/merge.ts), then recorded, analysed and judged by the engine's own
 * functions in the engine's run order, so the verdict is the one a single process would write from
 * those runs.
 */

import {
  finishCompareResult,
  newCompareResult,
  prepareMatrix,
  recordRun,
  refreshCompareResult,
  resolveCompareOptions,
} from '../compare/index.ts';
import { H2labError } from '../core/index.ts';
import type {
  ComparePlan,
  CompareResult,
  CompareShardResult,
  ShardResult,
  ShardRun,
} from '../model/index.ts';
import { checkSet, type MergeOptions, mergeShards, NO_CLOCK_NOTE } from './merge.ts';

type Sharding = NonNullable<CompareResult['sharding']>;

/**
 * Merges the shards of a compare plan into the comparison's result. Throws H2LAB_ERR_SHARD_MISSING,
 * H2LAB_ERR_SHARD_DUPLICATE and H2LAB_ERR_SHARD_MISMATCH (shards of another plan, or of an h2lab whose
 * matrix differs). A shard that stopped early ends the result at the first run it lacks: the runs
 * before are kept, the status is `interrupted` and the error is the shard's (a missed start, a stop).
 * @example const result = mergeCompareShards(plan, collector.results() as CompareShardResult[]);
 */
export function mergeCompareShards(
  plan: ComparePlan,
  input: CompareShardResult[],
  opts: MergeOptions & { local?: { cpus: number } } = {},
): CompareResult {
  const { local, ...mergeOpts } = opts;
  const shards = checkSet(input, (s) => s.runs);
  if (shards[0]!.planHash !== plan.hash) {
    throw new H2labError(
      'H2LAB_ERR_SHARD_MISMATCH',
      `the shards belong to plan ${shards[0]!.planHash.slice(0, 12)}…, not to ${plan.hash.slice(0, 12)}… (run ${plan.runId}): give the plan they ran`,
      { planHash: plan.hash, shardsPlanHash: shards[0]!.planHash },
    );
  }
  const options = resolveCompareOptions(plan.compare);
  const { workloads, cells, conditions } = prepareMatrix(options);
  const ids = cells.map((c) => c.id).join(' ');
  if (ids !== plan.cells.map((c) => c.id).join(' ')) {
    throw new H2labError(
      'H2LAB_ERR_SHARD_MISMATCH',
      `the plan's cells (${plan.cells.length}) are not the matrix this h2lab makes of its options (${cells.length}): merge with the h2lab version that made the plan`,
      { planCells: plan.cells.map((c) => c.id), cells: cells.map((c) => c.id) },
    );
  }
  const result = newCompareResult(options, workloads, cells, { url: options.url!, embedded: false });
  const firstRun = shards.flatMap((s) => s.runs)[0]?.result;
  result.environment = {
    ...(firstRun
      ? {
          h2labVersion: firstRun.environment.h2labVersion,
          node: firstRun.environment.node,
          platform: firstRun.environment.platform,
          cpus: firstRun.environment.cpus,
        }
      : result.environment),
    startedAt: new Date(plan.startAtEpochMs).toISOString(),
  };
  const bySlot = shards.map((s) => new Map<number, ShardRun>(s.runs.map((r) => [r.slot, r])));
  const runs: Sharding['runs'] = [];
  let cut: { slot: number; shard: CompareShardResult } | undefined;
  const noClock = shards.some((s) => s.clock.source === 'none');
  for (let k = 0; k < plan.slots.length; k++) {
    const slot = plan.slots[k]!;
    const state = result.cells[slot.cell]!;
    const cell = cells[slot.cell]!;
    // The engine skips a cell once it failed or was not offered; every shard skipped it too.
    if (state.status === 'not-offered' || state.status === 'failed') continue;
    const parts = shards.map((_s, i) => bySlot[i]!.get(k));
    const lacking = shards.find((_, i) => parts[i] === undefined);
    if (lacking) {
      cut = { slot: k, shard: lacking };
      break;
    }
    const merged = mergeShards(
      shards.map(
        (s, i): ShardResult => ({
          kind: 'h2lab.shard',
          version: 2,
          runId: s.runId,
          planHash: s.planHash,
          index: s.index,
          count: s.count,
          clock: s.clock,
          barrier: parts[i]!.barrier,
          ...(parts[i]!.firstSendEpochMs !== undefined
            ? { firstSendEpochMs: parts[i]!.firstSendEpochMs }
            : {}),
          result: parts[i]!.result,
          tally: parts[i]!.tally,
        }),
      ),
      { maxSkewMs: plan.maxSkewMs, ...mergeOpts },
    );
    const run = merged.result;
    // Said once for the whole comparison (sharding.notes), not in every run.
    run.warnings = run.warnings.filter((w) => w !== NO_CLOCK_NOTE);
    state.status = 'running';
    recordRun(state, cell, slot.round, run, options.runs);
    runs.push({
      cell: cell.id,
      round: slot.round,
      skewMs: merged.clock.skewMs,
      windowMs: merged.clock.windowMs,
      perShard: merged.perShard,
      slowShards: merged.slowShards,
    });
  }
  finishCompareResult(result, options.runs, cut !== undefined);
  const notes = noClock ? [NO_CLOCK_NOTE] : [];
  if (cut) {
    const why = cut.shard.stopped;
    const slot = plan.slots[cut.slot]!;
    const message = `shard ${cut.shard.index} has no result for run ${cut.slot + 1} of ${plan.slots.length} (${plan.cells[slot.cell]!.id}, round ${slot.round})${why ? `: ${why.message}` : ''}; ${runs.length === 0 ? 'no run came before it' : runs.length === 1 ? 'the run before it is merged' : `the ${runs.length} runs before it are merged`}`;
    result.error = new H2labError(
      (why?.code as 'H2LAB_ERR_SHARD_MISSED_START' | undefined) ?? 'H2LAB_ERR_SHARD_MISSING',
      message,
      { shard: cut.shard.index, slot: cut.slot },
    ).toJSON();
    notes.push(message);
  }
  result.sharding = {
    runId: plan.runId,
    planHash: plan.hash,
    shards: shards.length,
    slotMs: plan.slotMs,
    clock: {
      reference: noClock ? 'none' : 'coordinator',
      maxSkewMs: opts.maxSkewMs ?? plan.maxSkewMs,
      worstSkewMs: Math.max(0, ...runs.map((r) => r.skewMs)),
    },
    runs,
    notes,
    ...(local ? { local: { processes: shards.length, cpus: local.cpus } } : {}),
  };
  refreshCompareResult(result, options, conditions);
  result.finishedAt = new Date().toISOString();
  return result;
}

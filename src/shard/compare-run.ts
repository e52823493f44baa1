/**
 * One shard of a sharded comparison: measure the clock offset once, then for every slot of the plan
 * open this shard's share of the run's connections, wait for the slot's start on the reference clock,
 * run, and go on to the next slot. A cell whose run failed here, or whose protocol the server does not
 * offer, is skipped for its later rounds, as the engine skips it; a slot reached too late ends the
 * shard (H2LAB_ERR_SHARD_MISSED_START), since every later run would be late too.
 */
import { H2labError, isH2labError } from '../core/index.ts';
import {
  emptyTally,
  type LoadOptionsInput,
  type LoadRun,
  type RunTally,
  runLoad,
  shipTally,
} from '../load/index.ts';
import type { ComparePlan, CompareShardResult, ShardRun } from '../model/index.ts';
import { shardLoadOptions } from './plan.ts';
import { checkIndex, type ShardDeps, shardClock, startBarrier } from './run.ts';

/**
 * Runs shard `index` of a compare plan. Resolves with what it ran, also when it stopped early (then
 * `stopped` says at which slot and why). Throws H2LAB_ERR_PLAN_INVALID for an index the plan does not
 * have and H2LAB_ERR_CLOCK when the reference clock does not answer.
 */
export async function runCompareShard(
  plan: ComparePlan,
  index: number,
  deps: ShardDeps = {},
): Promise<CompareShardResult> {
  checkIndex(plan, index);
  const clock = await shardClock(plan);
  const runs: ShardRun[] = [];
  const skipped: number[] = [];
  const dead = new Set<number>();
  let stopped: CompareShardResult['stopped'];
  let stopRequested = false;
  let current: LoadRun | undefined;
  deps.onRun?.({
    stop: () => {
      stopRequested = true;
      current?.stop();
    },
  });
  for (let k = 0; k < plan.slots.length; k++) {
    if (stopRequested) {
      stopped = {
        slot: k,
        code: 'H2LAB_ERR_INTERRUPTED',
        message: `shard ${index} was stopped before run ${k + 1}`,
      };
      break;
    }
    const slot = plan.slots[k]!;
    const cell = plan.cells[slot.cell]!;
    if (dead.has(slot.cell)) {
      skipped.push(k);
      continue;
    }
    const b = startBarrier(
      plan.startAtEpochMs + slot.atMs,
      clock.offsetMs,
      plan.startGraceMs,
      `shard ${index}, run ${k + 1} of ${plan.slots.length} (${cell.id}, round ${slot.round})`,
      k === 0
        ? 'plan with a larger --start-in so every shard is ready in time'
        : 'the run before it, or its connections, took longer than the slot: plan with a larger --slot-gap',
    );
    const input = shardLoadOptions(
      { ...cell.options, seed: slot.seed } as LoadOptionsInput,
      cell.split,
      index,
    );
    let result: ShardRun['result'];
    let tally: RunTally | undefined;
    try {
      current = runLoad(input as LoadOptionsInput, {
        ...deps.load,
        barrier: b.barrier,
        onTally: (t) => {
          tally = t;
        },
      });
      result = await current.done;
    } catch (err) {
      // Options are checked when the plan is made; this is a machine that cannot run them (a file).
      const e = isH2labError(err) ? err : new H2labError('H2LAB_ERR_INTERNAL', String(err), {});
      stopped = { slot: k, code: e.code, message: `shard ${index}, run ${k + 1}: ${e.message}` };
      break;
    } finally {
      current = undefined;
    }
    const code = result.error?.code;
    // A run stopped part-way is not a run (the engine discards it too), and a missed start ran nothing.
    if (stopRequested) {
      stopped = {
        slot: k,
        code: 'H2LAB_ERR_INTERRUPTED',
        message: `shard ${index} was stopped during run ${k + 1}`,
      };
      break;
    }
    if (code === 'H2LAB_ERR_SHARD_MISSED_START') {
      stopped = { slot: k, code, message: result.error!.message };
      break;
    }
    runs.push({ slot: k, ...b.record(result), result, tally: shipTally(tally ?? emptyTally()) });
    if (code !== undefined) dead.add(slot.cell);
  }
  return {
    kind: 'h2lab.compare-shard',
    version: 2,
    runId: plan.runId,
    planHash: plan.hash,
    index,
    count: plan.shards,
    clock,
    runs,
    skipped,
    ...(stopped ? { stopped } : {}),
  };
}

/**
 * One shard of a plan: measure the clock offset, open the connections, wait for the plan's start on
 * the reference clock, run the shard's options, report when it was released and when it first sent.
 *
 *   measure offset ─▶ open connections ─▶ barrier: sleep until startAt − offset ─▶ schedule from t0
 *                                          (later than startAt + grace: refuse, exit 3)
 *
 * A comparison's shard (src/shard/compare-run.ts) does the same for every run of the comparison, each
 * with its own barrier at its slot's start.
 */
import { H2labError } from '../core/index.ts';
import {
  emptyTally,
  type LoadDeps,
  type LoadOptionsInput,
  type RunTally,
  runLoad,
  shipTally,
} from '../load/index.ts';
import type { AnyPlan, RunResult, ShardPlan, ShardResult } from '../model/index.ts';
import { type ClockReading, localNow, measureClockOffset, sleepUntil } from './clock.ts';

/** What {@link runShard} may be given besides the plan and the index. */
export interface ShardDeps {
  /** Passed on to runLoad (e.g. a fixture target in tests); its barrier is the shard's own. */
  load?: Omit<LoadDeps, 'barrier'>;
  /** Called once the shard started, with what stops it (SIGTERM): the run in progress ends, and so does the shard. */
  onRun?: (run: { stop(): void }) => void;
}

/** Throws H2LAB_ERR_PLAN_INVALID for an index the plan does not have. */
export function checkIndex(plan: AnyPlan, index: number): void {
  if (!Number.isInteger(index) || index < 0 || index >= plan.shards) {
    throw new H2labError(
      'H2LAB_ERR_PLAN_INVALID',
      `--index ${index} is not a shard of this plan: it has shards 0 to ${plan.shards - 1} (Kubernetes sets JOB_COMPLETION_INDEX)`,
      { option: '--index', value: index, shards: plan.shards },
    );
  }
}

/** The shard's clock: its offset to the plan's coordinator, measured, or none. */
export async function shardClock(plan: AnyPlan): Promise<ShardResult['clock']> {
  const clock: ClockReading | undefined = plan.clock.url
    ? await measureClockOffset(plan.clock.url, plan.clock.samples)
    : undefined;
  return clock
    ? {
        source: 'coordinator',
        url: plan.clock.url!,
        offsetMs: clock.offsetMs,
        rttMs: clock.rttMs,
        samples: clock.samples,
      }
    : { source: 'none', offsetMs: 0, samples: 0 };
}

/**
 * A start barrier at `startAtEpochMs` on the reference clock, for runLoad: it sleeps until then on
 * this machine's clock corrected by `offsetMs`, and refuses (H2LAB_ERR_SHARD_MISSED_START) when it is
 * reached more than `graceMs` late. `record` says afterwards when it was reached and released.
 */
export function startBarrier(
  startAtEpochMs: number,
  offsetMs: number,
  graceMs: number,
  what: string,
  fix: string,
): {
  barrier: () => Promise<void>;
  record(result: RunResult): Pick<ShardResult, 'barrier' | 'firstSendEpochMs'>;
} {
  const startLocal = startAtEpochMs - offsetMs;
  let releasedLocal: number | undefined;
  let reachedLocal: number | undefined;
  const barrier = async (): Promise<void> => {
    reachedLocal = localNow();
    const late = reachedLocal - startLocal;
    if (late > graceMs) {
      throw new H2labError(
        'H2LAB_ERR_SHARD_MISSED_START',
        `${what} reached the start barrier ${Math.round(late)} ms after its start (grace ${graceMs} ms): it did not run; ${fix}`,
        { lateMs: late, startGraceMs: graceMs },
      );
    }
    await sleepUntil(startLocal);
    releasedLocal = localNow();
  };
  const record = (result: RunResult): Pick<ShardResult, 'barrier' | 'firstSendEpochMs'> => {
    const released = releasedLocal === undefined ? undefined : releasedLocal + offsetMs;
    const first = result.schedule.firstSendMs;
    return {
      barrier: {
        startAtEpochMs,
        // A run that failed before its connections were open never reached the barrier: now, then.
        reachedAtEpochMs: (reachedLocal ?? localNow()) + offsetMs,
        ...(released !== undefined ? { releasedAtEpochMs: released, lagMs: released - startAtEpochMs } : {}),
      },
      ...(released !== undefined && first !== undefined ? { firstSendEpochMs: released + first } : {}),
    };
  };
  return { barrier, record };
}

/**
 * Runs shard `index` of `plan`. Resolves with its result, also when the run failed (then
 * `result.error` is set: H2LAB_ERR_SHARD_MISSED_START when it reached the barrier too late). Throws
 * H2LAB_ERR_PLAN_INVALID for an index the plan does not have and H2LAB_ERR_CLOCK when the reference
 * clock does not answer.
 */
export async function runShard(plan: ShardPlan, index: number, deps: ShardDeps = {}): Promise<ShardResult> {
  checkIndex(plan, index);
  const clock = await shardClock(plan);
  const b = startBarrier(
    plan.startAtEpochMs,
    clock.offsetMs,
    plan.startGraceMs,
    `shard ${index}`,
    'plan with a larger --start-in so every shard is ready in time',
  );
  let tally: RunTally | undefined;
  const run = runLoad(plan.shardOptions[index] as LoadOptionsInput, {
    ...deps.load,
    barrier: b.barrier,
    onTally: (t) => {
      tally = t;
    },
  });
  deps.onRun?.(run);
  const result = await run.done;
  return {
    kind: 'h2lab.shard',
    version: 2,
    runId: plan.runId,
    planHash: plan.hash,
    index,
    count: plan.shards,
    clock,
    ...b.record(result),
    result,
    // A run that failed before measuring has no tally: it merges as nothing measured.
    tally: shipTally(tally ?? emptyTally()),
  };
}

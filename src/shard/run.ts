/**
 * One shard of a plan: measure the clock offset, open the connections, wait for the plan's start on
 * the reference clock, run the shard's options, report when it was released and when it first sent.
 *
 *   measure offset ─▶ open connections ─▶ barrier: sleep until startAt − offset ─▶ schedule from t0
 *                                          (later than startAt + grace: refuse, exit 3)
 */
import { H2labError } from '../core/index.ts';
import { type LoadDeps, type LoadOptionsInput, runLoad } from '../load/index.ts';
import type { ShardPlan, ShardResult } from '../model/index.ts';
import { type ClockReading, localNow, measureClockOffset, sleepUntil } from './clock.ts';

/** What {@link runShard} may be given besides the plan and the index. */
export interface ShardDeps {
  /** Passed on to runLoad (e.g. a fixture target in tests); its barrier is the shard's own. */
  load?: Omit<LoadDeps, 'barrier'>;
  /** Called with the load run once it started, e.g. to stop it on SIGTERM. */
  onRun?: (run: ReturnType<typeof runLoad>) => void;
}

/**
 * Runs shard `index` of `plan`. Resolves with its result, also when the run failed (then
 * `result.error` is set: H2LAB_ERR_SHARD_MISSED_START when it reached the barrier too late). Throws
 * H2LAB_ERR_PLAN_INVALID for an index the plan does not have and H2LAB_ERR_CLOCK when the reference
 * clock does not answer.
 */
export async function runShard(plan: ShardPlan, index: number, deps: ShardDeps = {}): Promise<ShardResult> {
  if (!Number.isInteger(index) || index < 0 || index >= plan.shards) {
    throw new H2labError(
      'H2LAB_ERR_PLAN_INVALID',
      `--index ${index} is not a shard of this plan: it has shards 0 to ${plan.shards - 1} (Kubernetes sets JOB_COMPLETION_INDEX)`,
      { option: '--index', value: index, shards: plan.shards },
    );
  }
  const clock: ClockReading | undefined = plan.clock.url
    ? await measureClockOffset(plan.clock.url, plan.clock.samples)
    : undefined;
  const offset = clock?.offsetMs ?? 0;
  const startLocal = plan.startAtEpochMs - offset;
  let releasedLocal: number | undefined;
  let reachedLocal: number | undefined;
  const barrier = async (): Promise<void> => {
    reachedLocal = localNow();
    const late = reachedLocal - startLocal;
    if (late > plan.startGraceMs) {
      throw new H2labError(
        'H2LAB_ERR_SHARD_MISSED_START',
        `shard ${index} reached the start barrier ${Math.round(late)} ms after the plan's start (grace ${plan.startGraceMs} ms): it did not run; plan with a larger --start-in so every shard is ready in time`,
        { index, lateMs: late, startGraceMs: plan.startGraceMs },
      );
    }
    await sleepUntil(startLocal);
    releasedLocal = localNow();
  };
  const run = runLoad(plan.shardOptions[index] as LoadOptionsInput, { ...deps.load, barrier });
  deps.onRun?.(run);
  const result = await run.done;
  const released = releasedLocal === undefined ? undefined : releasedLocal + offset;
  const first = result.schedule.firstSendMs;
  return {
    kind: 'h2lab.shard',
    version: 1,
    runId: plan.runId,
    planHash: plan.hash,
    index,
    count: plan.shards,
    clock: clock
      ? {
          source: 'coordinator',
          url: plan.clock.url!,
          offsetMs: clock.offsetMs,
          rttMs: clock.rttMs,
          samples: clock.samples,
        }
      : { source: 'none', offsetMs: 0, samples: 0 },
    barrier: {
      startAtEpochMs: plan.startAtEpochMs,
      // A run that failed before its connections were open never reached the barrier: now, then.
      reachedAtEpochMs: (reachedLocal ?? localNow()) + offset,
      ...(released !== undefined
        ? { releasedAtEpochMs: released, lagMs: released - plan.startAtEpochMs }
        : {}),
    },
    ...(released !== undefined && first !== undefined ? { firstSendEpochMs: released + first } : {}),
    result,
  };
}

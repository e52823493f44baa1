/**
 * A comparison split into shards. The engine runs a comparison as a sequence of load runs (groups,
 * rounds, strategies alternating; src/compare/engine.ts); sharded, every shard runs its share of each
 * of those runs **at the same time**, so the plan gives every run a fixed slot:
 *
 *   start ─▶ slot 0 (h1 c=8, round 0) ─▶ slot 1 (h2 c=8, round 0) ─▶ … ─▶ slot M-1
 *            │◀── warm-up + duration ──▶│◀ gap ▶│
 *
 * Each slot's run is split as a load run is (src/shard/plan.ts): the same rate and arrival sequence
 * with every shard taking the arrivals of its index, or concurrency and connections divided. Every
 * shard waits for each slot's start on the reference clock (its own barrier per run), so the runs of a
 * round stay alternated across the fleet as they are in one process. Runs must be bounded in time:
 * `--requests` (a run of unknown length), bursts (one instant from one process), the embedded target
 * and emulated links are refused.
 */

import {
  type CompareOptions,
  type CompareOptionsInput,
  cellLoadOptions,
  loadRunnerOptionsOf,
  prepareMatrix,
  resolveCompareOptions,
  runOrder,
  urlWorkloads,
} from '../compare/index.ts';
import { H2labError, isH2labError } from '../core/index.ts';
import type { LoadOptionsInput } from '../load/index.ts';
import { type ComparePlan, comparePlanSchema } from '../model/index.ts';
import { getStrategy } from '../transport/index.ts';
import {
  checkShardCount,
  type PlanInput,
  planTiming,
  sealPlan,
  shardLoadOptions,
  splitLoad,
} from './plan.ts';

/** What a comparison's plan needs besides the plan's common input. */
interface ComparePlanInput extends PlanInput {
  /** Time after each run's measured period before the next run's start, ms. Default 1000. */
  slotGapMs?: number;
}

/** The compare plan's own default, a decision recorded in every plan. */
const COMPARE_PLAN_DEFAULTS = Object.freeze({
  /**
   * ms. Between one run's end and the next run's start a shard receives the last responses, closes
   * the pool and opens the next one (a TLS handshake per connection, up to --h1-connections of them);
   * one second holds that for a target a few tens of ms away. A shard that is not ready within the
   * plan's grace after a slot's start stops (H2LAB_ERR_SHARD_MISSED_START) and says so.
   */
  slotGapMs: 1000,
});

function unsupported(option: string, why: string): H2labError {
  return new H2labError('H2LAB_ERR_SHARD_UNSUPPORTED', `${option} cannot be split into shards: ${why}`, {
    option,
  });
}

/** The refusals of a sharded comparison, before anything is split. */
function checkShardable(o: CompareOptions): void {
  if (!o.url) {
    throw unsupported(
      'url',
      'every shard would start its own embedded fixture server; name the one target every shard drives (h2lab serve on a host they all reach)',
    );
  }
  if (o.requests !== undefined) {
    throw unsupported(
      '--requests',
      'the shards run every run in a fixed time slot, and a run of N requests has no length known in advance; use --duration',
    );
  }
  if (o.burst !== undefined || o.workloads?.some((w) => w.burst !== undefined)) {
    throw unsupported(
      '--burst',
      'a burst is N requests at one instant from one process; use --concurrency or --rate',
    );
  }
  if (o.links !== undefined || o.net.some((n) => n !== 'loopback')) {
    throw unsupported(
      '--net',
      'emulated links put the embedded fixture server behind them; run the target behind a link with h2lab net run and give its address',
    );
  }
  if (o.metricsUrl !== undefined) {
    throw unsupported(
      '--metrics-url',
      "every shard would reset and read the one server's counters around its own share of a run; drop --metrics-url",
    );
  }
}

/**
 * Splits a comparison into a plan: every run of the engine's order at a fixed slot, each cell's load
 * options and their split. Throws H2LAB_ERR_INVALID_OPTION (the options), H2LAB_ERR_SHARD_TOO_SMALL
 * (naming the flag and the cell) and H2LAB_ERR_SHARD_UNSUPPORTED.
 * @example planCompareShards({ url: 'https://t/', concurrency: [8, 64], durationMs: 5000 }, { shards: 4, startAtEpochMs: Date.now() + 120_000 })
 */
export function planCompareShards(input: CompareOptionsInput, p: ComparePlanInput): ComparePlan {
  const n = p.shards;
  checkShardCount(n);
  const asked = resolveCompareOptions(input);
  checkShardable(asked);
  const url = asked.url!;
  // As runComparison does: a URL's own path is the workload when none is given.
  const options = resolveCompareOptions({ ...input, url, workloads: input.workloads ?? urlWorkloads(url) });
  const gap = p.slotGapMs ?? COMPARE_PLAN_DEFAULTS.slotGapMs;
  if (!(gap >= 0) || gap > 3_600_000) {
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `--slot-gap ${gap} ms is not valid: use a time from 0 to 1h, e.g. 1s`,
      { option: '--slot-gap', value: gap },
    );
  }
  const { cells } = prepareMatrix(options);
  const runner = loadRunnerOptionsOf(options, {
    ...(options.tls?.ca ? { ca: options.tls.ca } : {}),
    ...(options.tls?.insecure ? { insecure: true } : {}),
  });
  const cellPlans = cells.map((cell) => {
    const { seed: _seed, ...load } = cellLoadOptions(runner, cell, {
      url,
      seed: options.seed,
      durationMs: options.durationMs,
      runWarmupMs: options.runWarmupMs,
    }) as LoadOptionsInput & Record<string, unknown>;
    const whole = { ...load, seed: options.seed } as LoadOptionsInput;
    const multiplexed = getStrategy(cell.protocol).multiplexed;
    try {
      const split = splitLoad(whole, n, {
        connections: multiplexed ? '--h2-sessions' : '--h1-connections',
      });
      // Each shard validates on its own machine: the largest and the smallest share must be valid.
      shardLoadOptions(whole, split, 0);
      shardLoadOptions(whole, split, n - 1);
      return { id: cell.id, options: load, split };
    } catch (err) {
      if (isH2labError(err) && err.code === 'H2LAB_ERR_SHARD_TOO_SMALL') {
        throw new H2labError(err.code, `${err.message} (cell ${cell.id})`, { ...err.details, cell: cell.id });
      }
      throw err;
    }
  });
  const slotMs = options.runWarmupMs + options.durationMs + gap;
  const slots = runOrder(cells, options.runs).map(([cell, round], k) => ({
    cell,
    round,
    seed: options.seed + round,
    atMs: k * slotMs,
  }));
  const body: Omit<ComparePlan, 'hash' | 'runId'> = {
    kind: 'h2lab.compare-plan',
    version: 1,
    shards: n,
    ...planTiming(p),
    compare: JSON.parse(JSON.stringify(options)) as Record<string, unknown>,
    slotMs,
    slotGapMs: gap,
    cells: cellPlans,
    slots,
  };
  return sealPlan<ComparePlan>(body, p.runId, comparePlanSchema);
}

/** How long a compare plan runs from its start to the end of its last slot, ms. */
export function comparePlanLengthMs(plan: ComparePlan): number {
  return plan.slots.length * plan.slotMs;
}

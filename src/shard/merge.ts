/**
 * The exact merge of a plan's shards. Each shard ships its run's tally (src/load/tally.ts): the merge
 * adds them with the load engine's own merge and builds the whole run's result with its own builder
 * (`toRunResult`), so the merged result holds every field a single run's has, each computed as a
 * single run computes it — counts added, every histogram added bucket by bucket (HdrHistogram
 * addition loses nothing when every shard recorded with the same settings, which the plan hash and the
 * settings in each encoded histogram both enforce). Rates are counts over the run's window on the
 * **reference** clock (each shard's release, as its offset to the coordinator corrected it, plus its
 * measured period): never a difference between two machines' own clocks. Without a reference clock the
 * window is the longest shard's measured period (one machine's monotonic clock), and the result says so.
 */
import { H2labError } from '../core/index.ts';
import {
  decodeHistogram,
  HISTOGRAM_SETTINGS,
  mergeAll,
  type ResolvedLoadOptions,
  type RunTally,
  receiveTally,
  toRunResult,
} from '../load/index.ts';
import type { EncodedHistogram, MergedResult, RunResult, ShardResult, ShardTally } from '../model/index.ts';
import { metricsDelta, serverViewOf } from '../server/index.ts';

/** Options of {@link mergeShards}. */
export interface MergeOptions {
  /** Warn when shards were released further apart than this, ms. Default: 10. */
  maxSkewMs?: number;
  /** A shard whose median latency exceeds this many times the others' median is named. Default: 2. */
  slowFactor?: number;
}

/** The defaults of {@link MergeOptions}. */
const MERGE_DEFAULTS = Object.freeze({ maxSkewMs: 10, slowFactor: 2 });

/** What a merged result says when the plan had no reference clock. */
export const NO_CLOCK_NOTE =
  'no reference clock (plan without --clock-url): the start skew is unknown and rates use the longest shard’s measured period';

/**
 * Checks that the shards are one complete set of one plan (each index once) recorded with the plan's
 * histogram settings, and returns them by index. `runsOf` gives the runs a shard holds, each a result
 * and its tally.
 */
export function checkSet<S extends { index: number; count: number; planHash: string; runId: string }>(
  shards: S[],
  runsOf: (s: S) => Array<{ result: RunResult; tally: ShardTally }>,
): S[] {
  if (shards.length === 0) {
    throw new H2labError(
      'H2LAB_ERR_SHARD_MISSING',
      'no shard results to merge: give the shard files of one plan',
      {},
    );
  }
  const first = shards[0]!;
  const other = shards.find((s) => s.planHash !== first.planHash || s.count !== first.count);
  if (other) {
    throw new H2labError(
      'H2LAB_ERR_SHARD_MISMATCH',
      `shard ${other.index} belongs to plan ${other.planHash.slice(0, 12)}… (${other.count} shards), shard ${first.index} to ${first.planHash.slice(0, 12)}… (${first.count}): merge only the shards of one plan`,
      { planHashes: [...new Set(shards.map((s) => s.planHash))] },
    );
  }
  const byIndex = new Map<number, S>();
  const dup: number[] = [];
  for (const s of shards) {
    if (byIndex.has(s.index)) dup.push(s.index);
    byIndex.set(s.index, s);
  }
  if (dup.length > 0) {
    throw new H2labError(
      'H2LAB_ERR_SHARD_DUPLICATE',
      `shard${dup.length > 1 ? 's' : ''} ${[...new Set(dup)].join(', ')} given twice: give each shard's result once`,
      { duplicate: [...new Set(dup)] },
    );
  }
  const missing = Array.from({ length: first.count }, (_, i) => i).filter((i) => !byIndex.has(i));
  if (missing.length > 0) {
    throw new H2labError(
      'H2LAB_ERR_SHARD_MISSING',
      `shard${missing.length > 1 ? 's' : ''} ${missing.join(', ')} of ${first.count} missing: give every shard's result of run ${first.runId}`,
      { missing },
    );
  }
  for (const s of shards) {
    for (const [k, h] of runsOf(s).flatMap((r) => [
      ...Object.entries(r.result.histograms),
      ...Object.entries(r.tally.histograms).map(([name, e]): [string, EncodedHistogram] => [
        `tally ${name}`,
        e,
      ]),
    ])) {
      if (!h) continue;
      const same =
        h.unit === HISTOGRAM_SETTINGS.unit &&
        h.lowestUs === HISTOGRAM_SETTINGS.lowestUs &&
        h.highestUs === HISTOGRAM_SETTINGS.highestUs &&
        h.significantDigits === HISTOGRAM_SETTINGS.significantDigits;
      if (!same) {
        throw new H2labError(
          'H2LAB_ERR_SHARD_MISMATCH',
          `shard ${s.index}'s ${k} histogram was recorded with ${h.lowestUs}..${h.highestUs} µs, ${h.significantDigits} digits; the plan's are ${HISTOGRAM_SETTINGS.lowestUs}..${HISTOGRAM_SETTINGS.highestUs} µs, ${HISTOGRAM_SETTINGS.significantDigits} digits: run every shard with the same h2lab version`,
          { index: s.index, histogram: k },
        );
      }
      try {
        decodeHistogram(h);
      } catch (err) {
        // Settings right, bytes wrong: a file edited or cut, not another version's.
        throw new H2labError(
          'H2LAB_ERR_SHARD_CORRUPT',
          `shard ${s.index}'s ${k} histogram cannot be decoded (${err instanceof Error ? err.message : String(err)}): the file was damaged; take that shard's output again (its --out file or its log)`,
          { index: s.index, histogram: k },
        );
      }
    }
  }
  return [...byIndex.values()].sort((a, b) => a.index - b.index);
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/**
 * Merges the shards of one plan. Throws H2LAB_ERR_SHARD_MISSING, H2LAB_ERR_SHARD_DUPLICATE and
 * H2LAB_ERR_SHARD_MISMATCH; a shard that failed is merged with what it measured and named.
 * @example const merged = mergeShards(collector.results());
 */
export function mergeShards(input: ShardResult[], opts: MergeOptions = {}): MergedResult {
  const shards = checkSet(input, (s) => [s]);
  const maxSkewMs = opts.maxSkewMs ?? MERGE_DEFAULTS.maxSkewMs;
  const warnings: string[] = [];
  const clock = referenceWindow(shards, maxSkewMs, warnings);
  const rows = shardRows(shards, clock.earliest);
  const slowShards = slowOnes(rows, opts.slowFactor ?? MERGE_DEFAULTS.slowFactor, warnings);
  for (const s of shards) {
    if (s.result.error)
      warnings.push(`shard ${s.index} failed: ${s.result.error.code}: ${s.result.error.message}`);
    for (const w of s.result.warnings) warnings.push(`shard ${s.index}: ${w}`);
  }
  const rs = shards.map((s) => s.result);
  const negotiated = [...new Set(rs.map((r) => r.protocol.negotiated))];
  if (negotiated.length > 1)
    warnings.push(`the shards negotiated different protocols: ${negotiated.join(', ')}`);
  const result = wholeRun(shards, mergeAll(shards.map((s) => receiveTally(s.tally))), clock.windowMs);
  result.protocol.negotiated = negotiated.length === 1 ? negotiated[0]! : 'none';
  result.warnings.push(...warnings);
  const error = shards.find((s) => s.result.error);
  if (error?.result.error) {
    result.error = { ...error.result.error, message: `shard ${error.index}: ${error.result.error.message}` };
  }
  return {
    kind: 'h2lab.merged',
    version: 1,
    runId: shards[0]!.runId,
    planHash: shards[0]!.planHash,
    shards: shards.length,
    result,
    perShard: rows,
    clock: { reference: clock.reference, skewMs: clock.skewMs, maxSkewMs, windowMs: clock.windowMs },
    slowShards,
    warnings: warnings.slice(),
  };
}

/**
 * The whole run's result from the merged tally, as a single run's is built: the whole run's options
 * (each shard's shares summed), the first shard's target and environment, started when the first did.
 */
function wholeRun(shards: ShardResult[], tally: RunTally, windowMs: number): RunResult {
  const rs = shards.map((s) => s.result);
  const base = rs[0]!;
  const sum = (f: (r: RunResult) => number): number => rs.reduce((n, r) => n + f(r), 0);
  const { shard: _shard, ...options } = base.options as Record<string, unknown>;
  if (base.schedule.mode !== 'open') {
    options.concurrency = sum((r) => (r.options.concurrency as number | undefined) ?? 0);
    if (base.options.requests !== undefined)
      options.requests = sum((r) => (r.options.requests as number) ?? 0);
  }
  options.connections = sum((r) => r.transport.connections);
  const result = toRunResult(tally, {
    options: options as ResolvedLoadOptions,
    target: base.target,
    environment: { ...base.environment, startedAt: rs.map((r) => r.environment.startedAt).sort()[0]! },
    durationMs: windowMs,
    serverView: (r) =>
      r.before && r.after ? serverViewOf(metricsDelta(r.before.metrics, r.after.metrics)) : undefined,
  });
  // What the shards knew and the tally does not: the link each went through, the path to the target.
  if (base.environment.link) result.environment.link = base.environment.link;
  return result;
}

/** The run's window on the reference clock and how far apart the shards started. */
function referenceWindow(
  shards: ShardResult[],
  maxSkewMs: number,
  warnings: string[],
): { reference: 'coordinator' | 'none'; earliest: number; skewMs: number; windowMs: number } {
  const reference = shards.every((s) => s.clock.source === 'coordinator') ? 'coordinator' : 'none';
  const ran = shards.filter((s) => s.barrier.releasedAtEpochMs !== undefined);
  const released = ran.map((s) => s.barrier.releasedAtEpochMs!);
  const earliest = released.length > 0 ? Math.min(...released) : 0;
  const skewMs = released.length > 0 ? Math.max(...released) - earliest : 0;
  if (reference !== 'coordinator') {
    warnings.push(NO_CLOCK_NOTE);
    return {
      reference,
      earliest,
      skewMs: 0,
      windowMs: Math.max(0, ...shards.map((s) => s.result.durationMs)),
    };
  }
  const starts = ran.map((s) => s.barrier.releasedAtEpochMs! + s.result.warmupMs);
  const ends = ran.map((s, i) => starts[i]! + s.result.durationMs);
  if (skewMs > maxSkewMs) {
    const latest = ran[released.indexOf(Math.max(...released))]!.index;
    warnings.push(
      `the shards started ${skewMs.toFixed(1)} ms apart on the reference clock (shard ${latest} last), more than --max-skew ${maxSkewMs} ms: their first arrivals did not coincide`,
    );
  }
  return {
    reference,
    earliest,
    skewMs,
    windowMs: ran.length > 0 ? Math.max(...ends) - Math.min(...starts) : 0,
  };
}

type ShardRow = MergedResult['perShard'][number];

/** One row per shard beside the merged result. */
function shardRows(shards: ShardResult[], earliest: number): ShardRow[] {
  return shards.map((s) => ({
    index: s.index,
    total: s.result.counts.total,
    ok: s.result.counts.ok,
    failed: s.result.counts.failed,
    latencyP50Ms: s.result.latencyMs.p50,
    latencyP99Ms: s.result.latencyMs.p99,
    latencyMaxMs: s.result.latencyMs.max,
    clockOffsetMs: s.clock.offsetMs,
    ...(s.clock.rttMs !== undefined ? { clockRttMs: s.clock.rttMs } : {}),
    ...(s.barrier.releasedAtEpochMs !== undefined
      ? { startSkewMs: s.barrier.releasedAtEpochMs - earliest, barrierLagMs: s.barrier.lagMs! }
      : {}),
    reachedBeforeStartMs: s.barrier.startAtEpochMs - s.barrier.reachedAtEpochMs,
    ...(s.firstSendEpochMs !== undefined
      ? { firstSendMs: s.firstSendEpochMs - s.barrier.startAtEpochMs }
      : {}),
    ...(s.result.error ? { error: s.result.error.code } : {}),
  }));
}

/** The shards whose median latency is far above the others', each named in a warning. */
function slowOnes(rows: ShardRow[], slowFactor: number, warnings: string[]): number[] {
  const slow: number[] = [];
  if (rows.length < 2) return slow;
  for (const row of rows) {
    if (row.total === 0) continue;
    const others = rows.filter((r) => r.index !== row.index && r.total > 0).map((r) => r.latencyP50Ms);
    if (others.length === 0) continue;
    const m = median(others);
    // 1 ms of absolute difference too: on loopback a factor of 2 between 0.1 and 0.2 ms is noise.
    if (row.latencyP50Ms > slowFactor * m && row.latencyP50Ms - m > 1) {
      slow.push(row.index);
      warnings.push(
        `shard ${row.index} is much slower than the others: median latency ${row.latencyP50Ms} ms against ${m} ms (its machine, its network path or its share of the target)`,
      );
    }
  }
  return slow;
}

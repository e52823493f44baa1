/**
 * The exact merge of a plan's shards. Counts add; latency histograms add bucket by bucket (HdrHistogram
 * addition loses nothing when every shard recorded with the same settings, which the plan hash and the
 * settings in each encoded histogram both enforce); min and max are the shards' extremes. Rates are
 * counts over the run's window on the **reference** clock (each shard's release, as its offset to the
 * coordinator corrected it, plus its measured period): never a difference between two machines' own
 * clocks. Without a reference clock the window is the longest shard's measured period (one machine's
 * monotonic clock), and the result says so.
 */
import { H2labError } from '../core/index.ts';
import {
  addCounts,
  countsOfResult,
  countsSection,
  decodeHistogram,
  emptyCounts,
  encodeHistogram as encode,
  HISTOGRAM_SETTINGS,
  newHistogram,
  summarizeHistogram,
} from '../load/index.ts';
import type {
  EncodedHistogram,
  LatencySummaryMs,
  MergedResult,
  RunResult,
  ShardResult,
} from '../model/index.ts';

/** Options of {@link mergeShards}. */
export interface MergeOptions {
  /** Warn when shards were released further apart than this, ms. Default: 10. */
  maxSkewMs?: number;
  /** A shard whose median latency exceeds this many times the others' median is named. Default: 2. */
  slowFactor?: number;
}

/** The defaults of {@link MergeOptions}. */
export const MERGE_DEFAULTS = Object.freeze({ maxSkewMs: 10, slowFactor: 2 });

const HISTOGRAMS = ['latency', 'ttfb', 'latencyUncorrected'] as const;

/** What every merged result says about the figures it cannot merge exactly. */
export const PER_SHARD_NOTE =
  'clientQueueMs, connectMs and tlsMs percentiles are the highest shard’s (a RunResult keeps no histogram for them; count, min, max, mean exact); connectionAge, flowControl, TCP facts and the server view are per shard only';
/** What a merged result says when the plan had no reference clock. */
export const NO_CLOCK_NOTE =
  'no reference clock (plan without --clock-url): the start skew is unknown and rates use the longest shard’s measured period';

/**
 * Checks that the shards are one complete set of one plan (each index once) recorded with the plan's
 * histogram settings, and returns them by index. `runsOf` gives the RunResults a shard holds.
 */
export function checkSet<S extends { index: number; count: number; planHash: string; runId: string }>(
  shards: S[],
  runsOf: (s: S) => RunResult[],
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
    for (const [k, h] of runsOf(s).flatMap((r) =>
      HISTOGRAMS.map((name): [string, EncodedHistogram | undefined] => [name, r.histograms[name]]),
    )) {
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

/** A summary of the added histogram with min and max the shards' exact extremes. */
function mergedSummary(parts: LatencySummaryMs[], h: ReturnType<typeof newHistogram>): LatencySummaryMs {
  const s = summarizeHistogram(h);
  const seen = parts.filter((p) => p.count > 0);
  if (seen.length === 0) return s;
  return { ...s, min: Math.min(...seen.map((p) => p.min)), max: Math.max(...seen.map((p) => p.max)) };
}

/**
 * Summaries a RunResult keeps no histogram for (client queue, connect, TLS): count, min, max and mean
 * are exact; the percentiles are the highest shard's, an upper bound.
 */
function boundSummary(parts: LatencySummaryMs[]): LatencySummaryMs {
  const seen = parts.filter((p) => p.count > 0);
  const count = seen.reduce((n, p) => n + p.count, 0);
  if (count === 0) return { p50: 0, p90: 0, p99: 0, p999: 0, max: 0, min: 0, mean: 0, count: 0 };
  const top = (k: 'p50' | 'p90' | 'p99' | 'p999'): number => Math.max(...seen.map((p) => p[k]));
  return {
    p50: top('p50'),
    p90: top('p90'),
    p99: top('p99'),
    p999: top('p999'),
    min: Math.min(...seen.map((p) => p.min)),
    max: Math.max(...seen.map((p) => p.max)),
    mean: seen.reduce((n, p) => n + p.mean * p.count, 0) / count,
    count,
  };
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
  const shards = checkSet(input, (s) => [s.result]);
  const maxSkewMs = opts.maxSkewMs ?? MERGE_DEFAULTS.maxSkewMs;
  const slowFactor = opts.slowFactor ?? MERGE_DEFAULTS.slowFactor;
  const rs = shards.map((s) => s.result);
  const base = rs[0]!;
  const warnings: string[] = [];

  const counts = emptyCounts();
  for (const r of rs) addCounts(counts, countsOfResult(r));
  const hist = Object.fromEntries(HISTOGRAMS.map((k) => [k, newHistogram()])) as Record<
    (typeof HISTOGRAMS)[number],
    ReturnType<typeof newHistogram>
  >;
  for (const r of rs) {
    for (const k of HISTOGRAMS) {
      const e = r.histograms[k];
      if (e) hist[k].add(decodeHistogram(e));
    }
  }
  const open = base.schedule.mode === 'open';

  // The window on the reference clock: first measured start to last measured end.
  const reference = shards.every((s) => s.clock.source === 'coordinator') ? 'coordinator' : 'none';
  const ran = shards.filter((s) => s.barrier.releasedAtEpochMs !== undefined);
  const released = ran.map((s) => s.barrier.releasedAtEpochMs!);
  const earliest = released.length > 0 ? Math.min(...released) : 0;
  const skewMs = released.length > 0 ? Math.max(...released) - earliest : 0;
  let windowMs: number;
  if (reference === 'coordinator') {
    const starts = ran.map((s) => s.barrier.releasedAtEpochMs! + s.result.warmupMs);
    const ends = ran.map((s, i) => starts[i]! + s.result.durationMs);
    windowMs = ran.length > 0 ? Math.max(...ends) - Math.min(...starts) : 0;
    if (skewMs > maxSkewMs) {
      const latest = ran[released.indexOf(Math.max(...released))]!.index;
      warnings.push(
        `the shards started ${skewMs.toFixed(1)} ms apart on the reference clock (shard ${latest} last), more than --max-skew ${maxSkewMs} ms: their first arrivals did not coincide`,
      );
    }
  } else {
    windowMs = Math.max(0, ...rs.map((r) => r.durationMs));
    warnings.push(NO_CLOCK_NOTE);
  }
  const secs = windowMs / 1000;
  const { bytesIn, bytesOut } = counts;

  const rows = shards.map((s) => ({
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

  const slowShards: number[] = [];
  if (shards.length >= 2) {
    for (const row of rows) {
      if (row.total === 0) continue;
      const others = rows.filter((r) => r.index !== row.index && r.total > 0).map((r) => r.latencyP50Ms);
      if (others.length === 0) continue;
      const m = median(others);
      // 1 ms of absolute difference too: on loopback a factor of 2 between 0.1 and 0.2 ms is noise.
      if (row.latencyP50Ms > slowFactor * m && row.latencyP50Ms - m > 1) {
        slowShards.push(row.index);
        warnings.push(
          `shard ${row.index} is much slower than the others: median latency ${row.latencyP50Ms} ms against ${m} ms (its machine, its network path or its share of the target)`,
        );
      }
    }
  }
  for (const s of shards) {
    if (s.result.error)
      warnings.push(`shard ${s.index} failed: ${s.result.error.code}: ${s.result.error.message}`);
    for (const w of s.result.warnings) warnings.push(`shard ${s.index}: ${w}`);
  }
  warnings.push(PER_SHARD_NOTE);

  const negotiated = [...new Set(rs.map((r) => r.protocol.negotiated))];
  if (negotiated.length > 1)
    warnings.push(`the shards negotiated different protocols: ${negotiated.join(', ')}`);
  const sum = (f: (r: RunResult) => number): number => rs.reduce((n, r) => n + f(r), 0);
  const opened = sum((r) => r.connections.opened);
  const connectParts = rs.flatMap((r) => (r.connections.connectMs ? [r.connections.connectMs] : []));
  const tlsParts = rs.flatMap((r) => (r.connections.tlsMs ? [r.connections.tlsMs] : []));
  const { shard: _shard, ...baseOptions } = base.options as Record<string, unknown>;
  const options: Record<string, unknown> = { ...baseOptions };
  if (!open) {
    options.concurrency = sum((r) => (r.options.concurrency as number | undefined) ?? 0);
    if (base.options.requests !== undefined)
      options.requests = sum((r) => (r.options.requests as number) ?? 0);
  }
  options.connections = sum((r) => r.transport.connections);
  const firsts = rows.flatMap((r) => (r.firstSendMs === undefined ? [] : [r.firstSendMs]));
  const error = shards.find((s) => s.result.error);

  const result: RunResult = {
    ...base,
    options,
    environment: {
      ...base.environment,
      startedAt: rs.map((r) => r.environment.startedAt).sort()[0]!,
    },
    transport: { ...base.transport, connections: sum((r) => r.transport.connections) },
    protocol: {
      requested: base.protocol.requested,
      negotiated: negotiated.length === 1 ? negotiated[0]! : 'none',
    },
    schedule: {
      ...base.schedule,
      ...(open ? {} : { concurrency: sum((r) => r.schedule.concurrency ?? 0) }),
      ...(firsts.length > 0 ? { firstSendMs: Math.min(...firsts) } : {}),
    },
    durationMs: windowMs,
    counts: countsSection(counts, open),
    throughput: {
      rps: secs > 0 ? counts.total / secs : 0,
      bytesPerSec: secs > 0 ? bytesIn / secs : 0,
      bytesIn,
      bytesOut,
    },
    latencyMs: mergedSummary(
      rs.map((r) => r.latencyMs),
      hist.latency,
    ),
    ...(open && base.latencyUncorrectedMs
      ? {
          latencyUncorrectedMs: mergedSummary(
            rs.map((r) => r.latencyUncorrectedMs!),
            hist.latencyUncorrected,
          ),
        }
      : {}),
    ttfbMs: mergedSummary(
      rs.map((r) => r.ttfbMs),
      hist.ttfb,
    ),
    clientQueueMs: boundSummary(rs.map((r) => r.clientQueueMs)),
    histograms: {
      latency: encode(hist.latency),
      ttfb: encode(hist.ttfb),
      ...(open && base.histograms.latencyUncorrected
        ? { latencyUncorrected: encode(hist.latencyUncorrected) }
        : {}),
    },
    connections: {
      opened,
      ...(connectParts.length > 0 ? { connectMs: boundSummary(connectParts) } : {}),
      ...(tlsParts.length > 0 ? { tlsMs: boundSummary(tlsParts) } : {}),
      peakInFlight: sum((r) => r.connections.peakInFlight),
      ...(base.connections.tlsVersion ? { tlsVersion: base.connections.tlsVersion } : {}),
      requestsPerConnection: {
        mean:
          opened > 0
            ? sum((r) => r.connections.requestsPerConnection.mean * r.connections.opened) / opened
            : 0,
        max: Math.max(...rs.map((r) => r.connections.requestsPerConnection.max)),
      },
    },
    client: {
      eventLoopUtilization: Math.max(...rs.map((r) => r.client.eventLoopUtilization)),
      cpu: sum((r) => r.client.cpu),
      ...(rs.every((r) => r.client.cpuSeconds !== undefined)
        ? { cpuSeconds: sum((r) => r.client.cpuSeconds ?? 0) }
        : {}),
      workers: sum((r) => r.client.workers),
      saturated: rs.some((r) => r.client.saturated),
      ...(rs.some((r) => r.client.saturated)
        ? {
            note: `saturated shards: ${shards
              .filter((s) => s.result.client.saturated)
              .map((s) => s.index)
              .join(', ')} (see their notes in perShard warnings)`,
          }
        : {}),
    },
    warnings,
    ...(error?.result.error
      ? { error: { ...error.result.error, message: `shard ${error.index}: ${error.result.error.message}` } }
      : {}),
  };
  delete result.server;
  delete result.flowControl;
  delete result.connectionAge;
  delete result.burst;
  return {
    kind: 'h2lab.merged',
    version: 1,
    runId: shards[0]!.runId,
    planHash: shards[0]!.planHash,
    shards: shards.length,
    result,
    perShard: rows,
    clock: { reference, skewMs: reference === 'coordinator' ? skewMs : 0, maxSkewMs, windowMs },
    slowShards,
    warnings: warnings.slice(),
  };
}

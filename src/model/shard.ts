/**
 * A run spread over many load machines (src/shard, docs/kubernetes.md): the plan every shard runs, what
 * one shard reports, the digest it leaves in its termination message, and the merged result.
 */
import { z } from 'zod';
import { ms, publishedJsonSchema } from './fields.ts';
import { encodedHistogramSchema, runResultSchema } from './run.ts';
import { failureClassSchema } from './sample.ts';

/** A run id: a DNS label of at most 40 characters, so it can name Kubernetes objects and label them. */
const runIdSchema = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$/, 'lower-case letters, digits and -, at most 40 characters')
  .describe('names the run in every shard, label and file');

/** The histogram settings every shard records with; the merge refuses others. */
const histogramSettingsSchema = z.strictObject({
  unit: z.literal('us'),
  lowestUs: z.number().int().describe('lowest discernible value, µs'),
  highestUs: z.number().int().describe('highest trackable value, µs'),
  significantDigits: z.number().int().describe('HdrHistogram significant value digits'),
});
/** See {@link histogramSettingsSchema}. */
export type HistogramSettings = z.infer<typeof histogramSettingsSchema>;

/** How the run's load was divided: the same numbers the shards' options hold, side by side. */
const shardSplitSchema = z.strictObject({
  mode: z.enum(['open', 'closed']),
  rateRps: z
    .number()
    .optional()
    .describe('open loop: the whole run’s rate; shard i sends arrivals k ≡ i (mod N)'),
  concurrency: z.array(z.number().int()).optional().describe('closed loop: requests in flight per shard'),
  connections: z
    .array(z.number().int())
    .describe('connections (or sessions) per shard; a fixed count (h2: one session) is per shard'),
  requests: z
    .array(z.number().int())
    .optional()
    .describe(
      'closed loop: measured requests per shard; open loop: the whole run’s limit, per arrival index',
    ),
});

/** What every plan has, a load run's or a comparison's: identity, start, clock, histogram settings. */
const planCommon = {
  version: z.literal(1),
  runId: runIdSchema,
  hash: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .describe('sha256 of the plan without this field (canonical JSON): every shard and the merge check it'),
  shards: z.number().int().min(1),
  startAtEpochMs: z
    .number()
    .describe('when every shard starts its schedule, ms since the epoch, reference clock'),
  startGraceMs: ms('a shard released later than this after its start refuses to run (missed the start)'),
  clock: z.strictObject({
    url: z
      .string()
      .optional()
      .describe(
        'coordinator answering GET with {"epochMs": n}: the reference clock; absent: none is measured',
      ),
    samples: z
      .number()
      .int()
      .min(1)
      .describe('NTP-style exchanges; the one with the shortest round trip counts'),
  }),
  maxSkewMs: ms('the merge warns when shards started further apart than this, reference clock'),
  histogram: histogramSettingsSchema,
};

/** The plan: deterministic from the options, the shard count and the start time. */
export const shardPlanSchema = z
  .strictObject({
    kind: z.literal('h2lab.plan'),
    ...planCommon,
    options: z.record(z.string(), z.unknown()).describe('the whole run’s load options'),
    shardOptions: z.array(z.record(z.string(), z.unknown())).describe('the load options of shard i, at i'),
    split: shardSplitSchema,
  })
  .describe('h2lab plan: one load run split into shards (docs/kubernetes.md)');
/** See {@link shardPlanSchema}. */
export type ShardPlan = z.infer<typeof shardPlanSchema>;

/** One cell of a sharded comparison: the load options of each of its runs (seed aside) and their split. */
const compareCellPlanSchema = z.strictObject({
  id: z.string().describe('the cell id of the comparison, workload/level/net/strategy'),
  options: z
    .record(z.string(), z.unknown())
    .describe('the load options of every run of this cell, the whole run’s; each round sets its seed'),
  split: shardSplitSchema,
});

/** One run of a sharded comparison at its fixed time. */
const compareSlotSchema = z.strictObject({
  cell: z.number().int().min(0).describe('index into cells'),
  round: z.number().int().min(0).describe('the run of that cell, 0-based (warm-up rounds first)'),
  seed: z.number().int(),
  atMs: ms('when every shard starts this run, after the plan’s start, reference clock'),
});

/**
 * A comparison split into shards: the engine's run order (strategies alternating round by round) as
 * fixed time slots, every shard running its share of each slot's run from the slot's start.
 */
export const comparePlanSchema = z
  .strictObject({
    kind: z.literal('h2lab.compare-plan'),
    ...planCommon,
    compare: z
      .record(z.string(), z.unknown())
      .describe('the comparison’s resolved options (the merge analyses with them)'),
    slotMs: ms('the time between two slots’ starts: the run’s warm-up and duration plus slotGapMs'),
    slotGapMs: ms(
      'time after a run’s measured period for its last responses, closing, and the next run’s connections',
    ),
    cells: z.array(compareCellPlanSchema),
    slots: z.array(compareSlotSchema).describe('every run, in the order one process would run them'),
  })
  .describe('h2lab compare --shards: one comparison split into shards (docs/kubernetes.md)');
/** See {@link comparePlanSchema}. */
export type ComparePlan = z.infer<typeof comparePlanSchema>;

/** Either kind of plan. */
export const anyPlanSchema = z.discriminatedUnion('kind', [shardPlanSchema, comparePlanSchema]);
/** See {@link anyPlanSchema}. */
export type AnyPlan = ShardPlan | ComparePlan;

/** A shard's clock: its offset to the reference clock and how good it is. */
const shardClockSchema = z.strictObject({
  source: z.enum(['coordinator', 'none']),
  url: z.string().optional(),
  offsetMs: ms('reference clock minus this machine’s clock (0 when none was measured)'),
  rttMs: ms('round trip of the exchange the offset came from; the offset is good to half of it').optional(),
  samples: z.number().int(),
});

const count = z.number().int().min(0);

/**
 * A run's tally as a shard ships it (src/load/tally.ts): every counter, all twelve histograms, the
 * transport's statistics and per-connection facts, and each load process's readings, so that the
 * merge builds the whole run's result as a single run builds its own. The transport's statistics are
 * the load client's internal record (src/transport/types.ts TransportStats), checked here only as an
 * object: the shard file's digest guards its bytes.
 */
const encodedTallySchema = z
  .strictObject({
    counts: z.strictObject({
      total: count,
      ok: count,
      failed: count,
      warmup: count,
      late: count,
      retried: count,
      attempts: count,
      unprocessed: count,
      bytesIn: count,
      bytesOut: count,
      headerResponses: count,
      headerBytesIn: count,
      byStatus: z.record(z.string(), count),
      byFailure: z.partialRecord(failureClassSchema, count),
    }),
    histograms: z.record(z.string(), encodedHistogramSchema),
    transport: z.record(z.string(), z.unknown()),
    negotiated: z.string(),
    measureStartMs: z.number().nullable().describe('null: nothing was measured'),
    measureEndMs: z.number(),
    processes: z.record(
      z.string(),
      z.strictObject({
        threads: count,
        eventLoopUtilization: z.number().min(0),
        measuredCpu: z.strictObject({ us: z.number().min(0), wallMs: z.number().min(0) }),
        cpuSeconds: z.number().min(0).optional(),
        maxRssBytes: z.number().min(0).optional(),
        cpus: z.number().int().min(1).optional(),
        loadAverage: z.number().min(0).optional(),
      }),
    ),
    bursts: z.array(z.record(z.string(), z.unknown())).optional(),
    firstSentMs: z.number().optional(),
    server: z
      .strictObject({
        before: z
          .strictObject({ atEpochMs: z.number(), metrics: z.record(z.string(), z.unknown()) })
          .optional(),
        after: z
          .strictObject({ atEpochMs: z.number(), metrics: z.record(z.string(), z.unknown()) })
          .optional(),
      })
      .optional(),
    error: z
      .strictObject({
        code: z.string(),
        message: z.string(),
        details: z.record(z.string(), z.unknown()).optional(),
      })
      .optional(),
  })
  .describe('the shard run’s tally: what the merge adds up (src/load/tally.ts)');
/** See {@link encodedTallySchema}. */
export type ShardTally = z.infer<typeof encodedTallySchema>;

/** A shard's start barrier, on the reference clock. */
const shardBarrierSchema = z.strictObject({
  startAtEpochMs: z.number().describe('the plan’s start, reference clock'),
  reachedAtEpochMs: z
    .number()
    .describe('when this shard had its connections open and waited, reference clock'),
  releasedAtEpochMs: z
    .number()
    .optional()
    .describe(
      'when this shard’s schedule started, reference clock; absent: it never started (missed the start, or failed before)',
    ),
  lagMs: ms('releasedAt − startAt: how late this machine’s timer let the schedule start').optional(),
});

const firstSendSchema = z
  .number()
  .optional()
  .describe('when the first request was handed to the transport, reference clock');

/** What names a shard in either kind of result: its plan, its index among how many, its clock. */
const shardIdentity = {
  version: z.literal(2).describe('2: the shard ships its tally (1 shipped only its result)'),
  runId: runIdSchema,
  planHash: z.string(),
  index: z.number().int().min(0),
  count: z.number().int().min(1),
  clock: shardClockSchema,
};

/** One shard's clock, start and result. */
const shardResultSchema = z
  .strictObject({
    kind: z.literal('h2lab.shard'),
    ...shardIdentity,
    barrier: shardBarrierSchema,
    firstSendEpochMs: firstSendSchema,
    result: runResultSchema,
    tally: encodedTallySchema,
  })
  .describe('one shard of a planned run (h2lab shard run)');
/** See {@link shardResultSchema}. */
export type ShardResult = z.infer<typeof shardResultSchema>;

/** One run of a sharded comparison, as one shard measured it. */
const shardRunSchema = z.strictObject({
  slot: z.number().int().min(0).describe('index into the plan’s slots'),
  barrier: shardBarrierSchema,
  firstSendEpochMs: firstSendSchema,
  result: runResultSchema,
  tally: encodedTallySchema,
});
/** See {@link shardRunSchema}. */
export type ShardRun = z.infer<typeof shardRunSchema>;

/** One shard of a sharded comparison: its clock and its share of every slot it ran. */
const compareShardResultSchema = z
  .strictObject({
    kind: z.literal('h2lab.compare-shard'),
    ...shardIdentity,
    runs: z.array(shardRunSchema).describe('the slots this shard ran, in order'),
    skipped: z
      .array(z.number().int())
      .describe('slots not run because this shard found the cell failed or not offered earlier'),
    stopped: z
      .strictObject({ slot: z.number().int(), code: z.string(), message: z.string() })
      .optional()
      .describe('why the shard ended before its last slot (a missed start, a stop)'),
  })
  .describe('one shard of a sharded comparison (h2lab shard run)');
/** See {@link compareShardResultSchema}. */
export type CompareShardResult = z.infer<typeof compareShardResultSchema>;

/** Either kind of shard result. */
export const anyShardResultSchema = z.discriminatedUnion('kind', [
  shardResultSchema,
  compareShardResultSchema,
]);
/** See {@link anyShardResultSchema}. */
export type AnyShardResult = ShardResult | CompareShardResult;

/** What a shard leaves in its termination message (≤ 4 KiB): enough to check every chunk of its log. */
export const shardDigestSchema = z.strictObject({
  kind: z.literal('h2lab.shard-digest'),
  runId: runIdSchema,
  planHash: z.string(),
  index: z.number().int().min(0),
  chunks: z.number().int().min(1).describe('lines the result was cut into'),
  bytes: z.number().int().describe('length of the encoded payload (all chunks joined), characters'),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .describe('of the encoded payload'),
  total: z.number().int().describe('requests measured, so a lost log still says what it held'),
  failed: z.number().int(),
  error: z.string().optional().describe('the shard run’s error code, when it failed'),
});
/** See {@link shardDigestSchema}. */
export type ShardDigest = z.infer<typeof shardDigestSchema>;

/** One shard beside the merged result. */
export const shardRowSchema = z.strictObject({
  index: z.number().int(),
  total: z.number().int(),
  ok: z.number().int(),
  failed: z.number().int(),
  latencyP50Ms: ms('median latency'),
  latencyP99Ms: ms('99th percentile latency'),
  latencyMaxMs: ms('highest latency'),
  clockOffsetMs: ms('reference minus local clock'),
  clockRttMs: ms('round trip of the offset exchange').optional(),
  startSkewMs: ms('this shard’s release after the earliest shard’s, reference clock').optional(),
  barrierLagMs: ms('release after the plan’s start, reference clock').optional(),
  reachedBeforeStartMs: ms('how long before the plan’s start it was ready (negative: after)').optional(),
  firstSendMs: ms('first request after the plan’s start, reference clock').optional(),
  error: z.string().optional(),
});

/** The merged result: exact counts and histograms, every shard beside it. */
export const mergedResultSchema = z
  .strictObject({
    kind: z.literal('h2lab.merged'),
    version: z.literal(1),
    runId: runIdSchema,
    planHash: z.string(),
    shards: z.number().int(),
    result: runResultSchema.describe(
      'the whole run, built from the shards’ merged tallies as a single run’s result is built from its own: counts summed, every histogram added (HdrHistogram add), rates over the reference-clock window',
    ),
    perShard: z.array(shardRowSchema),
    clock: z.strictObject({
      reference: z.enum(['coordinator', 'none']),
      skewMs: ms('latest minus earliest shard release, reference clock (released shards only)'),
      maxSkewMs: ms('the warning threshold'),
      windowMs: ms(
        'first shard’s measured start to last shard’s measured end, reference clock (rates use it)',
      ),
    }),
    slowShards: z.array(z.number().int()).describe('shards whose median latency is far above the others’'),
    warnings: z.array(z.string()),
  })
  .describe('h2lab merge: the shards of one planned run as one result');
/** See {@link mergedResultSchema}. */
export type MergedResult = z.infer<typeof mergedResultSchema>;

/** The published JSON Schema of a merged result. */
export function mergedResultJsonSchema(): Record<string, unknown> {
  return publishedJsonSchema('h2lab MergedResult', mergedResultSchema);
}

/**
 * A run spread over many load machines (src/shard, docs/kubernetes.md): the plan every shard runs, what
 * one shard reports, the digest it leaves in its termination message, and the merged result.
 */
import { z } from 'zod';
import { ms, publishedJsonSchema } from './fields.ts';
import { runResultSchema } from './run.ts';

/** A run id: a DNS label of at most 40 characters, so it can name Kubernetes objects and label them. */
export const runIdSchema = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$/, 'lower-case letters, digits and -, at most 40 characters')
  .describe('names the run in every shard, label and file');

/** The histogram settings every shard records with; the merge refuses others. */
export const histogramSettingsSchema = z.strictObject({
  unit: z.literal('us'),
  lowestUs: z.number().int().describe('lowest discernible value, µs'),
  highestUs: z.number().int().describe('highest trackable value, µs'),
  significantDigits: z.number().int().describe('HdrHistogram significant value digits'),
});
/** See {@link histogramSettingsSchema}. */
export type HistogramSettings = z.infer<typeof histogramSettingsSchema>;

/** How the run's load was divided: the same numbers the shards' options hold, side by side. */
export const shardSplitSchema = z.strictObject({
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

/** The plan: deterministic from the options, the shard count and the start time. */
export const shardPlanSchema = z
  .strictObject({
    kind: z.literal('h2lab.plan'),
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
    startGraceMs: ms(
      'a shard released later than this after startAtEpochMs refuses to run (missed the start)',
    ),
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
    options: z.record(z.string(), z.unknown()).describe('the whole run’s load options'),
    shardOptions: z.array(z.record(z.string(), z.unknown())).describe('the load options of shard i, at i'),
    split: shardSplitSchema,
  })
  .describe('h2lab plan: one load run split into shards (docs/kubernetes.md)');
/** See {@link shardPlanSchema}. */
export type ShardPlan = z.infer<typeof shardPlanSchema>;

/** One shard's clock, start and result. */
export const shardResultSchema = z
  .strictObject({
    kind: z.literal('h2lab.shard'),
    version: z.literal(1),
    runId: runIdSchema,
    planHash: z.string(),
    index: z.number().int().min(0),
    count: z.number().int().min(1),
    clock: z.strictObject({
      source: z.enum(['coordinator', 'none']),
      url: z.string().optional(),
      offsetMs: ms('reference clock minus this machine’s clock (0 when none was measured)'),
      rttMs: ms(
        'round trip of the exchange the offset came from; the offset is good to half of it',
      ).optional(),
      samples: z.number().int(),
    }),
    barrier: z.strictObject({
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
    }),
    firstSendEpochMs: z
      .number()
      .optional()
      .describe('when the first request was handed to the transport, reference clock'),
    result: runResultSchema,
  })
  .describe('one shard of a planned run (h2lab shard run)');
/** See {@link shardResultSchema}. */
export type ShardResult = z.infer<typeof shardResultSchema>;

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
      'the whole run: counts summed, latency/ttfb histograms added (HdrHistogram add), min/max the shards’ extremes, rates over the reference-clock window',
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

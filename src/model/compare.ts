/**
 * The result of `h2lab compare`: a matrix of cells (workload × concurrency × network × strategy),
 * every run of every cell (each a full {@link RunResult} with its mergeable histograms), the
 * statistics across runs, the ratios to the baseline with their intervals, and the verdict in words.
 *
 * The zod schema below is the one source of truth: the TypeScript types are inferred from it, `h2lab
 * report` validates files with it, and `docs/compare-result.schema.json` is generated from it
 * (`npm run schema`, checked by a test). Bump {@link COMPARE_RESULT_VERSION} on any incompatible change
 * and say what changed in docs/design.md.
 */
import { z } from 'zod';
import { publishedJsonSchema } from './fields.ts';
import type { RunResult } from './run.ts';
import { httpMethodSchema, type StrategyName, strategyNameSchema } from './sample.ts';
import { shardRowSchema } from './shard.ts';

export const COMPARE_RESULT_VERSION = 1;

/** What a cell asks of the target. */
export const workloadSchema = z
  .strictObject({
    id: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'a short id of lower-case letters, digits and dashes'),
    label: z.string().describe('How the report names the workload, e.g. "1 MiB responses".'),
    paths: z
      .array(z.string().min(1))
      .min(1)
      .describe('Paths (resolved against the target URL) or absolute URLs, requested in turn.'),
    method: httpMethodSchema.default('GET'),
    bodySizeBytes: z.number().int().nonnegative().optional().describe('Upload body size for POST, bytes.'),
    bodyFile: z
      .string()
      .optional()
      .describe('Request body of every request, read from this file (`--body`); excludes bodySizeBytes.'),
    headers: z
      .record(z.string(), z.string())
      .optional()
      .describe(
        'Extra request headers of every request (lower-case names), e.g. the ~300 B of an API client’s headers; checked like `bench -H`.',
      ),
    responseSizeBytes: z.number().int().nonnegative().optional().describe('Expected response size, bytes.'),
    kind: z
      .enum(['interactive', 'bulk', 'backend'])
      .optional()
      .describe('Which client kind the workload stands for (drives the recommendation).'),
    burst: z
      .union([z.number().int().min(1).max(100_000), z.array(z.number().int().min(1).max(100_000)).min(1)])
      .transform((b) => (Array.isArray(b) ? b : [b]))
      .optional()
      .describe(
        'Burst sizes N: each run of a cell hands N requests to the client at once (paths in turn) and measures the time until the last one ended, the page-load question. One cell per N, its concurrency recorded as N; the comparison axis `concurrency` does not apply.',
      ),
    burstHandshakes: z
      .enum(['include', 'exclude'])
      .optional()
      .describe(
        'Burst: open the connections inside the timed period (include, the default: what a page load pays) or before it.',
      ),
    rateRps: z
      .array(z.number().int().min(1).max(1_000_000))
      .min(1)
      .optional()
      .describe(
        'Open loop (`--rate`): requests per second, evenly spaced, latency from the intended send time; one cell per rate, its `concurrency` recorded as the rate; the comparison axis `concurrency` does not apply.',
      ),
  })
  .describe('A workload: what each request of a cell asks for.');

const summarySchema = z.object({
  median: z.number(),
  min: z.number(),
  max: z.number(),
  n: z.number(),
});

const ratioIntervalSchema = z.object({
  ratio: z.number(),
  lo: z.number(),
  hi: z.number(),
  confidence: z.number(),
  n: z.object({ candidate: z.number(), baseline: z.number() }),
});

const cellStatusSchema = z
  .enum(['pending', 'running', 'done', 'not-offered', 'failed', 'interrupted'])
  .describe(
    '`not-offered`: the server did not negotiate the protocol the strategy needs; `interrupted`: stopped before all runs.',
  );

/**
 * Where one request's time went, medians over the kept runs of per-run means, ms. `clientQueue` is the
 * wait inside the client for a connection or stream slot; `serverQueue`/`serverService` come from the
 * fixture server's /metrics (time waiting for, and holding, a backend pool worker); `wire` is the rest
 * of the time to first byte; `transfer` is first byte to last byte.
 */
const breakdownSchema = z.object({
  clientQueue: z.number(),
  serverQueue: z.number().optional(),
  serverService: z.number().optional(),
  wire: z.number(),
  transfer: z.number(),
  total: z.number(),
});

const cellStatsSchema = z.object({
  runsKept: z.number().int(),
  rps: summarySchema.describe('Requests per second (completed OK).'),
  bytesPerSec: summarySchema.describe('Response bytes per second.'),
  latencyP50Ms: summarySchema,
  latencyP90Ms: summarySchema.optional().describe('p90 latency over the kept runs, ms (not compared).'),
  latencyP99Ms: summarySchema,
  ttfbP50Ms: summarySchema,
  totalRequests: z.number().int(),
  failedRequests: z.number().int(),
  breakdownMs: breakdownSchema,
  serverPoolSize: z.number().optional(),
  serverPeakInFlight: z.number().optional(),
  connectionsOpened: z.number().optional().describe('Median connections opened per run.'),
  burstCompletionMs: summarySchema
    .optional()
    .describe('Burst workloads: time from t0 to the last response end, over the kept runs, ms.'),
  burstConnectionsOpened: z
    .number()
    .optional()
    .describe(
      'Burst workloads: median connections opened per run inside the timed period (0 with handshakes excluded).',
    ),
  burstFirstResponseMs: summarySchema
    .optional()
    .describe('Burst workloads: time from t0 to the first response headers, over the kept runs, ms.'),
  saturatedRuns: z.number().int().describe('Kept runs in which the load client was probably the bottleneck.'),
  warnings: z.array(z.string()),
});

const runResultSchema = z
  .custom<RunResult>(
    (v) => typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === 'h2lab.run',
    'a RunResult (kind "h2lab.run")',
  )
  .describe('One run: a RunResult (src/model/run.ts), with its encoded histograms.');

const errorSchema = z.object({
  code: z.string(),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});

const cellSchema = z.object({
  id: z.string().describe('workload/c<concurrency>/<net>/<strategy>'),
  workload: z.string(),
  concurrency: z
    .number()
    .int()
    .describe(
      "The cell's level: requests in flight; for a burst workload N; for an open-loop workload (rateRps) the rate, requests per second.",
    ),
  net: z.string(),
  protocol: strategyNameSchema,
  status: cellStatusSchema,
  note: z.string().optional().describe('Why the cell is not-offered, failed or interrupted, in words.'),
  runs: z.array(runResultSchema).describe('Every run in order, warm-up runs first.'),
  warmupRuns: z.number().int().describe('How many of the first runs are warm-up (excluded from statistics).'),
  stats: cellStatsSchema.optional(),
  cutOffRuns: z
    .number()
    .int()
    .optional()
    .describe(
      'Kept runs cut off by the request timeout (a request failed with class timeout): their times are the timeout, not a measurement, so they are left out of the statistics and the comparisons, and counted here.',
    ),
  error: errorSchema.optional(),
});

/** `burstCompletionMs`: burst workloads only, t0 → last response end (lower is better). */
const metricSchema = z.enum(['rps', 'latencyP50Ms', 'latencyP99Ms', 'burstCompletionMs']);

const outcomeSchema = z
  .enum(['better', 'worse', 'no-clear-difference', 'undecided', 'insufficient'])
  .describe(
    'better/worse: a difference of at least --min-effect the runs show; no-clear-difference: the runs bound it below --min-effect; undecided: the runs cannot tell (see runsNeeded); insufficient: too few runs for any statistic.',
  );

const comparisonSchema = z.object({
  workload: z.string(),
  concurrency: z.number().int(),
  net: z.string(),
  protocol: strategyNameSchema,
  baseline: strategyNameSchema,
  metric: metricSchema,
  higherIsBetter: z.boolean(),
  interval: ratioIntervalSchema.describe('candidate / baseline of the metric medians.'),
  pValue: z
    .number()
    .optional()
    .describe('Two-sided Mann–Whitney p-value of the runs; a clear difference needs p < 1 − confidence.'),
  outcome: outcomeSchema,
  runsNeeded: z
    .number()
    .int()
    .optional()
    .describe(
      'Undecided only: about how many kept runs per strategy would show a difference of the size observed, from the observed spread (add the warm-up runs for --runs).',
    ),
});

const verdictSchema = z.object({
  workloads: z.array(
    z.object({ workload: z.string(), headline: z.string(), paragraphs: z.array(z.string()) }),
  ),
  recommendations: z.array(
    z.object({
      client: z.enum(['interactive', 'bulk']),
      strategy: strategyNameSchema
        .nullable()
        .describe('null: no strategy is clearly better than the baseline.'),
      decision: z
        .enum(['use', 'depends', 'undecided', 'any', 'not-compared'])
        .optional()
        .describe(
          'use: `strategy` has the evidence; depends: better in some cells, worse in others; undecided: the runs cannot tell; any: no difference of --min-effect or more; not-compared: fewer than two strategies measured.',
        ),
      text: z.string(),
    }),
  ),
  caveats: z.array(z.string()),
});

/** What became of one `--expect` condition (see src/compare/expect.ts for the grammar). */
const expectationStatusSchema = z
  .enum(['met', 'failed', 'undecided'])
  .describe(
    'met: the intervals show the condition; failed: they show the opposite, or a cell it names has no measurement; undecided: the runs cannot tell (fails only with --expect-undecided fail).',
  );

const expectationCheckSchema = z.object({
  workload: z.string(),
  concurrency: z.number().int().describe('The level: concurrency, burst N or rate (req/s).'),
  net: z.string(),
  interval: ratioIntervalSchema
    .optional()
    .describe(
      'candidate / reference of the metric medians, as the condition names them; absent: not measured.',
    ),
  outcome: outcomeSchema
    .optional()
    .describe("The verdict's outcome for the candidate against the reference."),
  status: expectationStatusSchema,
  reason: z.string(),
});

const expectationSchema = z.object({
  condition: z.string().describe('As given on the command line.'),
  candidate: strategyNameSchema,
  relation: z.enum(['better', 'not-worse', 'worse', 'not-better', 'same']),
  reference: strategyNameSchema,
  metric: metricSchema,
  level: z.number().int().optional().describe('Only cells at this level (concurrency, burst N or rate).'),
  workload: z.string().optional().describe('Only this workload id.'),
  status: expectationStatusSchema,
  reason: z.string(),
  checks: z.array(expectationCheckSchema),
});

/** A comparison run as shards (h2lab compare --shards): how each merged run came together. */
const shardingSchema = z.object({
  runId: z.string(),
  planHash: z.string(),
  shards: z.number().int(),
  slotMs: z.number().describe('ms between two runs’ starts (the plan’s fixed slots)'),
  clock: z.object({
    reference: z.enum(['coordinator', 'none']),
    maxSkewMs: z.number().describe('the warning threshold, ms'),
    worstSkewMs: z.number().describe('the largest start skew of any run, ms, reference clock'),
  }),
  runs: z
    .array(
      z.object({
        cell: z.string(),
        round: z.number().int(),
        skewMs: z.number().describe('latest minus earliest shard release of this run, ms'),
        windowMs: z.number().describe('the run’s window on the reference clock, ms (its rates use it)'),
        perShard: z.array(shardRowSchema),
        slowShards: z.array(z.number().int()),
      }),
    )
    .describe('every merged run, in run order, each shard beside it'),
  notes: z.array(z.string()).describe('what the merge did and what it could not, once for every run'),
  local: z
    .object({
      processes: z.number().int().describe('shard processes that ran on the machine'),
      cpus: z.number().int().describe('that machine’s cores'),
    })
    .optional()
    .describe(
      'the shards ran as processes of one machine (compare --shards N, shard local), sharing its cores',
    ),
});

export const compareResultSchema = z.object({
  kind: z.literal('h2lab.compare'),
  version: z.literal(COMPARE_RESULT_VERSION),
  status: z
    .enum(['running', 'complete', 'interrupted', 'failed'])
    .describe('`running` in a file means the process died before it could write its last state.'),
  options: z
    .record(z.string(), z.unknown())
    .describe('The resolved options, so the comparison can be re-run.'),
  environment: z.object({
    h2labVersion: z.string(),
    node: z.string(),
    platform: z.string(),
    cpus: z.number(),
    startedAt: z.string(),
  }),
  target: z.object({ url: z.string(), embedded: z.boolean() }),
  axes: z.object({
    workloads: z.array(workloadSchema),
    concurrency: z.array(z.number().int()),
    protocols: z.array(strategyNameSchema),
    net: z.array(z.string()),
  }),
  baseline: strategyNameSchema,
  runsPerCell: z.number().int(),
  warmupRuns: z.number().int(),
  finishedAt: z.string().optional(),
  cells: z.array(cellSchema),
  comparisons: z.array(comparisonSchema),
  verdict: verdictSchema.optional(),
  expectations: z
    .array(expectationSchema)
    .optional()
    .describe('`--expect` conditions, each evaluated on the statistics; written when any was given.'),
  budget: z
    .object({
      ms: z.number().describe('`--budget`: time allowed for runs after the planned ones, ms.'),
      spentMs: z.number().describe('Time the extra runs took, ms.'),
      maxRuns: z.number().int().describe('Most runs a cell could make, planned ones included.'),
      looks: z
        .number()
        .int()
        .describe(
          'Most times a comparison could be judged: after the planned runs and after each extra round.',
        ),
      nominalConfidence: z
        .number()
        .describe('The confidence asked for (`--confidence`), before the correction.'),
      alpha: z
        .number()
        .describe(
          'The corrected significance level every look is held to: (1 − nominalConfidence) / looks (Bonferroni); options.confidence is 1 − alpha.',
        ),
      extraRuns: z.record(z.string(), z.number().int()).describe('Extra runs each cell made, by cell id.'),
      stoppedBy: z
        .enum(['decided', 'runs-too-short', 'budget', 'max-runs', 'interrupted'])
        .describe(
          'Why the extra runs ended: every cell decided, the cells left undecided had runs too short for their link (more would not tell), the budget left no room for another run, the runs cap, or a stop.',
        ),
      undecided: z.array(z.string()).describe('Cells still undecided when the extra runs ended, by id.'),
    })
    .optional()
    .describe('`--budget`: runs spent after the planned ones on the cells still undecided.'),
  sharding: shardingSchema
    .optional()
    .describe('A comparison run as shards: each run is the exact merge of its shards’ runs.'),
  error: errorSchema.optional(),
});

export type Workload = z.output<typeof workloadSchema>;
export type WorkloadInput = z.input<typeof workloadSchema>;
export type CellStatus = z.infer<typeof cellStatusSchema>;
export type TimeBreakdown = z.infer<typeof breakdownSchema>;
export type CellStats = z.infer<typeof cellStatsSchema>;
export type CellResult = z.infer<typeof cellSchema>;
export type Metric = z.infer<typeof metricSchema>;
export type Comparison = z.infer<typeof comparisonSchema>;
export type Verdict = z.infer<typeof verdictSchema>;
export type CompareResult = z.infer<typeof compareResultSchema>;
export type Expectation = z.infer<typeof expectationSchema>;
export type ExpectationCheck = z.infer<typeof expectationCheckSchema>;
export type ExpectationStatus = z.infer<typeof expectationStatusSchema>;

/** The JSON Schema of a results.json written by `h2lab compare` (published as docs/compare-result.schema.json). */
export function compareResultJsonSchema(): Record<string, unknown> {
  return publishedJsonSchema('h2lab compare result', compareResultSchema);
}

/**
 * Checks that a value read from JSON is a compare result of this version; throws a ZodError if not.
 * (`loadCompareResult` in src/compare reads a file with friendlier errors.)
 */
export function parseCompareResult(value: unknown): CompareResult {
  return compareResultSchema.parse(value);
}

/** One metric of one cell present in two saved comparisons: after / before. */
export interface DiffRow {
  /** `workload/c<concurrency>/<net>/<strategy>`. */
  cellId: string;
  workload: string;
  workloadLabel: string;
  concurrency: number;
  net: string;
  protocol: StrategyName;
  metric: Metric;
  higherIsBetter: boolean;
  before: z.infer<typeof summarySchema>;
  after: z.infer<typeof summarySchema>;
  interval: z.infer<typeof ratioIntervalSchema>;
  /** Two-sided Mann–Whitney p-value of the runs. */
  pValue: number;
  outcome: z.infer<typeof outcomeSchema>;
}

/** Two saved comparisons set side by side (`h2lab report before.json after.json`). */
export interface DiffResult {
  kind: 'h2lab.compare-diff';
  /** Both files ran the same setup (target, options, h2lab): a difference is drift, not a change's. */
  sameSetup: boolean;
  before: { label: string; startedAt: string; target: string };
  after: { label: string; startedAt: string; target: string };
  rows: DiffRow[];
  /** Cells measured in only one of the two files. */
  onlyBefore: string[];
  onlyAfter: string[];
  /** The differences in words (clear ones only), then what could not be compared. */
  summary: string[];
}

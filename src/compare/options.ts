/**
 * Options of a comparison: one zod schema gives the types, the defaults and the validation; the CLI
 * (`src/cli/compare.ts`) only maps flags onto it. The flags and the defaults they print are flags.ts,
 * the workloads of `--sizes` workloads.ts (both light to load, both re-exported here).
 */
import { z } from 'zod';
import { H2labError, unknownOptionError } from '../core/index.ts';
import {
  checkHeaderFields,
  checkTargetUrl,
  checkWorkloadSize,
  LOAD_DEFAULTS,
  RATE_FLAG,
  registeredStrategySchema,
  WINDOW_FLAG,
  WORKERS_FLAG,
} from '../load/index.ts';
import { httpMethodSchema, workloadSchema } from '../model/index.ts';
import { LinkAxesSchema } from '../net/index.ts';
import { DEFAULT_WINDOW_PRESET, POOL_POLICIES, type Strategy } from '../transport/index.ts';
import { parseCondition } from './expect.ts';
import {
  COMPARE_DEFAULTS,
  COMPARE_RUNS,
  COMPARE_WORKERS_MAX,
  type H1Connections,
  H2_SESSIONS_FLAG,
  MAX_COMPARE_WORKLOADS,
  MIN_EFFECT_FLAG,
  RUNS_FLAG,
  WARMUP_RUNS_FLAG,
} from './flags.ts';

/** The window presets compare offers (explicit sizes are a `bench` matter): `--window`'s. */
const WINDOW_PRESETS = WINDOW_FLAG.choices as unknown as readonly ['node', 'browser', 'max'];

/** TLS material used to reach a target (as in `h2lab bench`). */
const tlsOptionsSchema = z.strictObject({
  ca: z.string().optional().describe('PEM file of the CA that signed the server certificate.'),
  cert: z.string().optional().describe('Client certificate (mTLS), PEM file.'),
  key: z.string().optional().describe('Client key (mTLS), PEM file.'),
  insecure: z.boolean().default(false).describe('Do not verify the server certificate.'),
  keyLogFile: z
    .string()
    .optional()
    .describe(
      'NSS key log (SSLKEYLOGFILE format) every run appends its TLS secrets to, and the embedded fixture server too.',
    ),
});

/** `--h1-connections`: one number, `concurrency` (= each cell's), or one number per concurrency. */
const h1ConnectionsSchema = z.union([
  z.number().int().min(1).max(10_000),
  z.literal('concurrency'),
  z.array(z.number().int().min(1).max(10_000)).min(1),
]);

/**
 * Connections (sessions) of one cell of strategy `s`, or undefined for a fixed count. A pool of
 * one-request connections is sized by `--h1-connections`, a pool of multiplexed sessions by
 * `--h2-pool-sessions` (capped at the concurrency: more would stay idle).
 */
export function cellConnections(
  o: Pick<CompareOptions, 'h1Connections' | 'h2PoolSessions'> & { concurrencies: readonly number[] },
  s: Strategy,
  concurrency: number,
): number | undefined {
  if (s.connections.fixed !== undefined) return undefined;
  return s.multiplexed
    ? Math.min(o.h2PoolSessions, concurrency)
    : h1PoolFor(o.h1Connections, o.concurrencies, concurrency);
}

/**
 * The HTTP/1.1 pool of one cell: capped at its concurrency (more connections would stay idle).
 *
 * @example h1PoolFor('concurrency', [1, 8, 64], 64) // 64
 * @example h1PoolFor(6, [1, 8, 64], 1) // 1
 */
export function h1PoolFor(h1: H1Connections, concurrencies: readonly number[], concurrency: number): number {
  if (h1 === 'concurrency') return concurrency;
  if (typeof h1 === 'number') return Math.min(h1, concurrency);
  const i = concurrencies.indexOf(concurrency);
  return Math.min(h1.length === 1 ? h1[0]! : (h1[i] ?? h1[h1.length - 1]!), concurrency);
}

const compareOptionsSchema = z
  .strictObject({
    url: z
      .string()
      .url()
      .optional()
      .describe('Target base URL. Absent: the embedded fixture server is started on free ports.'),
    protocols: z
      .array(registeredStrategySchema)
      .min(1)
      .default(() => COMPARE_DEFAULTS.protocols),
    baseline: registeredStrategySchema.default(() => COMPARE_DEFAULTS.baseline),
    concurrency: z.array(z.number().int().min(1).max(10_000)).min(1).default(COMPARE_DEFAULTS.concurrency),
    workloads: z
      .array(workloadSchema)
      .min(1)
      .max(MAX_COMPARE_WORKLOADS)
      .optional()
      .describe('Default: the target kind decides.'),
    net: z.array(z.string().min(1)).min(1).default(COMPARE_DEFAULTS.net),
    links: LinkAxesSchema.optional().describe(
      'Link conditions as axes (--rtt, --jitter, --loss, --bandwidth, --cc lists): one emulated link per combination, crossed with the named --net profiles; seeded with --seed.',
    ),
    runs: z.number().int().min(COMPARE_RUNS.min).max(RUNS_FLAG.max).default(COMPARE_DEFAULTS.runs),
    warmupRuns: z
      .number()
      .int()
      .min(WARMUP_RUNS_FLAG.min)
      .max(WARMUP_RUNS_FLAG.max)
      .default(COMPARE_DEFAULTS.warmupRuns),
    durationMs: z.number().positive().max(3_600_000).default(COMPARE_DEFAULTS.durationMs),
    requests: z.number().int().positive().optional().describe('Requests per run instead of a duration.'),
    runWarmupMs: z.number().nonnegative().default(COMPARE_DEFAULTS.runWarmupMs),
    seed: z.number().int().default(COMPARE_DEFAULTS.seed),
    h1Connections: h1ConnectionsSchema
      .default(COMPARE_DEFAULTS.h1Connections)
      .describe(
        "HTTP/1.1 connections per cell: a number (default 6, a browser's per-origin limit, capped at the cell's concurrency), 'concurrency', or one number per concurrency value.",
      ),
    quicRetry: z
      .boolean()
      .default(false)
      .describe(
        "The embedded fixture's QUIC server sends a Retry before every handshake (RFC 9000 §8.1.2): one more round trip per HTTP/3 connection.",
      ),
    h2PoolSessions: z
      .number()
      .int()
      .min(H2_SESSIONS_FLAG.min)
      .max(H2_SESSIONS_FLAG.max)
      .default(COMPARE_DEFAULTS.h2PoolSessions),
    h2PoolPolicy: z
      .enum(POOL_POLICIES)
      .default(COMPARE_DEFAULTS.h2PoolPolicy)
      .describe(
        'h2-pool session choice: least-busy (default; sessions opened at the start, shared by callers), round-robin, first-free (an idle session, else a new one up to --h2-sessions), or lease (one stream per session at a time, as a pool that leases connections).',
      ),
    workers: z
      .number()
      .int()
      .min(WORKERS_FLAG.min)
      .max(COMPARE_WORKERS_MAX)
      .default(1)
      .describe('Load generator worker threads per run.'),
    window: z
      .enum(WINDOW_PRESETS)
      .default(DEFAULT_WINDOW_PRESET)
      .describe(
        'HTTP/2 flow-control windows of every h2 and h2-pool run: browser (Chromium: 6 MiB stream, 15 MiB connection; the default), node (64 KiB, node:http2 and RFC 9113 initial values), max (2^31-1), explicit sizes are a bench option.',
      ),
    burst: z
      .array(z.number().int().min(1).max(100_000))
      .min(1)
      .optional()
      .describe(
        'Make every workload a burst: N requests at once per run, compared on the time until the last one ended; one cell per N (concurrency does not apply).',
      ),
    burstHandshakes: z
      .enum(['include', 'exclude'])
      .optional()
      .describe('Burst: connections opened inside the timed period (include, default) or before it.'),
    minEffect: z.number().min(0).max(MIN_EFFECT_FLAG.max).default(COMPARE_DEFAULTS.minEffect),
    budgetMs: z
      .number()
      .positive()
      .max(86_400_000)
      .optional()
      .describe(
        '`--budget`: after the planned runs, time spent on further interleaved runs of the cells still undecided (each stops once decided); every look is held to alpha / looks (Bonferroni), ms.',
      ),
    confidence: z.number().gt(0).lt(1).default(COMPARE_DEFAULTS.confidence),
    method: httpMethodSchema
      .optional()
      .describe(
        "`-m`: the method of every workload's requests. Default: the workload's (GET; POST with --body or --body-size).",
      ),
    headers: z
      .record(z.string(), z.string())
      .optional()
      .describe(
        '`-H`: request headers added to every workload (lower-case names; they win over a workload’s own).',
      ),
    bodyFile: z
      .string()
      .optional()
      .describe('`--body`: every request sends this file as its body (POST unless -m says otherwise).'),
    timeoutMs: z
      .number()
      .positive()
      .finite()
      .default(LOAD_DEFAULTS.timeoutMs)
      .describe('`--timeout`: a request not answered within this fails as `timeout`, ms.'),
    connectTimeoutMs: z
      .number()
      .positive()
      .finite()
      .default(LOAD_DEFAULTS.connectTimeoutMs)
      .describe('`--connect-timeout`: TCP + TLS + the first SETTINGS, ms.'),
    rateRps: z
      .array(z.number().int().min(1).max(RATE_FLAG.max))
      .min(1)
      .optional()
      .describe(
        '`--rate`: open loop instead of the concurrency axis: every workload that is not a burst runs at each rate (requests per second, evenly spaced, latency from the intended send time), one cell per rate.',
      ),
    expect: z
      .array(z.string().min(1))
      .optional()
      .describe(
        '`--expect`: conditions on the statistics (src/compare/expect.ts); a failed one makes the CLI exit 1.',
      ),
    expectUndecided: z
      .enum(['pass', 'fail'])
      .default('pass')
      .describe(
        '`--expect-undecided`: whether a condition the runs cannot decide fails the gate (default pass: the runs did not show a regression).',
      ),
    tls: tlsOptionsSchema.optional(),
    qlogDir: z
      .string()
      .optional()
      .describe(
        '`--qlog`: every run of the HTTP/3 client writes one qlog per QUIC connection here, and the embedded fixture server its side of each (`server-*.qlog`).',
      ),
    framesFile: z
      .string()
      .optional()
      .describe(
        "`--frames`: every run of h2lab's HTTP/2 client appends its frames here, one JSON line each.",
      ),
    metricsUrl: z
      .string()
      .url()
      .optional()
      .describe(
        "The fixture server's /metrics, read before and after each run. Default: set for the embedded server.",
      ),
  })
  .superRefine((o, ctx) => {
    if (!o.protocols.includes(o.baseline)) {
      ctx.addIssue({
        code: 'custom',
        path: ['baseline'],
        message: `--baseline ${o.baseline} is not among --protocols ${o.protocols.join(',')}: add it or choose one of them`,
      });
    }
    if (
      Array.isArray(o.h1Connections) &&
      o.h1Connections.length > 1 &&
      o.h1Connections.length !== o.concurrency.length
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['h1Connections'],
        message: `--h1-connections ${o.h1Connections.join(',')} has ${o.h1Connections.length} values for ${o.concurrency.length} --concurrency values (${o.concurrency.join(',')}): give one value, one per concurrency, or 'concurrency'`,
      });
    }
    if (o.rateRps && o.burst) {
      ctx.addIssue({
        code: 'custom',
        path: ['rateRps'],
        message: `--rate ${o.rateRps.join(',')} cannot be combined with --burst ${o.burst.join(',')}: a burst issues its N requests at once; drop one of them`,
      });
    }
    if (o.rateRps && typeof o.h1Connections !== 'number') {
      ctx.addIssue({
        code: 'custom',
        path: ['h1Connections'],
        message: `--h1-connections ${String(o.h1Connections)} follows the concurrency axis, which --rate replaces: give one number (e.g. 6)`,
      });
    }
    if (o.bodyFile && o.workloads?.some((w) => w.bodySizeBytes !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['bodyFile'],
        message: '--body and --body-size were both given: choose one',
      });
    }
    if (o.runs - o.warmupRuns < 2) {
      ctx.addIssue({
        code: 'custom',
        path: ['runs'],
        message: `--runs ${o.runs} with ${o.warmupRuns} warm-up run(s) keeps fewer than 2 runs: an interval needs at least 2; use --runs ${o.warmupRuns + 2} or more`,
      });
    }
  });

export type CompareOptions = z.output<typeof compareOptionsSchema>;
export type CompareOptionsInput = z.input<typeof compareOptionsSchema>;

/** Validates options, throwing H2LAB_ERR_INVALID_OPTION that names the first bad key. */
export function resolveCompareOptions(input: CompareOptionsInput): CompareOptions {
  if (typeof input?.url === 'string') checkTargetUrl(input.url);
  const r = compareOptionsSchema.safeParse(input);
  if (r.success) {
    // Before any run: templates counted (each would fail on its own otherwise), a header that would
    // split on the wire, a condition that is not one.
    for (const w of r.data.workloads ?? []) checkWorkloadSize('/', w.paths);
    if (r.data.headers) checkHeaderFields(r.data.headers);
    for (const w of r.data.workloads ?? []) if (w.headers) checkHeaderFields(w.headers);
    for (const e of r.data.expect ?? []) parseCondition(e);
    return r.data;
  }
  const issue = r.error.issues[0]!;
  const unknown = unknownOptionError(
    issue,
    'runComparison',
    issue.path.length === 0 ? Object.keys(compareOptionsSchema.shape) : [],
  );
  if (unknown) throw unknown;
  const key = issue.path.join('.') || 'options';
  throw new H2labError('H2LAB_ERR_INVALID_OPTION', `compare option ${key}: ${issue.message}`, {
    option: key,
    issues: r.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
  });
}

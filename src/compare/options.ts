/**
 * Options of a comparison: one zod schema gives the types, the defaults and the validation; the CLI
 * (`src/cli/compare.ts`) only maps flags onto it.
 */
import { z } from 'zod';
import {
  declareFlag,
  formatBytes,
  H2labError,
  invalidOption,
  parseBytes,
  parseInteger,
  parseList,
  unknownOptionError,
} from '../core/index.ts';
import {
  checkHeaderFields,
  checkWorkloadSize,
  LOAD_DEFAULTS,
  RATE_FLAG,
  registeredStrategySchema,
  WINDOW_FLAG,
  WORKERS_FLAG,
} from '../load/index.ts';
import { httpMethodSchema, type WorkloadInput, workloadSchema } from '../model/index.ts';
import {
  CC_FLAG,
  conditionFlag,
  INITCWND_FLAG,
  LinkAxesSchema,
  NET_BACKEND_FLAG,
  SLOW_START_AFTER_IDLE_FLAG,
} from '../net/index.ts';
import {
  baselineStrategy,
  DEFAULT_WINDOW_PRESET,
  defaultMatrixStrategies,
  findStrategy,
  POOL_POLICIES,
  type PoolPolicy,
  type Strategy,
  strategyNames,
} from '../transport/index.ts';
import { parseCondition } from './expect.ts';

/** The window presets compare offers (explicit sizes are a `bench` matter): `--window`'s. */
const WINDOW_PRESETS = WINDOW_FLAG.choices as unknown as readonly ['node', 'browser', 'max'];

/** Defaults, each with its unit and why. */
export const COMPARE_DEFAULTS = Object.freeze({
  /**
   * Every registered strategy but the opt-in ones (h3, h3-pool), in the registry's order (read when
   * asked: one registered later joins).
   */
  get protocols(): string[] {
    return defaultMatrixStrategies();
  },
  /** The strategy that declares itself the baseline (h1: what HTTP/2 has to beat). */
  get baseline(): string {
    return baselineStrategy().name;
  },
  /** One client, a handful (a browser's six), and a busy service. */
  concurrency: [1, 8, 64],
  /** 5 runs per cell, the first of each discarded as warm-up: 4 kept runs per side for the interval. */
  runs: 5,
  warmupRuns: 1,
  /**
   * Measured time of one run, ms. Short, because the interval comes from repetition rather than from
   * one long run, and because the default matrix (27 cells × 5 runs) must finish in about two minutes.
   */
  durationMs: 500,
  /**
   * Warm-up inside each run excluded from its statistics, ms. 0: a request issued in the warm-up is
   * not counted even when it ends long after, so with large responses at high concurrency a warm-up
   * can swallow a whole short run. Each run opens its connections afresh; the discarded first run
   * warms the JIT and the server.
   */
  runWarmupMs: 0,
  seed: 1,
  /**
   * HTTP/1.1 connections: a browser's per-host limit, so the h1 strategy is "what a browser does" and
   * HTTP/1.1's client-side queue shows at concurrency > 6. `concurrency` gives each cell as many
   * connections as requests in flight (a bulk client's pool, as in the chunk study); a list gives one
   * value per --concurrency value.
   */
  h1Connections: 6 as H1Connections,
  /** Sessions of the h2-pool strategy. */
  h2PoolSessions: 4,
  /**
   * How h2-pool picks a session: `least-busy` over sessions opened at the start (a client library's
   * pool, sessions shared by callers); `first-free` takes an idle session or opens one (the echo
   * study's pool of independent clients).
   */
  h2PoolPolicy: 'least-busy' as PoolPolicy,
  minEffect: 0.05,
  confidence: 0.95,
  /** `loopback` = no emulation. Other profiles come from src/net when emulation is in use. */
  net: ['loopback'],
});

/**
 * compare's `--workers` bound, below the load engine's 256: a comparison runs one cell at a time on
 * this machine, and 64 threads already exceed any machine it is meant for.
 */
export const COMPARE_WORKERS_MAX = 64;

/** A registered strategy's name, else an error naming the flag and the names. */
function strategyName(text: string, flag: string): string {
  if (!findStrategy(text)) {
    const names = strategyNames();
    throw invalidOption(flag, text, `use one of ${names.join(', ')}, e.g. ${names.slice(0, 2).join(',')}`);
  }
  return text;
}

/**
 * The flags of a comparison, declared once (docs/design.md, "Options"); with the load flags it sweeps
 * (src/load/options.ts) they are `h2lab compare`'s and, narrowed where a study says why, the studies'.
 */
export const PROTOCOLS_FLAG = declareFlag({
  flag: 'protocols',
  grammar: 'string',
  arg: 'list',
  description: 'strategies to compare',
  defaultText: 'every registered strategy but the opt-in ones',
  sweep: 'one cell each',
  parse: strategyName,
});
export const SIZES_FLAG = declareFlag({
  flag: 'sizes',
  grammar: 'bytes',
  arg: 'list',
  description: 'response sizes, one workload each, from the fixture server (/bytes/N), e.g. 1KiB,1MiB',
  parse: (text, flag) => {
    const list = parseList(text).map((x) => parseBytes(x, flag));
    if (list.length === 0) throw invalidOption(flag, text, 'give at least one size, e.g. 1KiB,1MiB');
    return list;
  },
});
export const PATHS_FLAG = declareFlag({
  flag: 'paths',
  grammar: 'string',
  arg: 'list',
  description: 'paths on the target, one workload each',
});
export const BASELINE_FLAG = declareFlag({
  flag: 'baseline',
  grammar: 'string',
  arg: 'strategy',
  description: 'strategy the others are measured against',
  defaultText: baselineStrategy().name,
  parse: strategyName,
});
/**
 * `--runs`: repetitions of one measurement. Its uses narrow the range each for its reason: compare
 * ({@link COMPARE_RUNS}) and the studies count the discarded first run in it, page counts kept loads.
 */
export const RUNS_FLAG = declareFlag({
  flag: 'runs',
  grammar: 'int',
  arg: 'n',
  min: 1,
  max: 1000,
  description: 'runs per cell',
});
/** compare's `--runs`: at least 2, the first is warm-up (and {@link compareOptionsSchema} keeps 2). */
export const COMPARE_RUNS = {
  of: RUNS_FLAG,
  key: 'runs',
  min: 2,
  why: 'the first run is warm-up',
  description: 'runs per cell; the first is warm-up',
  defaultText: String(5),
} as const;
export const WARMUP_RUNS_FLAG = declareFlag({
  flag: 'warmup-runs',
  grammar: 'int',
  arg: 'n',
  min: 0,
  max: 100,
  description: 'runs per cell excluded from statistics',
  defaultText: '1',
});
/**
 * `--min-effect`: a fraction or a percentage from 0 to 10 (1000%): a ratio may differ by more than
 * 100%. compare's flag took at most 1 where its schema and `report` took 10; one range now.
 */
export const MIN_EFFECT_FLAG = declareFlag({
  flag: 'min-effect',
  grammar: 'fraction',
  arg: 'fraction',
  min: 0,
  max: 10,
  description: 'smallest difference called a difference, e.g. 5%',
  defaultText: '5%',
  parse: (text, flag) => {
    const s = text.trim();
    const n = s.endsWith('%') ? Number(s.slice(0, -1)) / 100 : Number(s);
    if (s === '' || s === '%' || !Number.isFinite(n) || n < 0 || n > 10)
      throw invalidOption(flag, text, 'use a percentage such as 5% or a fraction such as 0.05');
    return n;
  },
});
export const H1_CONNECTIONS_FLAG = declareFlag({
  flag: 'h1-connections',
  grammar: 'int',
  arg: 'n|list|concurrency',
  min: 1,
  max: 10_000,
  description:
    "HTTP/1.1 connections per cell (a browser's per-origin limit, capped at the concurrency; concurrency: as many as requests in flight; a list: one per --concurrency value)",
  defaultText: '6',
  parse: (text, flag) => {
    const v = text.replace(/^=/, '');
    if (v === 'concurrency') return v;
    const list = parseList(v).map((x) => {
      if (!/^\d+$/.test(x))
        throw invalidOption(
          flag,
          text,
          'use a number (e.g. 6), one per --concurrency value (e.g. 1,6,16), or concurrency',
        );
      return parseInteger(x, flag, 1, 10_000);
    });
    return list.length === 1 ? list[0]! : list;
  },
});
export const H2_SESSIONS_FLAG = declareFlag({
  flag: 'h2-sessions',
  grammar: 'int',
  arg: 'n',
  min: 1,
  max: 10_000,
  description: 'sessions of the h2-pool strategy',
  defaultText: '4',
});
export const H2_POOL_POLICY_FLAG = declareFlag({
  flag: 'h2-pool-policy',
  grammar: 'enum',
  arg: 'name',
  description:
    'how h2-pool picks a session (first-free: an idle one, else open one; lease: one stream per session at a time)',
  choices: POOL_POLICIES,
  defaultText: 'least-busy',
});
export const EXPECT_FLAG = declareFlag({
  flag: 'expect',
  grammar: 'string',
  arg: 'condition',
  description:
    'CI gate, repeatable: e.g. h2<=h1:p99@64 or "h2 not worse than h1 on p99 at c=64"; exit 1 when one fails',
  repeatable: true,
  gather: (texts) => [...texts],
});
export const EXPECT_UNDECIDED_FLAG = declareFlag({
  flag: 'expect-undecided',
  grammar: 'enum',
  arg: 'outcome',
  description: 'whether a condition the runs cannot decide fails',
  choices: ['pass', 'fail'],
  defaultText: 'pass',
});

/**
 * The link conditions compare and the studies sweep (one emulated link per combination), declared
 * once by the link-condition registry (src/net/link-flags.ts); `h2lab net`, `bench` and `page` take
 * one value of each.
 */
export const RTT_FLAG = conditionFlag('rtt');
export const JITTER_FLAG = conditionFlag('jitter');
export const LOSS_FLAG = conditionFlag('loss');
export const BANDWIDTH_FLAG = conditionFlag('rate');
export const QUEUE_FLAG = conditionFlag('queue');
export { CC_FLAG, INITCWND_FLAG, NET_BACKEND_FLAG, SLOW_START_AFTER_IDLE_FLAG };

/** TLS material used to reach a target (as in `h2lab bench`). */
export const tlsOptionsSchema = z.strictObject({
  ca: z.string().optional().describe('PEM file of the CA that signed the server certificate.'),
  cert: z.string().optional().describe('Client certificate (mTLS), PEM file.'),
  key: z.string().optional().describe('Client key (mTLS), PEM file.'),
  insecure: z.boolean().default(false).describe('Do not verify the server certificate.'),
});

/** `--h1-connections`: one number, `concurrency` (= each cell's), or one number per concurrency. */
export const h1ConnectionsSchema = z.union([
  z.number().int().min(1).max(10_000),
  z.literal('concurrency'),
  z.array(z.number().int().min(1).max(10_000)).min(1),
]);
export type H1Connections = z.output<typeof h1ConnectionsSchema>;

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

/**
 * The most workloads one comparison takes: each is crossed with every level, strategy, network and
 * run, and the report holds every one (issue #26: 2,000 made 90,000 runs and a 328 MB report.md).
 */
export const MAX_COMPARE_WORKLOADS = 64;

export const compareOptionsSchema = z
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

/**
 * The fixture server's routes used by the default matrix. Kept in one place so a route change in
 * src/server is a one-line change here.
 */
export const FIXTURE_ROUTES = {
  bytes: (sizeBytes: number) => `/bytes/${sizeBytes}`,
  /** `n` distinct tiles of one zoom level (a 16-wide block), so no two requests in a row are alike. */
  tiles: (n: number) =>
    Array.from({ length: n }, (_, i) => `/tiles/12/${2048 + (i % 16)}/${1360 + Math.floor(i / 16)}`),
};

/** 1024 → "1 KiB", 1536 → "1.50 KiB". */
function sizeLabel(n: number): string {
  for (const [unit, f] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (n >= f && n % f === 0) return `${n / f} ${unit}`;
  }
  return formatBytes(n);
}

/** A workload that fetches responses of one size from the fixture server. */
export function sizeWorkload(sizeBytes: number): WorkloadInput {
  return {
    id: `bytes-${sizeBytes}`,
    label: `${sizeLabel(sizeBytes)} responses`,
    paths: [FIXTURE_ROUTES.bytes(sizeBytes)],
    responseSizeBytes: sizeBytes,
    kind: sizeBytes >= 256 * 1024 ? 'bulk' : 'interactive',
  };
}

/** The embedded default: small responses, 1 MiB responses, tiles behind the backend pool. */
export function defaultFixtureWorkloads(): WorkloadInput[] {
  return [
    sizeWorkload(1024),
    sizeWorkload(1024 * 1024),
    {
      id: 'tiles',
      label: 'tiles behind the backend pool',
      paths: FIXTURE_ROUTES.tiles(64),
      kind: 'backend',
    },
  ];
}

/** Workloads for a user's URL when none are named: the URL itself. */
export function urlWorkloads(url: string): WorkloadInput[] {
  return [{ id: 'url', label: url, paths: [url], kind: 'interactive' }];
}

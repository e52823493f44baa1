/**
 * LoadOptions: the one source of truth for a load run's options (types, defaults, validation); the
 * flags of `h2lab bench` and their defaults are flags.ts, re-exported here. Keys carry their units.
 * Resolved options are stored in every result.
 */
import { z } from 'zod';
import {
  H2labError,
  headerFieldProblem,
  INPUT_FILE_CAPS,
  MAX_DURATION_MS,
  unknownOptionError,
} from '../core/index.ts';
import { httpMethodSchema } from '../model/index.ts';
import { checkCertKeyPair } from '../tls/index.ts';
import {
  DEFAULT_STRATEGY,
  DEFAULT_WINDOW_PRESET,
  findStrategy,
  getStrategy,
  H2_CLIENTS,
  isBuiltInStrategy,
  POOL_POLICIES,
  strategyNames,
  WINDOW_PRESETS,
} from '../transport/index.ts';
import {
  ARRIVALS,
  BURST_FLAG,
  BURST_HANDSHAKES,
  BURSTS_FLAG,
  GIVE_UP_FLAG,
  LOAD_DEFAULTS,
  PICKS,
  WORKERS_FLAG,
} from './flags.ts';
import { checkWorkloadSize } from './workload.ts';

const positiveMs = z.number().positive().finite();

/**
 * A registered strategy's name (src/transport/registry.ts). Checked against the registry when the
 * options are parsed, not when this module loads, so a strategy registered at run time is accepted.
 */
export const registeredStrategySchema = z
  .string()
  .refine((n) => findStrategy(n) !== undefined, { error: () => `use one of ${strategyNames().join(', ')}` });

/**
 * Refuses a header field that would split on the wire (src/core's check), naming `-H` and the field:
 * run where options are resolved, before any connection.
 */
export function checkHeaderFields(headers: Readonly<Record<string, string>>): void {
  for (const [name, value] of Object.entries(headers)) {
    const problem = headerFieldProblem(name, value);
    if (problem) {
      throw new H2labError(
        'H2LAB_ERR_INVALID_OPTION',
        `-H ${problem}: give each header as one -H "name: value" with no line break in it`,
        { option: '-H', value: `${name}: ${value}` },
      );
    }
  }
}

/** The schema. Unknown keys are rejected. */
const LoadOptionsSchema = z.strictObject({
  /** Target URL (`http://` = h1 or h2c prior knowledge, `https://` = ALPN). Undefined: the embedded fixture server. */
  url: z.string().min(1).optional(),
  /** Embedded target only: which listener to drive. */
  embeddedListener: z.enum(['tls', 'plain']).default('tls'),
  /** Embedded target only: its QUIC server sends a Retry before every handshake (one more round trip). */
  quicRetry: z.boolean().default(false),
  /** The client strategy: a registered name (default `h2`, one HTTP/2 session). */
  protocol: registeredStrategySchema.default(DEFAULT_STRATEGY),
  /** Connections (h1) or sessions (h2-pool); ignored by a fixed count (h2: one). Default: the strategy's. */
  connections: z.number().int().min(1).max(100_000).optional(),
  /** h2-pool: session choice policy. */
  policy: z.enum(POOL_POLICIES).default('least-busy'),
  /** Closed loop: requests in flight. Default: h1 → connections, others → 6. Ignored with rateRps. */
  concurrency: z.number().int().min(1).max(1_000_000).optional(),
  /** Open loop: requests per second. */
  rateRps: z.number().positive().finite().optional(),
  /**
   * Burst: this many requests handed to the transport at one instant t0 (paths cycling), the page-load
   * question; the result is the time from t0 until the last response ended. Excludes `rateRps`,
   * `concurrency`, `durationMs`, `requests`, `warmupMs` and more than one worker.
   */
  burst: z.number().int().min(BURST_FLAG.min).max(BURST_FLAG.max).optional(),
  /** Burst: bursts per run, each on fresh connections (default 1). */
  bursts: z.number().int().min(BURSTS_FLAG.min).max(BURSTS_FLAG.max).optional(),
  /** Burst: pause between bursts, ms (default 100). */
  burstGapMs: z.number().min(0).max(60_000).finite().optional(),
  /**
   * Burst: `include` (default) opens the connections inside the timed period, as a browser opening a
   * page does (h1 up to its pool size, h2 one session); `exclude` opens them before t0.
   */
  burstHandshakes: z.enum(BURST_HANDSHAKES).optional(),
  /** Open loop: even spacing or Poisson arrivals (exponential gaps, seeded). */
  arrivals: z.enum(ARRIVALS).default('even'),
  /**
   * One shard of a run spread over machines (src/shard, `h2lab plan`): with `rateRps`, this process
   * sends the arrivals k with k mod `count` = `index` of the whole run's seeded sequence, and `rateRps`
   * and `requests` are the whole run's. Closed loop: recorded only (the plan splits concurrency).
   */
  shard: z
    .strictObject({ index: z.number().int().min(0), count: z.number().int().min(1).max(10_000) })
    .refine((s) => s.index < s.count, { error: 'index must be below count' })
    .optional(),
  /** Measured period, ms (after warm-up). Default 10 s when `requests` is not given. */
  durationMs: positiveMs.optional(),
  /** Stop after this many measured requests. */
  requests: z.number().int().positive().optional(),
  /** Warm-up period excluded from statistics, ms. */
  warmupMs: z.number().min(0).finite().default(0),
  /** Seed for every random choice (Poisson arrivals, random URL picks). */
  seed: z.number().int().default(1),
  method: httpMethodSchema.default('GET'),
  /** Extra request headers (names are lower-cased). */
  headers: z.record(z.string(), z.string()).default({}),
  /** Paths (or same-origin URLs) to request instead of the URL's path; one is picked per request. */
  paths: z.array(z.string().min(1)).optional(),
  /** How a path is picked from several: in order (cycling) or at random (seeded). */
  pick: z.enum(PICKS).default('sequential'),
  /** Request body of this many generated bytes. */
  bodySizeBytes: z.number().int().min(0).max(INPUT_FILE_CAPS.body).optional(),
  /** Request body read from this file. */
  bodyFile: z.string().optional(),
  /**
   * HTTP/2 client: `h2lab` (its own, built to keep the client from being the bottleneck) or `node`
   * (node:http2, a second opinion; several times the CPU per request).
   */
  h2Client: z.enum(H2_CLIENTS).default('h2lab'),
  /** HTTP/2 flow-control window preset; default what Chromium advertises (see DEFAULT_WINDOW_PRESET). */
  window: z.enum(WINDOW_PRESETS).default(DEFAULT_WINDOW_PRESET),
  /** Explicit stream window, bytes (makes the preset `custom`). */
  streamWindowBytes: z.number().int().positive().optional(),
  /** Explicit connection window, bytes (makes the preset `custom`). */
  connectionWindowBytes: z.number().int().positive().optional(),
  /** PEM files: extra CA, client certificate and key (mTLS). */
  ca: z.string().optional(),
  cert: z.string().optional(),
  key: z.string().optional(),
  /** Accept any server certificate. */
  insecure: z.boolean().default(false),
  /**
   * Append the TLS secrets of every connection this run opens to this NSS key log (`SSLKEYLOGFILE`
   * format), for decrypting a capture of them. Default: none (secrets are written only on request).
   */
  keyLogFile: z.string().optional(),
  /**
   * h2lab's HTTP/2 client (`h2Client: 'h2lab'`) appends one JSON line per frame in and out of every
   * session to this file (src/h2/frame-log.ts). Default: none.
   */
  framesFile: z.string().optional(),
  /** The HTTP/3 client writes one qlog (JSON-SEQ, for qvis) per QUIC connection here. Default: none. */
  qlogDir: z.string().optional(),
  /**
   * Dial this address instead of the URL's host (the URL still names the server: port, authority,
   * SNI, certificate name), as curl's `--connect-to`. Set by a run through an emulated link to a
   * server h2lab did not start: the link's gateway address (src/net/gateway.ts).
   */
  connectTo: z.string().min(1).optional(),
  timeoutMs: positiveMs.default(LOAD_DEFAULTS.timeoutMs),
  connectTimeoutMs: positiveMs.default(LOAD_DEFAULTS.connectTimeoutMs),
  /** Close pooled connections idle this long, ms (0 = never). */
  idleTimeoutMs: z.number().min(0).finite().default(0),
  /** Retire pooled connections this old, ms (0 = never). */
  maxAgeMs: z.number().min(0).finite().default(0),
  /**
   * Take the target for gone once every connection attempt has failed this long, ms: the run stops
   * there (H2LAB_ERR_TARGET_UNREACHABLE, what it measured kept). Shorter outages are recorded
   * (`connections.outages`) and the run goes on.
   */
  reconnectGiveUpMs: z
    .number()
    .min(GIVE_UP_FLAG.min)
    .max(GIVE_UP_FLAG.max)
    .default(LOAD_DEFAULTS.reconnectGiveUpMs),
  /** Fail the run (exit 1) when failed / total exceeds this fraction. */
  maxErrorRate: z.number().min(0).max(1).optional(),
  /** Worker threads generating load (histograms merged exactly). */
  workers: z.number().int().min(WORKERS_FLAG.min).max(WORKERS_FLAG.max).default(1),
  /** Stream one record per request to this file (a Sample: NDJSON lines, or CSV rows). */
  samplesFile: z.string().optional(),
  /** The samples file's format; default: `csv` when the file name ends in `.csv`, else `ndjson`. */
  samplesFormat: z.enum(['ndjson', 'csv']).optional(),
  maxInFlight: z.number().int().positive().default(LOAD_DEFAULTS.maxInFlight),
  lateToleranceMs: z.number().min(0).default(LOAD_DEFAULTS.lateToleranceMs),
  progressIntervalMs: positiveMs.default(LOAD_DEFAULTS.progressIntervalMs),
  /**
   * Read the target's `/metrics?format=json` before and after the run (the fixture server's contract,
   * docs/design.md). Default: only for the embedded target.
   */
  serverMetrics: z.boolean().optional(),
  /**
   * The target runs in this process (a thread of its own, as compare's embedded server does): the
   * process CPU then includes it, so only the event loop judges client saturation. Implied for the
   * embedded target.
   */
  serverInProcess: z.boolean().optional(),
});

/** What a caller passes (defaults optional). */
export type LoadOptionsInput = z.input<typeof LoadOptionsSchema>;
/** Options after defaults. */
type LoadOptions = z.output<typeof LoadOptionsSchema>;

/** Options with every derived default filled in. */
export type ResolvedLoadOptions = LoadOptions & { connections: number; concurrency: number };

/** The burst options that only make sense together with `burst`. */
const BURST_ONLY = [
  ['bursts', '--bursts'],
  ['burstGapMs', '--burst-gap'],
  ['burstHandshakes', '--burst-handshakes'],
] as const;

/** Options a burst replaces: its own schedule, one instant, one thread. */
const NOT_WITH_BURST = [
  ['rateRps', '--rate'],
  ['concurrency', '--concurrency'],
  ['durationMs', '--duration'],
  ['requests', '--requests'],
] as const;

/** Checks the burst options and fills their defaults (only when `burst` is set). */
function resolveBurst(o: LoadOptions): Partial<LoadOptions> {
  if (o.burst === undefined) {
    for (const [key, flag] of BURST_ONLY) {
      if (o[key] !== undefined) {
        throw new H2labError('H2LAB_ERR_INVALID_OPTION', `${flag} needs --burst N: add it, or drop ${flag}`, {
          option: flag,
          value: o[key],
        });
      }
    }
    return {};
  }
  for (const [key, flag] of NOT_WITH_BURST) {
    if (o[key] !== undefined) {
      throw new H2labError(
        'H2LAB_ERR_INVALID_OPTION',
        `${flag} ${JSON.stringify(o[key])} cannot be combined with --burst ${o.burst}: a burst issues its N requests at once and ends with the last response; drop ${flag} (use --bursts B to repeat the burst)`,
        { option: flag, value: o[key] },
      );
    }
  }
  if (o.warmupMs > 0) {
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `--warmup ${o.warmupMs}ms cannot be combined with --burst: use --burst-handshakes exclude to open the connections before the timed period`,
      { option: '--warmup', value: o.warmupMs },
    );
  }
  if (o.workers > 1) {
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `--workers ${o.workers} cannot be combined with --burst: a burst starts at one instant in one thread; drop --workers`,
      { option: '--workers', value: o.workers },
    );
  }
  return {
    bursts: o.bursts ?? LOAD_DEFAULTS.bursts,
    burstGapMs: o.burstGapMs ?? LOAD_DEFAULTS.burstGapMs,
    burstHandshakes: o.burstHandshakes ?? LOAD_DEFAULTS.burstHandshakes,
  };
}

/**
 * Validates and fills defaults. Throws H2LAB_ERR_INVALID_OPTION naming the key, the value and the fix.
 */
export function resolveLoadOptions(input: LoadOptionsInput): ResolvedLoadOptions {
  const r = LoadOptionsSchema.safeParse(input);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const unknown = unknownOptionError(issue, 'runLoad', Object.keys(LoadOptionsSchema.shape));
    if (unknown) throw unknown;
    const key =
      issue.path.join('.') || (issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : 'options');
    const value = issue.path.reduce<unknown>(
      (o, k) => (o && typeof o === 'object' ? (o as Record<PropertyKey, unknown>)[k] : undefined),
      input,
    );
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `${key} ${value === undefined ? '' : `${JSON.stringify(value)} `}is not valid: ${issue.message}`,
      { option: key, value },
    );
  }
  checkHeaderFields(r.data.headers);
  const o = { ...r.data, ...resolveBurst(r.data) };
  const strategy = getStrategy(o.protocol);
  const sizes = strategy.connections;
  const connections = sizes.fixed ?? o.connections ?? sizes.default ?? 1;
  // A burst has N requests in flight at t0: its concurrency is recorded as N.
  const concurrency =
    o.burst ?? o.concurrency ?? (strategy.multiplexed ? LOAD_DEFAULTS.concurrency : connections);
  // The stop timer waits warm-up + measured period: one Node.js timer (MAX_DURATION_MS).
  if (o.warmupMs + (o.durationMs ?? 0) > MAX_DURATION_MS) {
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `--warmup ${o.warmupMs}ms plus --duration ${o.durationMs}ms is more than 596h (${MAX_DURATION_MS} ms, the longest a Node.js timer waits): shorten them`,
      { option: '--duration', value: o.durationMs },
    );
  }
  if (o.bodyFile !== undefined && o.bodySizeBytes !== undefined) {
    throw new H2labError('H2LAB_ERR_INVALID_OPTION', '--body and --body-size were both given: choose one', {
      option: '--body',
    });
  }
  if (o.url !== undefined && !o.url.startsWith('/')) checkTargetUrl(o.url);
  checkWorkloadSize(o.url ?? '/', o.paths);
  if (o.paths !== undefined && o.paths.length === 0) {
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      '--urls names a file without a path in it (only blank or # lines): put one path or same-origin URL a line, e.g. /bytes/1024',
      { option: '--urls', value: [] },
    );
  }
  checkCertKeyPair({ cert: o.cert, key: o.key }, 'to send no client certificate');
  if (o.workers > 1 && !isBuiltInStrategy(o.protocol)) {
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `--workers ${o.workers} cannot run --protocol ${o.protocol}: it was registered at run time in this thread, and worker threads know only the built-in strategies; use --workers 1, or add it to BUILT_IN_STRATEGIES in src/transport/descriptors.ts`,
      { option: '--workers', value: o.workers },
    );
  }
  if (o.workers > 1 && o.workers > concurrency && o.rateRps === undefined) {
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `--workers ${o.workers} is more than --concurrency ${concurrency}: each worker needs at least one request in flight`,
      { option: '--workers', value: o.workers },
    );
  }
  return { ...o, connections, concurrency };
}

/** A target URL must be http:// or https:// with a host; anything else is a usage error, not a crash. */
export function checkTargetUrl(url: string): void {
  let u: URL | undefined;
  try {
    u = new URL(url);
  } catch {
    u = undefined;
  }
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || !u.hostname) {
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `url ${JSON.stringify(url)} is not valid: give an http:// or https:// URL (e.g. http://127.0.0.1:8080/bytes/1024), a path on the embedded server (/bytes/1024), or nothing`,
      { option: 'url', value: url },
    );
  }
}

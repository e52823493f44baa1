/**
 * The shard plan: one load run cut into N shards, deterministic from the options, the shard count and
 * the start time, sealed by a hash every shard and the merge check.
 *
 * Open loop: every shard gets the whole run's rate and seed and sends the arrivals of its index in the
 * one global sequence (src/load/arrivals.ts), so the shards together send exactly what one process
 * would. Closed loop: concurrency, connections and a request count are integers split as evenly as
 * they go (the first `total mod N` shards get one more), and none may fall below one per shard: a shard
 * with nothing to do would still open connections and report a zero that the merge cannot tell from a
 * failure, so the plan refuses instead.
 */
import { createHash } from 'node:crypto';
import { H2labError, readOptionText } from '../core/index.ts';
import { HISTOGRAM_SETTINGS, type LoadOptionsInput, resolveLoadOptions, split } from '../load/index.ts';
import { type AnyPlan, anyPlanSchema, type ShardPlan, shardPlanSchema } from '../model/index.ts';
import { getStrategy } from '../transport/index.ts';

/** What a plan needs besides the load options. */
export interface PlanInput {
  /** Shards (load processes, pods), ≥ 1. */
  shards: number;
  /** When every shard starts its schedule, ms since the epoch on the reference clock. */
  startAtEpochMs: number;
  /** Default: derived from the plan's content ("r" and 10 hex digits of its hash). */
  runId?: string;
  /** A shard released later than this after the start refuses to run, ms. Default 1000. */
  startGraceMs?: number;
  /** The coordinator answering `{"epochMs": n}`; absent: no offset is measured (recorded as such). */
  clockUrl?: string;
  /** NTP-style exchanges per shard. Default 8. */
  clockSamples?: number;
  /** The merge warns above this start skew, ms. Default 10. */
  maxSkewMs?: number;
}

/** The plan's defaults, each a decision recorded in every plan. */
const PLAN_DEFAULTS = Object.freeze({
  /**
   * ms. A shard later than this sends its first arrivals late by as much; one second is far above a
   * healthy timer's lag (well under 10 ms) and far below a pod scheduled or pulled late (seconds).
   */
  startGraceMs: 1000,
  /** Exchanges: enough that one of them sees an idle path, few enough to take milliseconds. */
  clockSamples: 8,
  /** ms: the issue's bound; above it, the shards' first arrivals are measurably apart. */
  maxSkewMs: 10,
});

/** Keys sorted at every level, so the same plan always hashes the same. */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** The hash of a plan: sha256 of its canonical JSON without the `hash` field. */
function planHash(plan: { hash?: string }): string {
  const { hash: _h, ...rest } = plan;
  return sha256(canonicalJson(rest));
}

function tooSmall(option: string, value: number, shards: number): H2labError {
  return new H2labError(
    'H2LAB_ERR_SHARD_TOO_SMALL',
    `${option} ${value} cannot be split into ${shards} shards with at least one each: use ${option} ${shards} or more, or --shards ${value} or fewer`,
    { option, value, shards },
  );
}

/** How one load run is divided among N shards; see {@link splitLoad}. */
type LoadSplit = ShardPlan['split'];

/**
 * Divides one load run among `n` shards: the numbers each shard gets (rate and arrival index for an
 * open loop; concurrency, connections and a request count split as evenly as they go for a closed
 * one). `names` says which flag sizes what, for the errors. Throws H2LAB_ERR_SHARD_TOO_SMALL and
 * H2LAB_ERR_SHARD_UNSUPPORTED (a burst, samples, the embedded target, options already a shard's).
 */
export function splitLoad(
  input: LoadOptionsInput,
  n: number,
  names: { connections?: string; concurrency?: string; requests?: string } = {},
): LoadSplit {
  const o = resolveLoadOptions(input);
  const unsupported = (option: string, why: string): H2labError =>
    new H2labError('H2LAB_ERR_SHARD_UNSUPPORTED', `${option} cannot be split into shards: ${why}`, {
      option,
    });
  if (o.burst !== undefined) {
    throw unsupported(
      '--burst',
      'a burst is N requests at one instant from one process; use --rate or --concurrency',
    );
  }
  if (o.samplesFile !== undefined)
    throw unsupported('--samples', 'each shard would write its own file; drop --samples');
  if (o.url === undefined || o.url.startsWith('/')) {
    throw unsupported(
      'url',
      'every shard would start its own embedded server; name the one target URL every shard drives',
    );
  }
  if (o.shard !== undefined) throw unsupported('shard', 'the options are already one shard of a plan');
  const open = o.rateRps !== undefined;
  const fixed = getStrategy(o.protocol).connections.fixed;
  // Concurrency first: a pool capped at the concurrency is too small because the concurrency is.
  if (!open && o.concurrency < n) throw tooSmall(names.concurrency ?? '--concurrency', o.concurrency, n);
  if (fixed === undefined && o.connections < n)
    throw tooSmall(names.connections ?? '--connections', o.connections, n);
  if (!open && o.requests !== undefined && o.requests < n)
    throw tooSmall(names.requests ?? '--requests', o.requests, n);
  const concurrency = open ? undefined : Array.from({ length: n }, (_, i) => split(o.concurrency, n, i));
  return {
    mode: open ? 'open' : 'closed',
    ...(open ? { rateRps: o.rateRps } : {}),
    ...(concurrency ? { concurrency } : {}),
    connections: Array.from({ length: n }, (_, i) => fixed ?? split(o.connections, n, i)),
    ...(o.requests === undefined
      ? {}
      : { requests: Array.from({ length: n }, (_, i) => (open ? o.requests! : split(o.requests!, n, i))) }),
  };
}

/**
 * The load options of shard `index` of a run divided by `s`: the run's options with the shard's
 * numbers, validated as the shard's own machine will (the split must leave valid options).
 */
export function shardLoadOptions(
  input: LoadOptionsInput,
  s: LoadSplit,
  index: number,
): Record<string, unknown> {
  const n = s.connections.length;
  const out: Record<string, unknown> = { ...input, shard: { index, count: n } };
  if (getStrategy(resolveLoadOptions(input).protocol).connections.fixed === undefined)
    out.connections = s.connections[index];
  if (s.concurrency) out.concurrency = s.concurrency[index];
  if (s.requests) out.requests = s.requests[index];
  resolveLoadOptions(out as LoadOptionsInput);
  return out;
}

/** Throws H2LAB_ERR_INVALID_OPTION unless `n` is a usable shard count. */
export function checkShardCount(n: number): void {
  if (!Number.isInteger(n) || n < 1 || n > 10_000) {
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `--shards ${n} is not valid: use an integer from 1 to 10000`,
      {
        option: '--shards',
        value: n,
      },
    );
  }
}

/** The start, clock and skew part of a plan, with the defaults applied. */
export function planTiming(
  p: PlanInput,
): Pick<ShardPlan, 'startAtEpochMs' | 'startGraceMs' | 'clock' | 'maxSkewMs' | 'histogram'> {
  return {
    startAtEpochMs: p.startAtEpochMs,
    startGraceMs: p.startGraceMs ?? PLAN_DEFAULTS.startGraceMs,
    clock: {
      ...(p.clockUrl ? { url: p.clockUrl } : {}),
      samples: p.clockSamples ?? PLAN_DEFAULTS.clockSamples,
    },
    maxSkewMs: p.maxSkewMs ?? PLAN_DEFAULTS.maxSkewMs,
    histogram: { ...HISTOGRAM_SETTINGS },
  };
}

/**
 * Gives a plan body its run id (from its content unless one was asked for) and its hash, and checks
 * it against `schema`. Throws H2LAB_ERR_INVALID_OPTION for a run id that is not a DNS label.
 */
export function sealPlan<T extends { runId: string; hash: string }>(
  body: Omit<T, 'hash' | 'runId'>,
  runId: string | undefined,
  schema: {
    safeParse(
      v: unknown,
    ):
      | { success: true; data: T }
      | { success: false; error: { issues: Array<{ path: PropertyKey[]; message: string }> } };
  },
): T {
  const id = runId ?? `r${sha256(canonicalJson(body)).slice(0, 10)}`;
  const unsealed = { ...body, runId: id };
  const plan = { ...unsealed, hash: sha256(canonicalJson(unsealed)) };
  const parsed = schema.safeParse(plan);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.join('.');
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `${path === 'runId' ? '--run-id' : path} ${JSON.stringify(runId)} is not valid: ${issue.message}`,
      { option: path, value: runId },
    );
  }
  // As built (the key order of the plan's files stays the one they always had); the schema agreed.
  return plan as unknown as T;
}

/**
 * Splits a load run into a plan. Throws H2LAB_ERR_INVALID_OPTION (the options), H2LAB_ERR_SHARD_TOO_SMALL
 * and H2LAB_ERR_SHARD_UNSUPPORTED.
 * @example planShards({ url: 'https://t/', rateRps: 900, durationMs: 10_000 }, { shards: 3, startAtEpochMs: Date.now() + 60_000 })
 */
export function planShards(input: LoadOptionsInput, p: PlanInput): ShardPlan {
  const n = p.shards;
  checkShardCount(n);
  const s = splitLoad(input, n);
  const shardOptions = Array.from({ length: n }, (_, i) => shardLoadOptions(input, s, i));
  const body: Omit<ShardPlan, 'hash' | 'runId'> = {
    kind: 'h2lab.plan',
    version: 1,
    shards: n,
    ...planTiming(p),
    options: { ...input },
    shardOptions,
    split: s,
  };
  return sealPlan<ShardPlan>(body, p.runId, shardPlanSchema);
}

/**
 * Checks a value read from a plan file (a load run's or a comparison's): the schema, then the hash.
 * Throws H2LAB_ERR_PLAN_INVALID.
 */
export function checkPlan(value: unknown, where = 'the plan'): AnyPlan {
  const r = anyPlanSchema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new H2labError(
      'H2LAB_ERR_PLAN_INVALID',
      `${where} is not an h2lab plan of version 1 (${issue.path.join('.') || 'top level'}: ${issue.message}): write it again with h2lab plan`,
      { where, path: issue.path.join('.') },
    );
  }
  const expected = planHash(r.data);
  if (expected !== r.data.hash) {
    throw new H2labError(
      'H2LAB_ERR_PLAN_INVALID',
      `${where} was changed after h2lab plan wrote it (hash ${r.data.hash.slice(0, 12)}…, content ${expected.slice(0, 12)}…): write it again with h2lab plan and give every shard the same file`,
      { where, hash: r.data.hash, content: expected },
    );
  }
  return r.data;
}

/** Reads and checks a plan file. */
export function readPlanFile(path: string, option = '--plan'): AnyPlan {
  const text = readOptionText(path, option, { kind: 'result' });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new H2labError(
      'H2LAB_ERR_PLAN_INVALID',
      `${option} ${path} is not JSON: write it again with h2lab plan`,
      {
        option,
        path,
      },
    );
  }
  return checkPlan(value, `${option} ${path}`);
}

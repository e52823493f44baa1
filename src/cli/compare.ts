/**
 * `h2lab compare [URL]`: the main job. Maps flags onto the compare options, shows a progress bar with
 * an ETA over the runs, writes results.json after every run (so Ctrl-C or a crash leaves a valid
 * file), then report.md / report.html, and prints the table and the verdict. This file declares the
 * flags and maps them (it loads only the flags' declarations, the folders' meta.ts); the run is
 * compare-run.ts, loaded by the action.
 */
import type { Command } from 'commander';
import type { CompareOptionsInput } from '../compare/index.ts';
import {
  BANDWIDTH_FLAG,
  BASELINE_FLAG,
  BUDGET_FLAG,
  CC_FLAG,
  COMPARE_DEFAULTS,
  COMPARE_RUNS,
  COMPARE_WORKERS_MAX,
  EXPECT_FLAG,
  EXPECT_UNDECIDED_FLAG,
  H1_CONNECTIONS_FLAG,
  H2_POOL_POLICY_FLAG,
  H2_SESSIONS_FLAG,
  INITCWND_FLAG,
  JITTER_FLAG,
  LOSS_DOWN_FLAG,
  LOSS_FLAG,
  LOSS_UP_FLAG,
  MAX_COMPARE_WORKLOADS,
  MIN_EFFECT_FLAG,
  NET_BACKEND_FLAG,
  PATHS_FLAG,
  PROTOCOLS_FLAG,
  QUEUE_FLAG,
  RTT_FLAG,
  SIZES_FLAG,
  SLOW_START_AFTER_IDLE_FLAG,
  sizeWorkload,
  WARMUP_RUNS_FLAG,
} from '../compare/meta.ts';
import {
  CA_FLAG,
  CERT_FLAG,
  FRAMES_FLAG,
  INSECURE_FLAG,
  invalidOption,
  KEY_FLAG,
  KEYLOG_FLAG,
  parseList,
  QLOG_FLAG,
  QUIC_RETRY_FLAG,
  readFlag,
  TIMEOUT_FLAG,
} from '../core/index.ts';
import {
  BODY_FLAG,
  BODY_SIZE_FLAG,
  BURST_FLAG,
  BURST_HANDSHAKES_FLAG,
  CONCURRENCY_FLAG,
  CONNECT_TIMEOUT_FLAG,
  DURATION_FLAG,
  HEADER_FLAG,
  METHOD_FLAG,
  RATE_FLAG,
  REQUESTS_FLAG,
  SEED_FLAG,
  URLS_FLAG,
  WINDOW_FLAG,
  WORKERS_FLAG,
} from '../load/meta.ts';
import type { WorkloadInput } from '../model/index.ts';
import { CAPTURE_ALL_FLAG } from '../net/meta.ts';
import { METRICS_URL_FLAG } from '../server/meta.ts';
import { CSV_FLAG, JSON_FLAG, OUT_FLAG, QUIET_FLAG } from './common-flags.ts';
import { addFlags, optionOf, valuesOf } from './flags.ts';
import { addNetOption, CAPTURE_FLAGS, parseNet } from './net-options.ts';
import { addPlanFlags, type PlanFlags } from './plan-flags.ts';
import { addConfigFlag, flagsWithConfig } from './schema-flags.ts';

/** compare's flags as commander hands them over (with `--config`'s). */
export interface CompareFlags extends PlanFlags {
  method?: string;
  header?: string[];
  body?: string;
  timeout?: string;
  connectTimeout?: string;
  protocols?: string;
  baseline?: string;
  concurrency?: string;
  sizes?: string;
  paths?: string;
  urls?: string;
  bodySize?: string;
  burst?: string;
  burstHandshakes?: string;
  duration?: string;
  requests?: string;
  runs?: string;
  warmupRuns?: string;
  seed?: string;
  minEffect?: string;
  budget?: string;
  h1Connections?: string;
  h2Sessions?: string;
  h2PoolPolicy?: string;
  quicRetry?: boolean;
  workers?: string;
  window?: string;
  net?: string;
  rtt?: string;
  jitter?: string;
  loss?: string;
  lossUp?: string;
  lossDown?: string;
  bandwidth?: string;
  cc?: string;
  initcwnd?: string;
  queue?: string;
  slowStartAfterIdle?: boolean;
  netBackend?: string;
  ca?: string;
  cert?: string;
  key?: string;
  insecure?: boolean;
  metricsUrl?: string;
  rate?: string;
  expect?: string[];
  expectUndecided?: string;
  out: string;
  json?: string;
  csv?: string;
  quiet?: boolean;
  brief?: boolean;
  slotGap?: string;
  planOut?: string;
}

function pathWorkload(path: string, i: number, bodySizeBytes?: number): WorkloadInput {
  const id = `path-${i + 1}`;
  return {
    id,
    label: path,
    paths: [path],
    ...(bodySizeBytes !== undefined ? { method: 'POST' as const, bodySizeBytes } : {}),
  };
}

/**
 * A list that becomes one workload an entry: each entry once (a workload twice is the same cells
 * measured twice), and no more than {@link MAX_COMPARE_WORKLOADS} — every workload is crossed with
 * every level, strategy and run, and the report holds each (2,000 URLs made 90,000 runs and a
 * 328 MB report.md).
 */
function checkWorkloadList(option: string, list: readonly string[]): void {
  const seen = new Map<string, number>();
  for (const x of list) seen.set(x, (seen.get(x) ?? 0) + 1);
  const twice = [...seen].filter(([, n]) => n > 1);
  if (twice.length > 0) {
    const [x, n] = twice[0]!;
    throw invalidOption(
      option,
      `${list.length.toLocaleString('en-US')} entries`,
      `${x} is listed ${n.toLocaleString('en-US')} times (${seen.size.toLocaleString('en-US')} distinct of ${list.length.toLocaleString('en-US')}): each entry is one workload, so list each once`,
    );
  }
  if (list.length > MAX_COMPARE_WORKLOADS)
    throw invalidOption(
      option,
      `${list.length.toLocaleString('en-US')} entries`,
      `compare makes one workload of each, crossed with every level, strategy and run: give at most ${MAX_COMPARE_WORKLOADS} (the ones you decide on), or measure many paths in turn as one load with h2lab bench URL --urls FILE`,
    );
}

/**
 * compare's flags that fill an option directly, and the key each fills: the load flags it sweeps
 * (src/load/options.ts) and its own (src/compare/options.ts). The workload flags (--sizes, --paths,
 * --urls, --body-size) build workloads, below.
 */
const COMPARE_FLAG_USES = [
  {
    of: PROTOCOLS_FLAG,
    key: 'protocols',
    list: true,
    description: 'strategies to compare',
    defaultText: COMPARE_DEFAULTS.protocols.join(','),
  },
  { of: BASELINE_FLAG, key: 'baseline' },
  {
    of: CONCURRENCY_FLAG,
    key: 'concurrency',
    list: true,
    max: 10_000,
    why: 'every value is a cell run in turn on this machine',
    description: 'requests in flight, one cell per value',
    defaultText: COMPARE_DEFAULTS.concurrency.join(','),
  },
  { of: SIZES_FLAG },
  { of: PATHS_FLAG },
  { of: URLS_FLAG, description: 'URLs (comma-separated or a file, one a line), one workload each' },
  { of: BODY_SIZE_FLAG, description: 'upload a body of this size with each request (POST)' },
  {
    of: BURST_FLAG,
    key: 'burst',
    list: true,
    description:
      'make each workload a burst: N requests at once per run, compared on the time until the last ends; one cell per N (replaces --concurrency for it)',
  },
  { of: BURST_HANDSHAKES_FLAG, key: 'burstHandshakes' },
  {
    of: DURATION_FLAG,
    key: 'durationMs',
    description: 'measured time of each run',
    defaultText: `${COMPARE_DEFAULTS.durationMs}ms`,
  },
  { of: REQUESTS_FLAG, key: 'requests', description: 'requests per run instead of a duration' },
  COMPARE_RUNS,
  { of: WARMUP_RUNS_FLAG, key: 'warmupRuns' },
  { of: SEED_FLAG, key: 'seed' },
  { of: MIN_EFFECT_FLAG, key: 'minEffect' },
  { of: BUDGET_FLAG, key: 'budgetMs' },
  { of: H1_CONNECTIONS_FLAG, key: 'h1Connections' },
  { of: H2_SESSIONS_FLAG, key: 'h2PoolSessions' },
  { of: H2_POOL_POLICY_FLAG, key: 'h2PoolPolicy' },
  { of: QUIC_RETRY_FLAG, key: 'quicRetry' },
  {
    of: WORKERS_FLAG,
    key: 'workers',
    max: COMPARE_WORKERS_MAX,
    why: 'one cell runs at a time on this machine',
    description: 'load generator threads per run, when one saturates',
  },
  { of: WINDOW_FLAG, key: 'window' },
  { of: METHOD_FLAG, key: 'method' },
  { of: HEADER_FLAG, key: 'headers' },
  { of: BODY_FLAG, key: 'bodyFile' },
  { of: TIMEOUT_FLAG, key: 'timeoutMs' },
  { of: CONNECT_TIMEOUT_FLAG, key: 'connectTimeoutMs' },
  { of: RATE_FLAG, key: 'rateRps', list: true },
] as const;

/** The link conditions compare sweeps, after `--net`: one emulated link per combination. */
const COMPARE_LINK_USES = [
  { of: RTT_FLAG, key: 'links.rttMs', list: true },
  { of: JITTER_FLAG, key: 'links.jitterMs', list: true },
  { of: LOSS_FLAG, key: 'links.loss', list: true },
  { of: LOSS_UP_FLAG, key: 'links.lossUp', list: true },
  { of: LOSS_DOWN_FLAG, key: 'links.lossDown', list: true },
  { of: BANDWIDTH_FLAG, key: 'links.rateBitsPerSec', list: true },
  { of: CC_FLAG, key: 'links.congestionControl', list: true },
  { of: INITCWND_FLAG, key: 'links.initialCwnd' },
  { of: QUEUE_FLAG, key: 'links.queueBytes' },
  { of: SLOW_START_AFTER_IDLE_FLAG, key: 'links.slowStartAfterIdle' },
  { of: NET_BACKEND_FLAG, key: 'links.backend' },
  { of: CA_FLAG, key: 'tls.ca', description: 'CA certificate (PEM) that signed the server certificate' },
  { of: CERT_FLAG, key: 'tls.cert', description: 'client certificate (PEM) for mTLS' },
  { of: KEY_FLAG, key: 'tls.key', description: 'client key (PEM) for mTLS' },
  { of: INSECURE_FLAG, key: 'tls.insecure', description: 'accept any server certificate (do not verify it)' },
  { of: KEYLOG_FLAG, key: 'tls.keyLogFile' },
  { of: FRAMES_FLAG, key: 'framesFile' },
  {
    of: QLOG_FLAG,
    key: 'qlogDir',
    description:
      "write one qlog (JSON-SEQ, for qvis) per QUIC connection of h2lab's HTTP/3 client, and of the embedded fixture's server, into this directory",
  },
  { of: METRICS_URL_FLAG, key: 'metricsUrl' },
  { of: EXPECT_FLAG, key: 'expect' },
  { of: EXPECT_UNDECIDED_FLAG, key: 'expectUndecided' },
] as const;

/** The workloads of --sizes, --paths or --urls (one of them), each an upload with --body-size. */
function workloadsFromFlags(url: string | undefined, f: CompareFlags, o: CompareOptionsInput): void {
  const bodySizeBytes =
    f.bodySize !== undefined ? (readFlag(BODY_SIZE_FLAG, f.bodySize) as number) : undefined;
  const given = [f.sizes, f.paths, f.urls].filter((x) => x !== undefined).length;
  if (given > 1)
    throw invalidOption(
      '--sizes/--paths/--urls',
      [f.sizes, f.paths, f.urls].filter(Boolean).join(' '),
      'give only one of them',
    );
  if (f.sizes) {
    o.workloads = (readFlag(SIZES_FLAG, f.sizes) as number[]).map((n) => ({
      ...sizeWorkload(n),
      ...(bodySizeBytes !== undefined ? { method: 'POST' as const, bodySizeBytes } : {}),
    }));
  } else if (f.paths) {
    const list = parseList(f.paths);
    checkWorkloadList('--paths', list);
    o.workloads = list.map((p, i) => pathWorkload(p, i, bodySizeBytes));
  } else if (f.urls) {
    const list = readFlag(URLS_FLAG, f.urls) as string[];
    checkWorkloadList('--urls', list);
    o.workloads = list.map((u, i) => pathWorkload(u, i, bodySizeBytes));
    if (!o.url && list[0]) o.url = new URL(list[0]).origin + '/';
  } else if (bodySizeBytes !== undefined) {
    if (!url)
      throw invalidOption(
        '--body-size',
        f.bodySize,
        'uploads need a target: give a URL (or --paths /echo with the fixture server)',
      );
    o.workloads = [pathWorkload(new URL(url).pathname, 0, bodySizeBytes)];
  }
}

/**
 * `--runs` against `--warmup-runs`: one rule, one message — the warm-up runs come first and an
 * interval needs 2 more, so the least `--runs` is the warm-up runs plus 2 (3 by default).
 */
function checkRuns(f: CompareFlags): void {
  if (f.runs === undefined) return;
  const warmup =
    f.warmupRuns !== undefined
      ? (readFlag(WARMUP_RUNS_FLAG, f.warmupRuns) as number)
      : COMPARE_DEFAULTS.warmupRuns;
  const least = warmup + 2;
  const runs = Number(f.runs);
  if (Number.isInteger(runs) && runs < least)
    throw invalidOption(
      '--runs',
      f.runs,
      `use a whole number from ${least} to ${COMPARE_RUNS.of.max}: the first ${warmup} run(s) are warm-up (--warmup-runs) and an interval needs 2 more`,
    );
}

/** Flags → options, by the declarations' keys. Exported for tests. */
export function compareOptionsFromFlags(url: string | undefined, f: CompareFlags): CompareOptionsInput {
  checkRuns(f);
  // Open loop replaces the closed loop's axis: a cell per rate, as a cell per concurrency.
  if (f.rate && f.concurrency)
    throw invalidOption(
      '--rate',
      f.rate,
      `--rate replaces --concurrency ${f.concurrency} (open loop: the schedule, not the client, sets what is in flight); give one of them`,
    );
  const flags = f as unknown as Record<string, unknown>;
  const o = {
    ...valuesOf(flags, COMPARE_FLAG_USES),
    ...valuesOf(flags, COMPARE_LINK_USES),
  } as CompareOptionsInput;
  if (url) o.url = url;
  workloadsFromFlags(url, f, o);
  // Behind a link the embedded fixture server runs in the link's server namespace.
  if (f.net) o.net = parseNet(f.net, true);
  return o;
}

export function register(program: Command): void {
  const cmd = program
    .command('compare')
    .argument('[url]', 'target base URL (default: start the embedded fixture server on free ports)');
  addFlags(cmd, COMPARE_FLAG_USES);
  addNetOption(cmd, true);
  addFlags(cmd, COMPARE_LINK_USES)
    .addOption(
      optionOf({
        of: OUT_FLAG,
        arg: 'dir',
        description: 'where results.json, report.md and report.html go',
      }).default('h2lab-report'),
    )
    .addOption(
      optionOf({
        of: JSON_FLAG,
        description: 'also write results.json here; - for stdout (the table goes to stderr)',
      }),
    )
    .addOption(
      optionOf({
        of: CSV_FLAG,
        description: 'one row per cell (workload, level, net, strategy); - for stdout',
      }),
    )
    .addOption(optionOf({ of: QUIET_FLAG, description: 'no progress, no table' }))
    .addOption(optionOf(CAPTURE_FLAGS[0]))
    .addOption(optionOf(CAPTURE_FLAGS[1]))
    .addOption(optionOf(CAPTURE_FLAGS[2]))
    .addOption(optionOf(CAPTURE_ALL_FLAG))
    .option(
      '--brief',
      'print the answer alone (what to decide, for which clients, why); the files are complete',
    );
  addPlanFlags(cmd, true)
    .option(
      '--slot-gap <time>',
      'with --shards: time between one run’s end and the next run’s start, for the last responses and the next connections (default 1s)',
    )
    .option(
      '--plan-out <file>',
      'with --shards: write the plan (for h2lab k8s run or h2lab shard local) instead of running it here',
    );
  addConfigFlag(cmd).action(async (url: string | undefined, _flags: CompareFlags, self: Command) => {
    const flags = flagsWithConfig<CompareFlags>(self);
    const input = compareOptionsFromFlags(url, flags);
    // The engine, the shards and the renderers load with a run, not with the flags.
    const { runCompareCommand } = await import('./compare-run.ts');
    await runCompareCommand(input, flags);
  });
}

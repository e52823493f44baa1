/**
 * The flags of a comparison and the defaults they print: what `compare --help` (and the studies') needs,
 * and nothing more — no zod, no schema, no engine (docs/design.md, "Start-up: what a command's help
 * loads"). The options' schema is options.ts, which takes its defaults and ranges from here; the
 * folder's light face, src/compare/meta.ts, exports this file.
 */
import { declareFlag, invalidOption, parseBytes, parseInteger, parseList } from '../core/index.ts';
import {
  CC_FLAG,
  conditionFlag,
  INITCWND_FLAG,
  NET_BACKEND_FLAG,
  SLOW_START_AFTER_IDLE_FLAG,
} from '../net/meta.ts';
import {
  baselineStrategy,
  defaultMatrixStrategies,
  findStrategy,
  POOL_POLICIES,
  type PoolPolicy,
  strategyNames,
} from '../transport/meta.ts';

/**
 * `--h1-connections`: one number, `concurrency` (= each cell's), or one number per concurrency; the
 * schema's h1ConnectionsSchema (options.ts) checks it.
 */
export type H1Connections = number | 'concurrency' | number[];

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
/**
 * `--budget`: time compare may spend after the planned runs on the cells still undecided, each
 * further round a sequential look held to a Bonferroni-corrected alpha (src/compare/budget.ts).
 */
export const BUDGET_FLAG = declareFlag({
  flag: 'budget',
  grammar: 'seconds',
  arg: 'time',
  description:
    'after the planned runs, spend up to this much time on more runs of the undecided cells, e.g. 2m',
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
export const LOSS_UP_FLAG = conditionFlag('loss-up');
export const LOSS_DOWN_FLAG = conditionFlag('loss-down');
export const BANDWIDTH_FLAG = conditionFlag('rate');
export const QUEUE_FLAG = conditionFlag('queue');
export { CC_FLAG, INITCWND_FLAG, NET_BACKEND_FLAG, SLOW_START_AFTER_IDLE_FLAG };

/**
 * The most workloads one comparison takes: each is crossed with every level, strategy, network and
 * run, and the report holds every one (2,000 made 90,000 runs and a 328 MB report.md).
 */
export const MAX_COMPARE_WORKLOADS = 64;

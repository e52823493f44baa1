/**
 * The real cell runner: one cell run = one `runLoad` of the load engine, with the strategy, the
 * concurrency, the round's seed and the same duration for every strategy.
 */
import { type LoadOptionsInput, runLoad } from '../load/index.ts';
import { getStrategy, type PoolPolicy } from '../transport/index.ts';
import type { Cell, CellRunner, RoundContext } from './engine.ts';
import type { H1Connections } from './flags.ts';
import { type CompareOptions, cellConnections } from './options.ts';

/** How the strategies are built, beyond what a cell says. */
interface LoadRunnerOptions {
  /** HTTP/1.1 connections of a cell (see {@link cellConnections}). */
  h1Connections: H1Connections;
  /** The comparison's concurrency axis (for a per-concurrency list of h1 connections). */
  concurrencies?: readonly number[];
  /** Sessions of h2-pool (capped at the cell's concurrency). */
  h2PoolSessions: number;
  /** Session choice policy of h2-pool. Default: the load engine's (`least-busy`). */
  h2PoolPolicy?: PoolPolicy;
  /** Worker threads generating the load of each run (the load engine merges their histograms). */
  workers?: number;
  /** PEM files: the CA that verifies the target, a client certificate and its key (mTLS). */
  ca?: string;
  cert?: string;
  key?: string;
  insecure?: boolean;
  /** NSS key log every run appends its TLS secrets to. */
  keyLogFile?: string;
  /** HTTP/2 frame log every run of h2lab's client appends to. */
  framesFile?: string;
  /** Where every HTTP/3 run writes one qlog per QUIC connection. */
  qlogDir?: string;
  /** HTTP/2 flow-control window preset of every h2 and h2-pool run. Default: the load engine's (`browser`). */
  window?: 'node' | 'browser' | 'max';
  /** Per-request timeout, ms. Default: the load engine's (30 s). */
  timeoutMs?: number;
  /** TCP + TLS + first SETTINGS, ms. Default: the load engine's (10 s). */
  connectTimeoutMs?: number;
  /** The target is the embedded fixture server, a thread of this process. */
  serverInProcess?: boolean;
}

/** What one run of a cell needs besides the cell: the target, the round's seed, the run's length. */
type CellRunContext = Pick<
  RoundContext,
  'url' | 'seed' | 'durationMs' | 'requests' | 'runWarmupMs' | 'ca' | 'connectTo'
>;

/**
 * The load options of one run of a cell: the strategy, its pool, the schedule (a burst, a rate or a
 * concurrency), the round's seed and the workload's requests. The engine's runs and a sharded
 * comparison's plan (src/shard) both come from here, so a shard runs exactly what one process would.
 */
export function cellLoadOptions(o: LoadRunnerOptions, cell: Cell, ctx: CellRunContext): LoadOptionsInput {
  const w = cell.workload;
  // An open-loop cell's level is its rate: no concurrency caps its pool, which is the number
  // --h1-connections / --h2-sessions give (the options refuse a per-concurrency list with --rate).
  const connections = cellConnections(
    { ...o, concurrencies: o.concurrencies ?? [cell.concurrency] },
    getStrategy(cell.protocol),
    w.rateRps ? Number.POSITIVE_INFINITY : cell.concurrency,
  );
  const length = {
    ...(ctx.requests !== undefined ? { requests: ctx.requests } : { durationMs: ctx.durationMs }),
    warmupMs: ctx.runWarmupMs,
  };
  // A burst cell: one burst of N = the cell's concurrency per run, on fresh connections; the run's
  // duration, request count and warm-up do not apply to it.
  const schedule = w.burst
    ? {
        burst: cell.concurrency,
        ...(w.burstHandshakes ? { burstHandshakes: w.burstHandshakes } : {}),
      }
    : w.rateRps
      ? { rateRps: cell.concurrency, ...length }
      : { concurrency: cell.concurrency, ...length };
  return {
    url: ctx.url,
    protocol: cell.protocol,
    ...(connections !== undefined ? { connections } : {}),
    ...schedule,
    seed: ctx.seed,
    ...(o.workers && o.workers > 1 ? { workers: o.workers } : {}),
    method: w.method,
    paths: w.paths,
    ...(w.bodySizeBytes !== undefined ? { bodySizeBytes: w.bodySizeBytes } : {}),
    ...(w.bodyFile !== undefined ? { bodyFile: w.bodyFile } : {}),
    ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
    ...(o.connectTimeoutMs !== undefined ? { connectTimeoutMs: o.connectTimeoutMs } : {}),
    ...(w.headers ? { headers: w.headers } : {}),
    ...(o.h2PoolPolicy ? { policy: o.h2PoolPolicy } : {}),
    ...(ctx.ca ? { ca: ctx.ca } : o.ca ? { ca: o.ca } : {}),
    ...(ctx.connectTo ? { connectTo: ctx.connectTo } : {}),
    ...(o.cert ? { cert: o.cert } : {}),
    ...(o.key ? { key: o.key } : {}),
    ...(o.insecure ? { insecure: true } : {}),
    ...(o.keyLogFile ? { keyLogFile: o.keyLogFile } : {}),
    ...(o.framesFile ? { framesFile: o.framesFile } : {}),
    ...(o.qlogDir ? { qlogDir: o.qlogDir } : {}),
    // The comparison reads the server's metrics itself, around each run.
    serverMetrics: false,
    ...(o.window ? { window: o.window } : {}),
    ...(o.serverInProcess ? { serverInProcess: true } : {}),
  };
}

/** The runner's options from a comparison's resolved options and how its target is reached. */
export function loadRunnerOptionsOf(
  options: CompareOptions,
  reach: { ca?: string; insecure?: boolean; serverInProcess?: boolean },
): LoadRunnerOptions {
  return {
    h1Connections: options.h1Connections,
    concurrencies: options.concurrency,
    h2PoolSessions: options.h2PoolSessions,
    h2PoolPolicy: options.h2PoolPolicy,
    workers: options.workers,
    window: options.window,
    timeoutMs: options.timeoutMs,
    connectTimeoutMs: options.connectTimeoutMs,
    ...(reach.ca ? { ca: reach.ca } : {}),
    ...(options.tls?.cert ? { cert: options.tls.cert } : {}),
    ...(options.tls?.key ? { key: options.tls.key } : {}),
    ...(reach.insecure ? { insecure: true } : {}),
    ...(options.tls?.keyLogFile ? { keyLogFile: options.tls.keyLogFile } : {}),
    ...(options.framesFile ? { framesFile: options.framesFile } : {}),
    ...(options.qlogDir ? { qlogDir: options.qlogDir } : {}),
    ...(reach.serverInProcess ? { serverInProcess: true } : {}),
  };
}

/**
 * A {@link CellRunner} backed by the load engine. The comparison's stop aborts the run in progress
 * (`stop()`), whose partial result the engine then discards.
 */
export function loadRunner(o: LoadRunnerOptions): CellRunner {
  return async (cell, ctx) => {
    const run = runLoad(cellLoadOptions(o, cell, ctx));
    const onAbort = () => run.stop();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await run.done;
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
    }
  };
}

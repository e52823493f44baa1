/**
 * A synthetic cell runner: RunResults drawn from a stated latency model per strategy, with seeded
 * noise between runs, real (encoded, mergeable) HdrHistograms and no network at all. It exists so the
 * matrix, statistics, verdict and renderers can be checked against known answers ("the same
 * transport under two names" must give no clear difference, an injected 3× must give a winner), and
 * so a library user can try a renderer without a server.
 */
import { createRng, H2labError, hdrHistogram, hostFacts, type Rng } from '../core/index.ts';

const hdr = hdrHistogram;

import type { StrategyName } from '../model/index.ts';
import {
  type EncodedHistogram,
  type LatencySummaryMs,
  RUN_RESULT_VERSION,
  type RunResult,
} from '../model/index.ts';
import { getStrategy } from '../transport/index.ts';
import type { Cell, CellRunner, RoundContext } from './engine.ts';

/** The latency model of one strategy. Times in ms. */
interface SyntheticProfile {
  /** Mean latency of a request at concurrency 1. */
  latencyMs: number;
  /** How latency grows with concurrency: latency × (1 + contention × (concurrency − 1)). Default 0. */
  contention?: number;
  /** Relative spread of requests inside a run (lognormal sigma). Default 0.3. */
  spread?: number;
  /** Relative noise of a run's level against the next run's. Default 0.03. */
  runNoise?: number;
  /** Part of the latency spent waiting in the client, as a fraction. Default 0. */
  clientQueueShare?: number;
  /** Part spent waiting for the server's pool, as a fraction (fills `server`). */
  serverQueueShare?: number;
  /** Part spent in transfer after the first byte, as a fraction. Default 0.2. */
  transferShare?: number;
  /**
   * HTTP/2 flow control held the server for this share of the session's open time (fills
   * `flowControl`, as h2lab's own client measures it). Default: no stalls recorded.
   */
  flowStalledShare?: number;
  /** The server does not offer this strategy's protocol: the runner throws a protocol mismatch. */
  notOffered?: boolean;
  /** Wall time each run takes, ms (honours the abort signal). Default 0. */
  delayMs?: number;
}

const HIST = { lowestUs: 1, highestUs: 60_000_000, significantDigits: 3 } as const;

function histogramOf(valuesMs: number[]): { summary: LatencySummaryMs; encoded: EncodedHistogram } {
  const h = hdr().build({
    lowestDiscernibleValue: HIST.lowestUs,
    highestTrackableValue: HIST.highestUs,
    numberOfSignificantValueDigits: HIST.significantDigits,
    useWebAssembly: false,
  });
  for (const v of valuesMs) h.recordValue(Math.max(1, Math.round(v * 1000)));
  const at = (p: number) => h.getValueAtPercentile(p) / 1000;
  const summary: LatencySummaryMs = {
    p50: at(50),
    p90: at(90),
    p99: at(99),
    p999: at(99.9),
    max: h.maxValue / 1000,
    min: h.minNonZeroValue / 1000,
    mean: h.mean / 1000,
    count: h.totalCount,
  };
  const encoded: EncodedHistogram = { unit: 'us', ...HIST, base64: hdr().encodeIntoCompressedBase64(h) };
  h.destroy();
  return { summary, encoded };
}

function lognormal(rng: Rng, sigma: number): number {
  const u = Math.max(1e-12, rng.next());
  const v = rng.next();
  const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  return Math.exp(sigma * z - (sigma * sigma) / 2);
}

function seedOf(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** Builds one synthetic RunResult for `cell` in round `ctx.run`. */
function syntheticRun(
  cell: Cell,
  ctx: Pick<RoundContext, 'run' | 'seed' | 'durationMs' | 'url'>,
  p: SyntheticProfile,
): RunResult {
  const rng = createRng(seedOf(`${cell.id}#${ctx.run}#${ctx.seed}`));
  const level = 1 + (p.runNoise ?? 0.03) * (2 * rng.next() - 1) * Math.sqrt(3);
  const meanMs = p.latencyMs * (1 + (p.contention ?? 0) * (cell.concurrency - 1)) * level;
  const n = 1000;
  const lat: number[] = [];
  for (let i = 0; i < n; i++) lat.push(meanMs * lognormal(rng, p.spread ?? 0.3));
  const transferShare = p.transferShare ?? 0.2;
  const ttfb = histogramOf(lat.map((x) => x * Math.max(0, 1 - transferShare - (p.clientQueueShare ?? 0))));
  const latency = histogramOf(lat);
  const cq = histogramOf(lat.map((x) => x * (p.clientQueueShare ?? 0)));
  const rps = (cell.concurrency * 1000) / latency.summary.mean;
  const size = cell.workload.responseSizeBytes ?? 1024;
  const strategy = getStrategy(cell.protocol);
  // As if over TLS: the protocol ALPN would settle on.
  const negotiated = strategy.requests.tls;
  const connections = strategy.connections.fixed ?? cell.concurrency;
  const run: RunResult = {
    kind: 'h2lab.run',
    version: RUN_RESULT_VERSION,
    options: { synthetic: p, concurrency: cell.concurrency, durationMs: ctx.durationMs, seed: ctx.seed },
    // One CPU and the epoch, so a synthetic run reads the same on every machine.
    environment: { ...hostFacts(), cpus: 1, startedAt: new Date(0).toISOString() },
    target: { url: ctx.url, embedded: false },
    transport: { name: cell.protocol, connections },
    protocol: { requested: negotiated, negotiated },
    schedule: { mode: 'closed', concurrency: cell.concurrency },
    durationMs: ctx.durationMs,
    warmupMs: 0,
    counts: { total: n, ok: n, failed: 0, byStatus: { '200': n }, byFailure: {} },
    throughput: { rps, bytesPerSec: rps * size, bytesIn: n * size, bytesOut: 0 },
    latencyMs: latency.summary,
    ttfbMs: ttfb.summary,
    clientQueueMs: cq.summary,
    histograms: { latency: latency.encoded, ttfb: ttfb.encoded },
    connections: {
      opened: connections,
      peakInFlight: cell.concurrency,
      requestsPerConnection: { mean: n / cell.concurrency, max: n },
    },
    client: { eventLoopUtilization: 0.1, cpu: 0.1, workers: 1, saturated: false },
    warnings: [],
  };
  if (p.flowStalledShare !== undefined && strategy.http2) {
    const sessionMs = ctx.durationMs;
    const stalledMs = sessionMs * p.flowStalledShare;
    run.transport.window = { preset: 'node', streamWindowBytes: 65_535, connectionWindowBytes: 65_535 };
    run.flowControl = {
      sessions: 1,
      connectionStalls: Math.max(1, Math.round(stalledMs / 50)),
      streamStalls: 0,
      stalledMs,
      connectionStalledMs: stalledMs,
      streamStalledMs: 0,
      bytesAfterStall: 32 * 1024 * Math.max(1, Math.round(stalledMs / 50)),
      sessionMs,
    };
  }
  if (cell.workload.burst !== undefined) {
    // One burst of N = concurrency requests: it completes when the slowest one does.
    const completionMs = latency.summary.max;
    const firstResponseMs = ttfb.summary.min;
    run.schedule = { mode: 'burst', concurrency: cell.concurrency, bursts: 1, handshakes: 'include' };
    run.burst = {
      requests: cell.concurrency,
      bursts: 1,
      handshakes: 'include',
      completionMs,
      firstResponseMs,
      failed: 0,
      connectionsOpened: run.connections.opened,
      perBurst: [
        {
          startMs: 0,
          completionMs,
          firstResponseMs,
          ok: n,
          failed: 0,
          connectionsOpened: run.connections.opened,
        },
      ],
    };
  }
  if (p.serverQueueShare !== undefined) {
    run.server = {
      requests: n,
      poolSize: 8,
      poolQueueMs: { mean: latency.summary.mean * p.serverQueueShare },
      poolServiceMs: { mean: latency.summary.mean * 0.1 },
    };
  }
  return run;
}

/**
 * A {@link CellRunner} from a profile per strategy. Strategies without a profile use `fallback`.
 *
 * @example syntheticRunner({ h1: { latencyMs: 10 }, h2: { latencyMs: 10 } }) // identical: no clear difference
 */
export function syntheticRunner(
  profiles: Partial<Record<StrategyName, SyntheticProfile>>,
  fallback?: SyntheticProfile,
): CellRunner {
  return async (cell, ctx) => {
    const p = profiles[cell.protocol] ?? fallback;
    if (!p) throw new Error(`no synthetic profile for ${cell.protocol}`);
    if (p.delayMs) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, p.delayMs);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    if (p.notOffered) {
      const s = getStrategy(cell.protocol);
      throw new H2labError(
        'H2LAB_ERR_PROTOCOL_MISMATCH',
        `${cell.protocol} needs ${s.http} but the server negotiated http/1.1`,
        { requested: s.requests.tls, negotiated: 'http/1.1' },
      );
    }
    return syntheticRun(cell, ctx, p);
  };
}

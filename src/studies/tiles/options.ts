/** The tiles study's options and grid (full and quick), and the report's figures. */
import type { BurstRepeat } from '../../browser/index.ts';
import { type BurstRun, DEFAULT_CHROMIUM_PATH } from '../../model/index.ts';
import { TILES_MODEL as MODEL, TILES_REPORT_CORES as REPORT_CORES } from './descriptor.ts';

/** The report's burst table (121 tiles at once, headless Chrome over CDP, medians). */
export const REPORT_BURST = [
  { target: 'HTTP/1.1', peak: 6, stalled: 527, wire: 63, wall: 1324 },
  { target: 'HTTP/2 (TLS)', peak: 121, stalled: 33, wire: 541, wall: 1202 },
];
/**
 * The report's cancellation result: 121 abandoned after 60 ms, then one wanted tile — 86 ms over
 * HTTP/2 against a 59 ms idle baseline, "71/89 ms over HTTP/1.1" (read in the same order: wanted /
 * baseline).
 */
export const REPORT_CANCEL = {
  wantedMs: 86,
  baselineMs: 59,
  h1WantedMs: 71,
  h1BaselineMs: 89,
  abortMs: 60,
  /** "r.Context() … is now load-bearing for ~4× as many requests" (abandoned tiles reaching a handler). */
  loadBearing: 4,
};
export const BURST = 121;
/** A tiny burst that opens the connections before a sweep's measured bursts (discarded). */
export const WARM_UP = 12;

/** A burst in which Chromium reported a failed request (e.g. net::ERR_NETWORK_CHANGED, a reset). */
export const failedBurst = (r: BurstRun) => r.stats.failed > 0;
/**
 * Every measured burst of the study (the main burst's and the sweep's): one with a failed request is
 * repeated, at most twice; the attempts are counted, never summarised.
 */
export const BURST_REPEAT: BurstRepeat = { retries: 2, repeat: (r) => !r.discarded && failedBurst(r) };

export const GRID = {
  full: {
    net: ['loopback', 'wan'],
    pools: [1, 2, 4, 8, 16, 32],
    runs: 6,
    cancelRuns: 4,
    sweepRuns: 4,
    sessions: 2,
    mapModes: ['honour', 'ignore'] as const,
  },
  quick: {
    net: ['loopback', 'wan'],
    pools: [1, 4, 16],
    runs: 2,
    cancelRuns: 1,
    sweepRuns: 1,
    sessions: 1,
    mapModes: ['honour'] as const,
  },
};

/** The study's resolved options (stored in the result). */
export interface TilesOptions {
  net: string[];
  pools: number[];
  runs: number;
  sessions: number;
  poolSize: number;
  tileMs: number;
  tileHeavyMs: number;
  tileHeavyFraction: number;
  /** cpu: pinned render threads burning CPU time; sleep: the timer pool. */
  render: 'cpu' | 'sleep';
  /** CPUs the render threads share (cpu render only). */
  renderCores: number;
  chromiumPath: string;
}

/** What a caller gives: the options, and `loopback` (= `net: ['loopback']`). */
export type TilesGiven = Partial<TilesOptions> & { loopback?: boolean };

export function resolve(o: TilesGiven, quick: boolean): TilesOptions {
  const g = quick ? GRID.quick : GRID.full;
  return {
    net: o.loopback ? ['loopback'] : (o.net ?? [...g.net]),
    pools: o.pools ?? [...g.pools],
    runs: o.runs ?? g.runs,
    sessions: o.sessions ?? g.sessions,
    poolSize: o.poolSize ?? MODEL.poolSize,
    ...scaledTiles(o.render ?? 'cpu', o.renderCores ?? MODEL.renderCores),
    tileHeavyFraction: MODEL.tileHeavyFraction,
    render: o.render ?? 'cpu',
    renderCores: o.renderCores ?? MODEL.renderCores,
    chromiumPath: o.chromiumPath ?? DEFAULT_CHROMIUM_PATH,
  };
}

/** The tile times: the report's, or (cpu render) its CPU scaled to the cores given. */
function scaledTiles(render: 'cpu' | 'sleep', cores: number): { tileMs: number; tileHeavyMs: number } {
  const k = render === 'cpu' ? cores / REPORT_CORES : 1;
  return { tileMs: MODEL.tileMs * k, tileHeavyMs: MODEL.tileHeavyMs * k };
}

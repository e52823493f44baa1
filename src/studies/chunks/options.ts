/** The chunks study's options and grid, and the report's sweep. */

/** The report's concurrency sweep (64 chunks against its tuned production server, medians). */
export const REPORT_SWEEP = [
  { concurrency: 1, http1: 4.652, http2: 4.647, ratio: 1.001 },
  { concurrency: 4, http1: 1.367, http2: 1.433, ratio: 0.954 },
  { concurrency: 8, http1: 0.838, http2: 0.97, ratio: 0.863 },
  { concurrency: 16, http1: 0.612, http2: 0.809, ratio: 0.773 },
];

/**
 * The concurrencies `--quick` runs: two of the report's four. Concurrency 1 fetches the 64 chunks one
 * round trip after another (2–6 s a run at 20 ms); `--quick --concurrency 1,8` alone took 95 s on two
 * cores at a load average of 10–14, against 81 s for these two, which would take the quick run well
 * past its two minutes.
 */
export const QUICK_CONCURRENCY = [4, 16] as const;

/** The grid: full mode, and the quick one the tests run (under two minutes on two cores). */
const GRID = {
  full: { rttMs: [50], loss: [0, 0.01], cc: ['cubic', 'bbr'], concurrency: [1, 4, 8, 16], runs: 7 },
  quick: { rttMs: [20], loss: [0, 0.01], cc: ['cubic'], concurrency: QUICK_CONCURRENCY, runs: 3 },
} as const;

export interface ChunksOptions {
  rttMs: number[];
  loss: number[];
  cc: string[];
  bandwidth?: number[];
  concurrency: number[];
  runs: number;
  h2Sessions: number;
  loopback: boolean;
}

export function resolve(o: Partial<ChunksOptions>, quick: boolean): ChunksOptions {
  const g = quick ? GRID.quick : GRID.full;
  return {
    rttMs: o.rttMs ?? [...g.rttMs],
    loss: o.loss ?? [...g.loss],
    cc: o.cc ?? [...g.cc],
    ...(o.bandwidth ? { bandwidth: o.bandwidth } : {}),
    concurrency: o.concurrency ?? [...g.concurrency],
    runs: o.runs ?? g.runs,
    h2Sessions: o.h2Sessions ?? 4,
    loopback: o.loopback ?? false,
  };
}

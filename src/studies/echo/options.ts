/** The echo study's options and grid (full and quick), the report's figures and what it assumes. */
import { LIBRARY_POOL_SESSIONS } from './descriptor.ts';

/** The window presets (`--window`'s). */
export type WindowName = 'node' | 'browser' | 'max';

/** The grid: full mode, and the quick one the tests run (under two minutes on two cores). */
const GRID = {
  full: {
    bodies: [1024, 1024 * 1024],
    windows: ['node', 'browser', 'max'] as WindowName[],
    concurrency: [32],
    runs: 7,
    durationMs: 1000,
    serverIdleMs: 3000,
    clientIdleMs: 1000,
    maxAgeMs: 1000,
  },
  quick: {
    bodies: [1024, 1024 * 1024],
    windows: ['node', 'max'] as WindowName[],
    concurrency: [8],
    runs: 3,
    durationMs: 300,
    serverIdleMs: 600,
    clientIdleMs: 300,
    maxAgeMs: 300,
  },
};

/** The report's findings as ratios to HTTP/1.1: latency h1/h2 (above 1: HTTP/2 lower), throughput h2/h1. */
export const REPORT = {
  small: [
    { variant: 'one', latency: 6.8, throughput: 12.7 },
    { variant: 'shared', latency: 1, throughput: 2.9 },
    { variant: 'independent', latency: 6.8, throughput: 22.9 },
  ],
  // "latency 9.5% lower" → 1 / (1 − 0.095); "throughput 2.4× less" → 1 / 2.4.
  large: [
    { variant: 'one', latency: 1 / (1 - 0.095), throughput: 1 / 2.4 },
    { variant: 'shared', latency: 1 / (1 - 0.016), throughput: 1.008 },
    { variant: 'independent', latency: 1 / (1 - 0.066), throughput: 1.112 },
  ],
};

export type Variant = 'one' | 'shared' | 'independent';
export const VARIANT_LABEL: Record<Variant, string> = {
  one: 'HTTP/2, one session',
  shared: 'HTTP/2, leased pool',
  independent: 'HTTP/2, independent sessions',
};

/** What the study assumes about the report's clients, printed with the results. */
export function assumptions(o: EchoOptions, top: number): string {
  const h1 = o.h1Connections === 'concurrency' ? top : Math.min(o.h1Connections, top);
  return `Assumed about the report's clients (not recorded there): its HTTP/1.1 client was a pool of ${h1} connection(s) (--h1-connections; Apache HttpClient 5 defaults to ${LIBRARY_POOL_SESSIONS} per route), its "library pool" leased each HTTP/2 connection to one exchange at a time (${o.h2Sessions} sessions, --h2-sessions: the library's per-route default), its "pool of independent clients" had a client, and so a connection, per caller (${top} here, opened before the run), and its "HTTP/2 without a pool" was one connection carrying every exchange. Both ends' windows as named per table; the report's were the libraries' defaults (64 KiB, h2lab's "node" preset). ${top} requests in flight, on loopback unless --rtt.`;
}

export interface EchoOptions {
  bodies: number[];
  windows: WindowName[];
  concurrency: number[];
  runs: number;
  durationMs: number;
  h1Connections: number | 'concurrency';
  h2Sessions: number;
  headerBytes: number;
  serverIdleMs: number;
  clientIdleMs: number;
  maxAgeMs: number;
  rttMs?: number;
}

export function resolve(o: Partial<EchoOptions>, quick: boolean): EchoOptions {
  const g = quick ? GRID.quick : GRID.full;
  return {
    bodies: o.bodies ?? [...g.bodies],
    windows: o.windows ?? [...g.windows],
    concurrency: o.concurrency ?? [...g.concurrency],
    runs: o.runs ?? g.runs,
    durationMs: o.durationMs ?? g.durationMs,
    h1Connections: o.h1Connections ?? LIBRARY_POOL_SESSIONS,
    h2Sessions: o.h2Sessions ?? LIBRARY_POOL_SESSIONS,
    headerBytes: o.headerBytes ?? 300,
    serverIdleMs: o.serverIdleMs ?? g.serverIdleMs,
    clientIdleMs: o.clientIdleMs ?? g.clientIdleMs,
    maxAgeMs: o.maxAgeMs ?? g.maxAgeMs,
    ...(o.rttMs !== undefined ? { rttMs: o.rttMs } : {}),
  };
}

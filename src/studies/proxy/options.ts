/** The proxy study's options and grid, nginx's four configurations and the report's figures. */

/** The report's response: 2.7 MB (taken as MiB: 2.7 × 2^20 bytes). */
export const LARGE_BYTES = 2_831_155;
export const SLICE_CHUNKS = 64;

/**
 * The report's numbers: before the fix one slice took 1.36 s over HTTP/1.1 and 0.32 s over HTTP/2
 * (4.3×); both fixes took HTTP/1.1 to 0.22 s (6×), with HTTP/2 at 0.24 s.
 */
export const PROXY_REPORT = { beforeS: 1.36, afterS: 0.22, beforeH2S: 0.32, afterH2S: 0.24 };

/** nginx's buffers, as the two configurations set them. */
export const BUFFERS = {
  /** nginx's defaults on x86-64 (a memory page each): 32 KiB in memory per response. */
  small: { buffers: '8 4k', bufferSize: '4k', busy: '8k', memoryBytes: 8 * 4096 },
  /** 2 MiB in memory per response: most, not all, of the 2.7 MB response. */
  large: { buffers: '16 128k', bufferSize: '128k', busy: '256k', memoryBytes: 16 * 128 * 1024 },
} as const;

/** One nginx configuration of the four. */
export interface ProxyConfig {
  id: string;
  keepalive: boolean;
  buffers: keyof typeof BUFFERS;
}

export const CONFIGS: readonly ProxyConfig[] = [
  { id: 'ka-off+small', keepalive: false, buffers: 'small' },
  { id: 'ka-on+small', keepalive: true, buffers: 'small' },
  { id: 'ka-off+large', keepalive: false, buffers: 'large' },
  { id: 'ka-on+large', keepalive: true, buffers: 'large' },
];
/** The report's broken configuration and its fix. */
export const BROKEN = CONFIGS[0]!;
export const FIXED = CONFIGS[3]!;

/** The grid: full mode, and the quick one the tests run (under two minutes on two cores). */
const PROXY_GRID = {
  full: { concurrency: [1, 8], runs: 7, durationMs: 1000 },
  quick: { concurrency: [4], runs: 3, durationMs: 400 },
} as const;

/**
 * nginx's socket send buffer towards the client (`listen … sndbuf=`), bytes. On loopback the
 * kernel's autotuned send buffer (up to net.ipv4.tcp_wmem's 4 MiB maximum) takes most of a 2.7 MB
 * response at once, so nginx seldom has to hold it: seen here, no spooling for 36 such responses
 * fetched one at a time with curl, and 5–19% of them spooled under the quick grid's 4 in flight,
 * against 90–100% with 64 KiB. A client at the far end of a WAN drains the socket at the path's
 * rate; a 64 KiB buffer stands in for that path.
 */
const DEFAULT_SNDBUF_BYTES = 64 * 1024;

/** Upstream connections nginx keeps idle per worker (`keepalive` in the upstream block). */
export const UPSTREAM_KEEPALIVE = 32;

export interface ProxyOptions {
  concurrency: number[];
  runs: number;
  durationMs: number;
  sndbufBytes: number;
  /** An emulated link between nginx and the fixture (root): its round trip, ms; 0 = loopback. */
  upstreamRttMs: number;
  /** How nginx reaches the fixture: a Unix domain socket (the report's) or TCP. */
  upstream: 'unix' | 'tcp';
  nginx?: string;
}

export function resolve(o: Partial<ProxyOptions>, quick: boolean): ProxyOptions {
  const g = quick ? PROXY_GRID.quick : PROXY_GRID.full;
  return {
    concurrency: o.concurrency ?? [...g.concurrency],
    runs: o.runs ?? g.runs,
    durationMs: o.durationMs ?? g.durationMs,
    sndbufBytes: o.sndbufBytes ?? DEFAULT_SNDBUF_BYTES,
    upstreamRttMs: o.upstreamRttMs ?? 0,
    upstream: o.upstream ?? ((o.upstreamRttMs ?? 0) > 0 ? 'tcp' : 'unix'),
    ...(o.nginx ? { nginx: o.nginx } : {}),
  };
}

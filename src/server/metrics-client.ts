/**
 * The one client of the fixture server's metrics (docs/design.md, "The fixture server's metrics
 * contract"): load, compare and browser read `/metrics?format=json` before and after a run, and keep
 * the difference ({@link metricsDelta}). One format — the typed {@link MetricsSnapshot} the server
 * renders — so every reader sees the same counters under the same names; the Prometheus text at
 * `/metrics` is for other scrapers.
 */
import http from 'node:http';
import https from 'node:https';
import { H2labError } from '../core/index.ts';
import type { ServerView } from '../model/index.ts';
import type { HistogramSnapshot, MetricsSnapshot } from './metrics.ts';

/** TLS material for reading metrics over https (the target's CA, a client certificate for mTLS). */
export interface MetricsTls {
  ca?: string;
  cert?: string;
  key?: string;
  insecure?: boolean;
}

/** Options of {@link metricsClient}. */
interface MetricsClientOptions {
  /**
   * True when h2lab started this server: then {@link ServerMetricsClient.reset} may clear its counters
   * and peaks before a run. Never for someone else's server, whose other observers would see a reset.
   */
  owned?: boolean;
  tls?: MetricsTls;
  /** Bound on one read, ms. Default 5000. */
  timeoutMs?: number;
}

/** Reads one fixture server's metrics. */
export interface ServerMetricsClient {
  /** The `/metrics` endpoint (without `?format=json`). */
  readonly url: string;
  /** Whether h2lab owns the server (and {@link reset} does anything). */
  readonly owned: boolean;
  /** One snapshot. Throws H2LAB_ERR_SERVER_METRICS when the endpoint is not an h2lab server's. */
  read(): Promise<MetricsSnapshot>;
  /** One snapshot, or undefined when it could not be read (never throws). */
  tryRead(): Promise<MetricsSnapshot | undefined>;
  /** `POST /metrics/reset` when owned (zeroes counters, sets the peak to now); never throws. */
  reset(): Promise<void>;
  /**
   * Polls every 20 ms until the backend pool has nothing running or queued, at most `timeoutMs`.
   * Returns the last snapshot and whether the pool drained. Throws as {@link read} does.
   */
  waitForIdlePool(timeoutMs: number): Promise<{ snapshot: MetricsSnapshot; drained: boolean }>;
}

/** The `/metrics` endpoint on the origin of `url` (any URL of the target). */
export function metricsUrlOf(url: string): string {
  return new URL('/metrics', url).toString();
}

function unreadable(url: string, why: string, details: Record<string, unknown> = {}): H2labError {
  return new H2labError(
    'H2LAB_ERR_SERVER_METRICS',
    `--metrics-url ${url} ${why}: point it at an h2lab fixture server's /metrics, or leave it out`,
    { option: '--metrics-url', value: url, ...details },
  );
}

function request(
  method: 'GET' | 'POST',
  url: URL,
  tls: MetricsTls,
  timeoutMs: number,
): Promise<{ status: number; body: string }> {
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(
      url,
      {
        method,
        agent: false,
        timeout: timeoutMs,
        headers: { accept: 'application/json' },
        ...(url.protocol === 'https:'
          ? { ca: tls.ca, cert: tls.cert, key: tls.key, rejectUnauthorized: !tls.insecure }
          : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * A client of the metrics at `url` (a `/metrics` endpoint; {@link metricsUrlOf} finds it from any
 * URL of the target).
 *
 * @example
 * const m = metricsClient(`${server.plainUrl}/metrics`, { owned: true });
 * await m.reset();
 * const before = await m.read();
 * // … the run …
 * const view = serverViewOf(metricsDelta(before, await m.read()));
 */
export function metricsClient(url: string, options: MetricsClientOptions = {}): ServerMetricsClient {
  const base = new URL(url);
  base.search = '';
  const endpoint = base.toString();
  const tls = options.tls ?? {};
  const timeoutMs = options.timeoutMs ?? 5000;
  const read = async (): Promise<MetricsSnapshot> => {
    const u = new URL(endpoint);
    u.searchParams.set('format', 'json');
    let res: { status: number; body: string };
    try {
      res = await request('GET', u, tls, timeoutMs);
    } catch (err) {
      throw unreadable(endpoint, `could not be read (${(err as Error).message})`);
    }
    let body: unknown;
    try {
      body = JSON.parse(res.body);
    } catch {
      body = undefined;
    }
    if (
      res.status !== 200 ||
      (body as Partial<MetricsSnapshot> | undefined)?.schema !== 'h2lab.server-metrics/1'
    )
      throw unreadable(endpoint, `answered ${res.status} without h2lab metrics`, { status: res.status });
    return body as MetricsSnapshot;
  };
  const reset = async (): Promise<void> => {
    try {
      await request('POST', new URL(`${endpoint.replace(/\/$/, '')}/reset`), tls, timeoutMs);
    } catch {
      // The deltas still hold without a reset; only the peak gauge then covers more time.
    }
  };
  return clientOf(endpoint, options.owned === true, read, reset);
}

/**
 * A client of metrics read some other way than over HTTP (`read` and `reset` given): a server that
 * answers over IPC from where this process cannot dial it. `url` is what it reports.
 */
export function clientOf(
  url: string,
  owned: boolean,
  read: () => Promise<MetricsSnapshot>,
  reset: () => Promise<void>,
): ServerMetricsClient {
  return {
    url,
    owned,
    read,
    tryRead: () => read().catch(() => undefined),
    async reset() {
      if (owned) await reset();
    },
    async waitForIdlePool(boundMs) {
      const deadline = performance.now() + boundMs;
      for (;;) {
        const snapshot = await read();
        if (snapshot.pool.busy + snapshot.pool.queued === 0) return { snapshot, drained: true };
        if (performance.now() > deadline) return { snapshot, drained: false };
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

/** Fields that describe the present (gauges): a delta keeps their `after` value. */
const GAUGES = new Set(['inFlight', 'inFlightPeak', 'open', 'streamsOpen', 'size', 'busy', 'queued', 'le']);

function subtract(after: unknown, before: unknown, key: string): unknown {
  if (typeof after === 'number') {
    return GAUGES.has(key) || typeof before !== 'number' ? after : after - before;
  }
  if (Array.isArray(after)) {
    const b = Array.isArray(before) ? before : [];
    return after.map((x, i) => subtract(x, b[i], key));
  }
  if (after && typeof after === 'object') {
    const b = (before && typeof before === 'object' ? before : {}) as Record<string, unknown>;
    return Object.fromEntries(
      Object.entries(after).map(([k, v]) => [k, GAUGES.has(k) ? v : subtract(v, b[k], k)]),
    );
  }
  return after;
}

/**
 * `after − before` for every counter and histogram (bucket counts, sum, count); gauges (in flight and
 * its peak, open connections and streams, the pool's size, busy and queued) keep their `after` value,
 * and so do the TCP readings (a list of connections, not a count). The peak covers the run only when
 * the server was reset before `before` was read.
 */
export function metricsDelta(before: MetricsSnapshot, after: MetricsSnapshot): MetricsSnapshot {
  const { tcp, schema, sinceResetSeconds, ...counters } = after;
  const { tcp: _t, schema: _s, sinceResetSeconds: _r, ...was } = before;
  return {
    ...(subtract(counters, was, '') as Omit<MetricsSnapshot, 'tcp' | 'schema' | 'sinceResetSeconds'>),
    schema,
    sinceResetSeconds,
    ...(tcp ? { tcp } : {}),
  };
}

/** Sums a route × protocol table, leaving out the metrics route (h2lab's own reads). */
function sumRoutes(t: Record<string, Record<string, number>>): number {
  let n = 0;
  for (const [route, row] of Object.entries(t)) {
    if (route === 'metrics') continue;
    for (const v of Object.values(row)) n += v;
  }
  return n;
}

const sumValues = (t: Record<string, Record<string, number>>): number =>
  Object.values(t).reduce((a, row) => a + Object.values(row).reduce((x, y) => x + y, 0), 0);

/**
 * What a run result records of the server from a {@link metricsDelta}: requests and response bytes
 * (without h2lab's reads of /metrics), the pool's size and mean queue and service time (ms), the peak
 * in flight, cancellations, and its own CPU seconds and event-loop utilisation when it has a thread
 * of its own (`loop`).
 */
export function serverViewOf(delta: MetricsSnapshot): ServerView {
  const view: ServerView = {
    requests: sumRoutes(delta.requests),
    bytesOut: sumRoutes(delta.responseBytes),
    poolSize: delta.pool.size,
    peakInFlight: delta.inFlightPeak,
    cancellations: sumValues(delta.cancellations),
  };
  const q = delta.pool.queueSeconds;
  if (q.count > 0) view.poolQueueMs = { mean: (q.sum / q.count) * 1000 };
  const s = delta.pool.serviceSeconds;
  if (s.count > 0) view.poolServiceMs = { mean: (s.sum / s.count) * 1000 };
  const loop = delta.loop;
  if (loop && loop.cpuSeconds >= 0) {
    view.cpuSeconds = loop.cpuSeconds;
    view.cpuScope = loop.scope;
    const wall = loop.activeSeconds + loop.idleSeconds;
    if (wall > 0) view.eventLoopUtilization = Math.min(1, Math.max(0, loop.activeSeconds / wall));
  }
  return view;
}

/**
 * A quantile of a histogram (cumulative bucket counts), by linear interpolation inside the bucket, in
 * the histogram's unit (seconds). Undefined when it holds no observation; the top bucket, which has
 * no upper bound, reports its lower edge.
 */
export function histogramQuantile(h: HistogramSnapshot, q: number): number | undefined {
  const total = h.buckets.at(-1)?.count ?? 0;
  if (total <= 0) return undefined;
  const rank = q * total;
  let prevLe = 0;
  let prevN = 0;
  for (const b of h.buckets) {
    if (b.count >= rank) {
      if (b.le === '+Inf') return prevLe;
      const inBucket = b.count - prevN;
      return inBucket > 0 ? prevLe + ((b.le - prevLe) * (rank - prevN)) / inBucket : b.le;
    }
    prevLe = b.le === '+Inf' ? prevLe : b.le;
    prevN = b.count;
  }
  return prevLe;
}

/**
 * Reading the fixture server's own view (docs/design.md, "The fixture server's metrics contract")
 * from its Prometheus text at `/metrics`. Browser numbers alone cannot say what a cancelled fetch
 * did: Chrome reports every aborted request as sent, but only part of them reached the server. So
 * cancellations, pool outcomes and pool queue time are always counted here, on the server side.
 *
 * The text format is used rather than `?format=json` because its shape is fixed by the exposition
 * format itself; the metric names are fixed by the contract.
 */
import { H2labError } from '../core/index.ts';

/** One sample line of the exposition format. */
export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A snapshot of every sample, keyed by `name{sorted labels}`. */
export type MetricSnapshot = Map<string, MetricSample>;

function keyOf(name: string, labels: Record<string, string>): string {
  const l = Object.keys(labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`)
    .join(',');
  return `${name}{${l}}`;
}

/**
 * Parses Prometheus text exposition (version 0.0.4). Comments and blank lines are skipped; label
 * values may contain escaped quotes.
 */
export function parsePrometheusText(text: string): MetricSnapshot {
  const out: MetricSnapshot = new Map();
  const line = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
  const label = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
  for (const raw of text.split('\n')) {
    const s = raw.trim();
    if (s === '' || s.startsWith('#')) continue;
    const m = line.exec(s);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const lm of (m[2] ?? '').matchAll(label))
      labels[lm[1]!] = lm[2]!.replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    const value = m[3] === '+Inf' ? Number.POSITIVE_INFINITY : Number(m[3]);
    if (Number.isNaN(value)) continue;
    out.set(keyOf(m[1]!, labels), { name: m[1]!, labels, value });
  }
  return out;
}

/** `after − before` for every sample (counters and histogram buckets); gauges keep their `after` value. */
export function diffSnapshots(
  before: MetricSnapshot,
  after: MetricSnapshot,
  gauges: readonly string[] = [],
): MetricSnapshot {
  const out: MetricSnapshot = new Map();
  for (const [k, a] of after) {
    const b = before.get(k)?.value ?? 0;
    out.set(k, { ...a, value: gauges.includes(a.name) ? a.value : a.value - b });
  }
  return out;
}

/** Sum of `name` over samples whose labels include `match`. */
export function sumMetric(s: MetricSnapshot, name: string, match: Record<string, string> = {}): number {
  let t = 0;
  for (const m of s.values()) {
    if (m.name !== name) continue;
    if (Object.entries(match).every(([k, v]) => m.labels[k] === v)) t += m.value;
  }
  return t;
}

/** Distinct values of one label of one metric, with their sums. */
export function byLabel(s: MetricSnapshot, name: string, label: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of s.values()) {
    if (m.name !== name || m.labels[label] === undefined) continue;
    out[m.labels[label]!] = (out[m.labels[label]!] ?? 0) + m.value;
  }
  return out;
}

/**
 * A quantile of a Prometheus histogram (`<base>_bucket{le}` cumulative counts), by linear
 * interpolation inside the bucket, in the histogram's unit. Undefined when it holds no observation.
 */
export function histogramQuantile(s: MetricSnapshot, base: string, q: number): number | undefined {
  const buckets = [...s.values()]
    .filter((m) => m.name === `${base}_bucket` && m.labels.le !== undefined)
    .map((m) => ({ le: m.labels.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(m.labels.le), n: m.value }))
    .sort((a, b) => a.le - b.le);
  const total = buckets.at(-1)?.n ?? 0;
  if (total <= 0) return undefined;
  const rank = q * total;
  let prevLe = 0;
  let prevN = 0;
  for (const b of buckets) {
    if (b.n >= rank) {
      // The top bucket has no upper bound: report its lower edge.
      if (!Number.isFinite(b.le)) return prevLe;
      const inBucket = b.n - prevN;
      return inBucket > 0 ? prevLe + ((b.le - prevLe) * (rank - prevN)) / inBucket : b.le;
    }
    prevLe = b.le;
    prevN = b.n;
  }
  return prevLe;
}

/** Fetches and parses `/metrics`. Throws H2LAB_ERR_SERVER_METRICS when it cannot. */
export async function fetchServerMetrics(url: string, timeoutMs = 5000): Promise<MetricSnapshot> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'text/plain' } });
  } catch (err) {
    throw new H2labError(
      'H2LAB_ERR_SERVER_METRICS',
      `--metrics-url ${url} could not be read (${(err as Error).message}): point it at an h2lab fixture server's /metrics, or leave it out`,
      { option: '--metrics-url', value: url },
      { cause: err },
    );
  }
  const text = await res.text();
  if (!res.ok || !text.includes('h2lab_')) {
    throw new H2labError(
      'H2LAB_ERR_SERVER_METRICS',
      `--metrics-url ${url} answered ${res.status} without h2lab metrics: point it at an h2lab fixture server's /metrics, or leave it out`,
      { option: '--metrics-url', value: url, status: res.status },
    );
  }
  return parsePrometheusText(text);
}

/** Posts to `/metrics/reset` (resets the peak gauges); ignored when the server does not support it. */
export async function resetServerMetrics(metricsUrl: string): Promise<void> {
  try {
    const r = await fetch(`${metricsUrl.replace(/\?.*$/, '')}/reset`, {
      method: 'POST',
      signal: AbortSignal.timeout(5000),
    });
    await r.arrayBuffer();
  } catch {
    // Older fixtures have no reset: the deltas still hold, only the peak gauge covers more time.
  }
}

/** A target's metrics endpoint and whether h2lab owns that server (and may reset its gauges). */
export interface MetricsSource {
  url: string;
  owned: boolean;
}

/** Takes a snapshot before a run; resets the peak gauges first when h2lab owns the server. */
export async function snapshotBefore(src: MetricsSource): Promise<MetricSnapshot> {
  if (src.owned) await resetServerMetrics(src.url);
  return fetchServerMetrics(src.url);
}

/**
 * Waits until the backend pool has nothing running or queued (`h2lab_pool_busy` and
 * `h2lab_pool_queued` both 0), polling every 20 ms, at most `timeoutMs`. Returns the last snapshot and
 * whether the pool drained.
 */
export async function waitForIdlePool(
  src: MetricsSource,
  timeoutMs: number,
): Promise<{ snapshot: MetricSnapshot; drained: boolean }> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const snapshot = await fetchServerMetrics(src.url);
    const busy = sumMetric(snapshot, 'h2lab_pool_busy') + sumMetric(snapshot, 'h2lab_pool_queued');
    if (busy === 0) return { snapshot, drained: true };
    if (performance.now() > deadline) return { snapshot, drained: false };
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Gauges in the contract: a delta keeps their latest value. */
export const GAUGES: readonly string[] = [
  'h2lab_in_flight',
  'h2lab_in_flight_peak',
  'h2lab_connections_open',
  'h2lab_streams_open',
  'h2lab_pool_size',
  'h2lab_pool_busy',
  'h2lab_pool_queued',
];

/** Requests whose handler started on a tile route (the `route` label names a tile route). */
export function tileRequests(delta: MetricSnapshot): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of delta.values()) {
    if (m.name !== 'h2lab_requests_total' || !/tile/i.test(m.labels.route ?? '')) continue;
    const p = m.labels.protocol ?? 'unknown';
    out[p] = (out[p] ?? 0) + m.value;
  }
  return out;
}

/**
 * Reading the fixture server's `/metrics` (Prometheus text, names fixed by the metrics contract in
 * docs/design.md) before and after each run, so a cell can say how long requests waited for the
 * backend pool — time the client sees only as a slow first byte.
 */
import type { ServerView } from '../report/model.ts';

/** One scrape: `name{label="v",…}` → value, plus when it was taken. */
export type MetricsSnapshot = Map<string, number>;

/**
 * Parses the Prometheus text exposition format (version 0.0.4): comment lines are skipped, each
 * sample line is `name{labels} value [timestamp]`. Labels are kept verbatim in the key, sorted as the
 * server wrote them.
 */
export function parsePrometheusText(text: string): MetricsSnapshot {
  const out: MetricsSnapshot = new Map();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const v =
      m[3] === '+Inf' ? Number.POSITIVE_INFINITY : m[3] === '-Inf' ? Number.NEGATIVE_INFINITY : Number(m[3]);
    if (!Number.isNaN(v)) out.set(`${m[1]}${m[2] ?? ''}`, v);
  }
  return out;
}

/** Sum of every series of a metric (all label sets). */
export function metricSum(s: MetricsSnapshot, name: string): number | undefined {
  let total: number | undefined;
  for (const [k, v] of s) {
    if (k === name || k.startsWith(`${name}{`)) total = (total ?? 0) + v;
  }
  return total;
}

/**
 * The server's view of one run from two scrapes: request count, mean time queued for and holding a
 * pool worker (histogram `_sum`/`_count` deltas, seconds → ms), pool size, peak in flight (valid when
 * the peak was reset before the run), cancellations.
 */
export function serverViewFromScrapes(before: MetricsSnapshot, after: MetricsSnapshot): ServerView {
  const delta = (name: string): number | undefined => {
    const a = metricSum(after, name);
    if (a === undefined) return undefined;
    return a - (metricSum(before, name) ?? 0);
  };
  const meanMs = (hist: string): number | undefined => {
    const count = delta(`${hist}_count`);
    const sum = delta(`${hist}_sum`);
    if (count === undefined || sum === undefined || count <= 0) return undefined;
    return (sum / count) * 1000;
  };
  const view: ServerView = { requests: delta('h2lab_requests_total') ?? 0 };
  const bytesOut = delta('h2lab_response_bytes_total');
  if (bytesOut !== undefined) view.bytesOut = bytesOut;
  const poolSize = metricSum(after, 'h2lab_pool_size');
  if (poolSize !== undefined) view.poolSize = poolSize;
  const q = meanMs('h2lab_pool_queue_seconds');
  if (q !== undefined) view.poolQueueMs = { mean: q };
  const s = meanMs('h2lab_pool_service_seconds');
  if (s !== undefined) view.poolServiceMs = { mean: s };
  const peak = metricSum(after, 'h2lab_in_flight_peak');
  if (peak !== undefined) view.peakInFlight = peak;
  const cancellations = delta('h2lab_cancellations_total');
  if (cancellations !== undefined) view.cancellations = cancellations;
  return view;
}

/** Where a comparison reads server metrics from. */
export interface MetricsSource {
  /** Resets peaks (`POST /metrics/reset`) when allowed; never throws. */
  reset(): Promise<void>;
  /** One scrape, or undefined when the endpoint did not answer. */
  scrape(): Promise<MetricsSnapshot | undefined>;
}

/**
 * Reads `url` (the fixture server's /metrics over plain HTTP). `resetPeaks` posts to
 * `/metrics/reset` before each run: only for a server that h2lab owns (the embedded one), because it
 * clears counters other observers may be reading.
 */
export function httpMetricsSource(
  url: string,
  options: { resetPeaks?: boolean; timeoutMs?: number } = {},
): MetricsSource {
  const timeoutMs = options.timeoutMs ?? 2000;
  return {
    async reset() {
      if (!options.resetPeaks) return;
      try {
        const r = await fetch(new URL('/metrics/reset', url), {
          method: 'POST',
          signal: AbortSignal.timeout(timeoutMs),
        });
        await r.arrayBuffer();
      } catch {
        // A server without the reset route still gives counters; peaks are then since start.
      }
    },
    async scrape() {
      try {
        const r = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
        if (!r.ok) {
          await r.arrayBuffer();
          return undefined;
        }
        return parsePrometheusText(await r.text());
      } catch {
        return undefined;
      }
    },
  };
}

/**
 * Reading the fixture server's `/metrics` (names fixed by the metrics contract in docs/design.md)
 * before and after each run, so a cell can say how long requests waited for the backend pool — time
 * the client sees only as a slow first byte. Parsing and fetching are shared with src/browser.
 */
import {
  diffSnapshots,
  fetchServerMetrics,
  GAUGES,
  type MetricSnapshot,
  resetServerMetrics,
  sumMetric,
} from '../browser/index.ts';
import type { ServerView } from '../model/index.ts';

/** True when the snapshot holds at least one sample of `name`. */
function has(s: MetricSnapshot, name: string): boolean {
  for (const m of s.values()) if (m.name === name) return true;
  return false;
}

/**
 * The server's view of one run from two scrapes: request count, mean time queued for and holding a
 * pool worker (histogram `_sum`/`_count` deltas, seconds → ms), pool size, peak in flight (valid when
 * the peak was reset before the run), cancellations.
 */
export function serverViewFromScrapes(before: MetricSnapshot, after: MetricSnapshot): ServerView {
  const d = diffSnapshots(before, after, GAUGES);
  const meanMs = (hist: string): number | undefined => {
    const count = sumMetric(d, `${hist}_count`);
    return count > 0 ? (sumMetric(d, `${hist}_sum`) / count) * 1000 : undefined;
  };
  const view: ServerView = { requests: sumMetric(d, 'h2lab_requests_total') };
  if (has(d, 'h2lab_response_bytes_total')) view.bytesOut = sumMetric(d, 'h2lab_response_bytes_total');
  if (has(d, 'h2lab_pool_size')) view.poolSize = sumMetric(d, 'h2lab_pool_size');
  const q = meanMs('h2lab_pool_queue_seconds');
  if (q !== undefined) view.poolQueueMs = { mean: q };
  const s = meanMs('h2lab_pool_service_seconds');
  if (s !== undefined) view.poolServiceMs = { mean: s };
  if (has(d, 'h2lab_in_flight_peak')) view.peakInFlight = sumMetric(d, 'h2lab_in_flight_peak');
  if (has(d, 'h2lab_cancellations_total')) view.cancellations = sumMetric(d, 'h2lab_cancellations_total');
  return view;
}

/** Where a comparison reads server metrics from. */
export interface ServerMetricsReader {
  /** Resets peaks (`POST /metrics/reset`) when allowed; never throws. */
  reset(): Promise<void>;
  /** One scrape, or undefined when the endpoint did not answer. */
  scrape(): Promise<MetricSnapshot | undefined>;
}

/**
 * Reads `url` (the fixture server's /metrics over plain HTTP). `resetPeaks` posts to
 * `/metrics/reset` before each run: only for a server that h2lab owns (the embedded one), because it
 * clears counters other observers may be reading.
 */
export function httpMetricsReader(
  url: string,
  options: { resetPeaks?: boolean; timeoutMs?: number } = {},
): ServerMetricsReader {
  return {
    async reset() {
      if (options.resetPeaks) await resetServerMetrics(url);
    },
    async scrape() {
      try {
        return await fetchServerMetrics(url, options.timeoutMs ?? 2000);
      } catch {
        return undefined;
      }
    },
  };
}

/**
 * The burst experiment: a page fires `count` requests at once with fetch(); CDP says, per request,
 * how long it was stalled in the browser and how long it was on the wire, and the run's peak number
 * of requests in flight and its connections.
 *
 * Over http:// Chromium allows 6 connections per host, so the 7th request waits in the browser
 * (stalled). Over h2 every request goes out at once on one connection, up to the server's
 * SETTINGS_MAX_CONCURRENT_STREAMS (RFC 9113 §5.1.2, §6.5.2), and waits wherever the server queues it
 * — on the wire, from the browser's point of view.
 */
import { H2labError, medianNearestRank as median } from '../core/index.ts';
import type {
  BrowserRequest,
  BrowserTarget,
  BurstRun,
  BurstRunStats,
  BurstSummary,
  ServerRunView,
} from '../model/index.ts';
import {
  histogramQuantile,
  type MetricsSnapshot,
  metricsDelta,
  type ServerMetricsClient,
} from '../server/index.ts';
import type { CollectedPage } from './collector.ts';
import { burstScript, burstUrls, type PageBurstReport } from './page-scripts.ts';
import { peakConcurrency, spread, tally } from './spread.ts';

/** Runs `p` with a bound; a run that hangs becomes H2LAB_ERR_BROWSER_TIMEOUT. */
export async function withRunTimeout<T>(p: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new H2labError(
            'H2LAB_ERR_BROWSER_TIMEOUT',
            `${what} did not finish within --run-timeout ${timeoutMs} ms: check that the server answers, or raise --run-timeout`,
            { option: '--run-timeout', value: timeoutMs },
          ),
        ),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([p, t]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Per-run statistics from CDP records and the page's report. Resource Timing entries are matched to
 * CDP records by URL (every URL is unique thanks to the cache-busting parameter).
 */
export function burstStats(records: BrowserRequest[], page: PageBurstReport): BurstRunStats {
  const rt = new Map(page.resourceTiming.map((e) => [e.name, e]));
  let matched = 0;
  let wireDiff = 0;
  let startDiff = 0;
  for (const r of records) {
    const e = rt.get(r.url);
    if (!e || e.requestStart <= 0) continue;
    r.resourceTiming = {
      stalledMs: e.requestStart - e.startTime,
      wireMs: e.responseEnd - e.requestStart,
      totalMs: e.responseEnd - e.startTime,
    };
    if (r.wireMs !== undefined) {
      matched++;
      wireDiff = Math.max(wireDiff, Math.abs(r.wireMs - r.resourceTiming.wireMs));
      // Both clocks put the end at the same instant, so a total difference is a start difference.
      startDiff = Math.max(startDiff, Math.abs(r.totalMs - r.resourceTiming.totalMs));
    }
  }
  const sent = records.filter((r) => r.sendMs !== undefined && r.failed === undefined);
  const stats: BurstRunStats = {
    peakInFlight: peakConcurrency(sent.map((r) => [r.sendMs!, r.lastDataMs ?? r.endMs] as const)),
    connections: new Set(sent.map((r) => r.connectionId)).size,
    protocols: tally(sent.map((r) => r.protocol ?? 'unknown')),
    stalledMs: spread(sent.map((r) => r.stalledMs!)),
    wireMs: spread(sent.map((r) => r.wireMs!)),
    totalMs: spread(records.map((r) => r.totalMs)),
    wallMs: records.length
      ? Math.max(...records.map((r) => r.endMs)) - Math.min(...records.map((r) => r.startMs))
      : 0,
    issueLoopMs: page.issueLoopMs,
    ok: page.statuses.filter((s) => s >= 200 && s < 400).length,
    failed: page.statuses.filter((s) => s < 200 || s >= 400).length,
    cdpMissing:
      page.statuses.length - records.filter((r) => r.status !== undefined || r.failed !== undefined).length,
  };
  if (matched > 0) stats.resourceTiming = { matched, wireMaxDiffMs: wireDiff, startMaxDiffMs: startDiff };
  return stats;
}

/** Requests whose handler started on the tile route, by protocol (protocols that had none left out). */
export function tileRequests(delta: MetricsSnapshot): Record<string, number> {
  return Object.fromEntries(Object.entries(delta.requests.tiles).filter(([, n]) => n > 0));
}

/**
 * Reads the server's metrics before a run; resets its counters and peak first when h2lab owns it.
 * Throws H2LAB_ERR_SERVER_METRICS when they cannot be read.
 */
export async function metricsBefore(metrics: ServerMetricsClient): Promise<MetricsSnapshot> {
  await metrics.reset();
  return metrics.read();
}

/** The server's view of one burst from the metrics delta. */
export function burstServerView(delta: MetricsSnapshot, owned: boolean): ServerRunView {
  const byProtocol = tileRequests(delta);
  const sum = (row: Record<string, number>) => Object.values(row).reduce((a, b) => a + b, 0);
  const view: ServerRunView = {
    requestsByProtocol: byProtocol,
    requests: sum(byProtocol),
    connectionsOpened: sum(delta.connections.total.plain) + sum(delta.connections.total.tls),
  };
  const p50 = histogramQuantile(delta.pool.queueSeconds, 0.5);
  const p90 = histogramQuantile(delta.pool.queueSeconds, 0.9);
  if (p50 !== undefined && p90 !== undefined) view.poolQueueMs = { p50: p50 * 1000, p90: p90 * 1000 };
  if (owned) view.inFlightPeak = delta.inFlightPeak;
  return view;
}

/** What one burst run needs. */
interface BurstRunSpec {
  page: CollectedPage;
  target: BrowserTarget;
  count: number;
  pathTemplate: string;
  index: number;
  runTimeoutMs: number;
  metrics?: ServerMetricsClient;
}

/** Runs one burst and returns its requests and statistics. */
async function runBurst(spec: BurstRunSpec): Promise<BurstRun> {
  const { page, target } = spec;
  const tag = `${target.id}-${spec.index}-${Date.now().toString(36)}`;
  const urls = burstUrls(page.origin, spec.pathTemplate, spec.count, tag);
  const before = spec.metrics ? await metricsBefore(spec.metrics) : undefined;
  page.clear();
  const report = await withRunTimeout(
    page.evaluate<PageBurstReport>(burstScript(urls)),
    spec.runTimeoutMs,
    `burst ${spec.index} on ${target.label}`,
  );
  await page.settle(urls);
  const requests = page.records(urls);
  const run: BurstRun = {
    target: target.id,
    index: spec.index,
    discarded: spec.index === 0,
    stats: burstStats(requests, report),
    requests,
  };
  if (spec.metrics && before) {
    const after = await spec.metrics.read();
    run.server = burstServerView(metricsDelta(before, after), spec.metrics.owned);
  }
  return run;
}

/** When a burst is repeated: while `repeat(run)` says its result cannot stand, at most `retries` times. */
export interface BurstRepeat {
  retries: number;
  repeat: (run: BurstRun) => boolean;
}

/**
 * Runs one burst and repeats it while `policy.repeat` says the run cannot stand (Chromium reported a
 * failed request: it measured fewer tiles than it claims), at most `policy.retries` times. Returns the
 * last run, which may still fail the policy, and the attempts it replaced (counted, never data).
 *
 * @example const { run, repeated } = await runBurstRepeated(spec, { retries: 2, repeat: (r) => r.stats.failed > 0 });
 */
export async function runBurstRepeated(
  spec: BurstRunSpec,
  policy: BurstRepeat,
): Promise<{ run: BurstRun; repeated: BurstRun[] }> {
  const repeated: BurstRun[] = [];
  let run = await runBurst(spec);
  while (repeated.length < policy.retries && policy.repeat(run)) {
    repeated.push(run);
    run = await runBurst(spec);
  }
  return { run, repeated };
}

function mmm(values: number[]): { median: number; min: number; max: number } {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

/** Medians over the kept (not discarded) runs of one target. */
export function summarizeBurst(target: string, runs: readonly BurstRun[]): BurstSummary {
  const measured = runs.filter((r) => r.target === target && !r.discarded);
  // Runs where CDP lost events would undercount peaks; use them only when no run is complete.
  const complete = measured.filter((r) => r.stats.cdpMissing === 0);
  const kept = complete.length ? complete : measured;
  const protocols: Record<string, number> = {};
  for (const r of kept)
    for (const [p, n] of Object.entries(r.stats.protocols)) protocols[p] = (protocols[p] ?? 0) + n;
  const s: BurstSummary = {
    target,
    runs: kept.length,
    incompleteRuns: measured.length - complete.length,
    peakInFlight: mmm(kept.map((r) => r.stats.peakInFlight)),
    connections: mmm(kept.map((r) => r.stats.connections)),
    stalledP50Ms: median(kept.map((r) => r.stats.stalledMs.p50)),
    stalledP90Ms: median(kept.map((r) => r.stats.stalledMs.p90)),
    wireP50Ms: median(kept.map((r) => r.stats.wireMs.p50)),
    wireP90Ms: median(kept.map((r) => r.stats.wireMs.p90)),
    totalP50Ms: median(kept.map((r) => r.stats.totalMs.p50)),
    wallMs: median(kept.map((r) => r.stats.wallMs)),
    issueLoopMs: median(kept.map((r) => r.stats.issueLoopMs)),
    protocols,
    failures: tally(kept.flatMap((r) => r.requests.flatMap((q) => (q.failed ? [q.failed] : [])))),
  };
  const q = kept.flatMap((r) => (r.server?.poolQueueMs ? [r.server.poolQueueMs.p50] : []));
  if (q.length) s.serverPoolQueueP50Ms = median(q);
  const peaks = kept.flatMap((r) => (r.server?.inFlightPeak !== undefined ? [r.server.inFlightPeak] : []));
  if (peaks.length) s.serverInFlightPeak = Math.max(...peaks);
  const rt = kept.flatMap((r) => (r.stats.resourceTiming ? [r.stats.resourceTiming] : []));
  if (rt.length) {
    s.resourceTimingWireMaxDiffMs = Math.max(...rt.map((x) => x.wireMaxDiffMs));
    s.resourceTimingStartMaxDiffMs = Math.max(...rt.map((x) => x.startMaxDiffMs));
  }
  return s;
}

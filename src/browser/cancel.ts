/**
 * The cancellation experiment: fire `count` requests, abort them all after T ms, then fetch one wanted
 * tile and compare its time with the same tile fetched on an idle server.
 *
 * What a cancel costs is decided by the server, so the numbers come from the server's metrics: Chrome
 * reports every aborted request as sent, yet only part of them reached a handler. Over h2 each cancel
 * arrives as RST_STREAM with code CANCEL (0x8, RFC 9113 §7, §8.7); over HTTP/1.1 Chromium can only
 * close the connection (RFC 9112 §9.6), which the server sees as the client going away.
 */

import { medianNearestRank as median } from '../core/index.ts';
import type { BrowserTarget, CancelRun, CancelServerView, CancelSummary } from '../model/index.ts';
import { type MetricsSnapshot, metricsDelta, type ServerMetricsClient } from '../server/index.ts';
import { metricsBefore, tileRequests, withRunTimeout } from './burst.ts';
import type { CollectedPage } from './collector.ts';
import { burstUrls, cancelScript, type PageCancelReport, singleScript } from './page-scripts.ts';
import { tally } from './spread.ts';

/** What one cancellation run needs. */
interface CancelRunSpec {
  /** Repetition of this leg. */
  index: number;
  page: CollectedPage;
  target: BrowserTarget;
  serverMode: CancelRun['serverMode'];
  count: number;
  pathTemplate: string;
  cancelAfterMs: number;
  /**
   * Abort when this many of the burst's requests have reached the server's handlers (needs
   * `metrics`); `cancelAfterMs` then only bounds the wait.
   */
  abortWhenReached?: number;
  runTimeoutMs: number;
  metrics?: ServerMetricsClient;
  /** Bound on waiting for the server's pool to drain before and after, ms. Default 10 000. */
  drainTimeoutMs?: number;
}

/** The server's view of one cancellation run. `wanted` requests of the run are not abandoned ones. */
function cancelServerView(delta: MetricsSnapshot, wanted: number, drained: boolean): CancelServerView {
  const reached = Object.values(tileRequests(delta)).reduce((a, b) => a + b, 0);
  return {
    reachedHandler: Math.max(0, reached - wanted),
    cancellations: cancellationsByStage(delta),
    jobs: { ...delta.pool.jobs },
    rstStreamByCode: nonZero(delta.rstStream),
    drained,
  };
}

/** Cancellations by stage, over every protocol; stages with none left out. */
export function cancellationsByStage(delta: MetricsSnapshot): Record<string, number> {
  const byStage: Record<string, number> = {};
  for (const row of Object.values(delta.cancellations))
    for (const [stage, n] of Object.entries(row)) if (n > 0) byStage[stage] = (byStage[stage] ?? 0) + n;
  return byStage;
}

/** `t` without its zero entries (outcomes, codes that did not occur). */
export const nonZero = (t: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(t).filter(([, n]) => n > 0));

/** Runs one cancellation experiment on an already open page. */
export async function runCancel(spec: CancelRunSpec): Promise<CancelRun> {
  const { page, target } = spec;
  const drainMs = spec.drainTimeoutMs ?? 10_000;
  const tag = `${target.id}-${spec.serverMode}-${Date.now().toString(36)}`;
  if (spec.metrics) await spec.metrics.waitForIdlePool(drainMs);
  // The wanted tile is one the burst does not ask for (index count), fetched alone three times.
  const wanted = (k: string) =>
    burstUrls(page.origin, spec.pathTemplate, spec.count + 1, `${tag}-${k}`)[spec.count]!;
  const base: number[] = [];
  for (const k of ['b0', 'b1', 'b2']) {
    const r = await withRunTimeout(
      page.evaluate<{ ms: number; status: number }>(singleScript(wanted(k))),
      spec.runTimeoutMs,
      `idle baseline on ${target.label}`,
    );
    base.push(r.ms);
  }
  const urls = burstUrls(page.origin, spec.pathTemplate, spec.count, tag);
  const before = spec.metrics ? await metricsBefore(spec.metrics) : undefined;
  page.clear();
  const byServer = spec.abortWhenReached !== undefined && spec.metrics !== undefined && before !== undefined;
  const evaluated = page.evaluate<PageCancelReport>(cancelScript(urls, spec.cancelAfterMs, wanted('w')));
  if (byServer) await abortWhenReached(page, spec.metrics!, before!, spec.abortWhenReached!, evaluated);
  const report = await withRunTimeout(evaluated, spec.runTimeoutMs, `cancellation run on ${target.label}`);
  await page.settle(urls);
  const records = page.records(urls);
  const run: CancelRun = {
    target: target.id,
    index: spec.index,
    serverMode: spec.serverMode,
    count: spec.count,
    requestedAbortMs: spec.cancelAfterMs,
    actualAbortMs: report.abortAtMs ?? Number.NaN,
    issueLoopMs: report.issueLoopMs,
    browserCanceled: records.filter((r) => r.canceled).length,
    browserFailures: tally(records.flatMap((r) => (r.failed ? [r.failed] : []))),
    completedBeforeAbort: report.outcomes.filter((o) => o === 'ok').length,
    ...(byServer ? { abortWhenReached: spec.abortWhenReached! } : {}),
    baselineMs: median(base),
    wantedMs: report.wantedMs,
  };
  if (spec.metrics && before) {
    const { snapshot, drained } = await spec.metrics.waitForIdlePool(drainMs);
    run.server = cancelServerView(metricsDelta(before, snapshot), 1, drained);
  }
  return run;
}

/**
 * Polls the server's metrics until `n` tile requests of this run have reached its handlers, then runs
 * the page's abort; gives up when the page's run ends on its own (its timer bound, or every request
 * done).
 */
async function abortWhenReached(
  page: CollectedPage,
  metrics: ServerMetricsClient,
  before: MetricsSnapshot,
  n: number,
  running: Promise<unknown>,
): Promise<void> {
  let over = false;
  running.then(
    () => {
      over = true;
    },
    () => {
      over = true;
    },
  );
  while (!over) {
    const snap = await metrics.tryRead();
    const reached = snap
      ? Object.values(tileRequests(metricsDelta(before, snap))).reduce((a, b) => a + b, 0)
      : 0;
    if (reached >= n) {
      await page.evaluate('globalThis.__h2labAbort && globalThis.__h2labAbort()').catch(() => {});
      return;
    }
    await new Promise((r) => setTimeout(r, 2));
  }
}

function sumOfKeys(records: ReadonlyArray<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of records) for (const [k, v] of Object.entries(r)) out[k] = (out[k] ?? 0) + v;
  return out;
}

/**
 * One summary per target and server mode, in the order the legs first appear: times are medians over
 * the runs, counts are totals. Totals rather than medians because when the abort really runs depends
 * on the page's main thread, so how many requests reached the server differs from run to run; what
 * became of the ones that did is what tells honour from ignore.
 */
export function summarizeCancel(runs: readonly CancelRun[]): CancelSummary[] {
  const groups = new Map<string, CancelRun[]>();
  for (const r of runs) {
    const k = `${r.target}\u0000${r.serverMode}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  return [...groups.values()].map((g) => {
    const first = g[0]!;
    // NaN (the abort never ran) sorts badly: the median is over the runs where it did.
    const aborts = g.map((r) => r.actualAbortMs).filter((x) => !Number.isNaN(x));
    const s: CancelSummary = {
      target: first.target,
      serverMode: first.serverMode,
      runs: g.length,
      count: first.count,
      requestedAbortMs: first.requestedAbortMs,
      actualAbortMs: aborts.length ? median(aborts) : Number.NaN,
      issueLoopMs: median(g.map((r) => r.issueLoopMs)),
      browserCanceled: g.reduce((a, r) => a + r.browserCanceled, 0),
      browserFailures: sumOfKeys(g.map((r) => r.browserFailures)),
      completedBeforeAbort: g.reduce((a, r) => a + r.completedBeforeAbort, 0),
      baselineMs: median(g.map((r) => r.baselineMs)),
      wantedMs: median(g.map((r) => r.wantedMs)),
      ...(first.abortWhenReached !== undefined ? { abortWhenReached: first.abortWhenReached } : {}),
    };
    const views = g.flatMap((r) => (r.server ? [r.server] : []));
    if (views.length === g.length) {
      s.server = {
        reachedHandler: views.reduce((a, v) => a + v.reachedHandler, 0),
        cancellations: sumOfKeys(views.map((v) => v.cancellations)),
        jobs: sumOfKeys(views.map((v) => v.jobs)),
        rstStreamByCode: sumOfKeys(views.map((v) => v.rstStreamByCode)),
        drained: views.every((v) => v.drained),
      };
    }
    return s;
  });
}

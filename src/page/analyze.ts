/**
 * What a page replay measured: per protocol setting the medians of the kept loads, each candidate
 * against HTTP/1.1 (and h3 against h2) with an interval and an outcome, and the figures the verdict's
 * mechanisms need (think time, the share of requests on the candidate's origins, handshake medians).
 * The sentences are src/report's (`pageVerdict`).
 */
import { bootstrapRatio, decide, summarize } from '../compare/index.ts';
import {
  type PageComparison,
  type PageLoad,
  type PageResult,
  type PageSummary,
  REPLAY_BASELINE,
  type ReplayProtocol,
} from '../model/index.ts';
import { pageVerdict, type VerdictPair } from '../report/index.ts';
import type { ReplaySite } from './har.ts';

/**
 * What each origin speaks in a setting: the setting's protocol for `h2Origins` (all by default), else
 * HTTP/1.1.
 */
export function originProtocols(
  setting: ReplayProtocol,
  hosts: readonly string[],
  h2Origins: readonly string[] | undefined,
): Record<string, ReplayProtocol> {
  const on = new Set(h2Origins ?? hosts);
  return Object.fromEntries(hosts.map((h) => [h, on.has(h) ? setting : REPLAY_BASELINE]));
}

const median = (xs: readonly number[]) => summarize(xs).median;

function summaryOf(
  protocol: PageSummary['protocol'],
  loads: readonly PageLoad[],
  hosts: readonly string[],
  h2Origins: readonly string[] | undefined,
): PageSummary {
  const kept = loads.filter((l) => l.protocol === protocol && !l.discarded && l.metrics && !l.error);
  const m = (k: keyof NonNullable<PageLoad['metrics']>) =>
    summarize(kept.map((l) => l.metrics![k] ?? Number.NaN));
  const perOrigin = (f: (l: PageLoad, host: string) => number) =>
    Object.fromEntries(hosts.map((h) => [h, median(kept.map((l) => f(l, h)))]));
  return {
    protocol,
    originProtocols: originProtocols(protocol, hosts, h2Origins),
    loads: kept.length,
    loadMs: m('loadMs'),
    dclMs: m('dclMs'),
    ttfbMs: m('ttfbMs'),
    fcpMs: m('fcpMs'),
    lcpMs: m('lcpMs'),
    lastByteMs: m('lastByteMs'),
    stalledMs: median(kept.map((l) => median(l.requests.map((q) => q.stalledMs ?? Number.NaN)))),
    droppedPackets: median(
      kept.map((l) => (l.linkDrops ? l.linkDrops.loss + l.linkDrops.queue : Number.NaN)),
    ),
    waitedBehindRequests: median(kept.map((l) => l.requests.filter((q) => q.waitedBehindMs).length)),
    waitedBehindMs: median(
      kept.map((l) => median(l.requests.flatMap((q) => (q.waitedBehindMs ? [q.waitedBehindMs] : [])))),
    ),
    connections: median(
      kept.map((l) => new Set(l.requests.flatMap((q) => (q.connectionId ? [q.connectionId] : []))).size),
    ),
    connectionsPerOrigin: perOrigin(
      (l, h) =>
        new Set(l.requests.filter((q) => q.host === h && q.connectionId).map((q) => q.connectionId)).size,
    ),
    handshakeMsPerOrigin: perOrigin((l, h) => {
      const c = l.requests.filter((q) => q.host === h && q.connectMs !== undefined).map((q) => q.connectMs!);
      return c.length ? Math.max(...c) : Number.NaN;
    }),
  };
}

function compareLoads(
  loads: readonly PageLoad[],
  candidate: PageSummary['protocol'],
  baseline: PageSummary['protocol'],
): { c: PageComparison; runsToTell: number | undefined } {
  const values = (p: string) =>
    loads
      .filter((l) => l.protocol === p && !l.discarded && l.metrics && !l.error)
      .map((l) => l.metrics!.loadMs);
  const a = values(candidate);
  const b = values(baseline);
  const iv = bootstrapRatio(a, b);
  const { outcome: o, runsNeeded: runsToTell } = decide(a, b, iv, { higherIsBetter: false });
  const outcome: PageComparison['outcome'] =
    o === 'better' ? 'faster' : o === 'worse' ? 'slower' : o === 'no-clear-difference' ? o : 'undecided';
  return {
    c: {
      candidate,
      baseline,
      metric: 'loadMs',
      deltaMs: median(a) - median(b),
      ratio: iv.ratio,
      lo: iv.lo,
      hi: iv.hi,
      confidence: iv.confidence,
      outcome,
    },
    runsToTell,
  };
}

/** Summaries, comparisons against HTTP/1.1, and the verdict of a replay (pure: reads the loads). */
export function analyzePage(
  result: PageResult,
  site: ReplaySite,
): Pick<PageResult, 'summaries' | 'comparisons' | 'verdict'> {
  const hosts = result.har.origins;
  const h2Origins = result.options.h2Origins;
  const summaries = result.options.protocols
    .map((p) => summaryOf(p, result.loads, hosts, h2Origins))
    .filter((s) => s.loads > 0);
  const setting = (wire: ReplayProtocol) => summaries.find((s) => s.protocol === wire);
  const base = setting(REPLAY_BASELINE);
  const requestsOn = (hs: readonly string[]) =>
    hs.reduce((s, h) => s + (site.origins.get(h)?.length ?? 0), 0);
  const pairs: VerdictPair[] = [];
  const against = (s: PageSummary, b: PageSummary) => {
    const { c, runsToTell } = compareLoads(result.loads, s.protocol, b.protocol);
    pairs.push({ candidate: s, baseline: b, comparison: c, runsToTell });
  };
  if (base) for (const s of summaries) if (s !== base) against(s, base);
  const h2s = setting('h2');
  const h3s = setting('h3');
  if (h2s && h3s) against(h3s, h2s);
  const handshakeMs = (s: PageSummary | undefined) =>
    s ? median(Object.values(s.handshakeMsPerOrigin).filter(Number.isFinite)) : Number.NaN;
  const verdict = pageVerdict({
    summaries,
    pairs,
    hosts,
    h2Origins,
    thinkMs: site.origins.get(new URL(site.url).hostname)?.[0]?.thinkMs ?? 0,
    requests: { onCandidate: h2Origins ? requestsOn(h2Origins) : 0, all: requestsOn(hosts) },
    handshakeMs: { baseline: handshakeMs(base), h3: handshakeMs(h3s) },
    loss: result.link?.loss ?? result.link?.lossDown,
  });
  return { summaries, comparisons: pairs.map((p) => p.comparison), verdict };
}

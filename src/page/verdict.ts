/**
 * What a page replay says: per protocol setting the medians of the kept loads, each candidate against
 * HTTP/1.1 with an interval and an outcome, and sentences naming the mechanism with this run's
 * numbers. Each mechanism speaks only when a measurement of this run supports it:
 *
 * | mechanism | measured by | speaks when |
 * |---|---|---|
 * | waiting for one of 6 connections | requests sent only after another request on their connection ended | HTTP/1.1 had such requests and the candidate fewer |
 * | handshakes per origin | connections opened per origin × the connection setup CDP timed | the candidate opened fewer connections, or its setup was shorter (h3) |
 * | think time bound | the document's recorded think time against the page load | think time ≥ half of the fastest setting's load |
 * | loss | the link's recorded loss | the link had loss (said as a setting that bears on the outcome, not as measured) |
 * | dilution | origins on the candidate and their share of requests | `--h2-origins` left some origins on HTTP/1.1 |
 */
import { bootstrapRatio, decide, summarize } from '../compare/index.ts';
import {
  type PageComparison,
  type PageLoad,
  type PageResult,
  type PageSummary,
  REPLAY_BASELINE,
  type ReplayProtocol,
  replayProtocolLabel,
} from '../model/index.ts';
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

const r0 = (x: number) => Math.round(x).toLocaleString('en-US');
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
  const h2o = result.options.h2Origins;
  const summaries = result.options.protocols
    .map((p) => summaryOf(p, result.loads, hosts, h2o))
    .filter((s) => s.loads > 0);
  const setting = (wire: ReplayProtocol) => summaries.find((s) => s.protocol === wire);
  const base = setting(REPLAY_BASELINE);
  const verdict: string[] = [];
  const comparisons: PageComparison[] = [];
  const docThink = site.origins.get(new URL(site.url).hostname)?.[0]?.thinkMs ?? 0;
  const requestsOn = (hs: readonly string[]) =>
    hs.reduce((s, h) => s + (site.origins.get(h)?.length ?? 0), 0);
  const pairs: Array<[PageSummary, PageSummary]> = [];
  if (base) for (const s of summaries) if (s !== base) pairs.push([s, base]);
  const h2s = setting('h2');
  const h3s = setting('h3');
  if (h2s && h3s) pairs.push([h3s, h2s]);
  for (const [s, b] of pairs) {
    const { c, runsToTell } = compareLoads(result.loads, s.protocol, b.protocol);
    comparisons.push(c);
    const name = replayProtocolLabel(s.protocol);
    const other = replayProtocolLabel(b.protocol);
    const iv = `${s.loads} load${s.loads === 1 ? '' : 's'} each; ratio ${c.ratio.toFixed(2)}, 95% interval ${c.lo.toFixed(2)}–${c.hi.toFixed(2)}`;
    const times = `${r0(s.loadMs.median)} ms against ${r0(b.loadMs.median)} ms over ${other}`;
    verdict.push(
      c.outcome === 'faster'
        ? `${name} saved ${r0(-c.deltaMs)} ms: the page loaded in ${times} (${iv}).`
        : c.outcome === 'slower'
          ? `${name} lost ${r0(c.deltaMs)} ms: the page loaded in ${times} (${iv}).`
          : c.outcome === 'no-clear-difference'
            ? `No clear difference between ${name} and ${other}: ${times} (${iv}; the interval lies within 5%).`
            : `Undecided between ${name} and ${other}: ${times}, but the runs cannot tell (${iv})${runsToTell === undefined ? '' : `; about ${runsToTell} loads each would`}.`,
    );
  }
  const cands = summaries.filter((s) => base && s !== base);
  if (base && cands.length) {
    const list = (f: (s: PageSummary) => string) =>
      cands.map((s) => `${replayProtocolLabel(s.protocol)} ${f(s)}`).join(', ');
    // Waiting for one of 6 connections.
    if (
      base.waitedBehindRequests >= 1 &&
      cands.some((s) => s.waitedBehindRequests < base.waitedBehindRequests)
    ) {
      const busiest = Object.entries(base.connectionsPerOrigin)
        .filter(([, n]) => n > 0)
        .sort((a, b) => b[1] - a[1]);
      const conns = `${busiest
        .slice(0, 4)
        .map(([h, n]) => `${r0(n)} on ${h}`)
        .join(', ')}${busiest.length > 4 ? `, and ${busiest.length - 4} more origins` : ''}`;
      verdict.push(
        `Over HTTP/1.1 ${r0(base.waitedBehindRequests)} requests waited for a connection busy with another request (median ${r0(base.waitedBehindMs)} ms each; connections: ${conns}); over ${list((s) => r0(s.waitedBehindRequests))}.`,
      );
    }
    // Queued in the browser for other reasons: the handshake, Chromium's scheduler.
    if (!(h2o && h2o.length < hosts.length) && cands.some((s) => s.stalledMs >= 50))
      verdict.push(
        `Requests were queued in the browser before being sent a median ${list((s) => `${r0(s.stalledMs)} ms`)}, against ${r0(base.stalledMs)} ms over HTTP/1.1; over ${cands.map((s) => replayProtocolLabel(s.protocol)).join(' and ')} no other request is ahead of one on its connection, so that time went to the connection's handshake or to Chromium's own scheduler (it holds low-priority requests such as images while render-blocking ones load); this run does not separate the two.`,
      );
    // Handshakes per origin.
    const nb = base.connections;
    const hsBase = median(Object.values(base.handshakeMsPerOrigin).filter(Number.isFinite));
    if (cands.some((s) => s.connections < nb) && Number.isFinite(hsBase))
      verdict.push(
        `HTTP/1.1 opened ${r0(nb)} connections over ${hosts.length} origin${hosts.length > 1 ? 's' : ''}, ${list((s) => r0(s.connections))}; a TCP + TLS setup took a median ${r0(hsBase)} ms here.`,
      );
    const h3 = cands.find((s) => s === h3s);
    const hs3 = h3 ? median(Object.values(h3.handshakeMsPerOrigin).filter(Number.isFinite)) : Number.NaN;
    if (Number.isFinite(hs3) && Number.isFinite(hsBase))
      verdict.push(
        hs3 < hsBase * 0.8
          ? `h3's QUIC setup took ${r0(hs3)} ms per origin against ${r0(hsBase)} ms for TCP + TLS: ${r0(hsBase - hs3)} ms less on ${hosts.length > 1 ? `each of ${hosts.length} origins` : 'its one origin'} (QUIC's transport and TLS handshakes are one round trip).`
          : `h3's QUIC setup took about as long as TCP + TLS here (${r0(hs3)} against ${r0(hsBase)} ms per origin), so h3 saved no handshake time.`,
      );
    // Dilution.
    if (h2o && h2o.length < hosts.length) {
      const on = requestsOn(h2o);
      const all = requestsOn(hosts);
      verdict.push(
        `Diluted: only ${h2o.length} of ${hosts.length} origins (${h2o.join(', ')}) were on ${cands.map((s) => replayProtocolLabel(s.protocol)).join('/')}, carrying ${((100 * on) / all).toFixed(0)}% of the requests (${on} of ${all}); the other ${hosts.length - h2o.length} stayed on HTTP/1.1 in every setting, so at most that share could benefit.`,
      );
    }
  }
  // Think time bound.
  const fastest = Math.min(...summaries.map((s) => s.loadMs.median).filter(Number.isFinite));
  if (Number.isFinite(fastest) && docThink > 0 && docThink >= fastest / 2)
    verdict.push(
      `The page is bound by its server think time: the HTML takes ${r0(docThink)} ms on the server of ${r0(fastest)} ms for the whole load, which no protocol shortens.`,
    );
  const loss = result.link?.loss ?? result.link?.lossDown;
  if (loss && loss > 0) {
    const counted = summaries.filter((s) => Number.isFinite(s.droppedPackets));
    const drops = counted.length
      ? ` (median per load: ${counted
          .map(
            (s) =>
              `${replayProtocolLabel(s.protocol)} ${r0(s.droppedPackets)} on ${r0(s.connections)} connections`,
          )
          .join(', ')})`
      : '';
    verdict.push(
      `The link dropped ${(loss * 100).toFixed(1)}% of packets${drops}: over h2 a loss stalls every stream of its connection until it is repaired (TCP head-of-line blocking), where each HTTP/1.1 connection loses alone and h3's streams are independent; this run does not separate that share of the difference.`,
    );
  }
  if (!base && summaries.length > 0)
    verdict.push('No HTTP/1.1 setting was loaded, so there is no baseline to compare against.');
  return { summaries, comparisons, verdict };
}

/**
 * The verdict of a page replay in sentences, from what src/page measured (`analyzePage`): each
 * candidate against HTTP/1.1 with its interval, then the mechanisms with this run's numbers. Each
 * mechanism speaks only when a measurement of this run supports it:
 *
 * | mechanism | measured by | speaks when |
 * |---|---|---|
 * | waiting for one of 6 connections | requests sent only after another request on their connection ended | HTTP/1.1 had such requests and the candidate fewer |
 * | handshakes per origin | connections opened per origin × the connection setup CDP timed | the candidate opened fewer connections, or its setup was shorter (h3) |
 * | think time bound | the document's recorded think time against the page load | think time ≥ half of the fastest setting's load |
 * | loss | the link's recorded loss | the link had loss (said as a setting that bears on the outcome, not as measured) |
 * | dilution | origins on the candidate and their share of requests | `--h2-origins` left some origins on HTTP/1.1 |
 */
import {
  type PageComparison,
  type PageSummary,
  REPLAY_BASELINE,
  replayProtocolLabel,
} from '../model/index.ts';

/** One setting against another: the comparison of their load times, and the runs it would take. */
export interface VerdictPair {
  candidate: PageSummary;
  baseline: PageSummary;
  comparison: PageComparison;
  /** Loads a side the rank test estimates would tell an undecided pair apart. */
  runsToTell: number | undefined;
}

/** What a replay's verdict is worded from: all of it measured or recorded by src/page. */
interface PageVerdictInput {
  /** Per protocol setting with kept loads. */
  summaries: readonly PageSummary[];
  /** Each candidate against HTTP/1.1, then h3 against h2. */
  pairs: readonly VerdictPair[];
  /** The page's origins. */
  hosts: readonly string[];
  /** `--h2-origins`: the origins on the candidate protocol (all when undefined). */
  h2Origins: readonly string[] | undefined;
  /** The document's recorded server think time, ms. */
  thinkMs: number;
  /** Requests on the candidate's origins and on all origins (dilution). */
  requests: { onCandidate: number; all: number };
  /** Median connection setup per origin: HTTP/1.1's TCP + TLS, h3's QUIC (NaN when not measured). */
  handshakeMs: { baseline: number; h3: number };
  /** The link's loss, a fraction, when it had one. */
  loss: number | undefined;
}

const r0 = (x: number) => Math.round(x).toLocaleString('en-US');

/** The verdict's sentences: the outcome of each pair, then each mechanism this run supports. */
export function pageVerdict(v: PageVerdictInput): string[] {
  const { summaries, hosts, h2Origins: h2o } = v;
  const base = summaries.find((s) => s.protocol === REPLAY_BASELINE);
  const verdict: string[] = [];
  for (const { candidate: s, baseline: b, comparison: c, runsToTell } of v.pairs) {
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
    const hsBase = v.handshakeMs.baseline;
    if (cands.some((s) => s.connections < nb) && Number.isFinite(hsBase))
      verdict.push(
        `HTTP/1.1 opened ${r0(nb)} connections over ${hosts.length} origin${hosts.length > 1 ? 's' : ''}, ${list((s) => r0(s.connections))}; a TCP + TLS setup took a median ${r0(hsBase)} ms here.`,
      );
    const hs3 = v.handshakeMs.h3;
    if (Number.isFinite(hs3) && Number.isFinite(hsBase))
      verdict.push(
        hs3 < hsBase * 0.8
          ? `h3's QUIC setup took ${r0(hs3)} ms per origin against ${r0(hsBase)} ms for TCP + TLS: ${r0(hsBase - hs3)} ms less on ${hosts.length > 1 ? `each of ${hosts.length} origins` : 'its one origin'} (QUIC's transport and TLS handshakes are one round trip).`
          : `h3's QUIC setup took about as long as TCP + TLS here (${r0(hs3)} against ${r0(hsBase)} ms per origin), so h3 saved no handshake time.`,
      );
    // Dilution.
    if (h2o && h2o.length < hosts.length) {
      const { onCandidate: on, all } = v.requests;
      verdict.push(
        `Diluted: only ${h2o.length} of ${hosts.length} origins (${h2o.join(', ')}) were on ${cands.map((s) => replayProtocolLabel(s.protocol)).join('/')}, carrying ${((100 * on) / all).toFixed(0)}% of the requests (${on} of ${all}); the other ${hosts.length - h2o.length} stayed on HTTP/1.1 in every setting, so at most that share could benefit.`,
      );
    }
  }
  // Think time bound.
  const fastest = Math.min(...summaries.map((s) => s.loadMs.median).filter(Number.isFinite));
  if (Number.isFinite(fastest) && v.thinkMs > 0 && v.thinkMs >= fastest / 2)
    verdict.push(
      `The page is bound by its server think time: the HTML takes ${r0(v.thinkMs)} ms on the server of ${r0(fastest)} ms for the whole load, which no protocol shortens.`,
    );
  if (v.loss && v.loss > 0) {
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
      `The link dropped ${(v.loss * 100).toFixed(1)}% of packets${drops}: over h2 a loss stalls every stream of its connection until it is repaired (TCP head-of-line blocking), where each HTTP/1.1 connection loses alone and h3's streams are independent; this run does not separate that share of the difference.`,
    );
  }
  if (!base && summaries.length > 0)
    verdict.push('No HTTP/1.1 setting was loaded, so there is no baseline to compare against.');
  return verdict;
}

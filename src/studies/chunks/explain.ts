/** The chunks study's explanations, per link and across links, derived from the rows. */
import type { SampleComparison } from '../../compare/index.ts';
import { medianInterpolated } from '../../core/index.ts';
import { direction, directionText, noDifference, wouldTell } from '../claims.ts';
import type { LinkCase } from './plan.ts';
import { type ChunksRow, faster, fmtS, outcomeWords } from './rows.ts';

/** The explanation of one link, from its rows: who won where, and the mechanism's numbers. */
function explainLink(link: LinkCase, rows: ChunksRow[], lossless?: ChunksRow[]): string {
  const top = rows.at(-1)!;
  const serial = rows[0]!;
  const parts: string[] = [];
  const where = link.id === 'loopback' ? 'On loopback' : `On ${link.id}`;
  const c = top.h2VsH1;
  if (!c || top.h1.seconds === undefined || top.h2.seconds === undefined) {
    return `${where} the comparison at concurrency ${top.concurrency} did not finish, so it says nothing.`;
  }
  const r = c.interval.ratio;
  const ci = `H1/H2 ${r.toFixed(2)}, 95% CI ${c.interval.lo.toFixed(2)}–${c.interval.hi.toFixed(2)}`;
  if (c.outcome === 'worse')
    parts.push(
      `${where}, pooled HTTP/1.1 fetched the 64 chunks ${faster(r)} one HTTP/2 session at concurrency ${top.concurrency} (${fmtS(top.h1.seconds)} against ${fmtS(top.h2.seconds)}; ${ci}).`,
    );
  else if (c.outcome === 'better')
    parts.push(
      `${where}, one HTTP/2 session fetched the 64 chunks ${faster(r)} pooled HTTP/1.1 at concurrency ${top.concurrency} (${fmtS(top.h2.seconds)} against ${fmtS(top.h1.seconds)}; ${ci}).`,
    );
  else if (c.outcome === 'no-clear-difference')
    parts.push(
      `${where}, HTTP/1.1 and HTTP/2 took the same time at concurrency ${top.concurrency} (${fmtS(top.h1.seconds)} against ${fmtS(top.h2.seconds)}; ${ci}).`,
    );
  else
    parts.push(
      `${where}, the runs cannot tell HTTP/1.1 from HTTP/2 at concurrency ${top.concurrency} (${fmtS(top.h1.seconds)} against ${fmtS(top.h2.seconds)}; ${ci}): ${wouldTell(c)}.`,
    );
  const h1c = top.h1.connections;
  if (top.h1.cwndSum !== undefined && top.h2.cwndSum !== undefined) {
    parts.push(
      `The server sent on ${h1c ?? top.concurrency} HTTP/1.1 connections whose congestion windows summed to ${Math.round(top.h1.cwndSum)} segments at the end of a run, against ${Math.round(top.h2.cwndSum)} on HTTP/2's single connection${top.h2.cwndSum > 0 ? ` (${(top.h1.cwndSum / top.h2.cwndSum).toFixed(1)}×)` : ''}: that is how much each side could have in flight per round trip.`,
    );
  }
  if (top.h2.drops !== undefined && top.h1.drops !== undefined && (top.h2.drops > 0 || top.h1.drops > 0)) {
    const perH1 = h1c ? top.h1.drops / h1c : undefined;
    parts.push(
      `The link dropped ${top.h2.drops} packets a run on the HTTP/2 connection, each one holding up all ${top.concurrency} streams behind it until the retransmission arrived (head-of-line blocking in TCP), against ${top.h1.drops} spread over the HTTP/1.1 connections${perH1 !== undefined ? ` (${perH1.toFixed(1)} each)` : ''}, each of which stalled only its own request.`,
    );
    // Whether the losses cut the windows: the same concurrency on the lossless link of the same
    // congestion control is the yardstick.
    const base = lossless?.find((r) => r.concurrency === top.concurrency);
    const before = base?.h2.cwndSum;
    const now = top.h2.cwndSum;
    if (before !== undefined && now !== undefined && before > 0) {
      parts.push(
        now < 0.5 * before
          ? `The losses cut HTTP/2's one window from ${Math.round(before)} segments without loss to ${Math.round(now)} (${link.cc ?? 'the algorithm'} backs off on every loss), while HTTP/1.1's ${h1c ?? top.concurrency} windows still summed to ${Math.round(top.h1.cwndSum ?? 0)}: one backed-off window carries every stream.`
          : `HTTP/2's window held under the losses (${Math.round(before)} segments without loss, ${Math.round(now)} here): ${link.cc ?? 'the algorithm'} did not back off for random loss, so what remains against HTTP/2 is the stall of every stream behind each lost packet.`,
      );
    }
  } else if (link.loss === 0 || link.id === 'loopback') {
    parts.push('Nothing was dropped, so head-of-line blocking after a loss played no part here.');
  }
  if (serial.concurrency === 1 && serial.h2VsH1) {
    const s = serial.h2VsH1;
    parts.push(
      noDifference(s)
        ? `With one request at a time both protocols are the same round trips (H1/H2 ${s.interval.ratio.toFixed(2)} at concurrency 1, within the 5% the runs can call the same).`
        : `With one request at a time, H1/H2 ${directionText(s, {
            above: (x) => `${x}: HTTP/2 faster`,
            below: (x) => `${x}: HTTP/1.1 faster`,
            same: 'the same',
            undecided: 'undecided',
          })} at concurrency 1.`,
    );
  }
  if (top.poolVsH1 && top.pool.seconds !== undefined) {
    const pr = top.poolVsH1.interval.ratio;
    const side = direction(top.poolVsH1);
    parts.push(
      `The pool of HTTP/2 sessions took ${fmtS(top.pool.seconds)} (H1/pool ${pr.toFixed(2)}): ${side === 'below' ? 'still behind HTTP/1.1' : side === 'above' ? 'ahead of HTTP/1.1' : side === 'same' ? 'level with HTTP/1.1' : `the runs cannot tell it from HTTP/1.1 (${wouldTell(top.poolVsH1)})`}${top.pool.cwndSum !== undefined ? `, with ${Math.round(top.pool.cwndSum)} segments of window over its connections` : ''}.`,
    );
  }
  return parts.join(' ');
}

/** Where the answer changes between links (loss on/off, one congestion control or the other). */
function explainChanges(perLink: Array<{ link: LinkCase; rows: ChunksRow[] }>): string | undefined {
  const verdicts = perLink
    .map(({ link, rows }) => ({ link, c: rows.at(-1)?.h2VsH1 }))
    .filter((x): x is { link: LinkCase; c: SampleComparison } => x.c !== undefined);
  if (verdicts.length < 2) return undefined;
  const words = new Set(verdicts.map((v) => v.c.outcome));
  const list = verdicts
    .map((v) => `${v.link.id}: ${v.c.interval.ratio.toFixed(2)} (${outcomeWords(v.c)})`)
    .join('; ');
  const parts = [`H1/H2 at the highest concurrency, link by link — ${list}.`];
  const lossless = verdicts.filter((v) => (v.link.loss ?? 0) === 0);
  const lossy = verdicts.filter((v) => (v.link.loss ?? 0) > 0);
  if (lossless.length > 0 && lossy.length > 0) {
    const a = medianInterpolated(lossless.map((v) => v.c.interval.ratio));
    const b = medianInterpolated(lossy.map((v) => v.c.interval.ratio));
    const moved = Math.abs(b - a) / a;
    // Which way loss moved the answer is said only where the links' own decisions differ that way.
    const sides = (vs: typeof verdicts) => new Set(vs.map((v) => direction(v.c)));
    const [without, withLoss] = [sides(lossless), sides(lossy)];
    const only = (set: Set<string>, d: string) => set.size === 1 && set.has(d);
    const worse = only(withLoss, 'below') && !without.has('below');
    const better = only(without, 'below') && !withLoss.has('below');
    parts.push(
      moved < 0.05
        ? `Loss hardly moved the ratio (${a.toFixed(2)} without, ${b.toFixed(2)} with).`
        : `Loss moved the median ratio from ${a.toFixed(2)} to ${b.toFixed(2)}: ${worse ? 'each loss costs the single connection more than one of many (HTTP/1.1 decided faster on every lossy link and on no lossless one)' : better ? 'the single connection held up better under loss than the pool of connections (HTTP/1.1 decided faster on every lossless link and on no lossy one)' : 'a shift the links’ own decisions do not show'}.`,
    );
  }
  const ccs = [...new Set(verdicts.map((v) => v.link.cc).filter(Boolean))] as string[];
  if (ccs.length > 1) {
    const byCc = ccs.map(
      (cc) =>
        `${cc} ${medianInterpolated(verdicts.filter((v) => v.link.cc === cc).map((v) => v.c.interval.ratio)).toFixed(2)}`,
    );
    parts.push(`By congestion control (median H1/H2 over its links): ${byCc.join(', ')}.`);
  }
  if (words.size === 1) {
    const only = [...words][0]!;
    parts.push(
      only === 'undecided' || only === 'insufficient'
        ? 'No link gave a confirmed answer with these runs: read the ratios as directions, not results.'
        : `Every link gave the same answer: ${outcomeWords(verdicts[0]!.c)}.`,
    );
  } else parts.push('The answer depends on the link: see each link above.');
  return parts.join(' ');
}

/** The explanation's paragraphs: each link, then where the answer changes between links. */
export function explainAll(perLink: Array<{ link: LinkCase; rows: ChunksRow[] }>): string[] {
  const out = perLink.map(({ link, rows }) => {
    const lossless = perLink.find(
      (x) =>
        x.link.loss === 0 &&
        x.link.rttMs === link.rttMs &&
        x.link.cc === link.cc &&
        x.link.bandwidth === link.bandwidth,
    );
    return explainLink(link, rows, lossless && lossless.link !== link ? lossless.rows : undefined);
  });
  const changes = explainChanges(perLink);
  return changes ? [...out, changes] : out;
}

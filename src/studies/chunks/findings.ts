/** The chunks study's findings against the report's, and their verification. */
import type { SampleComparison } from '../../compare/index.ts';
import type { StudyFinding, StudyResult } from '../../model/index.ts';
import {
  accounts,
  type Direction,
  direction,
  directionProblem,
  noDifference,
  ratio2,
  wouldTell,
} from '../claims.ts';
import { Evidence, evidenceNumber, makeFinding, notMeasured } from '../findings.ts';
import { capturedClause, capturedProblems, mostRounds } from './captured-rounds.ts';
import { CHUNKS } from './descriptor.ts';
import { QUICK_CONCURRENCY, REPORT_SWEEP } from './options.ts';
import type { LinkCase } from './plan.ts';
import { type ChunksRow, outcomeText, outcomeWords, timeDecision } from './rows.ts';

// --- row by row against the report ----------------------------------------------------------

/** How close a slow-start prediction must come to the measured difference to account for it. */
const SLOW_START_TOLERANCE = 0.25;

/**
 * Slow start, where it accounts for HTTP/1.1's lead: every connection starts a run at the link's
 * initial window (Linux restarts an idle connection's window too), the first round trip carries
 * k × IW segments over k connections, and a connection that must deliver S segments needs
 * ⌈log2(S/IW + 1)⌉ round trips of slow start (RFC 5681 §3.1). Without a capture that arithmetic
 * decides: said only when HTTP/2's one connection needs more rounds and those extra round trips come
 * within {@link SLOW_START_TOLERANCE} of the measured difference. With a capture of both sides
 * (`--capture`) the rounds the server's packets show decide the same way, the arithmetic is quoted
 * where it disagrees, and a claim the capture contradicts is not made: `refuted` says why instead.
 */
function slowStart(row: ChunksRow, ev: Evidence): { text?: string; refuted?: string } {
  const { h1, h2 } = row;
  const iw = h1.initialCwnd ?? h2.initialCwnd;
  const mss = h1.mssBytes ?? h2.mssBytes;
  const rtt = h1.linkRttMs ?? h2.linkRttMs;
  const k = h1.connections;
  if (!iw || !mss || !rtt || !k || !h1.bytesIn || !h2.bytesIn) return {};
  if (h1.seconds === undefined || h2.seconds === undefined || (h1.drops ?? 0) > 0 || (h2.drops ?? 0) > 0)
    return {};
  const segs1 = Math.ceil(h1.bytesIn / k / mss);
  const segs2 = Math.ceil(h2.bytesIn / mss);
  const r1 = Math.ceil(Math.log2(segs1 / iw + 1));
  const r2 = Math.ceil(Math.log2(segs2 / iw + 1));
  const gapMs = (h2.seconds - h1.seconds) * 1000;
  const tolerance = { tolerance: SLOW_START_TOLERANCE };
  const start = `Slow start: HTTP/1.1's ${ev.n('h1Connections', k)} connections start with ${ev.n('h1FirstRound', k * iw)} segments in the first round trip (${ev.n('initialCwnd', iw)} each)`;
  const arithmetic = () =>
    `at least ${ev.n('h1Rounds', r1)} round trips for each HTTP/1.1 connection's ${ev.n('h1SegmentsEach', segs1)} segments and ${ev.n('h2Rounds', r2)} for HTTP/2's ${ev.n('h2Segments', segs2)}`;
  const seen = capturedClause(ev, h1.capture, h2.capture, iw);
  if (seen && h1.capture && h2.capture) {
    const extra = mostRounds(h2.capture, iw) - mostRounds(h1.capture, iw);
    const extraMs = extra * rtt;
    const agreed =
      h1.capture.connections.every((c) => c.slowStartRounds === r1) &&
      h2.capture.connections.every((c) => c.slowStartRounds === r2);
    if (extra <= 0 || gapMs <= 0 || !accounts(extraMs, gapMs, tolerance)) {
      const arithmeticExtraMs = (r2 - r1) * rtt;
      return r2 > r1 && gapMs > 0 && accounts(arithmeticExtraMs, gapMs, tolerance)
        ? {
            refuted: `nor does slow start, though the arithmetic of the runs' bytes gives ${arithmetic()} (${ev.n('extraRounds', r2 - r1)} more round trips, ${ev.ms('extraMs', arithmeticExtraMs)} against the measured ${ev.ms('gapMs', gapMs)}): ${seen}, ${ev.n('capturedExtraRounds', extra)} more on HTTP/2`,
          }
        : {};
    }
    ev.set('slowStartTolerance', SLOW_START_TOLERANCE);
    return {
      text: `${start}, HTTP/2's one connection with ${ev.n('initialCwnd', iw)}; ${seen}${agreed ? ", as the arithmetic of the runs' bytes gives" : `, where the arithmetic of the runs' bytes gives ${arithmetic()}`} — ${ev.n('capturedExtraRounds', extra)} more round trips of ${ev.ms('rttMs', rtt)}, ${ev.ms('capturedExtraMs', extraMs)} against the measured ${ev.ms('gapMs', gapMs)}`,
    };
  }
  const extraMs = (r2 - r1) * rtt;
  if (r2 <= r1 || gapMs <= 0 || !accounts(extraMs, gapMs, tolerance)) return {};
  ev.set('slowStartTolerance', SLOW_START_TOLERANCE);
  return {
    text: `${start} and need at least ${ev.n('h1Rounds', r1)} round trips for their ${ev.n('h1SegmentsEach', segs1)} segments each; HTTP/2's one connection starts with ${ev.n('initialCwnd', iw)} and needs at least ${ev.n('h2Rounds', r2)} for ${ev.n('h2Segments', segs2)} — ${ev.n('extraRounds', r2 - r1)} more round trips of ${ev.ms('rttMs', rtt)}, ${ev.ms('extraMs', extraMs)} against the measured ${ev.ms('gapMs', gapMs)}`,
  };
}

/**
 * One finding per row of the report's sweep, answered on the first link without loss (the report
 * recorded no loss; its RTT was its production path's, unrecorded), else the first link.
 */
export function chunksFindings(
  perLink: Array<{ link: LinkCase; rows: ChunksRow[] }>,
  quick = false,
): StudyFinding[] {
  const chosen = perLink.find((x) => (x.link.loss ?? 0) === 0) ?? perLink[0];
  if (!chosen) return [];
  return [...sweepFindings(chosen, quick), ...conclusionFindings(chosen, quick)];
}

/**
 * Why a concurrency of the report's sweep is not in this run's grid, in one line: `--quick` runs two
 * of the four, to stay near two minutes on two cores (one request at a time fetches the chunks one
 * round trip after another: `--quick --concurrency 1,8` alone took 95 s at a load average of 10–14).
 */
function notInGrid(ev: Evidence, concurrency: number, quick: boolean): string {
  return quick
    ? `not measured here, because --quick runs concurrency ${ev.n('quickLow', QUICK_CONCURRENCY[0])} and ${ev.n('quickHigh', QUICK_CONCURRENCY[1])} only, to finish in about ${ev.n('quickMinutes', 2)} minutes${concurrency === 1 ? ` (one request at a time fetches the ${ev.n('chunks', CHUNKS)} chunks one round trip after another, the slowest row)` : ''}; --concurrency ${ev.n('concurrency', concurrency)} or a full run measures it`
    : `not measured: concurrency ${ev.n('concurrency', concurrency)} is not in this run's grid (--concurrency)`;
}

/**
 * The report's third reason (its client's CPU in pure-Python h2) and its decision (HTTP/2 for single
 * slices, pooled HTTP/1.1 for bulk), on the same link as the sweep's rows.
 */
function conclusionFindings(chosen: { link: LinkCase; rows: ChunksRow[] }, quick: boolean): StudyFinding[] {
  const cpu = notMeasured(
    {
      id: 'client-cpu',
      row: 'Third reason: the client’s CPU in pure-Python h2',
      report: 'offered as part of HTTP/2’s deficit, not measured',
      ev: new Evidence(),
    },
    'not measured here, because h2lab’s client is Node’s HTTP/2, not the report’s Python one; each run records its own CPU (client.cpu), which says nothing of the report’s client',
    'this run has no Python client to measure',
  );
  const ev = new Evidence();
  ev.set('link', chosen.link.id);
  const one = chosen.rows.find((r) => r.concurrency === 1)?.h2VsH1;
  const bulk = chosen.rows.at(-1);
  const base = {
    id: 'decision',
    section: 'summary',
    row: 'Decision: HTTP/2 for single slices (one in flight), pooled HTTP/1.1 for bulk',
    report: 'a tie at one in flight, HTTP/1.1 ahead as concurrency grows',
    ev,
  };
  if (!one || !bulk?.h2VsH1 || bulk.concurrency === 1)
    return [
      cpu,
      notMeasured(
        base,
        quick && !one
          ? notInGrid(ev, 1, quick)
          : `not measured: the grid lacks concurrency ${ev.n('needConcurrency', 1)} or a higher one (--concurrency)`,
      ),
    ];
  const tie = noDifference(one);
  const h1Ahead = direction(bulk.h2VsH1) === 'below';
  ev.set('outcomeC1', one.outcome).set('outcomeBulk', bulk.h2VsH1.outcome);
  return [
    cpu,
    makeFinding({
      ...base,
      measured: `H1/H2 ${ev.x('ratioC1', one.interval.ratio)} at one in flight (interval ${ev.x('loC1', one.interval.lo)}–${ev.x('hiC1', one.interval.hi)}, ${outcomeText(one)}), ${ev.x('ratioBulk', bulk.h2VsH1.interval.ratio)} at ${ev.n('bulkConcurrency', bulk.concurrency)} (interval ${ev.x('loBulk', bulk.h2VsH1.interval.lo)}–${ev.x('hiBulk', bulk.h2VsH1.interval.hi)}, ${outcomeText(bulk.h2VsH1)}), ${chosen.link.id}`,
      verdict: tie && h1Ahead ? 'agrees' : 'differs',
      explain: (v) =>
        v === 'agrees'
          ? 'One request at a time costs both protocols the same round trips, so HTTP/2 (one connection, one handshake) loses nothing for single slices; many in flight need HTTP/1.1’s many congestion windows (the sweep’s rows)'
          : undefined,
      unexplained: `the runs do not decide ${tie ? '' : `a tie at one in flight (${decidedWords(one, ev, 'c1')})${h1Ahead ? '' : ' nor '}`}${h1Ahead ? '' : `HTTP/1.1 ahead in bulk (${decidedWords(bulk.h2VsH1, ev, 'bulk')})`} on this link`,
    }),
  ];
}

/** A decision in words for a finding: its outcome, and for an undecided one what would tell. */
function decidedWords(d: SampleComparison, ev: Evidence, key: string): string {
  return direction(d) === 'undecided' ? `undecided: ${wouldTell(d, ev, key)}` : outcomeWords(d);
}

function sweepFindings(chosen: { link: LinkCase; rows: ChunksRow[] }, quick: boolean): StudyFinding[] {
  return REPORT_SWEEP.map((ref) => {
    const ev = new Evidence();
    ev.set('link', chosen.link.id);
    const row = chosen.rows.find((r) => r.concurrency === ref.concurrency);
    const c = row?.h2VsH1;
    const base = {
      id: `sweep-c${ref.concurrency}`,
      section: 'summary',
      row: `${ev.n('concurrency', ref.concurrency)} in flight, ${ev.n('chunks', CHUNKS)} chunks: H1/H2`,
      report: `${ev.x('reportRatio', ref.ratio)} (${ev.s('reportH1S', ref.http1)} against ${ev.s('reportH2S', ref.http2)})`,
      ev,
    };
    if (!row || !c || row.h1.seconds === undefined || row.h2.seconds === undefined)
      return notMeasured(base, notInGrid(ev, ref.concurrency, quick), 'no run at this concurrency');
    const r = c.interval.ratio;
    const side = direction(c);
    ev.set('outcome', c.outcome);
    const w1 = row.h1.cwndSum;
    const w2 = row.h2.cwndSum;
    const cwndLead = side === 'below' && w1 !== undefined && w2 !== undefined && w1 > 1.5 * w2;
    const slow = side === 'below' && !cwndLead ? slowStart(row, ev) : {};
    // What the capture shows, said beside any other mechanism (slow start's words carry it already).
    const iw = row.h1.initialCwnd ?? row.h2.initialCwnd;
    const seen =
      slow.text || slow.refuted || iw === undefined
        ? undefined
        : capturedClause(ev, row.h1.capture, row.h2.capture, iw);
    const mechanism = (): string | undefined => {
      if (ref.concurrency === 1 && noDifference(c))
        return 'With one request at a time both protocols pay the same round trips, as in the report';
      if (cwndLead)
        return `HTTP/1.1's ${ev.n('h1Connections', row.h1.connections ?? ref.concurrency)} connections ended their runs with ${ev.n('h1CwndSegments', w1)} segments of congestion window together against ${ev.n('h2CwndSegments', w2)} on HTTP/2's one connection: more in flight per round trip, the report's own explanation, measured`;
      if (slow.text) return slow.text;
      if ((side === 'above' || side === 'same') && w1 !== undefined && w2 !== undefined)
        return `HTTP/2 kept up: its one connection's window (${ev.n('h2CwndSegments', w2)} segments) against HTTP/1.1's ${ev.n('h1CwndSegments', w1)} over ${ev.n('h1Connections', row.h1.connections ?? ref.concurrency)} connections was enough on this link, unlike the report's path`;
      return undefined;
    };
    return makeFinding({
      ...base,
      measured: `${ev.x('ratio', r)} (${ev.s('h1S', row.h1.seconds)} against ${ev.s('h2S', row.h2.seconds)}, ${outcomeText(c)}, ${chosen.link.id})`,
      reference: ref.ratio,
      value: r,
      tolerance: 0.1,
      ratio: true,
      decision: c,
      explain: () => {
        const said = mechanism();
        return said && seen ? `${said}. ${seen[0]!.toUpperCase()}${seen.slice(1)}` : said;
      },
      unexplained: `${side === 'undecided' ? `the runs decide no direction (${wouldTell(c, ev)}); ` : ''}the congestion windows (${w1 === undefined ? 'not read' : `${ev.n('h1CwndSegments', w1)} segments over HTTP/1.1's connections`}, ${w2 === undefined ? 'not read' : `${ev.n('h2CwndSegments', w2)} on HTTP/2's`}) do not account for this ratio${slow.refuted ? `, ${slow.refuted}` : seen ? `; ${seen}` : ''}`,
    });
  });
}

/** A sentence's words and the direction they state (compare's decision, claims.ts). */
const SAID: Array<[RegExp, Direction[]]> = [
  [/^With one request at a time both protocols pay the same/, ['same']],
  [/^Slow start:|more in flight per round trip, the report's own explanation/, ['below']],
  [/^HTTP\/2 kept up/, ['above', 'same']],
];

/**
 * Every direction the words state against compare's decision over the row's runs: the saved decision
 * is decide()'s over the saved times (where the row kept them), and each finding and paragraph words
 * that decision, none decides again.
 */
function verifyDecisions(r: StudyResult): string[] {
  const problems: string[] = [];
  const links = (r.data.links ?? []) as Array<{ link: LinkCase; rows: ChunksRow[] }>;
  for (const { link, rows } of links) {
    for (const row of rows) {
      for (const [key, side] of [
        ['h2VsH1', row.h2],
        ['poolVsH1', row.pool],
      ] as const) {
        const saved = row[key];
        if (!saved || !row.h1.times?.length || !side.times?.length) continue;
        const again = timeDecision(row.net ?? link.id, row.concurrency, key, row.h1.times, side.times);
        if (again.outcome !== saved.outcome)
          problems.push(
            `${link.id} c=${row.concurrency} ${key}: saved ${saved.outcome}, decide() over the saved runs ${again.outcome}`,
          );
      }
    }
    const top = rows.at(-1);
    const paragraph = r.explanation.find((p) => p.startsWith(`On ${link.id},`));
    if (!top?.h2VsH1 || !paragraph) continue;
    const said: Direction = /pooled HTTP\/1\.1 fetched/.test(paragraph)
      ? 'below'
      : /one HTTP\/2 session fetched/.test(paragraph)
        ? 'above'
        : /took the same time/.test(paragraph)
          ? 'same'
          : 'undecided';
    const p = directionProblem(`${link.id} paragraph at c=${top.concurrency}`, said, top.h2VsH1);
    if (p) problems.push(p);
    const serial = rows[0];
    if (
      serial?.concurrency === 1 &&
      serial.h2VsH1 &&
      /both protocols are the same round trips/.test(paragraph)
    ) {
      const q = directionProblem(`${link.id} paragraph at c=1`, 'same', serial.h2VsH1);
      if (q) problems.push(q);
    }
    const pool = paragraph.match(/\(H1\/pool [\d.]+\): (still behind|ahead of|level with)/)?.[1];
    if (pool && top.poolVsH1) {
      const q = directionProblem(
        `${link.id} paragraph, the pool`,
        pool === 'still behind' ? 'below' : pool === 'ahead of' ? 'above' : 'same',
        top.poolVsH1,
      );
      if (q) problems.push(q);
    }
  }
  for (const f of r.findings) {
    const link = links.find((x) => x.link.id === f.evidence.link);
    const c = evidenceNumber(f, 'concurrency');
    const row = link?.rows.find((x) => x.concurrency === c);
    for (const [re, sides] of SAID)
      if (row?.h2VsH1 && re.test(f.explanation) && !sides.includes(direction(row.h2VsH1)))
        problems.push(
          `${f.id}: the explanation says ${sides.join(' or ')}, the runs decided ${direction(row.h2VsH1)} (${row.h2VsH1.outcome})`,
        );
    if (f.id === 'decision' && f.verdict === 'agrees' && link) {
      const one = link.rows.find((x) => x.concurrency === 1)?.h2VsH1;
      const bulk = link.rows.at(-1)?.h2VsH1;
      if (!one || !bulk || direction(one) !== 'same' || direction(bulk) !== 'below')
        problems.push(
          `decision: agrees, but the runs decided ${one?.outcome} at one in flight and ${bulk?.outcome} in bulk`,
        );
    }
  }
  return problems;
}

/**
 * The chunks findings against the result: a slow-start explanation only where its extra round trips
 * (the capture's where both sides were captured) come within {@link SLOW_START_TOLERANCE} of the
 * measured gap, captured rounds as the row's capture shows them, and each ratio the summary's cell.
 */
export function verifyChunks(r: StudyResult): string[] {
  const problems: string[] = [...verifyDecisions(r)];
  const links = (r.data.links ?? []) as Array<{ link: LinkCase; rows: ChunksRow[] }>;
  const summary = r.sections.find((s) => s.id === 'summary');
  for (const f of r.findings) {
    if (/^Slow start/.test(f.explanation)) {
      // With both sides captured the capture's rounds decided (captured-rounds.ts checks them).
      const extra = evidenceNumber(f, 'capturedExtraMs') ?? evidenceNumber(f, 'extraMs');
      const gap = evidenceNumber(f, 'gapMs');
      if (
        extra === undefined ||
        gap === undefined ||
        !accounts(extra, gap, { tolerance: SLOW_START_TOLERANCE })
      )
        problems.push(`${f.id}: slow start named, but ${extra} ms predicted against ${gap} ms measured`);
    }
    const ratio = evidenceNumber(f, 'ratio');
    const link = f.evidence.link;
    const c = evidenceNumber(f, 'concurrency');
    const row = links.find((x) => x.link.id === link)?.rows.find((x) => x.concurrency === c);
    const iw = row?.h1.initialCwnd ?? row?.h2.initialCwnd;
    if (iw !== undefined)
      problems.push(...capturedProblems(f, { h1: row?.h1.capture, h2: row?.h2.capture }, iw));
    const cell = summary?.table.rows.find((x) => x.c === c)?.[String(link)];
    if (ratio !== undefined && typeof cell === 'number' && cell.toFixed(2) !== ratio2(ratio).toFixed(2))
      problems.push(`${f.id}: the words say ${ratio2(ratio).toFixed(2)}, the summary ${cell}`);
  }
  return problems;
}

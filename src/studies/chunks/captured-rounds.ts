/**
 * What the capture of a chunks cell shows of slow start (`--capture`): the server's rounds on each
 * connection of the cell's representative captured run, as src/net/time-sequence.ts read them from
 * its pcapng when the run ended, kept in the row so a saved result states them without its
 * comparisons; and those rounds in words, every figure through the finding's {@link Evidence}.
 */
import type { CellResult, ConnectionSequence, StudyFinding } from '../../model/index.ts';
import { capturedRunOf, TIME_SEQUENCE_PHRASE } from '../../report/index.ts';
import { type Evidence, evidenceNumber } from '../findings.ts';

/** One TCP connection's rounds of the server's data, as the capture shows them. */
interface CapturedConnection {
  slowStartRounds: number;
  roundCount: number;
  slowStartEnd: ConnectionSequence['slowStartEnd'];
  /** Segments of each round of slow start and of the round after it. */
  segments: number[];
}

/** The rounds of a cell's representative captured run, and the pcapng they were read from. */
export interface CapturedRounds {
  file: string;
  /** Each TCP connection that carried data after its handshake, in the order they opened. */
  connections: CapturedConnection[];
}

/** The captured rounds of a cell's representative run; nothing when it has no capture with rounds. */
export function capturedRoundsOf(cell: CellResult | undefined): { capture?: CapturedRounds } {
  const capture = capturedRunOf(cell)?.evidence?.capture;
  const connections = (capture?.timeSequence?.connections ?? [])
    .filter((c) => c.transport === 'tcp' && c.rounds.length > 0)
    .map((c) => ({
      slowStartRounds: c.slowStartRounds,
      roundCount: c.roundCount,
      slowStartEnd: c.slowStartEnd,
      segments: c.rounds.slice(0, c.slowStartRounds + 1).map((r) => r.segments),
    }));
  return capture && connections.length > 0 ? { capture: { file: capture.file, connections } } : {};
}

const END_WORDS: Record<ConnectionSequence['slowStartEnd'], string> = {
  'transfer-end': 'the data ran out first',
  loss: 'a loss ended it',
  'no-growth': 'the next round did not grow',
  none: 'no data',
};

/**
 * The rounds a connection's window grew over: its rounds of slow start less those at its start that
 * carried fewer segments than the initial window `iw`, which the window did not limit (HTTP/2's
 * first round is the server's SETTINGS and session tickets, 1 segment, sent before any response).
 */
function windowRounds(c: CapturedConnection, iw: number): number {
  let below = 0;
  while (below < c.slowStartRounds && (c.segments[below] ?? iw) < iw) below++;
  return c.slowStartRounds - below;
}

/** The most rounds of window growth ({@link windowRounds}) any of a side's captured connections had. */
export const mostRounds = (c: CapturedRounds, iw: number): number =>
  Math.max(...c.connections.map((x) => windowRounds(x, iw)));

/**
 * One side's captured rounds in words, each figure recorded under `${key}…`: "HTTP/1.1's 4
 * connections 1–2 rounds of slow start each (the next round did not grow)", "HTTP/2's one connection
 * 5 rounds of slow start (1 to 80 segments a round, the first below the initial window, so 4 of the
 * window's growth; the next round did not grow)".
 */
function sideWords(ev: Evidence, key: string, name: string, c: CapturedRounds, iw: number): string {
  const rounds = c.connections.map((x) => x.slowStartRounds);
  const lo = Math.min(...rounds);
  const hi = Math.max(...rounds);
  const ends = [...new Set(c.connections.map((x) => END_WORDS[x.slowStartEnd]))].join('; ');
  ev.set(`${key}CapturedRoundsLo`, lo).set(`${key}CapturedRoundsHi`, hi);
  const span =
    lo === hi
      ? ev.n(`${key}CapturedRounds`, hi)
      : `${ev.n(`${key}CapturedRoundsLo`, lo)}–${ev.n(`${key}CapturedRoundsHi`, hi)}`;
  const below = c.connections.filter((x) => windowRounds(x, iw) < x.slowStartRounds);
  const one = c.connections.length === 1 ? c.connections[0] : undefined;
  if (!one) {
    const first =
      below.length > 0
        ? `; ${ev.n(`${key}ConnectionsStartingBelowIw`, below.length)} of them first sent a round below the initial window, so at most ${ev.n(`${key}WindowRounds`, mostRounds(c, iw))} of the window's growth`
        : '';
    return `${name}'s ${ev.n(`${key}CapturedConnections`, c.connections.length)} connections ${span} rounds of slow start each (${ends}${first})`;
  }
  ev.set(`${key}CapturedConnections`, 1);
  const grew =
    one.slowStartRounds > 1
      ? `${ev.n(`${key}FirstRoundSegments`, one.segments[0]!)} to ${ev.n(`${key}LastSlowStartSegments`, one.segments[one.slowStartRounds - 1]!)} segments a round`
      : '';
  const w = windowRounds(one, iw);
  const first =
    w < one.slowStartRounds
      ? `${grew ? ', ' : ''}the first ${w + 1 < one.slowStartRounds ? `${ev.n(`${key}RoundsBelowIw`, one.slowStartRounds - w)} ` : ''}below the initial window, so ${ev.n(`${key}WindowRounds`, w)} of the window's growth`
      : '';
  return `${name}'s one connection ${span} round${hi === 1 ? '' : 's'} of slow start (${grew}${first}${grew || first ? '; ' : ''}${ends})`;
}

/**
 * Both sides' captured rounds as one clause, with where the report.html graphs are: "the capture of
 * each side's representative run (time-sequence graphs in report.html) shows …". Undefined unless
 * both sides were captured.
 */
export function capturedClause(
  ev: Evidence,
  h1: CapturedRounds | undefined,
  h2: CapturedRounds | undefined,
  iw: number,
): string | undefined {
  if (!h1 || !h2) return undefined;
  return `the capture of each side's representative run (${TIME_SEQUENCE_PHRASE} in report.html) shows ${sideWords(ev, 'http1', 'HTTP/1.1', h1, iw)} and ${sideWords(ev, 'http2', 'HTTP/2', h2, iw)}`;
}

/**
 * A finding's captured rounds against the capture its row kept: each side's fewest and most rounds
 * of slow start as the words state them, and a slow-start claim's extra rounds as HTTP/2's most
 * rounds of window growth less HTTP/1.1's (`iw`: the link's initial window); a slow-start claim over
 * a row with both sides captured rests on the capture.
 */
export function capturedProblems(
  f: StudyFinding,
  sides: { h1?: CapturedRounds | undefined; h2?: CapturedRounds | undefined },
  iw: number,
): string[] {
  const problems: string[] = [];
  // The evidence keys name each side by its HTTP version (`http1CapturedRoundsLo`).
  for (const [key, name, c] of [
    ['http1', 'HTTP/1.1', sides.h1],
    ['http2', 'HTTP/2', sides.h2],
  ] as const) {
    const lo = evidenceNumber(f, `${key}CapturedRoundsLo`);
    const hi = evidenceNumber(f, `${key}CapturedRoundsHi`);
    if (lo === undefined && hi === undefined) continue;
    const rounds = c?.connections.map((x) => x.slowStartRounds) ?? [];
    if (!c || lo !== Math.min(...rounds) || hi !== Math.max(...rounds))
      problems.push(
        `${f.id}: the words give ${name} ${lo}–${hi} captured rounds of slow start, its capture ${c ? `${Math.min(...rounds)}–${Math.max(...rounds)}` : 'is not in the row'}`,
      );
  }
  if (!/^Slow start/.test(f.explanation) || !sides.h1 || !sides.h2) return problems;
  const extra = evidenceNumber(f, 'capturedExtraRounds');
  const want = mostRounds(sides.h2, iw) - mostRounds(sides.h1, iw);
  if (extra !== want || want <= 0)
    problems.push(`${f.id}: slow start named with ${extra} extra rounds, the capture shows ${want}`);
  return problems;
}

/**
 * Pictures from the evidence: the time-sequence graphs of each cell's captured run (computed from its
 * pcapng when the run ended, `evidence.capture.timeSequence`), as uPlot data for report.html, and
 * the sentence that says what the capture shows of slow start, which the verdict's slow-start
 * sentence carries and report.html links to the graphs. Pure functions over the result.
 */
import type {
  CellResult,
  CompareResult,
  ConnectionSequence,
  RunResult,
  StrategyName,
  Workload,
} from '../model/index.ts';
import { escapeHtml } from './html.ts';

/** The words in a verdict sentence that report.html turns into a link to the graphs. */
export const TIME_SEQUENCE_PHRASE = 'time-sequence graphs';

/** Connections drawn per run at most (the first to open); the rest are counted under the graphs. */
const MAX_DRAWN_CONNECTIONS = 8;

function cellAt(result: CompareResult, w: string, n: number, net: string, p: StrategyName) {
  return result.cells.find(
    (c) => c.workload === w && c.concurrency === n && c.net === net && c.protocol === p,
  );
}

/**
 * The captured run that speaks for a cell: of its runs with a capture, the median by latency p50
 * (the lower middle of an even count). `compare` keeps this run's capture and deletes the others'
 * (unless `--capture-all`), and the verdict and the graphs quote it, before and after that.
 */
export function representativeCapture(cell: CellResult | undefined): RunResult | undefined {
  const captured = (cell?.runs ?? []).filter((r) => r.evidence?.capture !== undefined);
  return [...captured].sort((a, b) => a.latencyMs.p50 - b.latencyMs.p50)[(captured.length - 1) >> 1];
}

/** The representative captured run of a cell when its capture has time-sequence graphs. */
function capturedRunOf(cell: CellResult | undefined): RunResult | undefined {
  const run = representativeCapture(cell);
  return (run?.evidence?.capture?.timeSequence?.connections.length ?? 0) > 0 ? run : undefined;
}

/** The TCP connections of a run's capture that sent data after their handshake. */
function tcpConnections(run: RunResult | undefined): ConnectionSequence[] {
  return (run?.evidence?.capture?.timeSequence?.connections ?? []).filter(
    (c) => c.transport === 'tcp' && c.rounds.length > 0,
  );
}

const END_TEXT: Record<ConnectionSequence['slowStartEnd'], string> = {
  'transfer-end': 'the data ran out first',
  loss: 'a loss ended it',
  'no-growth': 'the next round did not grow',
  none: 'no data',
};

const range = (xs: number[]): string => {
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return lo === hi ? String(lo) : `${lo}–${hi}`;
};
const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/**
 * "The captures show it (time-sequence graphs in report.html): h1's 6 connections sent at most 8
 * segments a round over 5–6 rounds each, 1 round of slow start each (the next round did not grow);
 * h2's one connection 12, 24, 42, 82, 70 segments in 5 rounds, 5 of slow start (the data ran out
 * first)" — from each strategy's captured run in this cell, with the estimate it contradicts, if
 * any (`estimated`: rounds by strategy). Undefined without a capture.
 */
export function captureRoundsSentence(
  result: CompareResult,
  w: Workload,
  n: number,
  net: string,
  estimated: ReadonlyMap<string, number>,
): string | undefined {
  const parts: string[] = [];
  for (const p of result.axes.protocols) {
    const conns = tcpConnections(capturedRunOf(cellAt(result, w.id, n, net, p)));
    if (conns.length === 0) continue;
    const ss = conns.map((c) => c.slowStartRounds);
    const ends = [...new Set(conns.map((c) => END_TEXT[c.slowStartEnd]))].join('; ');
    const est = estimated.get(p);
    const against = est !== undefined && ss.some((x) => x !== est) ? `, not the ${est} estimated above` : '';
    if (conns.length === 1) {
      const c = conns[0]!;
      // Every round while they are few; else the slow-start rounds and the one that ended them.
      const shown = c.roundCount <= 8 ? c.rounds : c.rounds.slice(0, Math.max(3, c.slowStartRounds + 1));
      const more = shown.length < c.roundCount ? ', …' : '';
      parts.push(
        `${p}'s one connection ${shown.map((r) => r.segments).join(', ')}${more} segments in ${plural(c.roundCount, 'round')}, ${ss[0]} of slow start${against} (${ends})`,
      );
    } else {
      const most = Math.max(...conns.flatMap((c) => c.rounds.map((r) => r.segments)));
      parts.push(
        `${p}'s ${conns.length} connections at most ${most} segments a round over ${range(conns.map((c) => c.roundCount))} rounds each, ${range(ss)} of slow start each${against} (${ends})`,
      );
    }
  }
  if (parts.length === 0) return undefined;
  return `The capture of each cell's representative run shows the server's rounds (${TIME_SEQUENCE_PHRASE} in report.html): ${parts.join('; ')}.`;
}

/** One chart: its title, its uPlot data (aligned x, then the series) and its rounds' start times. */
interface SequenceChart {
  id: string;
  title: string;
  udp: boolean;
  /** [x, sent, acked (TCP) or client sent (UDP), retransmitted, dropped]; null where a series has no point. */
  data: Array<Array<number | null>>;
  rounds: number[];
}

/** Aligns a connection's series on one x axis (uPlot draws aligned data). */
function aligned(c: ConnectionSequence): Array<Array<number | null>> {
  const series = [c.sent, c.acked ?? c.clientSent ?? { t: [], y: [] }, c.retransmitted, c.dropped];
  const xs = [...new Set(series.flatMap((s) => s.t))].sort((a, b) => a - b);
  const at = new Map(xs.map((x, i) => [x, i]));
  const out: Array<Array<number | null>> = [xs];
  for (const s of series) {
    const col: Array<number | null> = xs.map(() => null);
    s.t.forEach((t, i) => {
      col[at.get(t)!] = s.y[i]!;
    });
    out.push(col);
  }
  return out;
}

/** The charts of one captured run, at most {@link MAX_DRAWN_CONNECTIONS}. */
function sequenceCharts(run: RunResult, idPrefix: string, label: string): SequenceChart[] {
  const conns = run.evidence?.capture?.timeSequence?.connections ?? [];
  return conns.slice(0, MAX_DRAWN_CONNECTIONS).map((c, i) => {
    const rounds =
      c.transport === 'tcp'
        ? ` — ${plural(c.roundCount, 'round')}, ${c.slowStartRounds} of slow start`
        : ' — UDP, both directions';
    return {
      id: `${idPrefix}-${i}`,
      title: `${label}, connection ${i + 1} (client port ${c.client.split(':').pop()})${rounds}`,
      udp: c.transport === 'udp',
      data: aligned(c),
      rounds: c.rounds.map((r) => r.startMs),
    };
  });
}

/** One workload's graphs: a block per cell with a captured run, and the charts' data. */
export function sequenceSection(
  result: CompareResult,
  w: Workload,
): { html: string; charts: SequenceChart[] } | undefined {
  const charts: SequenceChart[] = [];
  const blocks: string[] = [];
  for (const cell of result.cells.filter((c) => c.workload === w.id)) {
    const run = capturedRunOf(cell);
    if (!run) continue;
    const multiNet = result.axes.net.length > 1;
    const label = `${cell.protocol} at ${cell.concurrency}${multiNet ? ` over ${cell.net}` : ''}`;
    const mine = sequenceCharts(run, `ts-${w.id}-${charts.length}`, label);
    charts.push(...mine);
    const ts = run.evidence!.capture!.timeSequence!;
    const notDrawn = ts.connections.length - mine.length + ts.connectionsNotDrawn;
    blocks.push(
      `<div class="charts-ts">${mine.map((c) => `<div id="${escapeHtml(c.id)}" class="chart ts"></div>`).join('')}</div>${notDrawn > 0 ? `<p class="note">${plural(notDrawn, 'more connection')} of this run not drawn (see the pcapng).</p>` : ''}`,
    );
  }
  if (charts.length === 0) return undefined;
  const quic = charts.some((c) => c.udp)
    ? ' QUIC encrypts its acknowledgements: a UDP flow shows the bytes each side sent, not what was acknowledged.'
    : '';
  const html = `<h3 id="ts-${escapeHtml(w.id)}">Time-sequence graphs of each cell's representative run (from its capture)</h3>
<p class="note">Blue: the server's data segments (the end of each one's sequence range, in bytes); green: the client's cumulative ACKs; red: segments sent again; black: segments the link dropped; dashed lines: where each round trip of the server's data began. Times are as the link's relay saw the packets enter it.${quic}</p>
${blocks.join('\n')}`;
  return { html, charts };
}

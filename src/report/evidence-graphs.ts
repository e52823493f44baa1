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
  TimeSequence,
  Workload,
} from '../model/index.ts';
import { escapeHtml } from './html.ts';

/** The words in a verdict sentence that report.html turns into a link to the graphs. */
export const TIME_SEQUENCE_PHRASE = 'time-sequence graphs';

/** Connections drawn per run at most (the busiest); the rest are counted under the graphs. */
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
export function capturedRunOf(cell: CellResult | undefined): RunResult | undefined {
  const run = representativeCapture(cell);
  return (run?.evidence?.capture?.timeSequence?.connections.length ?? 0) > 0 ? run : undefined;
}

/** The connections (TCP, or QUIC's UDP flows) of a run's capture that sent data after their handshake. */
function roundConnections(run: RunResult | undefined): ConnectionSequence[] {
  return (run?.evidence?.capture?.timeSequence?.connections ?? []).filter((c) => c.rounds.length > 0);
}

/** What ended a connection's slow-start rounds, in the words the reports use. */
export const END_TEXT: Record<ConnectionSequence['slowStartEnd'], string> = {
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
 * first); h3's one QUIC connection 291, 7, 62 datagrams in 3 rounds, 1 of slow start (a loss ended
 * it)" — from each strategy's captured run in this cell, with the estimate it contradicts, if any
 * (`estimated`: rounds by strategy). Undefined without a capture, and with `quicOnly` without a
 * QUIC connection's rounds among them.
 */
export function captureRoundsSentence(
  result: CompareResult,
  w: Workload,
  n: number,
  net: string,
  estimated: ReadonlyMap<string, number>,
  quicOnly = false,
): string | undefined {
  const parts: string[] = [];
  let quic = false;
  for (const p of result.axes.protocols) {
    const conns = roundConnections(capturedRunOf(cellAt(result, w.id, n, net, p)));
    if (conns.length === 0) continue;
    // QUIC's rounds are of datagrams (its packets are encrypted: no segments to count).
    const udp = conns.some((c) => c.transport === 'udp');
    quic ||= udp;
    const [one, many, unit] = udp
      ? ['one QUIC connection', 'QUIC connections', 'datagrams']
      : ['one connection', 'connections', 'segments'];
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
        `${p}'s ${one} ${shown.map((r) => r.segments).join(', ')}${more} ${unit} in ${plural(c.roundCount, 'round')}, ${ss[0]} of slow start${against} (${ends})`,
      );
    } else {
      const most = Math.max(...conns.flatMap((c) => c.rounds.map((r) => r.segments)));
      parts.push(
        `${p}'s ${conns.length} ${many} at most ${most} ${unit} a round over ${range(conns.map((c) => c.roundCount))} rounds each, ${range(ss)} of slow start each${against} (${ends})`,
      );
    }
  }
  if (parts.length === 0 || (quicOnly && !quic)) return undefined;
  return `The capture of each cell's representative run shows the server's rounds (${TIME_SEQUENCE_PHRASE} in report.html): ${parts.join('; ')}.`;
}

/**
 * The anchor of the graphs of one link and level of a result drawn outside compare's report (a
 * study's cell, a page replay's setting): `ts-` and the name with what an id should not hold as `_`.
 * @example graphAnchor('rtt150ms+cubic', 4) // 'ts-rtt150ms_cubic-c4'
 */
export function graphAnchor(name: string, level?: number): string {
  return `ts-${name.replace(/[^A-Za-z0-9_-]+/g, '_')}${level === undefined ? '' : `-c${level}`}`;
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

/** The bytes a connection's server sent (its series' last point). */
const serverBytes = (c: ConnectionSequence): number =>
  Math.max(c.sent.y.at(-1) ?? 0, c.dropped.y.at(-1) ?? 0);

/**
 * The charts of one capture: its {@link MAX_DRAWN_CONNECTIONS} busiest connections in the order they
 * opened, and a note of how many it has beyond them.
 */
function sequenceCharts(
  ts: TimeSequence,
  idPrefix: string,
  label: string,
  maxDrawn = MAX_DRAWN_CONNECTIONS,
): { charts: SequenceChart[]; html: string } {
  const busiest = new Set(
    [...ts.connections].sort((a, b) => serverBytes(b) - serverBytes(a)).slice(0, maxDrawn),
  );
  const charts = ts.connections
    .filter((c) => busiest.has(c))
    .map((c, i) => {
      const rounds =
        c.transport === 'tcp'
          ? ` — ${plural(c.roundCount, 'round')}, ${c.slowStartRounds} of slow start`
          : ` — UDP, both directions${c.roundCount > 0 ? `, ${plural(c.roundCount, 'round')}, ${c.slowStartRounds} of slow start` : ''}`;
      return {
        id: `${idPrefix}-${i}`,
        title: `${label}, connection ${i + 1} (client port ${c.client.split(':').pop()})${rounds}`,
        udp: c.transport === 'udp',
        data: aligned(c),
        rounds: c.rounds.map((r) => r.startMs),
      };
    });
  const notDrawn = ts.connections.length - charts.length + ts.connectionsNotDrawn;
  const html = `<div class="charts-ts">${charts.map((c) => `<div id="${escapeHtml(c.id)}" class="chart ts"></div>`).join('')}</div>${notDrawn > 0 ? `<p class="note">${plural(notDrawn, 'more connection')} of this run not drawn, the ones that carried the fewest bytes (see the pcapng).</p>` : ''}`;
  return { charts, html };
}

/** What the colours of the graphs mean (`quic`: some are UDP flows). */
function sequenceLegend(quic: boolean): string {
  const udp = quic
    ? " QUIC encrypts its acknowledgements: a UDP flow shows the bytes each side sent, not what was acknowledged, and its rounds are timed from the link's one-way delays (a round begins with the server's first datagram after a client datagram, sent once the round before reached the client, could have reached the server)."
    : '';
  return `<p class="note">Blue: the server's data segments (the end of each one's sequence range, in bytes); green: the client's cumulative ACKs; red: segments sent again; black: segments the link dropped; dashed lines: where each round trip of the server's data began. Times are as the link's relay saw the packets enter it.${udp}</p>`;
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
    const mine = sequenceCharts(run.evidence!.capture!.timeSequence!, `ts-${w.id}-${charts.length}`, label);
    charts.push(...mine.charts);
    blocks.push(mine.html);
  }
  if (charts.length === 0) return undefined;
  const html = `<h3 id="ts-${escapeHtml(w.id)}">Time-sequence graphs of each cell's representative run (from its capture)</h3>
${sequenceLegend(charts.some((c) => c.udp))}
${blocks.join('\n')}`;
  return { html, charts };
}

/**
 * Graphs of captures outside a comparison's own report (a page replay's median loads, a study's
 * comparisons): a block per labelled capture under one heading with the id `id`, each drawing its
 * `maxDrawn` busiest connections (its heading the id `anchor`, where given, for a sentence to link
 * to), and the charts' data.
 */
export function sequenceBlocks(
  id: string,
  heading: string,
  captures: ReadonlyArray<{ label: string; timeSequence: TimeSequence; anchor?: string }>,
  maxDrawn = MAX_DRAWN_CONNECTIONS,
): { html: string; charts: SequenceChart[] } | undefined {
  const charts: SequenceChart[] = [];
  const blocks: string[] = [];
  for (const c of captures) {
    if (c.timeSequence.connections.length === 0) continue;
    const mine = sequenceCharts(c.timeSequence, `${id}-${charts.length}`, c.label, maxDrawn);
    charts.push(...mine.charts);
    const anchor = c.anchor ? ` id="${escapeHtml(c.anchor)}"` : '';
    blocks.push(`<h3${anchor}>${escapeHtml(c.label)}</h3>\n${mine.html}`);
  }
  if (charts.length === 0) return undefined;
  return {
    html: `<h2 id="${escapeHtml(id)}">${escapeHtml(heading)}</h2>\n${sequenceLegend(charts.some((c) => c.udp))}\n${blocks.join('\n')}`,
    charts,
  };
}

/** The graphs' layout: as many 560 px columns as fit, one under 560 px. */
export const SEQUENCE_CSS = `.charts-ts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,560px),1fr));gap:10px;margin-bottom:8px}p.note{font-size:13px;color:#444;margin:4px 0;max-width:1000px}.chart.ts .u-title{font-size:13px;font-weight:600;line-height:1.3}.chart.ts{max-width:100%;overflow:hidden}`;

/**
 * Client-side: the time-sequence graphs (src/report/evidence-graphs.ts), one uPlot each: the server's
 * data and the client's ACKs as lines, retransmissions and the link's drops as points, and a dashed
 * line where each round trip of the server's data began.
 */
export const SEQUENCE_SCRIPT = `
(function(){
  var charts = JSON.parse(document.getElementById('h2lab-ts').textContent);
  function fmtB(v){ return v == null ? '' : v >= 1048576 ? (v/1048576).toFixed(1)+' MiB' : v >= 1024 ? Math.round(v/1024)+' KiB' : Math.round(v)+' B'; }
  function fmtT(v){ return v == null ? '' : v >= 1000 ? (v/1000).toFixed(2)+' s' : Math.round(v)+' ms'; }
  function none(){ return null; }
  var stepped = uPlot.paths && uPlot.paths.stepped ? uPlot.paths.stepped({ align: 1 }) : undefined;
  charts.forEach(function(c){
    var host = document.getElementById(c.id);
    if (!host) return;
    var rounds = { draw: [function(u){
      var ctx = u.ctx; ctx.save(); ctx.setLineDash([4, 4]); ctx.strokeStyle = '#999'; ctx.lineWidth = 1;
      c.rounds.forEach(function(t){ var x = Math.round(u.valToPos(t, 'x', true)); ctx.beginPath(); ctx.moveTo(x, u.bbox.top); ctx.lineTo(x, u.bbox.top + u.bbox.height); ctx.stroke(); });
      ctx.restore(); }] };
    new uPlot({ width: Math.min(560, host.clientWidth || 560), height: 260, title: c.title, legend: { show: false }, hooks: rounds,
      scales: { x: { time: false } },
      series: [ { label: 'time', value: function(u, v){ return fmtT(v); } },
        { label: c.udp ? 'server sent' : 'data sent', stroke: '#1f77b4', paths: none, points: { show: true, size: 4, fill: '#1f77b4' }, value: function(u, v){ return fmtB(v); } },
        { label: c.udp ? 'client sent' : 'acknowledged', stroke: '#2ca02c', width: 1.5, spanGaps: true, paths: c.udp ? undefined : stepped, points: { show: false }, value: function(u, v){ return fmtB(v); } },
        { label: 'sent again', stroke: '#d62728', paths: none, points: { show: true, size: 7, fill: '#d62728' } },
        { label: 'dropped by the link', stroke: '#000000', paths: none, points: { show: true, size: 7, fill: '#000000' } } ],
      axes: [ { label: 'time since the capture began', values: function(u, vals){ return vals.map(fmtT); } },
              { label: c.udp ? 'bytes sent' : 'sequence (bytes)', size: 70, values: function(u, vals){ return vals.map(fmtB); } } ] }, c.data, host);
  });
  document.body.setAttribute('data-ts', 'drawn');
})();
`;

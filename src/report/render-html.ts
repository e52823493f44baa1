/**
 * The HTML report: one self-contained page (no network needed to open it) with uPlot inlined for the
 * line charts (throughput vs concurrency, latency percentile curves) and SVG drawn here for the
 * ratio-with-interval plot and the where-the-time-went stacked bars. A pure function: the uPlot
 * sources are handed in ({@link HtmlAssets}, read by `loadHtmlAssets()`).
 */

import type * as Hdr from 'hdr-histogram-js';
import { formatBytes, formatMs, hdrHistogram } from '../core/index.ts';

const hdr = hdrHistogram;

import type {
  CellResult,
  CompareResult,
  Comparison,
  EncodedHistogram,
  StrategyName,
  Workload,
} from '../model/index.ts';
import { findStrategy, listStrategies } from '../transport/index.ts';
import { buildAnswer, type Decision } from './answer.ts';
import { SEQUENCE_CSS, SEQUENCE_SCRIPT, sequenceSection, TIME_SEQUENCE_PHRASE } from './evidence-graphs.ts';
import { escapeHtml, scriptJson } from './html.ts';
import { columnsFor, primaryMetric, resultRows } from './render-text.ts';
import { comparedTitle, compareSettings, netLabel, netParts } from './settings.ts';
import { formatRatio, levelText } from './verdict.ts';

/** The chart library's sources, inlined into the page. */
export interface HtmlAssets {
  uplotJs: string;
  uplotCss: string;
}

/** A strategy this process has not registered (a result written with an extension) is drawn grey. */
const UNKNOWN_STRATEGY_COLOR = '#888888';

/** A strategy's colour, the same in every chart: its own (src/transport/strategies/). */
function strategyColor(p: StrategyName): string {
  return findStrategy(p)?.colour ?? UNKNOWN_STRATEGY_COLOR;
}

/** Every registered strategy's colour, and the result's others grey: what the page's charts read. */
function strategyColors(result: CompareResult): Record<StrategyName, string> {
  const colors = Object.fromEntries(listStrategies().map((s) => [s.name, s.colour]));
  for (const p of result.axes.protocols) colors[p] ??= UNKNOWN_STRATEGY_COLOR;
  return colors;
}

const PART_COLORS = {
  clientQueue: '#e8a33d',
  serverQueue: '#9b59b6',
  serverService: '#c39bd3',
  wire: '#5d8fd8',
  transfer: '#48b8a0',
} as const;
const PART_LABELS = {
  clientQueue: 'queued in the client',
  serverQueue: 'queued for the backend pool',
  serverService: 'backend work',
  wire: 'wire and server before first byte',
  transfer: 'transfer (first to last byte)',
} as const;

/** Percentiles at which latency curves are drawn. */
const CURVE_PERCENTILES = [0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 100];

const esc = escapeHtml;

/** Merges the kept runs' latency histograms of a cell and reads the curve (percentile → ms). */
export function latencyCurve(cell: CellResult): Array<[number, number]> | undefined {
  const encoded = cell.runs
    .slice(cell.warmupRuns)
    .filter((r) => r.error === undefined)
    .map((r) => r.histograms?.latency)
    .filter((h): h is EncodedHistogram => !!h?.base64);
  if (encoded.length === 0) return undefined;
  let acc: Hdr.Histogram | undefined;
  try {
    for (const e of encoded) {
      const h = hdr().decodeFromCompressedBase64(e.base64, 32, false);
      if (!acc) {
        acc = h;
        continue;
      }
      acc.add(h);
      h.destroy();
    }
    if (!acc || acc.totalCount === 0) return undefined;
    const h = acc;
    return CURVE_PERCENTILES.map((p): [number, number] => [
      p,
      (p === 100 ? h.maxValue : p === 0 ? h.minNonZeroValue : h.getValueAtPercentile(p)) / 1000,
    ]);
  } catch {
    return undefined;
  } finally {
    acc?.destroy();
  }
}

/** "Nines" position of a percentile: 0 → 0, 90 → 1, 99 → 2, 99.9 → 3 (100 is drawn at 4.6). */
function nines(p: number): number {
  return p >= 100 ? 4.6 : -Math.log10(1 - p / 100);
}

interface ChartData {
  workloads: Array<{
    /** The element key of this workload's charts over one network (`chartKey`). */
    id: string;
    label: string;
    /** The network these charts are of, named when the comparison has several (else empty). */
    net: string;
    /** What a cell's level is: requests in flight, an offered rate (`--rate`), or a burst's N. */
    level: 'concurrency' | 'rate' | 'burst';
    /** Burst workloads chart the completion time (ms) against N instead of req/s against concurrency. */
    throughput: {
      unit: 'req/s' | 'ms';
      x: number[];
      series: Array<{ protocol: StrategyName; median: Array<number | null> }>;
    };
    curves: Array<{
      concurrency: number;
      series: Array<{ protocol: StrategyName; x: number[]; y: number[] }>;
    }>;
  }>;
  colors: Record<StrategyName, string>;
}

function chartData(result: CompareResult): ChartData {
  return {
    colors: strategyColors(result),
    workloads: result.axes.workloads
      .flatMap((w) => result.axes.net.map((net) => ({ w, net })))
      .map(({ w, net }) => {
        const cells = result.cells.filter((c) => c.workload === w.id && c.net === net);
        const at = (p: StrategyName, c: number) => cells.find((x) => x.protocol === p && x.concurrency === c);
        const burst = w.burst !== undefined;
        const concs = workloadConcurrency(result, w);
        return {
          id: chartKey(result, w, net),
          label: w.label,
          net: result.axes.net.length > 1 ? net : '',
          level: burst ? 'burst' : w.rateRps ? 'rate' : 'concurrency',
          throughput: {
            unit: burst ? 'ms' : 'req/s',
            x: concs,
            series: result.axes.protocols.map((p) => ({
              protocol: p,
              median: concs.map((c) => {
                const s = at(p, c)?.stats;
                return (burst ? s?.burstCompletionMs?.median : s?.rps.median) ?? null;
              }),
            })),
          },
          curves: concs.map((c) => ({
            concurrency: c,
            series: result.axes.protocols.flatMap((p) => {
              const cell = at(p, c);
              const curve = cell ? latencyCurve(cell) : undefined;
              return curve
                ? [{ protocol: p, x: curve.map(([q]) => nines(q)), y: curve.map(([, ms]) => ms) }]
                : [];
            }),
          })),
        };
      }),
  };
}

/** The key of a workload's charts over one network: its id, with the network's index when several. */
function chartKey(result: CompareResult, w: Workload, net: string): string {
  return result.axes.net.length > 1 ? `${w.id}--n${result.axes.net.indexOf(net)}` : w.id;
}

/** The concurrency values (burst sizes for a burst workload) that a workload's cells have. */
function workloadConcurrency(result: CompareResult, w: Workload): number[] {
  return result.axes.concurrency.filter((c) =>
    result.cells.some((x) => x.workload === w.id && x.concurrency === c),
  );
}

/**
 * How an outcome is drawn in the interval plots: the colour is the strategy's (one per strategy),
 * the mark says the outcome — a filled dot for a clear difference, a hollow dot on a dashed interval
 * for undecided, a small grey square for no clear difference — so it reads without colour too.
 */
const OUTCOME_MARK: Record<Comparison['outcome'], { sign: string; dashed: boolean; fill: boolean }> = {
  better: { sign: ' ▲', dashed: false, fill: true },
  worse: { sign: ' ▼', dashed: false, fill: true },
  'no-clear-difference': { sign: ' ≈', dashed: false, fill: false },
  undecided: { sign: ' ?', dashed: true, fill: false },
  insufficient: { sign: '', dashed: true, fill: false },
};

/** The key of the interval plots' marks. */
const INTERVAL_KEY = `<div class="legend key"><span><b>●</b> ▲ better / ▼ worse: a clear difference</span><span><b>○</b> ? undecided: the runs cannot tell (dashed interval)</span><span><b>▪</b> ≈ no clear difference (within the smallest effect)</span><span>colour: the strategy</span></div>`;

const METRIC_TITLE: Record<Comparison['metric'], string> = {
  rps: 'req/s',
  latencyP50Ms: 'p50 latency',
  latencyP99Ms: 'p99 latency',
  burstCompletionMs: 'completion time',
};

/**
 * The ratio of each strategy to the baseline with its interval, on a log axis (a forest plot), for
 * the workload's primary metric or the one named.
 */
export function ratioSvg(
  result: CompareResult,
  w: Workload,
  metric = primaryMetric(w.burst !== undefined),
): string {
  const what = METRIC_TITLE[metric];
  const rows = result.comparisons.filter(
    (c) => c.workload === w.id && c.metric === metric && Number.isFinite(c.interval.ratio),
  );
  if (rows.length === 0)
    return '<p class="muted">No ratio: the baseline or every other strategy has no kept run.</p>';
  const lo = Math.min(1, ...rows.map((r) => r.interval.lo)) / 1.15;
  const hi = Math.max(1, ...rows.map((r) => r.interval.hi)) * 1.15;
  // Room for the longest row label (about 7 px a character at 12 px), so none is clipped; the SVG
  // scales down to its column (CSS max-width), never pushing the page wider.
  const short = netParts(result).short;
  const labelOf = (r: Comparison) =>
    `${r.protocol} ${levelText(result, r.workload, r.concurrency)}${result.axes.net.length > 1 ? ` ${short(r.net)}` : ''}`;
  const left = Math.max(130, 16 + 7 * Math.max(...rows.map((r) => labelOf(r).length)));
  const right = 190;
  const W = left + 320 + right;
  const rowH = 26;
  const top = 28;
  const H = top + rows.length * rowH + 30;
  const x = (v: number) =>
    left + ((Math.log(v) - Math.log(lo)) / (Math.log(hi) - Math.log(lo))) * (W - left - right);
  const parts: string[] = [];
  // Ticks at least 34 px apart, always including 1 (the baseline).
  const ticks: number[] = [1];
  for (const t of [0.1, 0.25, 0.5, 0.67, 0.8, 1.25, 1.5, 2, 3, 4, 6, 10, 20, 50, 100]) {
    if (t < lo || t > hi) continue;
    if (ticks.every((u) => Math.abs(x(u) - x(t)) >= 34)) ticks.push(t);
  }
  for (const t of ticks) {
    parts.push(
      `<line x1="${x(t)}" x2="${x(t)}" y1="${top - 6}" y2="${H - 24}" stroke="${t === 1 ? '#333' : '#e3e3e3'}" stroke-width="${t === 1 ? 1.5 : 1}"/>`,
      `<text x="${x(t)}" y="${H - 8}" text-anchor="middle" class="tick">${t}×</text>`,
    );
  }
  parts.push(
    `<text x="${x(1)}" y="${top - 12}" text-anchor="middle" class="tick">= ${esc(result.baseline)}</text>`,
    `<text x="${W - right + 8}" y="${top - 12}" class="tick">${what} ratio (95% CI)</text>`,
  );
  rows.forEach((r, i) => {
    const y = top + i * rowH + rowH / 2;
    const col = strategyColor(r.protocol);
    const m = OUTCOME_MARK[r.outcome];
    const net = result.axes.net.length > 1 ? ` ${short(r.net)}` : '';
    const dot =
      r.outcome === 'no-clear-difference'
        ? `<rect x="${x(r.interval.ratio) - 4}" y="${y - 4}" width="8" height="8" fill="#888"/>`
        : `<circle cx="${x(r.interval.ratio)}" cy="${y}" r="5.5" fill="${m.fill ? col : '#fff'}" stroke="${col}" stroke-width="2"/>`;
    parts.push(
      `<text x="${left - 10}" y="${y + 4}" text-anchor="end" class="lbl"><tspan fill="${col}" font-weight="600">${esc(r.protocol)}</tspan> ${esc(levelText(result, r.workload, r.concurrency))}${esc(net)}</text>`,
      `<line x1="${x(r.interval.lo)}" x2="${x(r.interval.hi)}" y1="${y}" y2="${y}" stroke="${col}" stroke-width="3" stroke-linecap="round"${m.dashed ? ' stroke-dasharray="5 4"' : ''}/>`,
      dot,
      `<text x="${W - right + 8}" y="${y + 4}" class="lbl">${formatRatio(r.interval.ratio)} (${formatRatio(r.interval.lo).slice(0, -1)}–${formatRatio(r.interval.hi)})${m.sign}</text>`,
    );
  });
  return `<svg class="ratio" data-metric="${metric}" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${what} ratio to ${esc(result.baseline)} with 95% intervals">${parts.join('')}</svg>`;
}

/** Where the time went: one stacked bar per strategy and concurrency, scaled per concurrency. */
export function breakdownSvg(result: CompareResult, w: Workload, net = result.axes.net[0]): string {
  const cells = result.cells.filter((c) => c.workload === w.id && c.stats && c.net === net);
  if (cells.length === 0) return '<p class="muted">No finished cell.</p>';
  const keys = (Object.keys(PART_COLORS) as Array<keyof typeof PART_COLORS>).filter((k) =>
    cells.some((c) => (c.stats!.breakdownMs[k] ?? 0) > 0),
  );
  const W = 640;
  const left = 130;
  const right = 80;
  const barH = 16;
  const rowH = 22;
  const parts: string[] = [];
  let y = 10;
  for (const conc of result.axes.concurrency) {
    const group = cells.filter((c) => c.concurrency === conc);
    if (group.length === 0) continue;
    const max = Math.max(...group.map((c) => c.stats!.breakdownMs.total), 1e-6);
    parts.push(
      `<text x="0" y="${y + 12}" class="grp">${w.burst ? `burst of ${conc}` : w.rateRps ? `${conc} req/s` : `concurrency ${conc}`}</text>`,
    );
    y += 18;
    for (const c of group) {
      const b = c.stats!.breakdownMs;
      parts.push(
        `<text x="${left - 10}" y="${y + barH - 4}" text-anchor="end" class="lbl" fill="${strategyColor(c.protocol)}" font-weight="600">${esc(c.protocol)}</text>`,
      );
      let x0 = left;
      for (const k of keys) {
        const v = b[k] ?? 0;
        const wpx = (v / max) * (W - left - right);
        if (wpx > 0.2) {
          parts.push(
            `<rect x="${x0}" y="${y}" width="${wpx}" height="${barH}" fill="${PART_COLORS[k]}"><title>${esc(PART_LABELS[k])}: ${formatMs(v)}</title></rect>`,
          );
        }
        x0 += wpx;
      }
      parts.push(`<text x="${x0 + 6}" y="${y + barH - 4}" class="lbl">${formatMs(b.total)}</text>`);
      y += rowH;
    }
    y += 6;
  }
  const legend = keys
    .map(
      (k, i) =>
        `<g transform="translate(${(i % 3) * 215},${y + 8 + Math.floor(i / 3) * 18})"><rect width="12" height="12" fill="${PART_COLORS[k]}"/><text x="17" y="10" class="tick">${esc(PART_LABELS[k])}</text></g>`,
    )
    .join('');
  const H = y + 14 + Math.ceil(keys.length / 3) * 18;
  return `<svg class="bars" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="Where the time went">${parts.join('')}${legend}</svg>`;
}

function resultsTable(result: CompareResult, w: Workload): string {
  const rows = resultRows(result).filter((r) => r.workload === w.label);
  const multiNet = result.axes.net.length > 1;
  const cols = columnsFor(rows);
  const head = [...(multiNet ? ['network'] : []), ...cols.map(([, h]) => h)];
  const strategyAt = cols.findIndex(([k]) => k === 'strategy') + (multiNet ? 1 : 0);
  const body = rows
    .map((r) => {
      const shown = [...(multiNet ? [r.net] : []), ...cols.map(([k]) => r[k])];
      const cls = r.outcome.replace(/\s+/g, '-');
      return `<tr class="${esc(cls)}">${shown.map((c, i) => `<td${i === strategyAt ? ` style="color:${strategyColor(r.strategy)};font-weight:600"` : ''}>${esc(c)}</td>`).join('')}</tr>`;
    })
    .join('');
  return `<table><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${body}</tbody></table>`;
}

const CSS = `
:root{--fg:#1f2328;--muted:#656d76;--line:#d8dee4;--bg:#fff;--card:#f6f8fa}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:1320px;margin:0 auto;padding:28px 32px 60px}
h1{font-size:26px;margin:0 0 4px}h2{font-size:21px;margin:38px 0 6px;padding-top:10px;border-top:1px solid var(--line)}h3{font-size:15px;margin:18px 0 6px;color:var(--muted);font-weight:600}
.meta{color:var(--muted);font-size:13px}.muted{color:var(--muted)}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;margin-left:8px;vertical-align:middle}
.badge.complete{background:#dafbe1;color:#1a7f37}.badge.interrupted,.badge.running{background:#fff8c5;color:#9a6700}.badge.failed{background:#ffebe9;color:#cf222e}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:14px;margin:16px 0}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 16px}
.card b{display:block;margin-bottom:4px}.card a{color:inherit;text-decoration:none}.card a:hover{text-decoration:underline}.card.rec{border-left:4px solid #2f6fde}
.verdict p{margin:6px 0;max-width:1000px}.headline{font-weight:600}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(560px,1fr));gap:18px 28px;align-items:start}
.charts3{display:grid;grid-template-columns:repeat(auto-fit,minmax(380px,1fr));gap:10px}
${SEQUENCE_CSS}
svg.ratio{max-width:100%;height:auto}main table{display:block;max-width:100%;overflow-x:auto}.chart{max-width:100%;overflow:hidden}svg text{font:12px -apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif}svg .tick{fill:#656d76;font-size:11px}svg .grp{fill:#1f2328;font-weight:600}
table{border-collapse:collapse;font-size:13px;margin-top:8px;font-variant-numeric:tabular-nums}th,td{padding:4px 10px;border-bottom:1px solid var(--line);text-align:left;white-space:nowrap}th{background:var(--card)}
tr.better td:last-child{color:#0072b2;font-weight:600}tr.worse td:last-child{color:#d55e00;font-weight:600}
ul.caveats li{margin:3px 0;color:#444}
details.shards table{font-size:12px}
details.shards td.slow{background:#fdecea}
details{margin-top:24px}pre{background:var(--card);padding:10px;border-radius:6px;overflow:auto;font-size:12px}
details.settings{margin-top:12px;font-size:13px}details.settings th{text-align:left;font-weight:600;padding:2px 12px 2px 0;vertical-align:top;white-space:nowrap}details.settings td{padding:2px 0;white-space:normal}
section.answer h2{border-top:0;margin-top:18px}table.answer{font-size:14px;margin:2px 0 6px}table.answer td{border-bottom:0;padding:2px 10px;white-space:normal}table.answer td.decision{font-weight:600;white-space:nowrap}
table.answer .mark{display:inline-block;width:1.2em;text-align:center}section.answer p.note{font-size:13px;color:#444;margin:4px 0}
tr.on td.decision{color:#0072b2}tr.keep td.decision{color:#d55e00}tr.undecided td.decision{color:#555;font-style:italic}tr.same td.decision{color:#444}tr.failed td.decision,tr.depends td.decision{color:#a0467d}
.legend.key{color:#444;margin-top:2px}
.legend{font-size:13px;margin:4px 0}.legend span{margin-right:14px}.legend i{display:inline-block;width:12px;height:3px;vertical-align:middle;margin-right:5px}
`;

/** Client-side: draws the uPlot charts from the embedded data. Plain ES2017, no modules. */
const CHART_SCRIPT = `
(function(){
  var data = JSON.parse(document.getElementById('h2lab-data').textContent);
  var nineTicks = [0.30103, 1, 2, 3, 4.6];
  var nineLabels = {0:'p0',0.30103:'p50',1:'p90',2:'p99',3:'p99.9',4.6:'max'};
  function fmtMs(v){ return v == null ? '' : v >= 1000 ? (v/1000).toFixed(2)+' s' : v >= 100 ? v.toFixed(0)+' ms' : v >= 10 ? v.toFixed(1)+' ms' : v.toFixed(2)+' ms'; }
  function fmtN(v){ return v == null ? '' : v >= 1000 ? Math.round(v).toLocaleString('en-US') : v.toFixed(v >= 10 ? 0 : 1); }
  data.workloads.forEach(function(w){
    var el = document.getElementById('tp-' + w.id);
    var ms = w.throughput.unit === 'ms';
    if (el) {
      var series = [{ label: 'concurrency' }];
      var rows = [w.throughput.x];
      w.throughput.series.forEach(function(s){
        series.push({ label: s.protocol, stroke: data.colors[s.protocol], width: 2.5, points: { size: 8, fill: data.colors[s.protocol] }, value: function(u, v){ return ms ? fmtMs(v) : fmtN(v) + ' req/s'; } });
        rows.push(s.median);
      });
      var over = w.net ? ' — ' + w.net : '';
      new uPlot({ width: Math.min(560, el.parentNode.clientWidth || 560), height: 300, title: (ms ? 'Burst completion time vs burst size (median)' : w.level === 'rate' ? 'Throughput vs offered rate (median req/s)' : 'Throughput vs concurrency (median req/s)') + over, series: series,
        scales: { x: { time: false, distr: 3, log: 2 }, y: { range: function(u, min, max){ return [0, max * 1.1 || 1]; } } },
        axes: [ { label: ms ? 'requests in the burst (log scale)' : w.level === 'rate' ? 'offered rate, req/s (log scale)' : 'concurrency (log scale)', values: function(u, vals){ return vals.map(function(v){ return String(Math.round(v)); }); }, splits: function(){ return w.throughput.x; } },
                { label: ms ? 'time to the last response' : 'req/s', size: 70, values: function(u, vals){ return vals.map(ms ? fmtMs : fmtN); } } ],
        legend: { show: false } }, rows, el);
    }
    w.curves.forEach(function(c){
      var el2 = document.getElementById('lat-' + w.id + '-' + c.concurrency);
      if (!el2 || c.series.length === 0) return;
      var xs = c.series[0].x;
      var series2 = [{ label: 'percentile', value: function(u, v){ return nineLabels[v] || ''; } }];
      var rows2 = [xs];
      c.series.forEach(function(s){
        series2.push({ label: s.protocol, stroke: data.colors[s.protocol], width: 2, points: { size: 5, fill: data.colors[s.protocol] }, value: function(u, v){ return fmtMs(v); } });
        rows2.push(s.y);
      });
      new uPlot({ width: Math.min(370, el2.clientWidth || 370), height: 250, title: (ms ? 'Latency percentiles in a burst of ' + c.concurrency : w.level === 'rate' ? 'Latency percentiles at ' + c.concurrency + ' req/s' : 'Latency percentiles at concurrency ' + c.concurrency) + (w.net ? ' — ' + w.net : ''), series: series2,
        scales: { x: { time: false, range: [0, 4.7] }, y: { distr: 3 } },
        axes: [ { splits: function(){ return nineTicks; }, values: function(u, vals){ return vals.map(function(v){ return nineLabels[v] || ''; }); } },
                { size: 64, values: function(u, vals){ return vals.map(fmtMs); } } ], legend: { show: false } }, rows2, el2);
    });
  });
  document.body.setAttribute('data-charts', 'drawn');
})();
`;

/** A verdict paragraph (escaped) with its mention of the time-sequence graphs linked to them. */
function graphLink(html: string, w: Workload, drawn: boolean): string {
  return drawn
    ? html.replace(TIME_SEQUENCE_PHRASE, `<a href="#ts-${esc(w.id)}">${TIME_SEQUENCE_PHRASE}</a>`)
    : html;
}

/**
 * "h1 — HTTP/1.1, up to 6 connections": how each strategy was built in this comparison. Its size is
 * the compare option that sized it (src/compare/options.ts, `cellConnections`): `h1Connections` for
 * one-request connections, `h2PoolSessions` for multiplexed sessions, none for a fixed count.
 */
function strategyDescription(result: CompareResult, p: StrategyName): string {
  const s = findStrategy(p);
  if (!s) return p;
  const o = result.options as { h1Connections?: number | string | number[]; h2PoolSessions?: number };
  const size =
    s.connections.fixed ?? (s.multiplexed ? o.h2PoolSessions : o.h1Connections) ?? s.connections.default;
  return `${p} — ${s.describe(Array.isArray(size) ? size.join('/') : String(size))}`;
}

function legendHtml(result: CompareResult): string {
  return `<div class="legend">${result.axes.protocols.map((p) => `<span><i style="background:${strategyColor(p)}"></i>${esc(strategyDescription(result, p))}</span>`).join('')}</div>`;
}

/** The card title of a recommendation: its strategy, or what kind of answer it is. */
function recommendationTitle(r: NonNullable<CompareResult['verdict']>['recommendations'][number]): string {
  if (r.strategy) return r.strategy;
  switch (r.decision) {
    case 'depends':
      return 'it depends';
    case 'undecided':
      return 'undecided';
    case 'any':
      return 'any of them';
    default:
      return 'not compared';
  }
}

/** Each decision's mark in the answer: a shape as well as a colour, so it reads without colour. */
const DECISION_MARK: Record<Decision, { mark: string; cls: string }> = {
  on: { mark: '▲', cls: 'on' },
  keep: { mark: '▼', cls: 'keep' },
  same: { mark: '≈', cls: 'same' },
  undecided: { mark: '?', cls: 'undecided' },
  depends: { mark: '◆', cls: 'depends' },
  failed: { mark: '✕', cls: 'failed' },
  'not-compared': { mark: '–', cls: 'same' },
};

/** The answer block: the same lines as the terminal's and report.md's, as one table per group. */
function answerHtml(result: CompareResult): string {
  const a = buildAnswer(result);
  const groups = a.groups
    .map(
      (g) =>
        `<h3>${esc(g.heading)}</h3><table class="answer">${g.lines
          .map((l) => {
            const m = DECISION_MARK[l.decision];
            const why = [l.others, l.why, l.failures].filter(Boolean).join('; ');
            return `<tr class="${m.cls}"><td>${esc(l.level)}</td><td class="decision"><span class="mark">${m.mark}</span> ${esc(l.verdict)}</td><td>${esc(l.effect)}</td><td class="why">${esc(why)}</td></tr>`;
          })
          .join('')}</table>`,
    )
    .join('');
  const note = a.note ? `<p class="note">${esc(a.note)}</p>` : '';
  return `<section class="answer" id="answer"><h2>${esc(a.title)}</h2>${groups}${note}</section>`;
}

/**
 * Renders the comparison as one self-contained HTML page.
 *
 * @example writeFileSync('report.html', renderHtml(result, loadHtmlAssets()))
 */
export function renderHtml(result: CompareResult, assets: HtmlAssets): string {
  const v = result.verdict;
  const target = result.target.embedded
    ? `${result.target.url} — embedded fixture server`
    : result.target.url;
  const kept = result.runsPerCell - result.warmupRuns;
  const done = result.cells.filter((c) => c.status === 'done').length;
  const multiNet = result.axes.net.length > 1;
  const graphs = new Map(
    result.axes.workloads.flatMap((w) => {
      const g = sequenceSection(result, w);
      return g ? [[w.id, g] as const] : [];
    }),
  );
  const sections = result.axes.workloads
    .map((w) => {
      const wv = v?.workloads.find((x) => x.workload === w.id);
      const size =
        w.responseSizeBytes !== undefined ? ` · ${formatBytes(w.responseSizeBytes)} per response` : '';
      return `<section id="w-${esc(w.id)}">
<h2>${esc(w.label)}</h2>
<div class="meta">${esc(w.method)} ${w.paths
        .slice(0, 3)
        .map((p) => `<code>${esc(p)}</code>`)
        .join(
          ', ',
        )}${w.paths.length > 3 ? ` … (${w.paths.length} paths, requested in turn)` : ''}${esc(size)}</div>
${legendHtml(result)}
<div class="grid">
  ${multiNet ? '' : `<div><div id="tp-${esc(w.id)}" class="chart"></div></div>`}
  <div><h3>${w.burst ? 'Burst completion time' : 'Throughput'} relative to ${esc(result.baseline)}, with its 95% interval${w.burst ? ' (below 1× = faster)' : ''}</h3>${ratioSvg(result, w)}${
    w.burst
      ? ''
      : `<h3>Median latency relative to ${esc(result.baseline)}, with its 95% interval (below 1× = faster)</h3>${ratioSvg(result, w, 'latencyP50Ms')}`
  }${INTERVAL_KEY}</div>
</div>
${result.axes.net.map((net) => perNetHtml(result, w, net)).join('\n')}
${wv ? `<h3>In detail</h3><div class="verdict"><p class="headline">${esc(wv.headline)}</p>${wv.paragraphs.map((p) => `<p>${graphLink(esc(p), w, graphs.has(w.id))}</p>`).join('')}</div>` : ''}
${graphs.get(w.id)?.html ?? ''}
<h3>Numbers</h3>${resultsTable(result, w)}
</section>`;
    })
    .join('\n');
  const recs = v
    ? `<div class="cards">${v.recommendations
        .map(
          (r) =>
            `<div class="card rec"><b>${r.client === 'interactive' ? 'Interactive clients' : 'Bulk clients'}: ${esc(recommendationTitle(r))}</b>${esc(r.text)}</div>`,
        )
        .join('')}</div>`
    : '';
  const headlines = v
    ? `<div class="cards">${v.workloads.map((w) => `<div class="card"><a href="#w-${esc(w.workload)}">${esc(w.headline)}</a></div>`).join('')}</div>`
    : '';
  const statusNote =
    result.status === 'complete'
      ? ''
      : `<p class="card"><b>This comparison did not finish (${esc(result.status)}).</b> ${done} of ${result.cells.length} cells finished; the others are marked in the tables.</p>`;
  const settingsRows = compareSettings(result);
  const settingsHtml =
    settingsRows.length === 0
      ? ''
      : `<details class="settings" open><summary>Settings that can decide the outcome (as the runs recorded them)</summary><table>${settingsRows.map((s) => `<tr><th>${esc(s.name)}</th><td>${esc(s.value)}</td></tr>`).join('')}</table></details>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>h2lab compare — ${esc(result.axes.workloads.map((w) => w.label).join(', '))}</title>
<style>${assets.uplotCss}</style><style>${CSS}</style></head>
<body><main>
<h1>${esc(comparedTitle(result))} — what it is worth here <span class="badge ${esc(result.status)}">${esc(result.status)}</span></h1>
<div class="meta">${esc(target)} · network: ${esc(result.axes.net.map((n) => netLabel(result, n)).join(', '))} · ${result.runsPerCell} runs per cell, first ${result.warmupRuns} discarded (${kept} kept) · baseline ${esc(result.baseline)} · ${esc(result.environment.startedAt)} · h2lab ${esc(result.environment.h2labVersion)}, Node ${esc(result.environment.node)}, ${result.environment.cpus} CPUs</div>
${statusNote}
${answerHtml(result)}
${settingsHtml}
${sections}
${v ? '<h2>Verdict by workload, and recommendations</h2>' : ''}
${headlines}
${recs}
<h2>What could distort these numbers</h2>
<ul class="caveats">${(v?.caveats ?? []).map((c) => `<li>${esc(c)}</li>`).join('')}</ul>
${shardsHtml(result)}
<details><summary>Options of this comparison</summary><pre>${esc(JSON.stringify(result.options, null, 2))}</pre></details>
</main>
<script id="h2lab-data" type="application/json">${scriptJson(chartData(result))}</script>
<script>${assets.uplotJs.replace(/<\/script/gi, '<\\/script')}</script>
<script>${CHART_SCRIPT}</script>
${
  graphs.size > 0
    ? `<script id="h2lab-ts" type="application/json">${scriptJson([...graphs.values()].flatMap((g) => g.charts))}</script>
<script>${SEQUENCE_SCRIPT}</script>`
    : ''
}
</body></html>
`;
}

/**
 * A workload's charts over one network, each titled with its link when there are several: the
 * throughput (or burst completion) chart, the latency percentile curves and where the time went.
 */
function perNetHtml(result: CompareResult, w: Workload, net: string): string {
  const multi = result.axes.net.length > 1;
  const key = chartKey(result, w, net);
  const over = multi ? ` — ${esc(netLabel(result, net))}` : '';
  return `${multi ? `<h3 class="net">Over ${esc(net)}</h3><div class="grid"><div><div id="tp-${esc(key)}" class="chart"></div></div></div>` : ''}
<h3>Latency percentile curves${over} (merged histograms of the kept runs; log scale)</h3>
<div class="charts3">${workloadConcurrency(result, w)
    .map((c) => `<div id="lat-${esc(key)}-${c}" class="chart"></div>`)
    .join('')}</div>
<h3>Where the time went${over} (mean per request; bars scaled per concurrency)</h3>${breakdownSvg(result, w, net)}`;
}

/**
 * A sharded comparison's runs, each with its shards side by side: requests, median and p99 latency,
 * how late its barrier released it and how far after the earliest shard (reference clock).
 */
function shardsHtml(result: CompareResult): string {
  const sh = result.sharding;
  if (!sh) return '';
  const ms = (x: number | undefined): string => (x === undefined ? '—' : x.toFixed(2));
  const head = Array.from(
    { length: sh.shards },
    (_, i) => `<th>shard ${i}: requests · p50 · p99 · lag · skew (ms)</th>`,
  ).join('');
  const rows = sh.runs
    .map((r, k) => {
      const cells = r.perShard
        .map(
          (p) =>
            `<td${r.slowShards.includes(p.index) ? ' class="slow"' : ''}>${p.total} · ${ms(p.latencyP50Ms)} · ${ms(p.latencyP99Ms)} · ${ms(p.barrierLagMs)} · ${ms(p.startSkewMs)}${p.error ? ` · ${esc(p.error)}` : ''}</td>`,
        )
        .join('');
      return `<tr><td>${k + 1}</td><td>${esc(r.cell)}</td><td>${r.round}</td><td>${ms(r.skewMs)}</td>${cells}</tr>`;
    })
    .join('');
  return `<details class="shards"><summary>Shards: ${sh.shards} load processes, ${sh.runs.length} merged runs (run ${esc(sh.runId)}; worst start skew ${ms(sh.clock.worstSkewMs)} ms, reference clock ${esc(sh.clock.reference)})</summary><table><tr><th>run</th><th>cell</th><th>round</th><th>skew ms</th>${head}</tr>${rows}</table><ul>${sh.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul></details>`;
}

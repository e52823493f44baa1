/**
 * The charts of a study's report.html, built from the same StudyResult its tables are rendered from:
 * a dot plot per table (h2lab's figure with its 95 % interval beside the field report's figure for
 * the same row), a dot plot of the row-by-row findings, echo's connection lifetimes as a timeline,
 * and uPlot line charts (the library compare's report inlines) for the sweeps: chunks' ratio per
 * concurrency and link, tiles' wall time per backend pool size. Pure functions.
 */
import { formatMs } from '../core/index.ts';
import type { BrowserResult, StudyFinding, StudyResult, StudySection, StudyTable } from '../model/index.ts';
import { baselineStrategy, findStrategy } from '../transport/index.ts';
import { medianBurstRun, waterfallSvg } from './browser-html.ts';
import { escapeHtml as esc } from './html.ts';

/** One figure on a line of a dot plot: a value and, where the run has one, its interval. */
interface Figure {
  v: number;
  lo?: number;
  hi?: number;
}

/** One line of a dot plot: h2lab's figure and the report's for the same row and quantity. */
interface DotLine {
  label: string;
  title: string;
  ours?: Figure;
  report?: Figure;
}

const OURS = '#0072b2';
const REPORT = '#d55e00';

/** "1.17×", "29 ms", "4,056 ms": a figure as the chart's value column prints it. */
function fmt(v: number, unit: string, tick = false): string {
  const a = Math.abs(v);
  const n =
    a >= 100 || (tick && Number.isInteger(v))
      ? Math.round(v).toLocaleString('en-US')
      : a >= 10
        ? v.toFixed(1)
        : a >= 1 || v === 0
          ? v.toFixed(2)
          : v.toPrecision(2);
  return unit === '×' ? `${n}×` : unit ? `${n} ${unit}` : n;
}

/** At most n characters, the middle cut out: rows often differ only at their ends. */
function shorten(s: string, n: number): string {
  if (s.length <= n) return s;
  const head = Math.ceil((n - 1) / 2);
  return `${s.slice(0, head).trimEnd()}…${s.slice(s.length - (n - 1 - head)).trimStart()}`;
}

/** A row's label on at most two lines of at most 36 characters, broken between words. */
function wrapLabel(s: string): string[] {
  if (s.length <= 36) return [s];
  const words = s.split(' ');
  let first = '';
  while (words.length > 0 && `${first} ${words[0]}`.trim().length <= 36)
    first = `${first} ${words.shift()}`.trim();
  if (first === '') return [shorten(s, 36)];
  return [first, shorten(words.join(' '), 36)];
}

/** Tick values for an axis from lo to hi: 1, 1.5, 2, 3, 5, 7 times powers of ten on a log axis, round steps otherwise. */
function ticks(lo: number, hi: number, log: boolean): number[] {
  if (log) {
    const out: number[] = [];
    for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++)
      for (const m of [1, 1.5, 2, 3, 5, 7]) {
        const t = m * 10 ** e;
        if (t >= lo && t <= hi) out.push(Number(t.toPrecision(3)));
      }
    return out;
  }
  const raw = (hi - lo) / 5;
  const p = 10 ** Math.floor(Math.log10(raw || 1));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? p * 10;
  const out: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + 1e-9; t += step) out.push(Number(t.toPrecision(6)));
  return out;
}

/**
 * A dot plot with intervals: one line per row, h2lab's figure as a filled dot on its interval and the
 * report's as a hollow diamond, on a log axis when every figure is positive (a line at 1× for ratios).
 */
export function dotPlotSvg(lines: readonly DotLine[], unit: string, aria: string): string {
  const values = lines.flatMap((l) =>
    [l.ours, l.report].flatMap((f) => (f ? [f.v, f.lo ?? f.v, f.hi ?? f.v] : [])),
  );
  if (values.length === 0) return '';
  const log = values.every((v) => v > 0);
  let lo = Math.min(...values, ...(unit === '×' ? [1] : []));
  let hi = Math.max(...values, ...(unit === '×' ? [1] : []));
  if (log) {
    lo /= 1.25;
    hi *= 1.25;
  } else {
    const pad = (hi - lo) * 0.08 || 1;
    lo = Math.min(0, lo - pad);
    hi += pad;
  }
  const W = 800;
  const left = 265;
  const right = 225;
  const labels = lines.map((l) => wrapLabel(l.label));
  const rowH = labels.some((l) => l.length > 1) ? 34 : 24;
  const top = 18;
  const H = top + lines.length * rowH + 26;
  const span = log ? Math.log(hi) - Math.log(lo) : hi - lo;
  const x = (v: number) => left + ((log ? Math.log(v) - Math.log(lo) : v - lo) / span) * (W - left - right);
  const parts: string[] = [];
  const tickList = ticks(lo, hi, log);
  let lastX = -Infinity;
  for (const t of tickList) {
    const tx = x(t);
    const base = (unit === '×' && t === 1) || (!log && t === 0);
    parts.push(
      `<line x1="${tx.toFixed(1)}" x2="${tx.toFixed(1)}" y1="${top - 4}" y2="${H - 22}" stroke="${base ? '#333' : '#e3e3e3'}"/>`,
    );
    if (tx - lastX >= 36) {
      parts.push(
        `<text x="${tx.toFixed(1)}" y="${H - 8}" text-anchor="middle" class="tick">${esc(fmt(t, unit, true))}</text>`,
      );
      lastX = tx;
    }
  }
  lines.forEach((l, i) => {
    const y = top + i * rowH + rowH / 2;
    const label = labels[i]!;
    parts.push(
      `<text x="${left - 8}" y="${y + 4 - (label.length - 1) * 7}" text-anchor="end" class="lbl"><title>${esc(l.title)}</title>${label
        .map((t, k) => `<tspan x="${left - 8}"${k > 0 ? ' dy="14"' : ''}>${esc(t)}</tspan>`)
        .join('')}</text>`,
    );
    const o = l.ours;
    if (o) {
      if (o.lo !== undefined && o.hi !== undefined)
        parts.push(
          `<line x1="${x(o.lo).toFixed(1)}" x2="${x(o.hi).toFixed(1)}" y1="${y}" y2="${y}" stroke="${OURS}" stroke-width="3" stroke-linecap="round" opacity="0.55"/>`,
        );
      parts.push(`<circle cx="${x(o.v).toFixed(1)}" cy="${y}" r="5" fill="${OURS}"/>`);
    }
    const r = l.report;
    if (r) {
      const rx = x(r.v);
      parts.push(
        `<path d="M${rx.toFixed(1)} ${y - 6}l6 6l-6 6l-6 -6z" fill="#fff" stroke="${REPORT}" stroke-width="2"/>`,
      );
    }
    const words = [
      o
        ? `${fmt(o.v, unit)}${o.lo !== undefined && o.hi !== undefined ? ` (${fmt(o.lo, '')}–${fmt(o.hi, '')})` : ''}`
        : 'not measured',
      r ? `report ${fmt(r.v, unit)}` : '',
    ].filter(Boolean);
    parts.push(`<text x="${W - right + 8}" y="${y + 4}" class="lbl">${esc(words.join(' · '))}</text>`);
  });
  return `<svg class="chart dots" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(aria)}">${parts.join('')}</svg>`;
}

/** The key of the dot plots; `report` false for a chart without the report's figures. */
export function dotKey(report: boolean): string {
  return `<div class="key"><span><b style="color:${OURS}">●</b> h2lab, this run (bar: 95% interval)</span>${report ? `<span><b style="color:${REPORT}">◇</b> the field report</span>` : ''}</div>`;
}

// ---------------------------------------------------------------------------------------------
// Findings: the report's figure and this run's, read from each finding's evidence.

/** Evidence keys of a ratio the finding judges, the report's first; the interval is `lo`/`hi`. */
const RATIO_PAIRS: ReadonlyArray<readonly [string, string]> = [
  ['reportRatio', 'ratio'],
  ['reportGap', 'gap'],
  ['reportSpeedup', 'speedup'],
];

function num(e: StudyFinding['evidence'], k: string): number | undefined {
  const v = e[k];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/**
 * The times a finding quotes on both sides, in ms: `reportXMs` beside `xMs`, `reportXS` (seconds)
 * beside `xS` or `xMs`, `reportS` beside `ms`.
 */
function timePairs(f: StudyFinding): Array<{ name: string; report: number; ours: number }> {
  const out: Array<{ name: string; report: number; ours: number }> = [];
  for (const k of Object.keys(f.evidence)) {
    const m = /^report(\w*?)(Ms|S)$/.exec(k);
    if (!m) continue;
    const rep = num(f.evidence, k);
    if (rep === undefined) continue;
    const stem = m[1] ? m[1][0]!.toLowerCase() + m[1].slice(1) : '';
    const repMs = m[2] === 'S' ? rep * 1000 : rep;
    const inMs = num(f.evidence, stem ? `${stem}Ms` : 'ms');
    const inS = m[2] === 'S' && stem ? num(f.evidence, `${stem}S`) : undefined;
    const ours = inMs ?? (inS !== undefined ? inS * 1000 : undefined);
    if (ours !== undefined) out.push({ name: stem || 'time', report: repMs, ours });
  }
  return out;
}

/** The findings' figures as dot-plot lines, by unit: ratios (×) and times (ms). */
export function findingLines(findings: readonly StudyFinding[]): { ratio: DotLine[]; ms: DotLine[] } {
  const ratio: DotLine[] = [];
  const ms: DotLine[] = [];
  for (const f of findings) {
    const pair = RATIO_PAIRS.find(
      ([r, o]) => num(f.evidence, r) !== undefined && num(f.evidence, o) !== undefined,
    );
    if (pair) {
      const lo = num(f.evidence, 'lo');
      const hi = num(f.evidence, 'hi');
      ratio.push({
        label: f.row,
        title: `${f.row}: report ${f.report}; this run ${f.measured}`,
        report: { v: num(f.evidence, pair[0])! },
        ours: { v: num(f.evidence, pair[1])!, ...(lo !== undefined && hi !== undefined ? { lo, hi } : {}) },
      });
      continue;
    }
    const reportOnly = num(f.evidence, 'reportRatio');
    if (reportOnly !== undefined && f.verdict === 'not-measured') {
      ratio.push({ label: f.row, title: `${f.row}: ${f.measured}`, report: { v: reportOnly } });
      continue;
    }
    const times = timePairs(f);
    for (const t of times)
      ms.push({
        label: times.length > 1 ? `${shorten(f.row, 34)} · ${t.name}` : f.row,
        title: `${f.row} (${t.name}): report ${f.report}; this run ${f.measured}`,
        report: { v: t.report },
        ours: { v: t.ours },
      });
  }
  return { ratio, ms };
}

// ---------------------------------------------------------------------------------------------
// Tables: every numeric column of a section's table, beside the report's column of the same name.

/** "0.98 (0.97–1.00)", "3.13× (1.83–5.48)": a figure with its interval as the tables print it. */
const INTERVAL_CELL =
  /^(-?\d[\d,]*(?:\.\d+)?)×?\s*\((-?\d[\d,]*(?:\.\d+)?)×?\s*[–-]\s*(-?\d[\d,]*(?:\.\d+)?)×?\)$/;
const RANGE_CELL = /^(-?\d[\d,]*(?:\.\d+)?)×?\s*[–-]\s*(-?\d[\d,]*(?:\.\d+)?)×?$/;

function parseNum(s: string): number {
  return Number(s.replace(/,/g, ''));
}

type Column = StudyTable['columns'][number];
type Row = StudyTable['rows'][number];

function figureOf(row: Row, c: Column, next: Column | undefined): Figure | undefined {
  const v = row[c.key];
  if (typeof v === 'number' && Number.isFinite(v)) {
    // A separate interval column right after the value ("95% CI": "0.26–0.42").
    const ci = next ? row[next.key] : undefined;
    const m = typeof ci === 'string' ? RANGE_CELL.exec(ci.trim()) : null;
    return m ? { v, lo: parseNum(m[1]!), hi: parseNum(m[2]!) } : { v };
  }
  if (typeof v === 'string') {
    const m = INTERVAL_CELL.exec(v.trim());
    if (m) return { v: parseNum(m[1]!), lo: parseNum(m[2]!), hi: parseNum(m[3]!) };
  }
  return undefined;
}

type Kind = 'ratio' | 'time' | 'other';

function kindOf(t: StudyTable, c: Column): Kind | undefined {
  const figs = t.rows.map((r) => r[c.key]);
  if (c.unit === '×' || figs.some((v) => typeof v === 'string' && INTERVAL_CELL.test(v.trim())))
    return 'ratio';
  if (!figs.some((v) => typeof v === 'number')) return undefined;
  if (c.unit === 'ms' || c.unit === 's') return 'time';
  return 'other';
}

function toUnit(v: number, from: string | undefined, to: string): number {
  if (from === 's' && to === 'ms') return v * 1000;
  if (from === 'ms' && to === 's') return v / 1000;
  return v;
}

/**
 * A row's first cell as a key to find the report's row: a strategy's name is its HTTP version, so
 * "h1" is the report's "HTTP/1.1" (the registry says which).
 */
function rowKey(v: unknown): string {
  const s = String(v ?? '')
    .toLowerCase()
    .trim();
  const st = findStrategy(s);
  // The baseline and the one-session strategy stand for their protocol; a pool is a row of its own.
  const stands = st && (st.name === baselineStrategy(false)?.name || st.connections.fixed === 1);
  return stands ? st.http.toLowerCase() : s;
}

/** The same row: the same words, or one the other with an aside ("HTTP/1.1 (http://)"). */
function sameRow(a: unknown, b: unknown): boolean {
  const x = rowKey(a);
  const y = rowKey(b);
  return x !== '' && y !== '' && (x === y || x.startsWith(`${y} (`) || y.startsWith(`${x} (`));
}

const MAX_LINES = 30;

/**
 * The numbers of a section's table as dot-plot lines: its ratio columns if it has any (the figures
 * with intervals), else its times, else its other numbers; each line beside the report's figure where
 * the report's table has a row whose first cell names the row (one of its cells, "h1" for "HTTP/1.1")
 * and a column with the same key (or the key
 * before a dash: "lat-node" reads the report's "lat").
 */
export function tableLines(s: StudySection): { unit: string; lines: DotLine[] } {
  const t = s.table;
  const first = t.columns[0]!;
  const kinds = t.columns.map((c, i) => (i === 0 ? undefined : kindOf(t, c)));
  const kind = (['ratio', 'time', 'other'] as const).find((k) => kinds.includes(k));
  if (!kind) return { unit: '', lines: [] };
  let cols = t.columns.filter((_, i) => kinds[i] === kind);
  if (kind === 'other') cols = cols.filter((c) => c.unit === cols[0]!.unit).slice(0, 1);
  const unit = kind === 'ratio' ? '×' : kind === 'time' ? 'ms' : (cols[0]!.unit ?? '');
  // The cells that name a row: the first, then the other words, leaving out a column that is the same
  // in every row and the outcome (the chart shows it).
  const varies = (c: Column) => t.rows.length < 2 || new Set(t.rows.map((r) => r[c.key])).size > 1;
  const labelCols = t.columns.filter(
    (c, i) =>
      (i === 0 && (varies(c) || t.columns.length === 1)) ||
      (i > 0 &&
        kinds[i] === undefined &&
        c.key !== 'outcome' &&
        varies(c) &&
        !t.rows.some((r) => typeof r[c.key] === 'string' && RANGE_CELL.test(String(r[c.key]).trim())) &&
        t.rows.every((r) => typeof r[c.key] !== 'number')),
  );
  const perRow = Math.max(1, Math.floor(MAX_LINES / Math.max(1, t.rows.length)));
  cols = cols.slice(0, perRow);
  const ref = s.reference?.table;
  const lines: DotLine[] = [];
  for (const row of t.rows) {
    const rowLabel = labelCols
      .slice(0, 3)
      .map((c) => {
        const v = row[c.key];
        return typeof v === 'number' ? `${c.label} ${v}` : String(v ?? '');
      })
      .filter((x) => x !== '' && x !== '–')
      .join(' · ');
    const refRow =
      ref?.rows.find((r) =>
        t.columns.some((c) => typeof row[c.key] === 'string' && sameRow(r[ref.columns[0]!.key], row[c.key])),
      ) ?? ref?.rows.find((r) => sameRow(r[ref.columns[0]!.key], row[first.key]));
    for (const c of cols) {
      const at = t.columns.indexOf(c);
      const f = figureOf(row, c, t.columns[at + 1]);
      if (!f) continue;
      const scale = (v: number) => toUnit(v, c.unit, unit);
      const ours: Figure = {
        v: scale(f.v),
        ...(f.lo !== undefined && f.hi !== undefined ? { lo: scale(f.lo), hi: scale(f.hi) } : {}),
      };
      const refCol = ref?.columns.find((r) => r.key === c.key || r.key === c.key.split('-')[0]);
      const rv = refRow && refCol ? refRow[refCol.key] : undefined;
      const report =
        typeof rv === 'number' && Number.isFinite(rv) ? { v: toUnit(rv, refCol?.unit, unit) } : undefined;
      const label = cols.length > 1 ? `${rowLabel} · ${c.label}` : rowLabel || c.label;
      lines.push({ label, title: `${label} (${c.label})`, ours, ...(report ? { report } : {}) });
    }
  }
  return { unit, lines };
}

// ---------------------------------------------------------------------------------------------
// echo: each connection's life on the run clock.

/**
 * echo's lifetime table as a timeline: one bar per connection from open to close, a tick at its last
 * response and a mark at the server's GOAWAY, grouped by case.
 */
export function lifetimeSvg(s: StudySection): string {
  const rows = s.table.rows.filter((r) => typeof r.opened === 'number' && typeof r.closed === 'number');
  if (rows.length === 0) return '';
  const max = Math.max(...rows.map((r) => r.closed as number)) * 1.04 || 1;
  const W = 760;
  const left = 190;
  const right = 150;
  const rowH = 24;
  const top = 10;
  const H = top + rows.length * rowH + 40;
  const x = (v: number) => left + (v / max) * (W - left - right);
  const parts: string[] = [];
  for (const t of ticks(0, max, false)) {
    parts.push(
      `<line x1="${x(t).toFixed(1)}" x2="${x(t).toFixed(1)}" y1="${top}" y2="${H - 36}" stroke="#e3e3e3"/>`,
      `<text x="${x(t).toFixed(1)}" y="${H - 22}" text-anchor="middle" class="tick">${esc(fmt(t, 'ms', true))}</text>`,
    );
  }
  rows.forEach((r, i) => {
    const y = top + i * rowH + rowH / 2;
    const o = r.opened as number;
    const c = r.closed as number;
    const colour = r.by === 'goaway' ? '#9b59b6' : r.by === 'max-age' ? REPORT : OURS;
    parts.push(
      `<text x="${left - 8}" y="${y + 4}" text-anchor="end" class="lbl">${esc(shorten(`${r.case} #${r.id}`, 30))}</text>`,
      `<rect x="${x(o).toFixed(1)}" y="${y - 6}" width="${Math.max(1, x(c) - x(o)).toFixed(1)}" height="12" fill="${colour}" opacity="0.75"><title>${esc(`${r.case} #${r.id}: opened ${o} ms, closed ${c} ms by ${r.by}, ${r.requests} request(s)`)}</title></rect>`,
    );
    if (typeof r.last === 'number')
      parts.push(
        `<line x1="${x(r.last).toFixed(1)}" x2="${x(r.last).toFixed(1)}" y1="${y - 9}" y2="${y + 9}" stroke="#222" stroke-width="2"/>`,
      );
    if (typeof r.goaway === 'number')
      parts.push(
        `<circle cx="${x(r.goaway).toFixed(1)}" cy="${y}" r="4" fill="#fff" stroke="#222" stroke-width="2"/>`,
      );
    parts.push(
      `<text x="${W - right + 8}" y="${y + 4}" class="lbl">${esc(`${fmt(c - o, 'ms')} · ${String(r.by ?? '')}`)}</text>`,
    );
  });
  parts.push(
    `<text x="${left}" y="${H - 4}" class="tick">ms on the run clock · bar: open → closed (colour: what ended it) · | last response · ○ GOAWAY</text>`,
  );
  return `<svg class="chart lifetimes" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="Connection lifetimes">${parts.join('')}</svg>`;
}

// ---------------------------------------------------------------------------------------------
// tiles: the burst of each target as the browser report draws it.

/**
 * tiles' burst section (`burst-NET`) as one waterfall per target, the run with the median wall time,
 * all on one time scale: from `data.burst[NET]` (the browser result), when its runs kept their
 * requests (the saved fixtures drop them to stay small).
 */
export function tilesWaterfalls(r: StudyResult, s: StudySection): string {
  if (r.study !== 'tiles' || !s.id.startsWith('burst-')) return '';
  const b = (r.data.burst as Record<string, BrowserResult | undefined> | undefined)?.[s.id.slice(6)];
  const runs = b?.burst?.runs;
  if (!b || !Array.isArray(runs)) return '';
  const reps = b.targets.flatMap((t) => {
    const run = medianBurstRun(runs, t.id);
    return run && run.requests.length > 0 ? [{ t, run }] : [];
  });
  if (reps.length === 0) return '';
  const scale = Math.max(1, ...reps.flatMap(({ run }) => run.requests.map((q) => q.endMs)));
  return reps
    .map(
      ({ t, run }) =>
        `<h3>Waterfall — ${esc(t.label)} (run ${run.index}, peak ${run.stats.peakInFlight} in flight on ${run.stats.connections} connection${run.stats.connections === 1 ? '' : 's'}, wall ${esc(formatMs(run.stats.wallMs))})</h3><div class="waterfall">${waterfallSvg(run, scale)}</div>`,
    )
    .join('');
}

// ---------------------------------------------------------------------------------------------
// Sweeps drawn by uPlot in the page.

/** A line chart uPlot draws in the page: x values and one series per line. */
export interface LineChart {
  id: string;
  title: string;
  xLabel: string;
  yLabel: string;
  /** Log x axis (concurrency, pool sizes in powers of two). */
  xLog: boolean;
  x: number[];
  series: Array<{ label: string; colour: string; dash?: boolean; values: Array<number | null> }>;
}

const LINE_COLOURS = ['#0072b2', '#009e73', '#cc79a7', '#e69f00', '#56b4e9', '#7f7f7f'];

/**
 * chunks' summary (H1/H2 per concurrency, one column per link, and the report's ratio) as one line per
 * link and a dashed line for the report.
 */
function chunksChart(s: StudySection): LineChart | undefined {
  const t = s.table;
  if (t.columns[0]?.key !== 'c' || t.columns.length < 2) return undefined;
  const ref = s.reference?.table;
  const xs = [
    ...new Set(
      [...t.rows, ...(ref?.rows ?? [])].map((r) => r.c).filter((c): c is number => typeof c === 'number'),
    ),
  ].sort((a, b) => a - b);
  const at = (rows: readonly Row[], c: number, key: string) => {
    const v = rows.find((r) => r.c === c)?.[key];
    return typeof v === 'number' ? v : null;
  };
  const series: LineChart['series'] = t.columns.slice(1).map((col, i) => ({
    label: col.label,
    colour: LINE_COLOURS[i % LINE_COLOURS.length]!,
    values: xs.map((c) => at(t.rows, c, col.key)),
  }));
  if (ref?.columns.some((c) => c.key === 'ratio'))
    series.push({
      label: 'the report',
      colour: REPORT,
      dash: true,
      values: xs.map((c) => at(ref.rows, c, 'ratio')),
    });
  return {
    id: `lc-${s.id}`,
    title: 'H1/H2 time ratio per concurrency, one line per link (below 1: HTTP/1.1 faster)',
    xLabel: 'requests in flight (log scale)',
    yLabel: 'H1/H2',
    xLog: true,
    x: xs,
    series,
  };
}

/** tiles' pool sweep: wall time of each protocol and the CPU floor, per backend pool size. */
function poolChart(s: StudySection): LineChart | undefined {
  const t = s.table;
  const keys = t.columns.map((c) => c.key);
  if (keys[0] !== 'pool' || !keys.includes('h1wall') || !keys.includes('h2wall')) return undefined;
  const rows = [...t.rows]
    .filter((r) => typeof r.pool === 'number')
    .sort((a, b) => (a.pool as number) - (b.pool as number));
  const col = (k: string) => rows.map((r) => (typeof r[k] === 'number' ? (r[k] as number) : null));
  return {
    id: `lc-${s.id}`,
    title: 'Wall time of 121 tiles per backend pool size',
    xLabel: 'workers in the backend pool (log scale)',
    yLabel: 'ms',
    xLog: true,
    x: rows.map((r) => r.pool as number),
    series: [
      { label: 'HTTP/1.1 wall', colour: '#e69f00', values: col('h1wall') },
      { label: 'HTTP/2 wall', colour: OURS, values: col('h2wall') },
      ...(keys.includes('floor')
        ? [{ label: 'CPU floor', colour: '#7f7f7f', dash: true, values: col('floor') }]
        : []),
    ],
  };
}

/** The line chart a section gets beside its dot plot, if its table is a sweep h2lab knows. */
export function sectionLineChart(r: StudyResult, s: StudySection): LineChart | undefined {
  if (r.study === 'chunks' && s.id === 'summary') return chunksChart(s);
  if (r.study === 'tiles' && s.id.startsWith('sweep')) return poolChart(s);
  return undefined;
}

/** Client-side: draws the line charts from the embedded data with uPlot. Plain ES2017, no modules. */
export const LINE_CHART_SCRIPT = `
(function(){
  var charts = JSON.parse(document.getElementById('h2lab-charts').textContent);
  function fmt(v){ return v == null ? '' : Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2); }
  charts.forEach(function(c){
    var el = document.getElementById(c.id);
    if (!el) return;
    var width = Math.max(300, Math.min(720, el.clientWidth || 720));
    var series = [{ label: c.xLabel }];
    var rows = [c.x];
    c.series.forEach(function(s){
      series.push({ label: s.label, stroke: s.colour, width: 2, dash: s.dash ? [6, 4] : undefined, points: { size: 7, fill: s.colour }, value: function(u, v){ return fmt(v); } });
      rows.push(s.values);
    });
    new uPlot({ width: width, height: 280, title: c.title, series: series,
      scales: { x: { time: false, distr: c.xLog ? 3 : 1, log: 2 } },
      axes: [ { label: c.xLabel, splits: function(){ return c.x; }, values: function(u, vals){ return vals.map(function(v){ return String(v); }); } },
              { label: c.yLabel, size: 60, values: function(u, vals){ return vals.map(fmt); } } ],
      legend: { show: true, live: false } }, rows, el);
  });
  document.body.setAttribute('data-charts', 'drawn');
})();
`;

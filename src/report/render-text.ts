/**
 * Text renderers of a comparison: the terminal table and Markdown. Pure functions of the result.
 * Both show the same rows (one per workload × concurrency × strategy) built by {@link resultRows}.
 */
import { formatBytes, formatMs } from '../core/index.ts';
import type { CellResult, CompareResult, Comparison } from '../model/index.ts';
import { answerLines, buildAnswer } from './answer.ts';
import { cellFailures } from './failures.ts';
import { comparedTitle, compareSettings, netLabel, settingsText } from './settings.ts';
import { fitTable, wrapText } from './text.ts';
import { comparisonOf, formatRatio, formatRps, OUTCOME_WORDS } from './verdict.ts';

/** One row of the results table, already in words. */
interface ResultRow {
  workload: string;
  net: string;
  concurrency: string;
  strategy: string;
  rps: string;
  throughput: string;
  p50: string;
  p99: string;
  ratio: string;
  outcome: string;
  /** True for a burst workload's row: its table shows the completion time instead of req/s. */
  burst: boolean;
  /** True for an open-loop workload's row (`--rate`): its level is the rate, requests per second. */
  rate: boolean;
  /** Burst: completion time median (min–max) over the kept runs. */
  completion: string;
  /** Burst: time to the first response, median. */
  firstResponse: string;
  /** Burst: connections opened inside the timed period, median per run. */
  opened: string;
  /** Failed requests with their statuses and classes ("190 of 3,800: reset ×190"), or empty. */
  failed: string;
}

/** "4,210 (4,100–4,300)". */
function range(s: { median: number; min: number; max: number }, f: (n: number) => string): string {
  return `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
}

function statusText(cell: CellResult): string {
  if (cell.status === 'done' && !cell.stats && cell.cutOffRuns)
    return `cut off: ${cell.cutOffRuns} run${cell.cutOffRuns === 1 ? '' : 's'} reached the request timeout`;
  switch (cell.status) {
    case 'not-offered':
      return 'not offered by the server';
    case 'failed':
      return 'failed';
    case 'interrupted':
      return cell.runs.length === 0 ? 'not run (interrupted)' : 'interrupted';
    case 'pending':
    case 'running':
      return 'not finished';
    default:
      return '';
  }
}

/** "1.25× (1.21–1.28)". */
function ratioText(c: Comparison): string {
  const i = c.interval;
  return Number.isFinite(i.ratio)
    ? `${formatRatio(i.ratio)} (${formatRatio(i.lo).slice(0, -1)}–${formatRatio(i.hi).slice(0, -1)})`
    : '—';
}

/** The metric a table's ratio column shows: the completion time for bursts, else throughput. */
export function primaryMetric(burst: boolean): Comparison['metric'] {
  return burst ? 'burstCompletionMs' : 'rps';
}

/** The table rows of a comparison, in matrix order. */
export function resultRows(result: CompareResult): ResultRow[] {
  const rows: ResultRow[] = [];
  const labels = new Map(result.axes.workloads.map((w) => [w.id, w.label]));
  const bursts = new Set(result.axes.workloads.filter((w) => w.burst).map((w) => w.id));
  const rates = new Set(result.axes.workloads.filter((w) => w.rateRps).map((w) => w.id));
  for (const cell of result.cells) {
    const s = cell.stats;
    const burst = bursts.has(cell.workload);
    const metric = primaryMetric(burst);
    const cmp = comparisonOf(result, cell.workload, cell.concurrency, cell.net, cell.protocol, metric);
    const status = statusText(cell);
    const bc = s?.burstCompletionMs;
    const bf = s?.burstFirstResponseMs;
    rows.push({
      burst,
      rate: rates.has(cell.workload),
      completion: bc && bc.n > 0 ? range(bc, formatMs) : status,
      firstResponse: bf && bf.n > 0 ? formatMs(bf.median) : '',
      opened: s?.burstConnectionsOpened !== undefined ? String(s.burstConnectionsOpened) : '',
      workload: labels.get(cell.workload) ?? cell.workload,
      net: cell.net,
      concurrency: String(cell.concurrency),
      strategy: cell.protocol,
      rps: s ? range(s.rps, formatRps) : status,
      throughput: s ? `${formatBytes(s.bytesPerSec.median)}/s` : '',
      p50: s ? formatMs(s.latencyP50Ms.median) : '',
      p99: s ? formatMs(s.latencyP99Ms.median) : '',
      ratio: cell.protocol === result.baseline ? (s ? 'baseline' : '') : cmp ? ratioText(cmp) : '',
      outcome: cmp ? OUTCOME_WORDS[cmp.outcome] : s && status ? status : '',
      failed: cellFailures(cell)?.table ?? '',
    });
  }
  return rows;
}

/** The first line: target, networks, runs, baseline. */
function titleLine(result: CompareResult): string {
  const target = result.target.embedded
    ? `${result.target.url} (embedded fixture server)`
    : result.target.url;
  const kept = result.runsPerCell - result.warmupRuns;
  const o = result.options as { durationMs?: number };
  const burstOnly = result.axes.workloads.every((w) => w.burst);
  const each = burstOnly
    ? 'one burst each on fresh connections, '
    : o.durationMs !== undefined
      ? `${o.durationMs} ms each${lengthened(result) ? ', longer over long links' : ''}, `
      : '';
  return `h2lab compare — ${target} · ${result.axes.net.map((n) => netLabel(result, n)).join(', ')} · ${result.runsPerCell} runs per cell (${each}${kept} kept) · baseline ${result.baseline}`;
}

/** True when compare lengthened some timed run beyond --duration (the settings' run length row). */
function lengthened(result: CompareResult): boolean {
  const asked = Number(result.options.durationMs);
  return result.cells.some((c) =>
    c.runs.some((r) => Number((r.options as { durationMs?: number }).durationMs) > asked),
  );
}

/** The settings block under its title, or nothing. */
function settingsBlock(result: CompareResult, width: number): string[] {
  const settings = compareSettings(result);
  if (settings.length === 0) return [];
  return [
    'Settings that can decide the outcome (as the runs recorded them):',
    ...settingsText(settings, '  ', width),
  ];
}

function statusLine(result: CompareResult): string | undefined {
  if (result.status === 'complete') return undefined;
  const done = result.cells.filter((c) => c.status === 'done').length;
  const what = result.status === 'running' ? 'still running (or the process died)' : result.status;
  return `Comparison ${what}: ${done} of ${result.cells.length} cells finished.`;
}

type Column = [Exclude<keyof ResultRow, 'burst' | 'rate'>, string];

const COLUMNS: Column[] = [
  ['concurrency', 'conc'],
  ['strategy', 'strategy'],
  ['rps', 'req/s median (min–max)'],
  ['throughput', 'bytes/s'],
  ['p50', 'p50'],
  ['p99', 'p99'],
  ['ratio', 'req/s vs baseline (95% CI)'],
  ['outcome', 'verdict'],
];

/**
 * A burst workload's table: N, the time until the last response (what is compared), the first
 * response, connections opened in the timed period, and the time ratio (below 1× = faster).
 */
const BURST_COLUMNS: Column[] = [
  ['concurrency', 'burst N'],
  ['strategy', 'strategy'],
  ['completion', 'completion median (min–max)'],
  ['firstResponse', 'first response'],
  ['opened', 'conns opened in timed period'],
  ['ratio', 'time vs baseline (95% CI)'],
  ['outcome', 'verdict'],
];

/** The columns of a table of rows (all of one workload); "failed requests" where some failed. */
export function columnsFor(rows: readonly ResultRow[]): Column[] {
  const failed: Column[] = rows.some((r) => r.failed) ? [['failed', 'failed requests']] : [];
  if (rows[0]?.burst) return [...BURST_COLUMNS, ...failed];
  // Open loop: the level is the asked rate; the req/s column is what was achieved.
  return [...(rows[0]?.rate ? [['concurrency', 'rate'] as Column, ...COLUMNS.slice(1)] : COLUMNS), ...failed];
}

/** Options of {@link renderTerminal}. */
interface TerminalOptions {
  /** Line width: tables are cut into column groups and words wrapped to fit it. Default 80. */
  width?: number;
  /** The title and the answer alone (compare --brief). */
  brief?: boolean;
}

/**
 * The terminal report: the title and the answer first (what to decide, {@link buildAnswer}), then the
 * settings, one aligned table per workload, the verdict, recommendations and caveats. `brief`: the
 * title and the answer alone.
 */
export function renderTerminal(result: CompareResult, options: TerminalOptions = {}): string {
  const width = options.width ?? 80;
  const out: string[] = [wrapText(titleLine(result), width, '')];
  const st = statusLine(result);
  if (st) out.push(st);
  out.push('', ...answerLines(buildAnswer(result), width));
  if (options.brief) return `${out.join('\n')}\n`;
  out.push('', ...settingsBlock(result, width));
  const rows = resultRows(result);
  const groups = new Map<string, ResultRow[]>();
  for (const r of rows) {
    const k = result.axes.net.length > 1 ? `${r.workload} · ${r.net}` : r.workload;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  for (const [title, group] of groups) {
    out.push('', title);
    const cols = columnsFor(group);
    let last = '';
    const cells = group.map((r) => {
      const conc = r.concurrency === last ? '' : r.concurrency;
      last = r.concurrency;
      return cols.map(([k]) => (k === 'concurrency' ? conc : r[k]));
    });
    // Concurrency and strategy label every row, so a table cut to fit repeats both.
    out.push(
      ...fitTable(
        cols.map(([, h]) => h),
        cells,
        width,
        '  ',
        2,
      ),
    );
  }
  const v = result.verdict;
  if (v) {
    out.push('', 'Verdict');
    for (const w of v.workloads) {
      out.push(wrapText(w.headline, width, '  '));
      for (const p of w.paragraphs) out.push(wrapText(p, width, '    '));
    }
    out.push('', 'Recommendation');
    for (const r of v.recommendations) out.push(wrapText(r.text, width, '  '));
    if (v.caveats.length > 0) {
      out.push('', 'What could distort these numbers');
      for (const c of v.caveats) out.push(wrapText(`- ${c}`, width, '  '));
    }
  }
  const ex = expectationLines(result);
  if (ex.length > 0) {
    out.push('', ex[0]!);
    for (const l of ex.slice(1)) out.push(wrapText(l, width, '    ').replace(/^ {4}/, '  '));
  }
  return `${out.join('\n')}\n`;
}

/**
 * The `--expect` conditions, one line each: "met|FAILED|undecided: CONDITION — why", under a title
 * that says what an undecided one does to the exit status.
 */
function expectationLines(result: CompareResult): string[] {
  const ex = result.expectations;
  if (!ex || ex.length === 0) return [];
  const undecidedFails = (result.options as { expectUndecided?: string }).expectUndecided === 'fail';
  const word = { met: 'met', failed: 'FAILED', undecided: 'undecided' } as const;
  return [
    `Expectations (--expect; undecided ${undecidedFails ? 'fails' : 'does not fail'} the gate)`,
    ...ex.map((e) => `${word[e.status]}: ${e.condition} — ${e.reason}`),
  ];
}

function mdEscape(s: string): string {
  return s.replace(/\|/g, '\\|');
}

/** The Markdown report: the same tables and words, plus where the time went. */
export function renderMarkdown(result: CompareResult): string {
  const out: string[] = [
    `# ${comparedTitle(result)} — h2lab compare`,
    '',
    titleLine(result).replace(/^h2lab compare — /, 'Target: '),
  ];
  const st0 = statusLine(result);
  if (st0) out.push('', `> **${st0}**`);
  // The answer, line for line as in the terminal: headings bold, decisions as list items.
  const answer = buildAnswer(result);
  out.push('', `## ${answer.title}`, '');
  for (const g of answer.groups) {
    out.push(`**${mdEscape(g.heading)}**`, '');
    for (const l of g.lines) out.push(`- ${mdEscape(l.text)}`);
    out.push('');
  }
  if (answer.note) out.push(`_${mdEscape(answer.note)}_`, '');
  const settings = compareSettings(result);
  if (settings.length > 0) {
    out.push('**Settings that can decide the outcome** (as the runs recorded them):', '');
    for (const s of settings) out.push(`- ${s.name}: ${mdEscape(s.value)}`);
  }
  const v = result.verdict;
  if (v) {
    out.push('', '## Verdict', '');
    for (const w of v.workloads) {
      out.push(`**${mdEscape(w.headline)}**`, '');
      for (const p of w.paragraphs) out.push(p, '');
    }
    out.push('## Recommendation', '');
    for (const r of v.recommendations) out.push(`- ${r.text}`);
  }
  const rows = resultRows(result);
  for (const w of result.axes.workloads) {
    for (const net of result.axes.net) {
      const group = rows.filter((r) => r.workload === w.label && r.net === net);
      if (group.length === 0) continue;
      const cols = columnsFor(group);
      out.push('', `## ${w.label}${result.axes.net.length > 1 ? ` · ${net}` : ''}`, '');
      out.push(`| ${cols.map(([, h]) => h).join(' | ')} |`, `|${cols.map(() => '---').join('|')}|`);
      for (const r of group) out.push(`| ${cols.map(([k]) => mdEscape(r[k])).join(' | ')} |`);
      const cells = result.cells.filter((c) => c.workload === w.id && c.net === net && c.stats);
      if (cells.length > 0) {
        out.push('', 'Where the time went (mean per request, ms):', '');
        out.push(
          '| conc | strategy | client queue | server queue | server work | wire | transfer | total |',
          '|---|---|---|---|---|---|---|---|',
        );
        for (const c of cells) {
          const b = c.stats!.breakdownMs;
          const f = (x: number | undefined) => (x === undefined ? '—' : x.toFixed(2));
          out.push(
            `| ${c.concurrency} | ${c.protocol} | ${f(b.clientQueue)} | ${f(b.serverQueue)} | ${f(b.serverService)} | ${f(b.wire)} | ${f(b.transfer)} | ${f(b.total)} |`,
          );
        }
      }
    }
  }
  if (v && v.caveats.length > 0) {
    out.push('', '## What could distort these numbers', '');
    for (const c of v.caveats) out.push(`- ${c}`);
  }
  const ex = expectationLines(result);
  if (ex.length > 0) {
    out.push('', `## ${ex[0]}`, '');
    for (const l of ex.slice(1)) out.push(`- ${mdEscape(l)}`);
  }
  return `${out.join('\n')}\n`;
}

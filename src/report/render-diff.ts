/**
 * Renderers of two saved comparisons side by side (`h2lab report before.json after.json`). Pure.
 */

import { formatMs } from '../core/index.ts';
import type { DiffResult, DiffRow } from '../model/index.ts';
import { escapeHtml } from './html.ts';
import { formatRatio, formatRps } from './verdict.ts';

const METRIC_NAME = {
  rps: 'req/s',
  latencyP50Ms: 'p50',
  latencyP99Ms: 'p99',
  burstCompletionMs: 'burst completion',
} as const;
const HEAD = [
  'workload',
  'conc',
  'strategy',
  'metric',
  'before',
  'after',
  'after/before (95% CI)',
  'verdict',
];

function cellsOf(r: DiffRow, sameSetup: boolean): string[] {
  const f = r.metric === 'rps' ? formatRps : formatMs;
  const i = r.interval;
  const outcome =
    (r.outcome === 'better' || r.outcome === 'worse') && sameSetup
      ? 'differed (same setup: drift)'
      : r.outcome === 'better'
        ? 'improved'
        : r.outcome === 'worse'
          ? 'worse'
          : r.outcome === 'insufficient'
            ? 'too few runs'
            : r.outcome === 'undecided'
              ? 'undecided'
              : 'no clear difference';
  return [
    r.workloadLabel + (r.net !== 'loopback' ? ` · ${r.net}` : ''),
    String(r.concurrency),
    r.protocol,
    METRIC_NAME[r.metric],
    f(r.before.median),
    f(r.after.median),
    `${formatRatio(i.ratio)} (${formatRatio(i.lo).slice(0, -1)}–${formatRatio(i.hi).slice(0, -1)})`,
    outcome,
  ];
}

function title(d: DiffResult): string {
  return `h2lab report — ${d.after.label} (${d.after.startedAt}) against ${d.before.label} (${d.before.startedAt})`;
}

/** Terminal table and summary. */
export function renderDiffTerminal(d: DiffResult): string {
  const rows = d.rows.map((r) => cellsOf(r, d.sameSetup));
  const widths = HEAD.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `  ${cells.map((c, i) => c.padEnd(widths[i]!)).join('  ')}`.trimEnd();
  return `${[title(d), '', line(HEAD), ...rows.map(line), '', 'Summary', ...d.summary.map((s) => `  - ${s}`)].join('\n')}\n`;
}

/** Markdown table and summary. */
export function renderDiffMarkdown(d: DiffResult): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  return `${[
    `# ${title(d)}`,
    '',
    ...d.summary.map((s) => `- ${s}`),
    '',
    `| ${HEAD.join(' | ')} |`,
    `|${HEAD.map(() => '---').join('|')}|`,
    ...d.rows.map((r) => `| ${cellsOf(r, d.sameSetup).map(esc).join(' | ')} |`),
  ].join('\n')}\n`;
}

/** A small self-contained HTML page (no charts: a table and the summary). */
export function renderDiffHtml(d: DiffResult): string {
  const esc = escapeHtml;
  const color = {
    better: '#1a7f37',
    worse: '#cf222e',
    'no-clear-difference': '#656d76',
    undecided: '#9a6700',
    insufficient: '#999',
  } as const;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title(d))}</title>
<style>body{font:15px/1.5 -apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:28px 32px;color:#1f2328}table{border-collapse:collapse;font-size:13px;font-variant-numeric:tabular-nums}th,td{padding:4px 10px;border-bottom:1px solid #d8dee4;text-align:left}th{background:#f6f8fa}</style></head>
<body><h1>${esc(title(d))}</h1><ul>${d.summary.map((s) => `<li>${esc(s)}</li>`).join('')}</ul>
<table><thead><tr>${HEAD.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${d.rows
    .map(
      (r) =>
        `<tr>${cellsOf(r, d.sameSetup)
          .map(
            (c, i) =>
              `<td${i === 7 ? ` style="color:${color[r.outcome]};font-weight:600"` : ''}>${esc(c)}</td>`,
          )
          .join('')}</tr>`,
    )
    .join('')}</tbody></table></body></html>
`;
}

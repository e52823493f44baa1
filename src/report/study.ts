/**
 * Renderers of a study result (`h2lab study NAME`): the terminal text, Markdown and a self-contained
 * HTML page. Each section shows h2lab's table and, beside it, the field report's table for the same
 * question; the explanation the study derived from its measurements closes the page. Pure functions.
 */
import { formatMs } from '../core/index.ts';
import type { StudyFinding, StudyResult, StudySection, StudyTable } from '../model/index.ts';
import { escapeHtml } from './html.ts';
import { fitTable, wrapText } from './text.ts';

/** A table cell as text: numbers with at most three significant decimals, null as a dash. */
export function formatStudyValue(v: string | number | null | undefined): string {
  if (v === null || v === undefined) return '–';
  if (typeof v === 'string') return v;
  if (!Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  if (a >= 100) return Math.round(v).toLocaleString('en-US');
  if (a >= 10) return v.toFixed(1);
  if (a >= 1) return v.toFixed(2);
  return v.toPrecision(2);
}

function heading(c: StudyTable['columns'][number]): string {
  return c.unit ? `${c.label} (${c.unit})` : c.label;
}

function cells(t: StudyTable): { head: string[]; rows: string[][] } {
  return {
    head: t.columns.map(heading),
    rows: t.rows.map((r) => t.columns.map((c) => formatStudyValue(r[c.key]))),
  };
}

function statusWords(r: StudyResult): string {
  const done = r.cells.filter((c) => c.status === 'done').length;
  const failed = r.cells.filter((c) => c.status === 'failed').length;
  const parts = [`${done} cell${done === 1 ? '' : 's'} done`];
  if (failed > 0) parts.push(`${failed} failed`);
  if (r.durationMs !== undefined) parts.push(`in ${formatMs(r.durationMs)}`);
  return parts.join(', ');
}

const VERDICT_WORD: Record<StudyFinding['verdict'], string> = {
  agrees: 'agrees',
  differs: 'differs',
  'not-measured': 'not measured',
};

/** A finding as one paragraph: the row, the two figures, the verdict and the mechanism. */
export function findingText(f: StudyFinding): string {
  return `[${VERDICT_WORD[f.verdict]}] ${f.row} — report: ${f.report}; this run: ${f.measured}${f.difference ? ` (${f.difference})` : ''}. ${f.explanation}`;
}

const FINDINGS_TITLE = 'Row by row against the report';

/** Options of {@link renderStudyText}. */
export interface StudyTextOptions {
  /** Line width for the paragraphs. Default 100. */
  width?: number;
}

/** The terminal rendering: every section's table beside the report's, then the explanation. */
export function renderStudyText(r: StudyResult, options: StudyTextOptions = {}): string {
  const width = options.width ?? 100;
  const out: string[] = [
    wrapText(`h2lab study ${r.study} (${r.mode}) — ${r.title}`, width, ''),
    wrapText(`Question: ${r.question}`, width, '  '),
    wrapText(`Reruns ${r.source} · ${statusWords(r)} · ${r.status}`, width, '  '),
  ];
  for (const s of r.sections) {
    out.push('', s.title);
    if (s.note) out.push(wrapText(s.note, width, '  '));
    const t = cells(s.table);
    out.push('  h2lab, measured here:', ...fitTable(t.head, t.rows, width, '    '));
    if (s.reference) {
      const ref = cells(s.reference.table);
      out.push(`  ${s.reference.source}:`, ...fitTable(ref.head, ref.rows, width, '    '));
      if (s.reference.note) out.push(wrapText(s.reference.note, width, '    '));
    }
  }
  if (r.findings.length > 0) {
    out.push('', FINDINGS_TITLE);
    for (const f of r.findings) out.push(wrapText(`- ${findingText(f)}`, width, '  '));
  }
  if (r.explanation.length > 0) {
    out.push('', 'What the measurements say');
    for (const p of r.explanation) out.push(wrapText(p, width, '  '));
  }
  const failed = r.cells.filter((c) => c.status !== 'done');
  if (failed.length > 0) {
    out.push('', 'Cells not measured');
    for (const c of failed)
      out.push(wrapText(`- ${c.id}: ${c.status}${c.reason ? ` (${c.reason})` : ''}`, width, '  '));
  }
  if (r.warnings.length > 0) {
    out.push('', 'Warnings');
    for (const w of r.warnings) out.push(wrapText(`- ${w}`, width, '  '));
  }
  if (r.error) out.push('', `Error ${r.error.code}: ${r.error.message}`);
  return `${out.join('\n')}\n`;
}

function mdEscape(s: string): string {
  return s.replace(/\|/g, '\\|');
}

function mdTable(t: StudyTable): string[] {
  const c = cells(t);
  return [
    `| ${c.head.map(mdEscape).join(' | ')} |`,
    `|${c.head.map(() => '---').join('|')}|`,
    ...c.rows.map((row) => `| ${row.map(mdEscape).join(' | ')} |`),
  ];
}

/** The Markdown rendering (report.md), same content as the terminal's. */
export function renderStudyMarkdown(r: StudyResult): string {
  const out: string[] = [
    `# h2lab study ${r.study}: ${r.title}`,
    '',
    `**Question:** ${r.question}`,
    '',
    `Reruns ${r.source}. Mode ${r.mode}; ${statusWords(r)}; status ${r.status}. h2lab ${r.environment.h2labVersion}, Node ${r.environment.node}, ${r.environment.cpus} CPUs, ${r.environment.startedAt}.`,
  ];
  for (const s of r.sections) {
    out.push('', `## ${s.title}`, '');
    if (s.note) out.push(s.note, '');
    out.push('h2lab, measured here:', '', ...mdTable(s.table));
    if (s.reference) {
      out.push('', `${s.reference.source}:`, '', ...mdTable(s.reference.table));
      if (s.reference.note) out.push('', s.reference.note);
    }
  }
  if (r.findings.length > 0)
    out.push('', `## ${FINDINGS_TITLE}`, '', ...r.findings.map((f) => `- ${findingText(f)}`));
  if (r.explanation.length > 0)
    out.push('', '## What the measurements say', '', ...r.explanation.flatMap((p) => [p, '']));
  if (r.warnings.length > 0) out.push('', '## Warnings', '', ...r.warnings.map((w) => `- ${w}`));
  if (r.error) out.push('', `**Error ${r.error.code}:** ${r.error.message}`);
  return `${out.join('\n').trimEnd()}\n`;
}

function htmlTable(t: StudyTable, cls: string): string {
  const c = cells(t);
  return `<table class="${cls}"><thead><tr>${c.head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${c.rows
    .map(
      (row) =>
        `<tr>${row.map((v) => `<td${v.length > 24 ? ' class="text"' : ''}>${escapeHtml(v)}</td>`).join('')}</tr>`,
    )
    .join('')}</tbody></table>`;
}

function sectionHtml(s: StudySection): string {
  const ours = `<div><h3>h2lab, measured here</h3>${htmlTable(s.table, 'ours')}</div>`;
  const ref = s.reference
    ? `<div><h3>${escapeHtml(s.reference.source)}</h3>${htmlTable(s.reference.table, 'ref')}${s.reference.note ? `<p class="note">${escapeHtml(s.reference.note)}</p>` : ''}</div>`
    : '';
  return `<section id="s-${escapeHtml(s.id)}"><h2>${escapeHtml(s.title)}</h2>${s.note ? `<p class="note">${escapeHtml(s.note)}</p>` : ''}<div class="pair">${ours}${ref}</div></section>`;
}

const CSS = `body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
main{max-width:1200px;margin:0 auto;padding:16px 24px}h1{font-size:22px}h2{font-size:18px;margin-top:28px}
h3{font-size:13px;color:#555;margin:8px 0 4px}.meta,.note{color:#555}
.pair{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
.pair>div{flex:0 1 auto;min-width:0;max-width:100%;overflow-x:auto}
table{border-collapse:collapse;background:#fff}th,td{border:1px solid #ddd;padding:3px 8px;text-align:right}td{white-space:nowrap}
td.text{white-space:normal;min-width:14em;text-align:left}
.findings{background:#fff;padding:4px 16px}.finding{border-left:4px solid #999;padding:0 12px;margin:10px 0}
.finding p{margin:4px 0}.finding.agrees{border-color:#2a7}.finding.differs{border-color:#c80}
.verdict{font-size:12px;font-weight:600;text-transform:uppercase;color:#555}
th:first-child,td:first-child{text-align:left}table.ref{background:#f3f3f8}
.explain{background:#fff;border-left:4px solid #2a7;padding:8px 16px}.warn{color:#a40}
.badge{font-size:12px;padding:2px 8px;border-radius:8px;background:#ddd;vertical-align:middle}
.badge.complete{background:#cfc}.badge.failed{background:#fcc}.badge.interrupted{background:#fec}`;

function findingHtml(f: StudyFinding): string {
  return `<div class="finding ${f.verdict}" id="f-${escapeHtml(f.id)}"><p><span class="verdict">${escapeHtml(VERDICT_WORD[f.verdict])}</span> <b>${escapeHtml(f.row)}</b> — report: ${escapeHtml(f.report)}; this run: ${escapeHtml(f.measured)}${f.difference ? ` (${escapeHtml(f.difference)})` : ''}.</p><p>${escapeHtml(f.explanation)}</p></div>`;
}

/** The HTML rendering (report.html): self-contained, no script, no network. */
export function renderStudyHtml(r: StudyResult): string {
  const failed = r.cells.filter((c) => c.status !== 'done');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>h2lab study ${escapeHtml(r.study)} — ${escapeHtml(r.title)}</title><style>${CSS}</style></head>
<body><main>
<h1>h2lab study ${escapeHtml(r.study)}: ${escapeHtml(r.title)} <span class="badge ${escapeHtml(r.status)}">${escapeHtml(r.status)}</span></h1>
<p><b>Question:</b> ${escapeHtml(r.question)}</p>
<p class="meta">Reruns ${escapeHtml(r.source)} · ${escapeHtml(r.mode)} mode · ${escapeHtml(statusWords(r))} · h2lab ${escapeHtml(r.environment.h2labVersion)}, Node ${escapeHtml(r.environment.node)}, ${r.environment.cpus} CPUs · ${escapeHtml(r.environment.startedAt)}</p>
${r.error ? `<p class="warn"><b>Error ${escapeHtml(r.error.code)}:</b> ${escapeHtml(r.error.message)}</p>` : ''}
${r.findings.length > 0 ? `<div class="findings"><h2>${FINDINGS_TITLE}</h2>${r.findings.map(findingHtml).join('')}</div>` : ''}
${r.explanation.length > 0 ? `<div class="explain"><h2>What the measurements say</h2>${r.explanation.map((p) => `<p>${escapeHtml(p)}</p>`).join('')}</div>` : ''}
${r.sections.map(sectionHtml).join('\n')}
${failed.length > 0 ? `<h2>Cells not measured</h2><ul>${failed.map((c) => `<li>${escapeHtml(c.id)}: ${escapeHtml(c.status)}${c.reason ? ` — ${escapeHtml(c.reason)}` : ''}</li>`).join('')}</ul>` : ''}
${r.warnings.length > 0 ? `<h2>Warnings</h2><ul class="warn">${r.warnings.map((w) => `<li>${escapeHtml(w)}</li>`).join('')}</ul>` : ''}
<details><summary>Options of this study</summary><pre>${escapeHtml(JSON.stringify(r.options, null, 2))}</pre></details>
</main></body></html>
`;
}

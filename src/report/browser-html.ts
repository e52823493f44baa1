/**
 * The HTML report of a browser result: tables, findings, and a waterfall of the burst per target,
 * drawn as inline SVG. Self-contained (no script, no network). Pure: `(result) → string`.
 *
 *   request ▏░░░░░░stalled░░░░░░▕████ on the wire ████▏    (one row per request, in issue order;
 *                                        ▲ headers        colour = connection)
 */

import { formatMs } from '../core/index.ts';
import type { BrowserRequest, BrowserResult, BurstRun } from '../model/index.ts';
import { cancelRows } from './browser-text.ts';
import { escapeHtml } from './html.ts';

const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22'];

/** The kept run whose wall time is the median of its target (the one a waterfall should show). */
export function medianBurstRun(runs: readonly BurstRun[], target: string): BurstRun | undefined {
  const kept = runs
    .filter((r) => r.target === target && !r.discarded)
    .sort((a, b) => a.stats.wallMs - b.stats.wallMs);
  return kept[Math.floor((kept.length - 1) / 2)];
}

/** A waterfall of one run as an SVG string, on an x-axis of `scaleMs` ms. */
export function waterfallSvg(run: BurstRun, scaleMs: number): string {
  const rows = [...run.requests].sort((a, b) => a.startMs - b.startMs || a.index - b.index);
  const rowH = rows.length > 150 ? 3 : rows.length > 60 ? 4 : 8;
  const left = 8;
  const width = 900;
  const top = 18;
  const height = top + rows.length * rowH + 24;
  const x = (ms: number) => left + (Math.max(0, ms) / scaleMs) * (width - left - 8);
  const conns = [...new Set(rows.map((r) => r.connectionId ?? '?'))];
  const colour = (r: BrowserRequest) =>
    r.failed ? '#d62728' : PALETTE[conns.indexOf(r.connectionId ?? '?') % PALETTE.length]!;
  const parts: string[] = [];
  // Grid: a line every "nice" step.
  const step =
    [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000].find((s) => scaleMs / s <= 10) ?? 10000;
  for (let t = 0; t <= scaleMs; t += step) {
    parts.push(
      `<line x1="${x(t)}" y1="${top - 4}" x2="${x(t)}" y2="${height - 20}" stroke="#ddd"/>` +
        `<text x="${x(t)}" y="${height - 6}" font-size="10" text-anchor="middle">${t} ms</text>`,
    );
  }
  rows.forEach((r, i) => {
    const y = top + i * rowH;
    const h = Math.max(1, rowH - 1);
    const title = escapeHtml(
      `#${r.index} ${r.protocol ?? ''} conn ${r.connectionId ?? '?'}: stalled ${r.stalledMs === undefined ? '—' : formatMs(r.stalledMs)}, wire ${r.wireMs === undefined ? '—' : formatMs(r.wireMs)}, total ${formatMs(r.totalMs)}${r.failed ? `, ${r.failed}` : ''}`,
    );
    const send = r.sendMs ?? r.endMs;
    parts.push(`<g><title>${title}</title>`);
    if (send > r.startMs) {
      parts.push(
        `<rect x="${x(r.startMs)}" y="${y}" width="${x(send) - x(r.startMs)}" height="${h}" fill="#c7c7c7"/>`,
      );
    }
    if (r.sendMs !== undefined) {
      parts.push(
        `<rect x="${x(r.sendMs)}" y="${y}" width="${Math.max(0.5, x(r.endMs) - x(r.sendMs))}" height="${h}" fill="${colour(r)}"/>`,
      );
    }
    if (r.headersMs !== undefined) {
      parts.push(`<rect x="${x(r.headersMs)}" y="${y}" width="1" height="${h}" fill="#000" opacity="0.5"/>`);
    }
    parts.push('</g>');
  });
  parts.push(
    `<text x="${left}" y="11" font-size="11">grey: stalled in the browser · colour: on the wire (one colour per connection, ${conns.length} connection${conns.length === 1 ? '' : 's'}) · black tick: response headers</text>`,
  );
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">${parts.join('')}</svg>`;
}

function table(head: string[], rows: string[][]): string {
  const th = head.map((h) => `<th>${escapeHtml(h)}</th>`).join('');
  const tr = rows.map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`).join('\n');
  return `<table><thead><tr>${th}</tr></thead><tbody>${tr}</tbody></table>`;
}

/** The whole report as one HTML document. */
export function renderBrowserHtml(result: BrowserResult): string {
  const label = (id: string) => result.targets.find((t) => t.id === id)?.label ?? id;
  const o = result.options;
  const sections: string[] = [];
  sections.push(
    `<p>Chromium ${escapeHtml(result.environment.chromium.version)} · ${o.count} requests × ${o.runs} runs per target (first discarded) · ` +
      `trust ${escapeHtml(result.trust.method)}${result.trust.secureContext === false ? ' (NOT all certificates valid)' : ''} · ` +
      `${escapeHtml(result.environment.platform)}, ${result.environment.cpus} CPUs · ${escapeHtml(result.environment.startedAt)}</p>`,
  );
  if (result.fixture) {
    sections.push(
      `<p>Fixture server: backend pool ${result.fixture.poolSize} workers × ${result.fixture.tileMs} ms per tile, SETTINGS_MAX_CONCURRENT_STREAMS ${result.fixture.maxConcurrentStreams}.</p>`,
    );
  }
  if (result.findings.length) {
    sections.push(
      `<h2>Findings</h2><ul>${result.findings.map((f) => `<li>${escapeHtml(f)}</li>`).join('')}</ul>`,
    );
  }
  if (result.warnings.length) {
    sections.push(
      `<h2>Warnings</h2><ul class="warn">${result.warnings.map((f) => `<li>${escapeHtml(f)}</li>`).join('')}</ul>`,
    );
  }
  if (result.error) {
    sections.push(
      `<p class="warn">Error ${escapeHtml(result.error.code)}: ${escapeHtml(result.error.message)}</p>`,
    );
  }
  if (result.burst.summaries.length) {
    sections.push('<h2>Burst</h2>');
    sections.push(
      table(
        [
          'target',
          'protocol',
          'peak in flight',
          'connections',
          'stalled p50',
          'stalled p90',
          'wire p50',
          'wire p90',
          'server peak',
          'server queue p50',
          'wall',
        ],
        result.burst.summaries.map((s) => [
          label(s.target),
          Object.keys(s.protocols).join('+'),
          `${s.peakInFlight.median} (${s.peakInFlight.min}–${s.peakInFlight.max})`,
          `${s.connections.median}`,
          formatMs(s.stalledP50Ms),
          formatMs(s.stalledP90Ms),
          formatMs(s.wireP50Ms),
          formatMs(s.wireP90Ms),
          s.serverInFlightPeak === undefined ? '—' : String(s.serverInFlightPeak),
          s.serverPoolQueueP50Ms === undefined ? '—' : formatMs(s.serverPoolQueueP50Ms),
          formatMs(s.wallMs),
        ]),
      ),
    );
    const reps = result.targets.flatMap((t) => {
      const r = medianBurstRun(result.burst.runs, t.id);
      return r ? [{ t, r }] : [];
    });
    // One time scale for every waterfall, so their widths compare.
    const scale = Math.max(1, ...reps.flatMap(({ r }) => r.requests.map((q) => q.endMs)));
    for (const { t, r } of reps) {
      sections.push(
        `<h3>Waterfall — ${escapeHtml(t.label)} (run ${r.index}, peak ${r.stats.peakInFlight} in flight on ${r.stats.connections} connection${r.stats.connections === 1 ? '' : 's'}, wall ${escapeHtml(formatMs(r.stats.wallMs))})</h3>`,
        waterfallSvg(r, scale),
      );
    }
  }
  if (result.cancelSummaries.length) {
    sections.push(
      `<h2>Cancellation</h2><p>Abort requested after ${escapeHtml(formatMs(o.cancelAfterMs))}. Counts are the server's. ${o.cancelRuns} run${o.cancelRuns > 1 ? 's' : ''} per row: times are medians, counts are totals.</p>`,
    );
    sections.push(
      table(
        [
          'target',
          'server',
          'aborted at',
          'reached handler',
          'cancelled queued',
          'cancelled running',
          'rendered for nothing',
          'RST_STREAM CANCEL',
          'wanted tile',
          'idle baseline',
        ],
        cancelRows(result, label),
      ),
    );
  }
  const css =
    'body{font-family:sans-serif;margin:2em;max-width:1000px}table{border-collapse:collapse;margin:1em 0}' +
    'td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child,th:first-child{text-align:left}' +
    '.warn{color:#a40}svg{display:block;margin:0.5em 0 1.5em}';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>h2lab browser</title><style>${css}</style></head>
<body><h1>h2lab browser</h1>
${sections.join('\n')}
</body></html>
`;
}

/**
 * Terminal rendering of a browser result: a table per experiment, then findings and warnings.
 * Pure: `(result) → string`.
 */

import { formatMs } from '../core/index.ts';
import type { BrowserResult } from '../model/index.ts';
import { fitTable, wrapText } from './text.ts';

function range(x: { median: number; min: number; max: number }): string {
  return x.min === x.max ? String(x.median) : `${x.median} (${x.min}–${x.max})`;
}

/** The whole result for a terminal. */
/**
 * One row per cancellation summary (text and HTML share it): target, server mode, when the abort
 * happened, the server's counts, the wanted tile's time and the idle baseline.
 */
export function cancelRows(result: BrowserResult, label: (id: string) => string): string[][] {
  return result.cancelSummaries.map((c) => [
    label(c.target),
    c.serverMode,
    Number.isNaN(c.actualAbortMs) ? 'never' : formatMs(c.actualAbortMs),
    c.server ? String(c.server.reachedHandler) : '—',
    c.server ? String(c.server.cancellations.queued ?? 0) : '—',
    c.server ? String(c.server.cancellations.running ?? 0) : '—',
    c.server ? String(c.server.jobs.unwanted ?? 0) : '—',
    c.server ? String(c.server.rstStreamByCode['8'] ?? 0) : '—',
    formatMs(c.wantedMs),
    formatMs(c.baselineMs),
  ]);
}

export function renderBrowserText(result: BrowserResult, options: { width?: number } = {}): string {
  const width = options.width ?? 80;
  const out: string[] = [];
  const label = (id: string) => result.targets.find((t) => t.id === id)?.label ?? id;
  const o = result.options;
  out.push(
    `h2lab browser — Chromium ${result.environment.chromium.version}, ${o.count} requests × ${o.runs} runs per target (first discarded)` +
      (result.fixture
        ? `; fixture pool ${result.fixture.poolSize} × ${result.fixture.tileMs} ms tiles, MAX_CONCURRENT_STREAMS ${result.fixture.maxConcurrentStreams}`
        : ''),
  );
  out.push(
    `trust: ${result.trust.method}${result.trust.spki.length ? ` (${result.trust.spki.length} SPKI pin${result.trust.spki.length > 1 ? 's' : ''})` : ''}` +
      (result.trust.secureContext === undefined
        ? ''
        : result.trust.secureContext
          ? ', certificates valid'
          : ', NOT all valid'),
  );
  if (result.burst.summaries.length) {
    out.push('', 'Burst (medians over kept runs)');
    out.push(
      ...fitTable(
        [
          'target',
          'protocol',
          'peak in flight',
          'conns',
          'stalled p50/p90',
          'wire p50/p90',
          'server peak',
          'server queue p50',
          'wall',
        ],
        result.burst.summaries.map((s) => [
          label(s.target),
          Object.keys(s.protocols).join('+') || '—',
          range(s.peakInFlight),
          range(s.connections),
          `${formatMs(s.stalledP50Ms)} / ${formatMs(s.stalledP90Ms)}`,
          `${formatMs(s.wireP50Ms)} / ${formatMs(s.wireP90Ms)}`,
          s.serverInFlightPeak === undefined ? '—' : String(s.serverInFlightPeak),
          s.serverPoolQueueP50Ms === undefined ? '—' : formatMs(s.serverPoolQueueP50Ms),
          formatMs(s.wallMs),
        ]),
        width,
        '',
      ),
    );
  }
  if (result.cancelSummaries.length) {
    out.push(
      '',
      wrapText(
        `Cancellation (abort after ${formatMs(o.cancelAfterMs)}; ${o.cancelRuns} run${o.cancelRuns > 1 ? 's' : ''} per row: median times, total counts; counts from the server)`,
        width,
        '',
      ),
    );
    out.push(
      ...fitTable(
        [
          'target',
          'server',
          'aborted at',
          'reached handler',
          'cancelled queued',
          'running',
          'rendered for nothing',
          'RST CANCEL',
          'wanted',
          'idle',
        ],
        cancelRows(result, label),
        width,
        '',
        2,
      ),
    );
  }
  // Each finding and warning wraps under its own first word, after its mark.
  const item = (mark: string, text: string) => mark + wrapText(text, width, '  ').slice(2);
  if (result.findings.length) out.push('', 'Findings', ...result.findings.map((f) => item('- ', f)));
  if (result.warnings.length) out.push('', 'Warnings', ...result.warnings.map((w) => item('! ', w)));
  if (result.error) out.push('', wrapText(`error: ${result.error.code}: ${result.error.message}`, width, ''));
  return `${out.map((l, i) => (i < 2 ? wrapText(l, width, '') : l)).join('\n')}\n`;
}

/**
 * Renderers of a page replay ({@link PageResult}): Markdown (report.md, also the terminal text) and a
 * self-contained HTML page with one waterfall per protocol setting, side by side on one time scale.
 * Pure functions of the result.
 */
import {
  type PageLoad,
  type PageRequest,
  type PageResult,
  type PageSummary,
  replayProtocolLabel,
} from '../model/index.ts';
import { graphAnchor, SEQUENCE_CSS, SEQUENCE_SCRIPT, sequenceBlocks } from './evidence-graphs.ts';
import { scriptJson } from './html.ts';
import type { HtmlAssets } from './render-html.ts';

const n0 = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '–');
const spread = (s: PageSummary['loadMs']) =>
  Number.isFinite(s.median) ? `${n0(s.median)} (${n0(s.min)}–${n0(s.max)})` : '–';

function linkText(r: PageResult): string {
  const l = r.link;
  if (!l) return 'loopback (no emulated link)';
  const parts = [`RTT ${n0(l.rttMs)} ms`];
  if (l.rateBitsPerSec) parts.push(`${(l.rateBitsPerSec / 1e6).toFixed(1)} Mbit/s`);
  if (l.loss) parts.push(`loss ${(l.loss * 100).toFixed(1)}%`);
  if (l.congestionControl) parts.push(`TCP ${l.congestionControl}`);
  return `${l.profile}: ${parts.join(', ')} (${l.backend})`;
}

/** The kept load of a setting whose load time is the median one (the waterfall shown). */
export function medianLoad(r: PageResult, protocol: string): PageLoad | undefined {
  const kept = r.loads
    .filter((l) => l.protocol === protocol && !l.discarded && l.metrics && !l.error)
    .sort((a, b) => a.metrics!.loadMs - b.metrics!.loadMs);
  return kept[Math.floor((kept.length - 1) / 2)];
}

/** report.md: the verdict first, then the numbers and what they were measured with. */
export function renderPageMarkdown(r: PageResult): string {
  const out: string[] = [];
  out.push(`# Page replay: ${r.har.url}`, '');
  out.push('## Verdict', '');
  for (const v of r.verdict) out.push(`- ${v}`);
  if (r.error) out.push(`- Error: ${r.error.code}: ${r.error.message}`);
  out.push('', '## Loads (median of kept loads, min–max, ms)', '');
  out.push(
    '| setting | origins on it | loads | first byte | FCP | LCP | DOMContentLoaded | load | last byte | queued before sent (median) | requests waiting on a busy connection | connections |',
  );
  out.push('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const s of r.summaries) {
    const on = Object.entries(s.originProtocols).filter(([, p]) => p === s.protocol).length;
    out.push(
      `| ${replayProtocolLabel(s.protocol)} | ${on} of ${r.har.origins.length} | ${s.loads} | ${spread(s.ttfbMs)} | ${spread(s.fcpMs)} | ${spread(s.lcpMs)} | ${spread(s.dclMs)} | ${spread(s.loadMs)} | ${spread(s.lastByteMs)} | ${n0(s.stalledMs)} | ${n0(s.waitedBehindRequests)} (median ${n0(s.waitedBehindMs)} ms) | ${n0(s.connections)} |`,
    );
  }
  if (r.comparisons.length) {
    out.push(
      '',
      '| setting | against | Δ load (ms) | ratio | 95% interval | outcome |',
      '|---|---|---|---|---|---|',
    );
    for (const c of r.comparisons)
      out.push(
        `| ${replayProtocolLabel(c.candidate)} | ${replayProtocolLabel(c.baseline)} | ${c.deltaMs < 0 ? '-' : ''}${n0(Math.abs(c.deltaMs))} | ${c.ratio.toFixed(2)} | ${c.lo.toFixed(2)}–${c.hi.toFixed(2)} | ${c.outcome} |`,
      );
  }
  const graphs = sequenceLines(r);
  if (graphs.length > 0)
    out.push(
      '',
      '## Time-sequence graphs (in report.html)',
      '',
      "The server's data and the client's ACKs over time, per connection, read from each setting's capture (Wireshark opens the pcapng as is):",
      '',
      ...graphs,
    );
  out.push('', '## What was replayed and how', '');
  out.push(
    `- HAR: ${r.har.file} (${r.har.creator}, ${r.har.source}), ${r.har.entries} entries on ${r.har.origins.length} origins, ${n0(r.har.bytes)} body bytes.`,
  );
  for (const i of r.har.inferred) out.push(`- Inferred: ${i}.`);
  out.push(`- Link: ${linkText(r)}.`);
  out.push(
    `- Chromium ${r.environment.chromium.version}; a fresh browser context per load (no socket, session ticket or cache carried over); ${r.options.runs} kept loads per setting after one discarded round, settings alternating.`,
  );
  out.push(
    `- Replay server: one listener per origin, certificate for its host from h2lab's development CA, ${replayPlacementText(r.replayServer.placement)}, SETTINGS_MAX_CONCURRENT_STREAMS ${r.replayServer.maxConcurrentStreams}${r.options.protocols.includes('h3') ? `, h3 ${r.replayServer.quicRetry ? 'with' : 'without'} QUIC Retry` : ''}; ${
      r.har.shared.length
        ? `hosts that shared a connection when recorded (${r.har.shared.map((g) => g.join(' + ')).join('; ')}) share one listener and a certificate naming them all, so Chromium coalesces them again over h2 and h3; every other origin has its own port and certificate.`
        : 'every origin has its own port and certificate, so Chromium does not coalesce them (none shared a connection when recorded).'
    }`,
  );
  out.push(
    `- Machine: ${r.environment.cpus} CPUs, load average ${r.environment.loadAverage.join(' / ')} at the start, ${r.environment.platform}, Node ${r.environment.node}.`,
  );
  if (r.misses.length)
    out.push(`- Requests not in the HAR (answered 404): ${r.misses.slice(0, 10).join('; ')}.`);
  for (const w of r.warnings) out.push(`- Warning: ${w}`);
  return `${out.join('\n')}\n`;
}

const esc = (s: string) =>
  s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** One waterfall as SVG: a row per request, segments stalled / connect / wait / receive. */
function waterfall(load: PageLoad, scaleMs: number, width: number): string {
  const rows = [...load.requests].sort((a, b) => a.startMs - b.startMs);
  const rowH = 7;
  const top = 18;
  const left = 4;
  const w = width - left - 4;
  const x = (ms: number) => left + (Math.max(0, ms) / scaleMs) * w;
  const h = top + rows.length * rowH + 6;
  const seg = (a: number, b: number, y: number, cls: string, title: string) =>
    b > a
      ? `<rect class="${cls}" x="${x(a).toFixed(1)}" y="${y}" width="${Math.max(0.6, x(b) - x(a)).toFixed(1)}" height="${rowH - 2}"><title>${esc(title)}</title></rect>`
      : '';
  const parts: string[] = [];
  const tick = scaleMs > 4000 ? 1000 : scaleMs > 1500 ? 500 : scaleMs > 600 ? 200 : 100;
  for (let t = 0; t <= scaleMs; t += tick)
    parts.push(
      `<line class="grid" x1="${x(t)}" x2="${x(t)}" y1="12" y2="${h}"/><text class="tick" x="${x(t) + 2}" y="10">${t} ms</text>`,
    );
  rows.forEach((q: PageRequest, i) => {
    const y = top + i * rowH;
    const name = `${q.url} — ${q.protocol || '?'} conn ${q.connectionId ?? '?'}: stalled ${n0(q.stalledMs ?? 0)} ms${q.connectMs !== undefined ? `, connect ${n0(q.connectMs)} ms` : ''}${q.waitedBehindMs ? `, waited behind another request ${n0(q.waitedBehindMs)} ms` : ''}, wait ${n0(q.waitMs ?? 0)} ms, end ${n0(q.endMs)} ms`;
    const send = q.sendMs ?? q.startMs;
    const connEnd = send;
    const connStart = q.connectMs !== undefined ? send - q.connectMs : send;
    const headers = q.waitMs !== undefined ? send + q.waitMs : send;
    parts.push(seg(q.startMs, connStart, y, q.waitedBehindMs ? 'hol' : 'stall', name));
    parts.push(seg(connStart, connEnd, y, 'conn', name));
    parts.push(seg(send, headers, y, 'wait', name));
    parts.push(seg(headers, q.endMs, y, 'recv', name));
  });
  const m = load.metrics;
  if (m) {
    for (const [k, v, cls] of [
      ['DCL', m.dclMs, 'dcl'],
      ['load', m.loadMs, 'load'],
      ['LCP', m.lcpMs, 'lcp'],
    ] as const) {
      if (v === undefined || !Number.isFinite(v)) continue;
      parts.push(
        `<line class="${cls}" x1="${x(v)}" x2="${x(v)}" y1="12" y2="${h}"><title>${k} ${n0(v)} ms</title></line>`,
      );
    }
  }
  return `<svg viewBox="0 0 ${width} ${h}" width="100%" role="img" aria-label="waterfall">${parts.join('')}</svg>`;
}

/**
 * The time-sequence graphs of each setting's median load (the one whose waterfall is drawn), when
 * `--capture` kept its capture and the replay read them back.
 */
function pageSequences(shown: ReadonlyArray<{ s: PageSummary; load: PageLoad }>) {
  return sequenceBlocks(
    'ts',
    SEQUENCE_HEADING,
    shown.flatMap(({ s, load }) => {
      const ts = load.capture?.timeSequence;
      return ts ? [{ ...sequenceLabel(s, load), timeSequence: ts }] : [];
    }),
  );
}

const SEQUENCE_HEADING = 'Time-sequence graphs (median load of each setting, from its capture)';

/** The heading and anchor of one setting's graphs in report.html. */
const sequenceLabel = (s: PageSummary, load: PageLoad) => ({
  label: `${replayProtocolLabel(s.protocol)}, load ${load.round}`,
  anchor: graphAnchor(s.protocol),
});

/**
 * report.md's pointer to the graphs report.html draws (`--capture`): one line per setting whose
 * median load was captured and read back, naming its graphs, where they are and the capture file.
 */
function sequenceLines(r: PageResult): string[] {
  return r.summaries.flatMap((s) => {
    const load = medianLoad(r, s.protocol);
    const ts = load?.capture?.timeSequence;
    if (!load?.capture || !ts || ts.connections.length === 0) return [];
    const { label, anchor } = sequenceLabel(s, load);
    const n = ts.connections.length + ts.connectionsNotDrawn;
    return [
      `- ${label} (the median load): open report.html#${anchor}, under “${SEQUENCE_HEADING}”; its capture ${load.capture.file} (${n} connection${n === 1 ? '' : 's'} with data).`,
    ];
  });
}

/**
 * report.html: verdict, table, the median load's waterfall per setting side by side, and that load's
 * time-sequence graphs when it was captured (drawn by uPlot, inlined from `assets`).
 */
export function renderPageHtml(r: PageResult, assets: HtmlAssets): string {
  const md = renderPageMarkdown(r);
  const shown = r.summaries
    .map((s) => ({ s, load: medianLoad(r, s.protocol) }))
    .filter((x): x is { s: PageSummary; load: PageLoad } => x.load !== undefined);
  const scale = Math.max(
    100,
    ...shown.map((x) => Math.max(x.load.metrics?.lastByteMs ?? 0, x.load.metrics?.loadMs ?? 0)),
  );
  const cols = shown
    .map(
      ({
        s,
        load,
      }) => `<div class="col"><h3>${replayProtocolLabel(s.protocol)} — load ${n0(load.metrics?.loadMs ?? Number.NaN)} ms (median load of ${s.loads})</h3>
<p class="sub">${load.requests.length} requests, ${new Set(load.requests.map((q) => q.connectionId)).size} connections, ${load.requests.filter((q) => q.waitedBehindMs).length} waited behind another request</p>
${waterfall(load, scale, 600)}</div>`,
    )
    .join('\n');
  const graphs = pageSequences(shown);
  const tables: string[][] = [];
  let cur: string[] = [];
  for (const line of md.split('\n')) {
    if (line.startsWith('|')) {
      if (!/^\|---/.test(line)) cur.push(line);
    } else if (cur.length) {
      tables.push(cur);
      cur = [];
    }
  }
  if (cur.length) tables.push(cur);
  const htmlTable = (t: string[]) =>
    `<table>${t
      .map((line, i) => {
        const cells = line
          .split('|')
          .slice(1, -1)
          .map((c) => esc(c.trim()));
        const tag = i === 0 ? 'th' : 'td';
        return `<tr>${cells.map((c) => `<${tag}>${c}</${tag}>`).join('')}</tr>`;
      })
      .join('')}</table>`;
  const facts = md
    .split('## What was replayed and how')[1]!
    .split('\n')
    .filter((l) => l.startsWith('- '))
    .map((l) => `<li>${esc(l.slice(2))}</li>`)
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>h2lab page replay — ${esc(r.har.url)}</title>
${graphs ? `<style>${assets.uplotCss}</style>` : ''}<style>
${graphs ? SEQUENCE_CSS : ''}
body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#222;max-width:1800px}
h1{font-size:20px}h2{font-size:16px;margin-top:20px}h3{font-size:14px;margin:4px 0}
.verdict li{margin:4px 0}.sub{color:#555;margin:0 0 4px;font-size:12px}
table{border-collapse:collapse;margin:8px 0;display:block;max-width:100%;overflow-x:auto}td,th{border:1px solid #ccc;padding:3px 6px;font-size:12px;text-align:left}
.cols{display:flex;gap:12px}.col{flex:1;min-width:0}
.stall{fill:#c8c8c8}.hol{fill:#e05a47}.conn{fill:#f2a033}.wait{fill:#8fc3e8}.recv{fill:#1f6fb2}
.grid{stroke:#eee}.tick{font-size:9px;fill:#888}.dcl{stroke:#2a9d3a;stroke-width:1.5}.load{stroke:#7b2fbf;stroke-width:1.5}.lcp{stroke:#e0a000;stroke-width:1.5;stroke-dasharray:3 2}
.legend span{display:inline-block;margin-right:12px;font-size:12px}.legend i{display:inline-block;width:12px;height:8px;margin-right:4px}
</style></head><body>
<h1>Page replay: ${esc(r.har.url)}</h1>
<h2>Verdict</h2>
<ul class="verdict">${r.verdict.map((v) => `<li>${esc(v)}</li>`).join('')}${r.error ? `<li><b>${esc(r.error.code)}</b>: ${esc(r.error.message)}</li>` : ''}</ul>
${tables.map(htmlTable).join('\n')}
<h2>Waterfalls (median load of each setting, one time scale)</h2>
<p class="legend"><span><i style="background:#c8c8c8"></i>stalled</span><span><i style="background:#e05a47"></i>waited behind another request on its connection</span><span><i style="background:#f2a033"></i>connect + TLS</span><span><i style="background:#8fc3e8"></i>waiting for the first byte</span><span><i style="background:#1f6fb2"></i>receiving</span><span><i style="background:#2a9d3a"></i>DOMContentLoaded</span><span><i style="background:#7b2fbf"></i>load</span><span><i style="background:#e0a000"></i>LCP</span></p>
<div class="cols">${cols}</div>
${graphs?.html ?? ''}
<h2>What was replayed and how</h2>
<ul>${facts}</ul>
${
  graphs
    ? `<script id="h2lab-ts" type="application/json">${scriptJson(graphs.charts)}</script>
<script>${assets.uplotJs.replace(/<\/script/gi, '<\\/script')}</script>
<script>${SEQUENCE_SCRIPT}</script>`
    : ''
}
</body></html>
`;
}

/** Where the replay's origins ran, in the report's words (docs/design.md's glossary: placement). */
function replayPlacementText(p: PageResult['replayServer']['placement']): string {
  if (p === 'in-process') return "in this process on this host's loopback";
  if ('link' in p) return `in the server namespace of the link (${p.link})`;
  return `in the private namespace ${p.namespace} with Chromium, on its 127.0.0.1 (this host's loopback does not reach it)`;
}

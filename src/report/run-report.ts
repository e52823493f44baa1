/**
 * The report of one bench run (`h2lab report run.json`, `bench --report DIR`): report.md and a
 * self-contained report.html with the summary bench prints, the settings in force and as resolved,
 * the evidence files the run wrote with the command lines that open them, and, when the run was
 * captured behind a link, a time-sequence graph per connection with its slow-start rounds in words
 * that link to it. Pure functions of the result.
 *
 * ```
 *   report.md / report.html
 *   ├─ Summary          renderRunText (what bench printed)
 *   ├─ Settings         runSettings (in force) + the resolved options
 *   ├─ Evidence         capture / key log / frames / qlog: file, what it unlocks, commands
 *   └─ Time-sequence    a sentence per connection → its graph (evidence.capture.timeSequence)
 * ```
 */
import { formatBytes } from '../core/index.ts';
import type { ConnectionSequence, RunResult } from '../model/index.ts';
import { END_TEXT, SEQUENCE_CSS, SEQUENCE_SCRIPT, sequenceBlocks } from './evidence-graphs.ts';
import { escapeHtml, scriptJson } from './html.ts';
import type { HtmlAssets } from './render-html.ts';
import { renderRunText } from './run-text.ts';
import { runSettings } from './settings.ts';

/** The id of the graphs' section in report.html (and the prefix of each graph's id). */
const TS_ID = 'ts';
/** The id of the slow-start section in report.html. */
const ROUNDS_ID = 'rounds';
/** What a round is, before the list of each connection's rounds. */
const ROUNDS_INTRO =
  "The server's round trips of data on each connection (a round begins with the first segment it sent after the ACK of the previous round's first segment reached it; slow start lasts while each round grows to 1.5× the one before)";
/** The id of the evidence section in report.html. */
const EVIDENCE_ID = 'evidence';

/** The rows of `runSettings` that name evidence files (the Evidence section says more). */
const EVIDENCE_ROWS = new Set(['packet captures', 'TLS key log', 'HTTP/2 frame log', 'qlog']);

/** One evidence file: what it is, where, what it unlocks, and shell commands that open it. */
interface EvidenceItem {
  name: string;
  path: string;
  unlocks: string;
  /** Pairs of a comment and a command line. */
  commands: Array<[string, string]>;
}

/** One connection's sentence and the id of its graph in report.html. */
interface ConnectionLine {
  chartId: string;
  name: string;
  text: string;
}

/** What the report says, once, for both renderings. */
interface RunReport {
  title: string;
  summary: string;
  settings: Array<{ name: string; value: string }>;
  options: Array<{ name: string; value: string }>;
  evidence: EvidenceItem[];
  /** Evidence the run did not write, and the flag that writes it. */
  notWritten: string[];
  graphs: ReturnType<typeof sequenceBlocks>;
  /** The sentence over all connections (slow-start rounds), and one per connection. */
  roundsSentence?: string;
  connections: ConnectionLine[];
  /** Why there are no graphs (undefined when there are). */
  noGraphs?: string;
}

/** A path or word as a POSIX shell reads it back unchanged. */
function sh(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

const isTls = (r: RunResult): boolean => r.target.url.startsWith('https:');

/** The capture's commands: each packet's fate, the drops, and the decrypted protocol with a key log. */
function captureCommands(r: RunResult, file: string, keyLog: string | undefined): Array<[string, string]> {
  const c = sh(file);
  const out: Array<[string, string]> = [
    [
      "each packet as the link's relay saw it: time, direction (up = client → server), its fate and queue delay",
      `tshark -r ${c} -T fields -e frame.time_relative -e frame.interface_name -e frame.comment`,
    ],
    ['the packets the link dropped', `tshark -r ${c} -Y 'frame.comment contains "dropped"'`],
  ];
  const negotiated = r.protocol.negotiated;
  const tls = isTls(r);
  const key = keyLog !== undefined && tls ? ` -o tls.keylog_file:${sh(keyLog)}` : '';
  const port = new URL(r.target.url).port;
  const h2c = negotiated === 'h2c' && port ? ` -d tcp.port==${port},http2` : '';
  if (negotiated === 'h3') {
    // The HTTP/3 binding writes no QUIC key log (docs/usage.md, "Evidence"): the payload stays sealed.
  } else if (negotiated === 'none' || (tls && keyLog === undefined)) {
    // Nothing negotiated, or TLS without its key log: the evidence section says which flag opens it.
  } else if (negotiated === 'http/1.1') {
    out.push([
      'the HTTP/1.1 requests and the connection (client port) each went on',
      `tshark -r ${c}${key} -Y http.request -T fields -e tcp.srcport -e http.request.uri`,
    ]);
  } else {
    out.push([
      'HTTP/2 frames: direction, stream, frame type (0 DATA, 1 HEADERS, 4 SETTINGS, 8 WINDOW_UPDATE), length',
      `tshark -r ${c}${key}${h2c} -Y http2 -T fields -e frame.interface_name -e http2.streamid -e http2.type -e http2.length`,
    ]);
  }
  out.push([
    negotiated === 'h3'
      ? 'Wireshark: the QUIC packets, their sizes and times (Statistics → I/O Graphs)'
      : 'Wireshark: Statistics → TCP Stream Graphs → Time Sequence (Stevens) draws the graphs below',
    `wireshark${key} ${c}`,
  ]);
  return out;
}

/** The run's evidence files, and a line for each kind it did not write. */
function evidenceOf(r: RunResult): { items: EvidenceItem[]; notWritten: string[] } {
  const e = r.evidence ?? {};
  const items: EvidenceItem[] = [];
  const notWritten: string[] = [];
  const keyLog = e.keyLog?.file;
  if (e.capture) {
    const k = e.capture;
    const cut = k.truncatedPackets + k.packetsNotRecorded;
    const decrypt =
      r.protocol.negotiated === 'h3'
        ? '; QUIC stays encrypted (no QUIC key log exists)'
        : isTls(r) && keyLog === undefined
          ? '; its TLS stays encrypted without a key log (--keylog FILE)'
          : '';
    items.push({
      name: 'Packet capture (pcapng)',
      path: k.file,
      unlocks: `every packet of the link as its relay saw it, both directions (${k.packets.up} up, ${k.packets.down} down), timestamped when it entered the link, its fate in its comment (${k.dropped.loss + k.dropped.queue} marked dropped: ${k.dropped.loss} by loss, ${k.dropped.queue} at the full queue); ${cut === 0 ? 'nothing cut' : `${k.truncatedPackets} packets cut to ${formatBytes(k.snapBytes)}, ${k.packetsNotRecorded} not recorded past ${formatBytes(k.maxBytes)}`}${decrypt}`,
      commands: captureCommands(r, k.file, keyLog),
    });
  } else {
    notWritten.push(
      e.noCapture
        ? `No packet capture: ${e.noCapture}`
        : r.environment.link
          ? 'No packet capture: `--capture DIR` writes the link as its relay saw it, and the time-sequence graphs below'
          : 'No packet capture: `--capture DIR` behind an emulated link (`--rtt`, `--bandwidth`, `--net`) writes the link as its relay saw it, and the time-sequence graphs below',
    );
  }
  if (e.keyLog) {
    items.push({
      name: 'TLS key log (SSLKEYLOGFILE format)',
      path: e.keyLog.file,
      unlocks: e.capture
        ? e.keyLog.unlocks
        : `${e.keyLog.unlocks} (this run has no capture: tcpdump -i lo during the run takes one on loopback)`,
      commands: e.capture ? [] : [['a capture of loopback to decrypt with it', 'tcpdump -i lo -w lo.pcapng']],
    });
  } else if (isTls(r) && r.protocol.negotiated !== 'h3') {
    notWritten.push(
      'No TLS key log: `--keylog FILE` writes the secrets that decrypt a capture to HTTP/1.1 and HTTP/2',
    );
  }
  if (e.frames) {
    const f = sh(e.frames.file);
    items.push({
      name: 'HTTP/2 frame log (one JSON line per frame)',
      path: e.frames.file,
      unlocks: "every frame in and out of h2lab's HTTP/2 client, what `nghttp -v` prints",
      commands: [
        ['the windows as negotiated', `jq -c 'select(.type == "SETTINGS" or .type == "WINDOW_UPDATE")' ${f}`],
        [
          'the bytes of DATA each stream received',
          `jq -s 'map(select(.dir == "in" and .type == "DATA")) | group_by(.stream) | map({stream: .[0].stream, bytes: (map(.length) | add)})' ${f}`,
        ],
      ],
    });
  } else if (r.protocol.negotiated === 'h2' || r.protocol.negotiated === 'h2c') {
    notWritten.push("No HTTP/2 frame log: `--frames FILE` writes every frame of h2lab's client");
  }
  if (e.qlog) {
    items.push({
      name: 'qlog (JSON-SEQ, one file per QUIC connection)',
      path: e.qlog.dir,
      unlocks:
        "the QUIC and HTTP/3 events of each connection: packets sent and received, congestion state, both ends' transport parameters; qvis (https://qvis.quictools.info, “Load a file”) draws them",
      commands: [['the files, client-<connection id>.qlog and server-…', `ls ${sh(e.qlog.dir)}`]],
    });
  } else if (r.protocol.negotiated === 'h3') {
    notWritten.push('No qlog: `--qlog DIR` writes one per QUIC connection, for qvis');
  }
  return { items, notWritten };
}

/** "12, 24, 42 segments in 3 rounds, 3 of slow start (the data ran out first)" and what was lost. */
function connectionText(c: ConnectionSequence): string {
  if (c.transport === 'udp') {
    const client = c.clientSent?.y.at(-1) ?? 0;
    return `a UDP flow (QUIC): the server sent ${formatBytes(c.sent.y.at(-1) ?? 0)}, the client ${formatBytes(client)}; QUIC encrypts its acknowledgements, so no rounds are counted`;
  }
  if (c.rounds.length === 0) return 'no data from the server after its handshake';
  // Every round while they are few; else the slow-start rounds and the one that ended them.
  const shown = c.roundCount <= 8 ? c.rounds : c.rounds.slice(0, Math.max(3, c.slowStartRounds + 1));
  const more = shown.length < c.roundCount ? ', …' : '';
  const dropped = c.rounds.reduce((n, x) => n + x.dropped, 0);
  const again = c.rounds.reduce((n, x) => n + x.retransmitted, 0);
  const lost =
    dropped + again > 0
      ? `; the link dropped ${plural(dropped, 'segment')} and the server sent ${plural(again, 'segment')} again`
      : '';
  return `${shown.map((x) => x.segments).join(', ')}${more} segments in ${plural(c.roundCount, 'round')}, ${c.slowStartRounds} of slow start (${END_TEXT[c.slowStartEnd]})${lost}`;
}

/**
 * Whether a captured connection carried the run's requests: its client port is one the client's TCP
 * facts read, or (without them) it went to the URL's port. The others are h2lab's own connections
 * around the run, such as its reads of the fixture's /metrics before and after.
 */
function runConnectionTest(r: RunResult): (c: ConnectionSequence) => boolean {
  const port = (a: string): number => Number(a.split(':').pop());
  const read = new Set(r.connections.tcp?.client?.perConnection?.map((k) => k.clientPort) ?? []);
  if (read.size > 0) return (c) => c.transport !== 'tcp' || read.has(port(c.client));
  const u = new URL(r.target.url);
  const target = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  return (c) => port(c.server) === target;
}

/** The sentence over the run's connections that sent data: how many rounds slow start lasted. */
function roundsSentenceOf(conns: ConnectionSequence[]): string | undefined {
  const tcp = conns.filter((c) => c.transport === 'tcp' && c.rounds.length > 0);
  if (tcp.length === 0) return undefined;
  const ss = tcp.map((c) => c.slowStartRounds);
  const lo = Math.min(...ss);
  const hi = Math.max(...ss);
  const rounds = lo === hi ? plural(lo, 'round') : `${lo}–${hi} rounds`;
  const ends = [...new Set(tcp.map((c) => END_TEXT[c.slowStartEnd]))].join('; ');
  const on =
    tcp.length === 1 ? "on the run's one connection" : `on each of the run's ${tcp.length} connections`;
  return `Slow start lasted ${rounds} ${on} (${ends}), as the capture shows it`;
}

/**
 * An option's value as the report prints it. Request headers by name alone: their values may be
 * credentials (a bearer token, a cookie), and a report is made to be passed around; the result file
 * keeps them.
 */
function optionText(name: string, v: unknown): string {
  if (name === 'headers' && v !== null && typeof v === 'object') {
    const names = Object.keys(v);
    return names.length === 0 ? 'none' : `${names.join(', ')} (values in the result file, not here)`;
  }
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function reportOf(r: RunResult): RunReport {
  const { items, notWritten } = evidenceOf(r);
  const ts = r.evidence?.capture?.timeSequence;
  const conns = ts?.connections ?? [];
  // Every connection the capture kept is drawn (at most 16, the busiest; the rest are counted).
  const graphs = ts
    ? sequenceBlocks(
        TS_ID,
        'Time-sequence graphs (from the capture)',
        [{ label: `${r.transport.name} run`, timeSequence: ts }],
        conns.length,
      )
    : undefined;
  const ofRun = runConnectionTest(r);
  const connections: ConnectionLine[] = graphs
    ? conns.map((c, i) => ({
        chartId: graphs.charts[i]!.id,
        name: `connection ${i + 1} (client port ${c.client.split(':').pop()})`,
        text: `${ofRun(c) ? '' : "not one of the run's (h2lab's own, e.g. its read of the server's /metrics): "}${connectionText(c)}`,
      }))
    : [];
  let noGraphs: string | undefined;
  if (!graphs) {
    noGraphs = ts
      ? 'No time-sequence graphs: the capture holds no connection.'
      : r.evidence?.noCapture
        ? `No time-sequence graphs: ${r.evidence.noCapture}.`
        : r.environment.link
          ? 'No time-sequence graphs: this run was not captured; `--capture DIR` would draw one per connection here.'
          : 'No time-sequence graphs: this run was not captured; `--capture DIR` with an emulated link (`--rtt 100ms --bandwidth 10mbit`, or `--net`) would draw one per connection here.';
  }
  const options = Object.entries(r.options)
    .filter(([, v]) => v !== undefined)
    .map(([name, v]) => ({ name, value: optionText(name, v) }));
  const roundsSentence = graphs ? roundsSentenceOf(conns.filter(ofRun)) : undefined;
  return {
    title: `h2lab bench: ${r.target.url}${r.target.embedded ? ' (embedded fixture server)' : ''}`,
    summary: renderRunText(r),
    // The evidence rows of the settings have a section of their own.
    settings: runSettings(r).filter((s) => !EVIDENCE_ROWS.has(s.name)),
    options,
    evidence: items,
    notWritten,
    graphs,
    ...(roundsSentence ? { roundsSentence } : {}),
    connections,
    ...(noGraphs ? { noGraphs } : {}),
  };
}

/** A table cell's text in Markdown: one line, no column break. */
const mdCell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/**
 * report.md of one bench run: summary, settings, evidence with its commands, and the slow-start
 * rounds of each captured connection linked to its graph in report.html.
 * @example writeFileSync('report.md', renderRunMarkdown(JSON.parse(readFileSync('run.json', 'utf8'))))
 */
export function renderRunMarkdown(r: RunResult): string {
  const x = reportOf(r);
  const out: string[] = [`# ${x.title}`, '', '## Summary', '', '```text', x.summary, '```', ''];
  out.push('## Settings', '', '| setting | in force |', '|---|---|');
  for (const s of x.settings) out.push(`| ${mdCell(s.name)} | ${mdCell(s.value)} |`);
  out.push('', 'Options as resolved (enough to run it again):', '', '| option | value |', '|---|---|');
  for (const o of x.options) out.push(`| ${mdCell(o.name)} | ${mdCell(o.value)} |`);
  out.push('', '## Evidence', '');
  if (x.evidence.length === 0) out.push('The run wrote no evidence files.', '');
  for (const e of x.evidence) {
    out.push(`### ${e.name}`, '', `\`${e.path}\`: ${e.unlocks}.`, '');
    if (e.commands.length > 0) {
      out.push('```sh');
      for (const [what, cmd] of e.commands) out.push(`# ${what}`, cmd);
      out.push('```', '');
    }
  }
  for (const n of x.notWritten) out.push(`- ${n}.`);
  if (x.notWritten.length > 0) out.push('');
  out.push('## Slow start and time-sequence graphs', '');
  if (x.noGraphs) out.push(x.noGraphs);
  else {
    const first = x.connections[0]!.chartId;
    if (x.roundsSentence) out.push(`${x.roundsSentence} ([graphs](report.html#${first})).`, '');
    out.push(`${ROUNDS_INTRO}, each linked to its graph in report.html:`, '');
    for (const c of x.connections) out.push(`- [${c.name}](report.html#${c.chartId}): ${c.text}.`);
  }
  return `${out.join('\n')}\n`;
}

const CSS = `
body{font:14px/1.45 system-ui,sans-serif;margin:16px auto;padding:0 16px;color:#222;max-width:1320px}
h1{font-size:20px;overflow-wrap:anywhere}h2{font-size:17px;margin-top:26px;border-top:1px solid #ddd;padding-top:8px}h3{font-size:14px;margin:14px 0 4px}
pre{background:#f6f8fa;border:1px solid #ddd;padding:8px;overflow-x:auto;max-width:100%;font-size:12px;line-height:1.35}
table{border-collapse:collapse;margin:8px 0;max-width:100%}td,th{border:1px solid #ddd;padding:3px 8px;font-size:12px;text-align:left;vertical-align:top}
td{overflow-wrap:anywhere}td:first-child{white-space:nowrap}code{overflow-wrap:anywhere}
.rounds li{margin:3px 0}p{max-width:1000px}
`;

/**
 * report.html of one bench run: what report.md says, with a time-sequence graph per captured
 * connection (uPlot, inlined from `assets`) that its sentence links to.
 * @example writeFileSync('report.html', renderRunHtml(result, loadHtmlAssets()))
 */
export function renderRunHtml(r: RunResult, assets: HtmlAssets): string {
  const x = reportOf(r);
  const code = (s: string) => escapeHtml(s).replace(/`([^`]+)`/g, '<code>$1</code>');
  const rows = (xs: Array<{ name: string; value: string }>) =>
    xs.map((s) => `<tr><td>${escapeHtml(s.name)}</td><td>${escapeHtml(s.value)}</td></tr>`).join('');
  const evidence = x.evidence
    .map(
      (e) =>
        `<h3>${escapeHtml(e.name)}</h3>\n<p><code>${escapeHtml(e.path)}</code>: ${escapeHtml(e.unlocks)}.</p>${
          e.commands.length > 0
            ? `\n<pre><code>${e.commands.map(([what, cmd]) => `${escapeHtml(`# ${what}`)}\n${escapeHtml(cmd)}`).join('\n')}</code></pre>`
            : ''
        }`,
    )
    .join('\n');
  const notWritten = x.notWritten.length
    ? `<ul>${x.notWritten.map((n) => `<li>${code(n)}.</li>`).join('')}</ul>`
    : '';
  let graphs: string;
  if (x.noGraphs) {
    graphs = `<h2 id="${TS_ID}">Time-sequence graphs</h2>\n<p>${code(x.noGraphs)} What each flag writes: <a href="#${EVIDENCE_ID}">Evidence</a>.</p>`;
  } else {
    const first = escapeHtml(x.connections[0]!.chartId);
    const sentence = x.roundsSentence
      ? `<p class="rounds-sentence">${escapeHtml(x.roundsSentence)} (<a href="#${first}">time-sequence graphs</a>).</p>\n`
      : '';
    const each = x.connections
      .map(
        (c) =>
          `<li><a href="#${escapeHtml(c.chartId)}">${escapeHtml(c.name)}</a>: ${escapeHtml(c.text)}.</li>`,
      )
      .join('');
    graphs = `<h2 id="${ROUNDS_ID}">Slow start, per connection (from the capture)</h2>
${sentence}<p>${escapeHtml(ROUNDS_INTRO)}:</p>
<ul class="rounds">${each}</ul>
${x.graphs!.html}`;
  }
  const uplot = x.graphs !== undefined;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(x.title)}</title>
${uplot ? `<style>${assets.uplotCss}</style>` : ''}<style>${CSS}${uplot ? SEQUENCE_CSS : ''}</style></head><body>
<h1>${escapeHtml(x.title)}</h1>
<h2>Summary</h2>
<pre>${escapeHtml(x.summary)}</pre>
<h2>Settings</h2>
<table><tr><th>setting</th><th>in force</th></tr>${rows(x.settings)}</table>
<details><summary>Options as resolved (enough to run it again)</summary><table><tr><th>option</th><th>value</th></tr>${rows(x.options)}</table></details>
<h2 id="${EVIDENCE_ID}">Evidence</h2>
${x.evidence.length === 0 ? '<p>The run wrote no evidence files.</p>' : evidence}
${notWritten}
${graphs}
${
  uplot
    ? `<script id="h2lab-ts" type="application/json">${scriptJson(x.graphs!.charts)}</script>
<script>${assets.uplotJs.replace(/<\/script/gi, '<\\/script')}</script>
<script>${SEQUENCE_SCRIPT}</script>`
    : ''
}
</body></html>
`;
}

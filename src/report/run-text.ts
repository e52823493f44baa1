/**
 * One run as a human table (the end of `h2lab bench`). A pure function of the result.
 */
import { formatBytes, formatMs } from '../core/index.ts';
import {
  type ConnectionAgeMedians,
  cpuApart,
  type LatencySummaryMs,
  type LinkDropsSummary,
  type QuicConnectionInfo,
  type RunResult,
  type TcpSideSummary,
} from '../model/index.ts';
import { findStrategy } from '../transport/index.ts';
import { runSettings } from './settings.ts';
import { wrapText } from './text.ts';

/** Where a row's value starts: two spaces, then the label padded to 22. */
const LABEL = 24;

function row(label: string, value: string): string {
  return `  ${label.padEnd(LABEL - 2)}${value}`;
}

function age(g: ConnectionAgeMedians): string {
  if (g.count === 0) return 'none';
  const body = g.smallBodyCount > 0 ? `, small bodies end ${formatMs(g.bodyAfterHeadersP50Ms)} after` : '';
  return `headers p50 ${formatMs(g.ttfbP50Ms)}, end ${formatMs(g.responseP50Ms)}${body} (n=${g.count})`;
}

/** The flow-control row: measured stalls, or why there are none to show. */
function flowRow(r: RunResult): string | undefined {
  const f = r.flowControl;
  if (!f) return r.transport.client === 'node' ? 'not measured (node:http2 client)' : undefined;
  const stalls = f.connectionStalls + f.streamStalls;
  if (stalls === 0)
    return `no stalls of the client's receive windows (${f.sessions} session${f.sessions === 1 ? '' : 's'})`;
  return `stalled ${formatMs(f.stalledMs)} in ${stalls} episodes (connection ${f.connectionStalls}: ${formatMs(f.connectionStalledMs)}, streams ${f.streamStalls}: ${formatMs(f.streamStalledMs)}), ${formatBytes(f.bytesAfterStall)} waited`;
}

function lat(s: LatencySummaryMs): string {
  if (s.count === 0) return '—';
  return `p50 ${formatMs(s.p50)}  p90 ${formatMs(s.p90)}  p99 ${formatMs(s.p99)}  p99.9 ${formatMs(s.p999)}  max ${formatMs(s.max)}`;
}

/** The page-load figures: completion time (median, and each burst's when there are several). */
function burstRows(b: NonNullable<RunResult['burst']>): string[] {
  const each =
    b.bursts > 1
      ? ` (median of ${b.bursts}: ${b.perBurst.map((x) => formatMs(x.completionMs)).join(', ')})`
      : '';
  const rows = [row('completion time', `${formatMs(b.completionMs)}${each}, t0 → last response end`)];
  const first = b.firstResponseMs !== undefined ? `${formatMs(b.firstResponseMs)}` : '— (no response)';
  rows.push(
    row(
      'first response',
      `${first}; ${b.connectionsOpened} connection${b.connectionsOpened === 1 ? '' : 's'} opened inside the timed period${b.failed > 0 ? `; ${b.failed} FAILED` : ''}`,
    ),
  );
  return rows;
}

/** One end's TCP facts on one line: windows at the end, retransmissions, RTT, the algorithm. */
function tcpLine(t: TcpSideSummary): string {
  const pct = t.segmentsOut > 0 ? ` (${((t.retransmittedSegments / t.segmentsOut) * 100).toFixed(2)}%)` : '';
  const parts = [
    `${t.connections} read${t.unread ? ` (${t.unread} not)` : ''}`,
    `cwnd at the end Σ ${t.cwndSegments.sum} segments (${formatBytes(t.cwndBytesSum)}), median ${t.cwndSegments.median}`,
    `${t.retransmittedSegments} retransmitted${pct}`,
    `RTT median ${formatMs(t.rttMs.median)}`,
  ];
  if (t.congestionControl) parts.push(t.congestionControl.join('/'));
  return parts.join(', ');
}

/**
 * One end's QUIC facts on one line, as its stack read them: windows at the end, packets sent and
 * received, smoothed RTT; where the end wrote qlog, its losses, retransmissions and most bytes in
 * flight; the client's line adds what the server sent that never arrived.
 */
function quicLine(q: readonly QuicConnectionInfo[], sentByPeer?: number): string {
  const n = q.length;
  const sum = (f: (c: QuicConnectionInfo) => number) => q.reduce((a, c) => a + f(c), 0);
  const cwnd = q.map((c) => c.cwndBytes).sort((a, b) => a - b)[n >> 1]!;
  const rtt = q.map((c) => c.rttMs).sort((a, b) => a - b)[n >> 1]!;
  const parts = [
    `${n} read`,
    `cwnd at the end Σ ${formatBytes(sum((c) => c.cwndBytes))}${n > 1 ? `, median ${formatBytes(cwnd)}` : ''}`,
    `${sum((c) => c.packetsSent)} packets sent (${formatBytes(sum((c) => c.bytesSent))}), ${sum((c) => c.packetsReceived)} received (${formatBytes(sum((c) => c.bytesReceived))})`,
    `RTT median ${formatMs(rtt)}`,
  ];
  const fromQlog = q.filter((c) => c.packetsLost !== undefined);
  if (fromQlog.length > 0) {
    const f = (g: (c: QuicConnectionInfo) => number | undefined) =>
      fromQlog.reduce((a, c) => a + (g(c) ?? 0), 0);
    parts.push(
      `${f((c) => c.packetsLost)} declared lost, ${f((c) => c.packetsRetransmitted)} sent with retransmitted data, at most ${formatBytes(Math.max(...fromQlog.map((c) => c.bytesInFlightMax ?? 0)))} in flight (its qlog)`,
    );
  }
  if (sentByPeer !== undefined) {
    const missing = sentByPeer - sum((c) => c.packetsReceived);
    if (missing > 0) parts.push(`the server sent ${missing} more than it received (of ${sentByPeer})`);
  }
  return parts.join(', ');
}

function dropsLine(d: LinkDropsSummary): string {
  const each =
    d.connections > 1
      ? `: ${d.perConnection.map((c) => c.lossUp + c.lossDown + c.queueUp + c.queueDown).join(', ')}${d.perConnectionOmitted ? ', …' : ''}`
      : '';
  return `${d.lossPackets + d.queuePackets} packets on ${d.connections} connection${d.connections === 1 ? '' : 's'} (${d.lossPackets} by loss, ${d.queuePackets} at the full queue; ${d.downPackets} down, ${d.upPackets} up)${each}`;
}

/** Renders a {@link RunResult} as plain text lines (no colour, no trailing newline). */
export function renderRunText(r: RunResult, options: { width?: number } = {}): string {
  const width = options.width ?? 80;
  const out: string[] = [];
  const t = r.transport;
  const proto =
    r.protocol.negotiated === r.protocol.requested
      ? r.protocol.negotiated
      : `requested ${r.protocol.requested}, negotiated ${r.protocol.negotiated}`;
  const sched =
    r.schedule.mode === 'burst'
      ? `burst of ${r.schedule.concurrency} requests at once${(r.schedule.bursts ?? 1) > 1 ? ` × ${r.schedule.bursts} (${formatMs(r.schedule.gapMs ?? 0)} apart, each on fresh connections)` : ''}, handshakes ${r.schedule.handshakes === 'exclude' ? 'excluded: connections opened before t0' : 'included: connections opened inside the timed period'}`
      : r.schedule.mode === 'open'
        ? `open loop, ${r.schedule.rateRps} req/s (${r.schedule.arrivals})`
        : `closed loop, ${r.schedule.concurrency} in flight`;
  out.push(`h2lab bench  ${r.target.url}${r.target.embedded ? ' (embedded fixture server)' : ''}`);
  out.push(
    row(
      'transport',
      `${t.name}${findStrategy(t.name)?.connections.fixed !== undefined ? '' : ` × ${t.connections}`}${t.policy ? ` (${t.policy})` : ''} over ${proto}${t.client === 'node' ? ' (node:http2 client)' : ''}`,
    ),
  );
  if (t.window) {
    out.push(
      row(
        'windows',
        `${t.window.preset}: stream ${formatBytes(t.window.streamWindowBytes)}, connection ${formatBytes(t.window.connectionWindowBytes)}`,
      ),
    );
  }
  out.push(
    row(
      'schedule',
      r.schedule.mode === 'burst'
        ? sched
        : `${sched}; ${(r.durationMs / 1000).toFixed(2)} s measured after ${formatMs(r.warmupMs)} warm-up`,
    ),
  );
  if (r.burst) out.push(...burstRows(r.burst));
  const c = r.counts;
  const fails = Object.entries(c.byFailure)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const statuses = Object.entries(c.byStatus)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');
  out.push(
    row(
      'requests',
      `${c.total} total, ${c.ok} ok, ${c.failed} failed${c.late ? `, ${c.late} late` : ''}${c.retried ? `, ${c.retried} retried after the server refused them (${c.attempts ?? '?'} attempts, ${c.unprocessed ?? 0} unprocessed)` : ''}`,
    ),
  );
  if (statuses) out.push(row('by status', statuses));
  if (fails) out.push(row('failures', fails));
  const outages = r.connections.outages;
  if (outages) {
    // Every connection attempt failing: when (run clock), how long, and what it cost.
    const each = outages.periods
      .map(
        (o) =>
          `at ${formatMs(o.startMs)} ${o.endMs !== undefined ? `for ${formatMs(o.endMs - o.startMs)}` : 'until the end'}, ${o.failedRequests} failed`,
      )
      .join('; ');
    const more = outages.omitted > 0 ? `; ${outages.omitted} more` : '';
    out.push(row('outages', `${outages.periods.length + outages.omitted} (${each}${more})`));
  }
  out.push(
    row(
      'throughput',
      `${r.throughput.rps.toFixed(1)} req/s, ${formatBytes(Math.round(r.throughput.bytesPerSec))}/s (${formatBytes(r.throughput.bytesIn)} in, ${formatBytes(r.throughput.bytesOut)} out)`,
    ),
  );
  if (r.responseHeaders) {
    const { responses, bytes } = r.responseHeaders;
    const coded = r.protocol.negotiated === 'h2' || r.protocol.negotiated === 'h2c' ? ', HPACK-encoded' : '';
    out.push(
      row(
        'response headers',
        `${(bytes / responses).toFixed(0)} B per response${coded} (${formatBytes(bytes)} in ${responses} responses)`,
      ),
    );
  }
  out.push(row(r.latencyUncorrectedMs ? 'latency (corrected)' : 'latency', lat(r.latencyMs)));
  if (r.latencyUncorrectedMs) out.push(row('latency (uncorrected)', lat(r.latencyUncorrectedMs)));
  out.push(row('time to headers', lat(r.ttfbMs)));
  if (r.clientQueueMs.count > 0 && r.clientQueueMs.max >= 0.1)
    out.push(row('waited in client', lat(r.clientQueueMs)));
  const k = r.connections;
  const conn = [
    `${k.opened} opened`,
    `${k.requestsPerConnection.mean.toFixed(1)} requests each (max ${k.requestsPerConnection.max})`,
  ];
  if (k.peakStreamsPerConnection !== undefined)
    conn.push(`peak ${k.peakStreamsPerConnection} streams on one`);
  if (k.serverMaxConcurrentStreams !== undefined) conn.push(`server allows ${k.serverMaxConcurrentStreams}`);
  if (k.streamCapHits) conn.push(`${k.streamCapHits} waits at the cap`);
  out.push(row('connections', conn.join(', ')));
  if (k.connectMs) out.push(row('connect', lat(k.connectMs)));
  if (k.tlsMs) out.push(row('TLS handshake', lat(k.tlsMs)));
  if (k.tcp?.server) out.push(row('TCP, server side', tcpLine(k.tcp.server)));
  if (k.tcp?.client) out.push(row('TCP, client side', tcpLine(k.tcp.client)));
  if (k.tcp?.linkDrops) out.push(row('link drops', dropsLine(k.tcp.linkDrops)));
  if (k.quic?.server && k.quic.server.connections > 0) {
    out.push(row('QUIC, server side', quicLine(k.quic.server.perConnection)));
  }
  if (k.quic) {
    const mine = new Set(k.quic.server?.perConnection.map((c) => c.clientPort));
    const matched = k.quic.perConnection.filter((c) => mine.has(c.clientPort));
    const sent = matched.length > 0 ? k.quic.server!.packetsSent : undefined;
    out.push(row('QUIC, client side', quicLine(k.quic.perConnection, sent)));
  }
  if (k.quic?.linkDrops) {
    const d = k.quic.linkDrops;
    out.push(
      row(
        'link drops',
        `${d.lossPackets + d.queuePackets} UDP packets of ${d.flows} flow${d.flows === 1 ? '' : 's'} (${d.lossPackets} by loss, ${d.queuePackets} at the full queue; ${d.downPackets} down, ${d.upPackets} up)`,
      ),
    );
  }
  if (r.connectionAge) {
    out.push(row('new connections', age(r.connectionAge.newConnection)));
    out.push(row('warm connections', age(r.connectionAge.warmConnection)));
  }
  const flow = flowRow(r);
  if (flow) out.push(row('flow control', flow));
  out.push(
    row(
      'client',
      `event loop ${(r.client.eventLoopUtilization * 100).toFixed(0)}% busy, ${r.client.cpu.toFixed(2)} CPU${cpuPerRequest(r)}${r.target.embedded || r.options.serverInProcess ? ' (with the embedded server thread)' : ''}, ${r.client.workers} worker${r.client.workers > 1 ? 's' : ''}${r.client.saturated ? ' — SATURATED' : ''}`,
    ),
  );
  const loop = serverLoopRow(r);
  if (loop) out.push(row('server', loop));
  if (r.server) {
    const s = r.server;
    const parts = [`${s.requests} requests`];
    if (s.bytesOut !== undefined) parts.push(`${formatBytes(s.bytesOut)} sent`);
    if (s.peakInFlight !== undefined) parts.push(`peak ${s.peakInFlight} in flight`);
    if (s.poolQueueMs) parts.push(`pool queue mean ${formatMs(s.poolQueueMs.mean)}`);
    out.push(row('server saw', parts.join(', ')));
  }
  // What else could decide the outcome (the transport and windows rows above carry the rest).
  const shown = new Set(['h1 connections', 'h2-pool sessions', 'HTTP/2 windows', 'HTTP/2 client']);
  for (const s of runSettings(r)) if (!shown.has(s.name)) out.push(row(s.name, s.value));
  for (const w of r.warnings) out.push(`  ! ${w}`);
  if (r.error) out.push(`  ✗ ${r.error.code}: ${r.error.message}`);
  return out.map((line) => fit(line, width)).join('\n');
}

/** A row, warning or error line wrapped to `width`, continuing under its value (or its text). */
function fit(line: string, width: number): string {
  if ([...line].length <= width) return line;
  const mark = /^ {2}[!✗] /.exec(line);
  const hang = mark
    ? 4
    : line.startsWith('  ') && line[LABEL] !== ' ' && line.slice(2, LABEL).trim()
      ? LABEL
      : 0;
  if (hang === 0) return line;
  const pad = ' '.repeat(hang);
  return line.slice(0, hang) + wrapText(line.slice(hang), width, pad).slice(hang);
}

/** The load process's CPU per measured request over the measured period, e.g. ` (12.3 µs per request)`. */
function cpuPerRequest(r: RunResult): string {
  if (r.counts.total === 0 || r.client.cpu <= 0) return '';
  const us = (r.client.cpu * r.durationMs * 1000) / r.counts.total;
  return ` (${us.toFixed(1)} µs per request)`;
}

/**
 * The fixture server's own CPU and event loop, beside the client's row, and the client's CPU without
 * the server's thread when that thread ran in the load process.
 */
function serverLoopRow(r: RunResult): string | undefined {
  const a = cpuApart(r);
  if (!a) return undefined;
  const elu =
    a.serverEventLoopUtilization !== undefined
      ? `event loop ${(a.serverEventLoopUtilization * 100).toFixed(0)}% busy, `
      : '';
  const own = `${elu}${a.serverSeconds.toFixed(3)} CPU s on its own ${a.scope} (${(a.serverMsPerRequest * 1000).toFixed(1)} µs per request)`;
  const client =
    a.clientSeconds !== undefined && a.clientMsPerRequest !== undefined
      ? `; the client without it ${a.clientSeconds.toFixed(3)} CPU s (${(a.clientMsPerRequest * 1000).toFixed(1)} µs per request)`
      : '';
  return `${own}${client}, ${a.requests} requests, warm-up included`;
}

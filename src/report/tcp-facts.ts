/**
 * The TCP mechanism behind a difference, in sentences with their numbers: congestion windows held,
 * retransmissions (and, on a multiplexed connection, the head-of-line blocking each one causes), the
 * link's drops, RTT inflation, receive-window limits. A pure function of two runs' `connections.tcp`;
 * it says nothing unless a difference is material (thresholds in {@link TCP_FACT_THRESHOLDS}), so a
 * verdict can append its sentences unconditionally.
 *
 * Which end: the server's readings when both runs have them (its sending direction carries the
 * responses, whose congestion window decides a download), else the client's (the request direction:
 * its RTT and retransmissions still describe the path, its windows only an upload). The sentence says
 * which.
 */
import { formatBytes, formatMs } from '../core/index.ts';
import type { LinkDropsSummary, RunResult, TcpSideSummary } from '../model/index.ts';

/**
 * When a difference is material, and why these values:
 * - `cwndRatio` 1.5: connection-count effects come in multiples (six windows against one); within
 *   1.5× two sets of windows are within what one connection's slow start varies from run to run.
 * - `minRetransmits` 5 segments, and `minRetransmitShare` 0.1% of segments sent: a connection
 *   retransmits a few segments even on a clean path (tail-loss probes, spurious timeouts), each
 *   costing about one RTT; below both, losses cannot explain a difference of the size compare reports.
 * - `minLinkDrops` 5 packets: as for retransmissions (the link's drops are their cause).
 * - `rttRatio` 1.5 and `rttMinDiffMs` 5: a smoothed RTT 1.5× the other run's and ≥ 5 ms longer is
 *   queueing the run built up itself; smaller differences are the kernel's RTT estimate noise
 *   (rttvar is typically a quarter of the RTT).
 * - `rwndShare` 0.2: a sender limited by the receiver's window for a fifth of its busy time lost
 *   throughput to the receiver's buffer, not to the path.
 */
export const TCP_FACT_THRESHOLDS = {
  cwndRatio: 1.5,
  minRetransmits: 5,
  minRetransmitShare: 0.001,
  minLinkDrops: 5,
  rttRatio: 1.5,
  rttMinDiffMs: 5,
  rwndShare: 0.2,
} as const;

const WORDS = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
const num = (n: number): string => WORDS[n] ?? String(n);
const plural = (n: number, one: string, many = `${one}s`): string => (n === 1 ? one : many);

/** The run's name in a sentence: its transport (`h1`, `h2`, `h2-pool`) unless the caller names it. */
function nameOf(run: RunResult, label: string | undefined): string {
  return label ?? run.transport.name;
}

interface Side {
  run: RunResult;
  name: string;
  tcp: TcpSideSummary;
  /** More than one stream shared a connection: a loss stalls all of them (RFC 9113 §5 multiplexing over one TCP stream). */
  multiplexed: boolean;
  drops: LinkDropsSummary | undefined;
}

function sides(
  baseline: RunResult,
  candidate: RunResult,
  labels: readonly [string?, string?],
): { a: Side; b: Side; end: 'server' | 'client' } | undefined {
  const ta = baseline.connections.tcp;
  const tb = candidate.connections.tcp;
  const end = ta?.server && tb?.server ? 'server' : ta?.client && tb?.client ? 'client' : undefined;
  if (!end || !ta || !tb) return undefined;
  const side = (run: RunResult, label: string | undefined): Side => ({
    run,
    name: nameOf(run, label),
    tcp: run.connections.tcp![end]!,
    multiplexed: (run.connections.peakStreamsPerConnection ?? 1) > 1,
    drops: run.connections.tcp!.linkDrops,
  });
  return { a: side(baseline, labels[0]), b: side(candidate, labels[1]), end };
}

const ratio = (x: number, y: number): number =>
  Math.min(x, y) > 0 ? Math.max(x, y) / Math.min(x, y) : Infinity;

function cwndSentence(a: Side, b: Side, end: 'server' | 'client'): string | undefined {
  // The window that decides a transfer is its sender's: the client's windows explain nothing about
  // downloads (they carry requests and ACKs), only about runs that mostly upload.
  const uploads = (s: Side) => s.run.throughput.bytesOut >= s.run.throughput.bytesIn;
  if (end === 'client' && !(uploads(a) && uploads(b))) return undefined;
  // A run of several bursts opens fresh connections for each: its windows were held a burst at a
  // time, so they are compared per burst (the mean over its bursts), never summed across bursts.
  const per = (s: Side) => {
    const k = Math.max(1, s.run.burst?.bursts ?? 1);
    return {
      k,
      conns: Math.round(s.tcp.connections / k),
      bytes: s.tcp.cwndBytesSum / k,
      segments: Math.round(s.tcp.cwndSegments.sum / k),
    };
  };
  const [pa, pb] = [per(a), per(b)];
  const [hi, lo, ph, pl] = pa.bytes >= pb.bytes ? [a, b, pa, pb] : [b, a, pb, pa];
  if (pl.bytes <= 0 || ratio(ph.bytes, pl.bytes) < TCP_FACT_THRESHOLDS.cwndRatio) return undefined;
  // The count in words is the pool the run recorded (`transport.connections`, as the settings
  // table prints it); when more were read, some were replaced during the run, and that is said
  // ("h1's 12 connections" when h1 had 6).
  const whose = (s: Side, p: typeof pa) => {
    const pool = s.run.burst ? p.conns : s.run.transport.connections;
    return pool === p.conns || pool <= 0
      ? `${num(p.conns)} ${plural(p.conns, 'connection')}`
      : `${num(pool)} ${plural(pool, 'connection')} (${p.conns} over the run, some replaced)`;
  };
  const held = (p: typeof pa) =>
    p.conns === 1
      ? `one (${formatBytes(p.bytes)}, ${p.segments} segments)`
      : `${num(p.conns)} (sum ${formatBytes(p.bytes)}, ${p.segments} segments)`;
  const dir =
    end === 'server' ? "the server's, carrying the responses" : "the client's, carrying the requests";
  const bursts = ph.k > 1 ? `; per burst, the mean of ${ph.k} bursts` : '';
  return `${hi.name}'s ${whose(hi, ph)} held ${num(ph.conns)} congestion ${plural(ph.conns, 'window')} at the end (${dir}${bursts}): ${held(ph)} against ${lo.name}'s ${held(pl)}`;
}

const share = (t: TcpSideSummary): number =>
  t.segmentsOut > 0 ? t.retransmittedSegments / t.segmentsOut : 0;
const lossy = (t: TcpSideSummary): boolean =>
  t.retransmittedSegments >= TCP_FACT_THRESHOLDS.minRetransmits &&
  share(t) >= TCP_FACT_THRESHOLDS.minRetransmitShare;

function perConnection(t: TcpSideSummary): string {
  if (t.connections === 1) return '';
  const list = t.perConnection.map((c) => c.retransmittedSegments).join(', ');
  return ` (${list}${t.perConnectionOmitted ? ', …' : ''})`;
}

function retransmitSentence(a: Side, b: Side, end: 'server' | 'client'): string | undefined {
  if (!lossy(a.tcp) && !lossy(b.tcp)) return undefined;
  const on = (s: Side): string => {
    const t = s.tcp;
    const pool = s.run.burst ? t.connections : s.run.transport.connections;
    const conns =
      t.connections === 1
        ? 'one connection'
        : pool === t.connections || pool <= 0
          ? `${num(t.connections)} connections`
          : `${num(pool)} connections (${t.connections} over the run, some replaced)`;
    const pct = (share(t) * 100).toFixed(share(t) >= 0.01 ? 1 : 2);
    return `on ${s.name}'s ${conns}${perConnection(t)}, ${pct}% of ${t.segmentsOut} sent`;
  };
  const hol = (s: Side): string => {
    if (!s.multiplexed || !lossy(s.tcp)) return '';
    // One TCP byte stream under every stream (RFC 9113 §5): data after a hole waits for the
    // retransmission, about one RTT, whichever stream it belongs to. No total is given: losses in
    // the same round trip are repaired together (with BBR at 2% loss, 49 losses × 40 ms was 2.0 s
    // against a 0.79 s run), and a timeout stalls longer than an RTT.
    return `; on ${s.name}'s connection each loss held back every stream until its retransmission arrived, about one RTT (${formatMs(s.tcp.rttMs.median)}; losses in one round trip share it)`;
  };
  const n = (s: Side) => s.tcp.retransmittedSegments;
  return `the ${end} retransmitted ${n(a)} ${plural(n(a), 'segment')} ${on(a)}, and ${n(b)} ${on(b)}${hol(a)}${hol(b)}`;
}

function dropsSentence(a: Side, b: Side): string | undefined {
  const total = (d: LinkDropsSummary | undefined) => (d ? d.lossPackets + d.queuePackets : 0);
  if (!a.drops || !b.drops) return undefined;
  if (Math.max(total(a.drops), total(b.drops)) < TCP_FACT_THRESHOLDS.minLinkDrops) return undefined;
  const one = (s: Side): string => {
    const d = s.drops!;
    const causes =
      d.queuePackets === 0
        ? 'all by random loss'
        : d.lossPackets === 0
          ? 'all at the full queue'
          : `${d.lossPackets} by random loss, ${d.queuePackets} at the full queue`;
    const each =
      d.connections > 1
        ? ` (${d.perConnection.map((c) => c.lossUp + c.lossDown + c.queueUp + c.queueDown).join(', ')}${d.perConnectionOmitted ? ', …' : ''})`
        : '';
    const who =
      d.connections === 1 ? `${s.name}'s one connection` : `${s.name}'s ${num(d.connections)} connections`;
    return `${total(d)} ${plural(total(d), 'packet')} of ${who}${each}${total(d) > 0 ? `, ${causes}` : ''}`;
  };
  return `the emulated link dropped ${one(a)}; ${one(b)}`;
}

function rttSentence(a: Side, b: Side): string | undefined {
  const [hi, lo] = a.tcp.rttMs.median >= b.tcp.rttMs.median ? [a, b] : [b, a];
  const h = hi.tcp.rttMs.median;
  const l = lo.tcp.rttMs.median;
  if (l <= 0 || h / l < TCP_FACT_THRESHOLDS.rttRatio || h - l < TCP_FACT_THRESHOLDS.rttMinDiffMs)
    return undefined;
  const base = hi.run.environment.link?.rttMs;
  return `${hi.name}'s connections saw a median smoothed RTT of ${formatMs(h)} against ${lo.name}'s ${formatMs(l)}${base !== undefined ? ` (the link's own RTT is ${formatMs(base)})` : ''}: the difference waited in a queue`;
}

function rwndSentence(a: Side, b: Side, end: 'server' | 'client'): string | undefined {
  const part = (t: TcpSideSummary) => {
    let busy = 0;
    let limited = 0;
    for (const c of t.perConnection) {
      busy += c.busyMs ?? 0;
      limited += c.rwndLimitedMs ?? 0;
    }
    return busy > 0 ? limited / busy : 0;
  };
  const [pa, pb] = [part(a.tcp), part(b.tcp)];
  const [hi, ph, pl] = pa >= pb ? [a, pa, pb] : [b, pb, pa];
  if (ph < TCP_FACT_THRESHOLDS.rwndShare || ph - pl < TCP_FACT_THRESHOLDS.rwndShare) return undefined;
  const peer = end === 'server' ? "the client's" : "the server's";
  return `${hi.name}'s ${end === 'server' ? 'server' : 'client'} was limited by ${peer} TCP receive window for ${(ph * 100).toFixed(0)}% of its sending time (the other run ${(pl * 100).toFixed(0)}%)`;
}

/**
 * Of several runs of one cell, the one whose TCP facts speak for them: the run with the median
 * latency p50 among those that have TCP facts (the lower middle of an even count), so every number
 * in a sentence is one a single run saw. Undefined when none has facts.
 */
export function representativeRun(runs: readonly RunResult[]): RunResult | undefined {
  const withTcp = runs.filter((r) => r.connections.tcp !== undefined && r.error === undefined);
  if (withTcp.length === 0) return undefined;
  const sorted = [...withTcp].sort((a, b) => a.latencyMs.p50 - b.latencyMs.p50);
  return sorted[(sorted.length - 1) >> 1];
}

/**
 * Sentences (no trailing period) about the TCP facts of two runs, only for material differences;
 * empty when there are none or when the runs lack the facts (no Linux, no addon, no common end).
 * Given several runs per side (a compare cell's), each side speaks through its
 * {@link representativeRun}. `labels` name the sides (default: their transport names).
 *
 * @example
 * tcpFactSentences(h1Run, h2Run)
 * // ["h1's six connections held six congestion windows at the end (the server's, carrying the
 * //   responses): six (sum 1.26 MiB, 914 segments) against h2's one (264 KiB, 187 segments)", …]
 */
export function tcpFactSentences(
  baseline: RunResult | readonly RunResult[],
  candidate: RunResult | readonly RunResult[],
  labels: readonly [string?, string?] = [],
): string[] {
  const a = Array.isArray(baseline) ? representativeRun(baseline) : (baseline as RunResult);
  const b = Array.isArray(candidate) ? representativeRun(candidate) : (candidate as RunResult);
  if (!a || !b) return [];
  const s = sides(a, b, labels);
  if (!s) return [];
  return [
    cwndSentence(s.a, s.b, s.end),
    retransmitSentence(s.a, s.b, s.end),
    dropsSentence(s.a, s.b),
    rttSentence(s.a, s.b),
    rwndSentence(s.a, s.b, s.end),
  ].filter((x): x is string => x !== undefined);
}

/** The run without an error whose `f` is the median of those where `f` is defined (the lower of two). */
function medianRunBy(
  runs: RunResult | readonly RunResult[],
  f: (r: RunResult) => number | undefined,
): RunResult | undefined {
  const list = (Array.isArray(runs) ? runs : [runs as RunResult])
    .filter((r) => r.error === undefined && f(r) !== undefined)
    .sort((a, b) => f(a)! - f(b)!);
  return list[(list.length - 1) >> 1];
}

/**
 * Head-of-line blocking after a loss, HTTP/2 over TCP against HTTP/3 over QUIC, from what the link
 * dropped of each (a sentence without trailing period, or undefined when either run lacks the link's
 * count or neither lost {@link TCP_FACT_THRESHOLDS}.minLinkDrops packets). TCP delivers one byte
 * stream in order, so a packet lost on a connection carrying several streams holds back every one of
 * them until its retransmission arrives; QUIC orders data within a stream only (RFC 9000 §2.2), so a
 * lost packet holds back the stream whose data it carried. The streams in flight come from the run
 * (`peakStreamsPerConnection`); how long each stream waited is not measured (the HTTP/3 binding
 * reports no per-stream times). Each side speaks through its median run.
 *
 * @example headOfLineSentence(h2Runs, h3Runs)
 * // "the link dropped 17 packets of h2's one TCP connection, each holding back all of the up to 8
 * //   streams in flight on it until retransmitted (TCP delivers in order), and 15 of h3's QUIC
 * //   connection, each holding back only the stream whose data it carried (QUIC orders within a stream)"
 */
export function headOfLineSentence(
  tcpRuns: RunResult | readonly RunResult[],
  quicRuns: RunResult | readonly RunResult[],
  labels: readonly [string?, string?] = [],
): string | undefined {
  const tcpDrops = (r: RunResult) => {
    const d = r.connections.tcp?.linkDrops;
    return d ? d.lossPackets + d.queuePackets : undefined;
  };
  const quicDrops = (r: RunResult) => {
    const d = r.connections.quic?.linkDrops;
    return d ? d.lossPackets + d.queuePackets : undefined;
  };
  const t = medianRunBy(tcpRuns, tcpDrops);
  const q = medianRunBy(quicRuns, quicDrops);
  if (!t || !q) return undefined;
  const lostT = tcpDrops(t)!;
  const lostQ = quicDrops(q)!;
  if (Math.max(lostT, lostQ) < TCP_FACT_THRESHOLDS.minLinkDrops) return undefined;
  const streams = t.connections.peakStreamsPerConnection ?? 1;
  if (streams < 2) return undefined;
  const conns = t.connections.tcp?.linkDrops?.connections ?? 1;
  const tName = labels[0] ?? t.transport.name;
  const qName = labels[1] ?? q.transport.name;
  const qConns = q.connections.quic?.connections ?? 1;
  return `the link dropped ${lostT} ${plural(lostT, 'packet')} of ${tName}'s ${conns === 1 ? 'one TCP connection' : `${num(conns)} TCP connections`}, each holding back all of the up to ${streams} streams in flight on ${conns === 1 ? 'it' : 'its connection'} until retransmitted (TCP delivers in order), and ${lostQ} of ${qName}'s ${qConns === 1 ? 'QUIC connection' : `${num(qConns)} QUIC connections`}, each holding back only the stream whose data it carried (QUIC orders within a stream)`;
}

/**
 * The congestion windows of the two senders when QUIC's controller is not TCP's: the QUIC server's
 * (user space, the binding's: its readings' median) against the TCP server's per connection at the
 * end (the kernel's, what `--cc` pins). Said only when the controllers differ and one window is at
 * least {@link TCP_FACT_THRESHOLDS}.cwndRatio times the other: a window held smaller on the same link
 * bounds that side's transfer, and the sentence names both controllers so the reader sees the
 * difference may be theirs rather than the protocols'. Each side speaks through its median run (by
 * its window).
 *
 * @example controllerWindowSentence(h2Runs, h3Runs, ['h2', 'h3'])
 * // "h3's QUIC server (cubic, the binding's, user space) held a congestion window of 96.0 KiB
 * //   (median of its readings) against 1.20 MiB on each of h2's one TCP connection at the end (bbr,
 * //   the kernel's), 12.8× smaller under the link's 2% loss: the controllers differ, so part of
 * //   the difference may be theirs"
 */
export function controllerWindowSentence(
  tcpRuns: readonly RunResult[],
  quicRuns: readonly RunResult[],
  labels: readonly [string?, string?] = [],
): string | undefined {
  const positive = (x: number | undefined) => (x !== undefined && x > 0 ? x : undefined);
  const tcpWindow = (r: RunResult) => {
    const s = r.connections.tcp?.server;
    return s && s.connections > 0 ? positive(s.cwndBytesSum / s.connections) : undefined;
  };
  const quicWindow = (r: RunResult) => positive(r.connections.quic?.server?.cwndBytes?.median);
  const t = medianRunBy(tcpRuns, tcpWindow);
  const q = medianRunBy(quicRuns, quicWindow);
  if (!t || !q) return undefined;
  const tcpCc = t.environment.link?.congestionControl ?? t.environment.congestionControl;
  const quicCc = q.connections.quic?.server?.congestionControl;
  if (!tcpCc || !quicCc || tcpCc === quicCc) return undefined;
  const tw = tcpWindow(t)!;
  const qw = quicWindow(q)!;
  const r = ratio(tw, qw);
  if (r < TCP_FACT_THRESHOLDS.cwndRatio) return undefined;
  const tName = labels[0] ?? t.transport.name;
  const qName = labels[1] ?? q.transport.name;
  const conns = t.connections.tcp?.server?.connections ?? 1;
  const loss = t.environment.link?.loss;
  const under = loss ? ` under the link's ${+(loss * 100).toFixed(2)}% loss` : '';
  return `${qName}'s QUIC server (${quicCc}, the binding's, user space) held a congestion window of ${formatBytes(qw)} (median of its readings) against ${formatBytes(tw)} on ${conns === 1 ? `${tName}'s one TCP connection` : `each of ${tName}'s ${num(conns)} TCP connections (mean)`} at the end (${tcpCc}, the kernel's), ${r.toFixed(1)}× ${qw < tw ? 'smaller' : 'larger'}${under}: the controllers differ, so part of the difference may be theirs`;
}

/**
 * What the link's queue did to a QUIC server's packets, and why, in one sentence with the run's
 * numbers. A QUIC sender runs its own congestion control in user space (RFC 9002), so its first
 * flight is whatever initial window its stack chose: the fixture's binding gives quiche 1,000
 * packets where TCP starts at 10 segments (RFC 6928), and a first flight larger than the link's
 * queue is dropped there. The drops come from the link's relay; the server's initial window and the
 * packets it declared lost come from its qlog, read only where it wrote one (`--qlog`). The cause is
 * named only when that window was read, exceeds TCP's on the same link and exceeds the link's
 * recorded queue; otherwise the drops are said without a cause.
 */
import { formatBytes } from '../core/index.ts';
import type { RunResult } from '../model/index.ts';

/** Fewer queue drops than this on a run are what any sender's probing costs: no story. */
const MIN_QUEUE_DROPS = 5;

/** TCP's MSS on a 1,500-byte MTU with timestamps, when no TCP run recorded its own. */
const DEFAULT_MSS = 1448;

/**
 * Said wherever the server's qlog was read: writing it costs the fixture's sender enough to lengthen
 * a bulk download several-fold (bench/h3-qlog-cost.ts), so h3's times of such a run are not its own.
 */
const QLOG_COST =
  "; the server wrote that qlog while sending, which slows it (docs/performance.md): h3's times in this run include that cost, a run without --qlog gives its own";

const n = (x: number): string => x.toLocaleString('en-US');

/**
 * The sentence (no trailing period) for one QUIC strategy's runs behind a link, or undefined when
 * the runs went through no link, or its queue dropped fewer than {@link MIN_QUEUE_DROPS} of their
 * packets. `label` names the strategy; `tcpMss` is the MSS a TCP run on the same link recorded.
 *
 * @example quicQueueDropsSentence(h3Runs, 'h3', 1448)
 * // "the link's full queue dropped 1,190 of h3's UDP packets, 1,180 of them server → client, and the
 * //  server declared 2,013 packets lost (its qlog): its initial congestion window was 1.14 MiB
 * //  (read from its qlog), 83× TCP's 10 segments (14.1 KiB) on the same link and more than the
 * //  link's queue of 62.5 KiB holds, so its first round trip overran the queue"
 */
export function quicQueueDropsSentence(
  runs: readonly RunResult[],
  label: string,
  tcpMss = DEFAULT_MSS,
): string | undefined {
  const drops = (r: RunResult) => r.connections.quic?.linkDrops?.queuePackets;
  const withDrops = runs.filter((r) => r.error === undefined && r.environment.link && drops(r) !== undefined);
  if (withDrops.length === 0) return undefined;
  const run = [...withDrops].sort((a, b) => drops(a)! - drops(b)!)[(withDrops.length - 1) >> 1]!;
  const d = run.connections.quic!.linkDrops!;
  if (d.queuePackets < MIN_QUEUE_DROPS) return undefined;
  const link = run.environment.link!;
  const server = run.connections.quic?.server;
  const where =
    d.lossPackets > 0
      ? `; ${n(d.lossPackets)} more by random loss, ${n(d.downPackets)} of all its drops server → client`
      : `, ${n(d.downPackets)} of them server → client`;
  const head = `the link's full queue dropped ${n(d.queuePackets)} of ${label}'s UDP packets${where}`;
  const lost =
    server?.packetsLost !== undefined
      ? `, and the server declared ${n(server.packetsLost)} packets lost (its qlog)`
      : '';
  const initials = (server?.perConnection ?? []).flatMap((c) => c.initialCwndBytes ?? []);
  if (initials.length === 0) {
    const why = server
      ? "the server's initial congestion window was not read: its qlog is read only with --qlog DIR; rerun with it to see whether the first flight overran the queue (writing the qlog slows the server, so take h3's times from this run)"
      : "the QUIC server is not h2lab's fixture, so its initial congestion window is not known";
    return `${head}${lost}; ${why}`;
  }
  const initial = Math.max(...initials);
  const iw = link.initialCwnd ?? 10;
  const tcpBytes = iw * tcpMss;
  const queue = link.queueBytes;
  // A window the queue could hold, or no larger than TCP's on the same link, does not explain drops
  // TCP did not suffer: the cause is then not claimed.
  if (initial <= tcpBytes || (queue !== undefined && initial <= queue))
    return `${head}${lost}; the server's initial congestion window was ${formatBytes(initial)} (read from its qlog), which does not by itself exceed ${queue !== undefined && initial <= queue ? `the link's queue of ${formatBytes(queue)}` : `TCP's ${iw} segments`}${QLOG_COST}`;
  const times = Math.round(initial / tcpBytes);
  const overQueue =
    queue !== undefined ? ` and more than the link's queue of ${formatBytes(queue)} holds` : '';
  return `${head}${lost}: its initial congestion window was ${formatBytes(initial)} (read from its qlog), ${times}× TCP's ${iw} segments (${formatBytes(tcpBytes)}) on the same link${overQueue}, so its first round trip overran the queue${QLOG_COST}`;
}

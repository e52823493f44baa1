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

/** What the link's queue did to one QUIC strategy's median run, and what its server's stack read. */
interface QuicQueueDrops {
  drops: NonNullable<NonNullable<RunResult['connections']['quic']>['linkDrops']>;
  link: NonNullable<RunResult['environment']['link']>;
  server: NonNullable<RunResult['connections']['quic']>['server'];
  /** The server's largest initial congestion window (its qlog), bytes; undefined when not read. */
  initial?: number;
  /** TCP's initial window on the same link: segments and bytes. */
  iw: number;
  tcpBytes: number;
  /** The link's recorded queue, bytes. */
  queue?: number;
  /** The window read, larger than TCP's and than the queue: the first flight overran the queue. */
  overran: boolean;
}

/**
 * The queue drops of a QUIC strategy's runs behind a link (the median run by drops) with the server's
 * initial window, or undefined when the runs went through no link or its queue dropped fewer than
 * {@link MIN_QUEUE_DROPS} of their packets. `tcpMss` is the MSS a TCP run on the same link recorded.
 */
function quicQueueDrops(runs: readonly RunResult[], tcpMss = DEFAULT_MSS): QuicQueueDrops | undefined {
  const drops = (r: RunResult) => r.connections.quic?.linkDrops?.queuePackets;
  const withDrops = runs.filter((r) => r.error === undefined && r.environment.link && drops(r) !== undefined);
  if (withDrops.length === 0) return undefined;
  const run = [...withDrops].sort((a, b) => drops(a)! - drops(b)!)[(withDrops.length - 1) >> 1]!;
  const d = run.connections.quic!.linkDrops!;
  if (d.queuePackets < MIN_QUEUE_DROPS) return undefined;
  const link = run.environment.link!;
  const server = run.connections.quic?.server;
  const initials = (server?.perConnection ?? []).flatMap((c) => c.initialCwndBytes ?? []);
  const initial = initials.length > 0 ? Math.max(...initials) : undefined;
  const iw = link.initialCwnd ?? 10;
  const tcpBytes = iw * tcpMss;
  const queue = link.queueBytes;
  // A window the queue could hold, or no larger than TCP's on the same link, does not explain drops
  // TCP did not suffer: the cause is then not claimed.
  const overran = initial !== undefined && initial > tcpBytes && (queue === undefined || initial > queue);
  return {
    drops: d,
    link,
    server,
    ...(initial !== undefined ? { initial } : {}),
    iw,
    tcpBytes,
    ...(queue !== undefined ? { queue } : {}),
    overran,
  };
}

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
  const q = quicQueueDrops(runs, tcpMss);
  if (!q) return undefined;
  const { drops: d, server, initial, iw, tcpBytes, queue } = q;
  const where =
    d.lossPackets > 0
      ? `; ${n(d.lossPackets)} more by random loss, ${n(d.downPackets)} of all its drops server → client`
      : `, ${n(d.downPackets)} of them server → client`;
  const head = `the link's full queue dropped ${n(d.queuePackets)} of ${label}'s UDP packets${where}`;
  const lost =
    server?.packetsLost !== undefined
      ? `, and the server declared ${n(server.packetsLost)} packets lost (its qlog)`
      : '';
  if (initial === undefined) {
    const why = server
      ? "the server's initial congestion window was not read: its qlog is read only with --qlog DIR; rerun with it to see whether the first flight overran the queue (writing the qlog slows the server, so take h3's times from this run)"
      : "the QUIC server is not h2lab's fixture, so its initial congestion window is not known";
    return `${head}${lost}; ${why}`;
  }
  if (!q.overran)
    return `${head}${lost}; the server's initial congestion window was ${formatBytes(initial)} (read from its qlog), which does not by itself exceed ${queue !== undefined && initial <= queue ? `the link's queue of ${formatBytes(queue)}` : `TCP's ${iw} segments`}${QLOG_COST}`;
  const overQueue =
    queue !== undefined ? ` and more than the link's queue of ${formatBytes(queue)} holds` : '';
  return `${head}${lost}: its initial congestion window was ${formatBytes(initial)} (read from its qlog), ${firstFlightTimes(q)}× TCP's ${iw} segments (${formatBytes(tcpBytes)}) on the same link${overQueue}, so its first round trip overran the queue${QLOG_COST}`;
}

/** How many times TCP's initial window on the same link the QUIC server's was. */
function firstFlightTimes(q: QuicQueueDrops): number {
  return Math.round(q.initial! / q.tcpBytes);
}

/**
 * The same finding as {@link quicQueueDropsSentence} in one short clause, only where it names the
 * cause (the server's first flight overran the link's queue), for the answer's line; else undefined.
 *
 * @example quicFirstFlightClause(h3Runs, 'h3', 1448)
 * // "the link's queue dropped 1,190 of h3's packets: its server's first flight of 1.14 MiB (83× TCP's) overran it"
 */
export function quicFirstFlightClause(
  runs: readonly RunResult[],
  label: string,
  tcpMss = DEFAULT_MSS,
): string | undefined {
  const q = quicQueueDrops(runs, tcpMss);
  if (!q?.overran) return undefined;
  return `the link's queue dropped ${n(q.drops.queuePackets)} of ${label}'s packets: its server's first flight of ${formatBytes(q.initial!)} (${firstFlightTimes(q)}× TCP's) overran it`;
}

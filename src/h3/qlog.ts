/**
 * The sender's facts that only quiche's qlog carries. The binding's metrics (per connection: packets
 * and bytes each way, smoothed RTT, congestion window) have no packets lost, no bytes in flight and
 * no retransmissions; quiche writes all three into the connection's qlog (JSON-SEQ, RFC 7464), which
 * the binding enables per connection when given a directory. This reads one such file.
 *
 * What is read:
 * - `quic:recovery_metrics_updated` (RFC 9002 §A.7's metrics, as quiche logs them): the
 *   `congestion_window` when the first packet left (the initial window), the largest
 *   `bytes_in_flight`, and quiche's running total `cf_lost_packets` (packets declared lost, §6);
 * - `quic:packet_sent`: packets whose STREAM or CRYPTO frames carry bytes already sent once — the
 *   packets with retransmitted data (quiche's `Stats::retrans`). quiche sends each stream's new data
 *   in offset order, so a frame starting below the highest offset sent so far is a retransmission.
 */
import { readFileSync } from 'node:fs';

/** What one connection's qlog says about its sender. Counts are this end's (the qlog's vantage point). */
interface QlogSenderFacts {
  /** The congestion window when the first packet left, bytes (quiche: its initial packets × 1,200 B). */
  initialCwndBytes?: number;
  /** The largest bytes in flight logged, bytes. */
  bytesInFlightMax?: number;
  /** Packets declared lost (RFC 9002 §6). */
  packetsLost?: number;
  /** Packets sent that carried data sent before (STREAM or CRYPTO frames). */
  packetsRetransmitted: number;
  /** Packets sent (`quic:packet_sent` events): the same count as the binding's metrics. */
  packetsSent: number;
}

interface Frame {
  frame_type?: string;
  stream_id?: number;
  offset?: number;
  raw?: { payload_length?: number };
}
interface QlogEvent {
  name?: string;
  data?: {
    congestion_window?: number;
    bytes_in_flight?: number;
    cf_lost_packets?: { total?: number };
    header?: { packet_type?: string };
    frames?: Frame[];
  };
}

/** The records of a JSON-SEQ text (RFC 7464): RS-separated JSON; a record cut off mid-write is skipped. */
export function jsonSeqRecords(text: string): unknown[] {
  const out: unknown[] = [];
  for (const r of text.split('\x1e')) {
    if (r.trim() === '') continue;
    try {
      out.push(JSON.parse(r));
    } catch {
      // the last record of a file still being written
    }
  }
  return out;
}

/** The sender's facts in a qlog's text (see the module comment). */
export function qlogSenderFacts(text: string): QlogSenderFacts {
  const f: QlogSenderFacts = { packetsRetransmitted: 0, packetsSent: 0 };
  // The highest offset sent so far, per stream and per CRYPTO packet-number space.
  const sent = new Map<string, number>();
  // The window logged before the first packet is the configured one at the configured datagram size;
  // the first packet is sent at 1,200 bytes (RFC 9000 §14.1), and the window follows that size.
  let sentAny = false;
  for (const rec of jsonSeqRecords(text) as QlogEvent[]) {
    const d = rec.data;
    if (!d) continue;
    if (rec.name === 'quic:recovery_metrics_updated') {
      if (d.congestion_window !== undefined && sentAny) f.initialCwndBytes ??= d.congestion_window;
      if (d.bytes_in_flight !== undefined)
        f.bytesInFlightMax = Math.max(f.bytesInFlightMax ?? 0, d.bytes_in_flight);
      if (d.cf_lost_packets?.total !== undefined) f.packetsLost = d.cf_lost_packets.total;
    } else if (rec.name === 'quic:packet_sent') {
      sentAny = true;
      f.packetsSent++;
      let again = false;
      for (const fr of d.frames ?? []) {
        const key =
          fr.frame_type === 'stream'
            ? `s${fr.stream_id}`
            : fr.frame_type === 'crypto'
              ? `c${d.header?.packet_type}`
              : undefined;
        if (key === undefined || fr.offset === undefined) continue;
        const len = fr.raw?.payload_length ?? 0;
        const high = sent.get(key) ?? 0;
        if (fr.offset < high) again = true;
        if (fr.offset + len > high) sent.set(key, fr.offset + len);
      }
      if (again) f.packetsRetransmitted++;
    }
  }
  return f;
}

/** {@link qlogSenderFacts} of the file at `path`, or undefined when it cannot be read. */
export function readQlogSenderFacts(path: string): QlogSenderFacts | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  return qlogSenderFacts(text);
}

/**
 * Per-flow drop counters of the relay: which connection lost the packets the link dropped, and why.
 * Only drops are attributed (a header parse and a map update per dropped packet); forwarded packets
 * cost nothing more than before, so the relay's hot path is unchanged.
 *
 * A flow is named from the client's end: (protocol, client address:port, server address:port), the
 * same for both directions. Up = client → server (requests, ACKs of responses), down = the reverse.
 */
import type { DropReason } from './conditions/types.ts';
import { UP } from './relay-trace.ts';

/** The packets the link dropped on one flow, by direction and cause. */
export interface FlowDrops {
  /** IP protocol number (6 = TCP, 17 = UDP, 1 = ICMP). */
  protocol: number;
  clientAddress: string;
  /** 0 for protocols without ports. */
  clientPort: number;
  serverAddress: string;
  serverPort: number;
  /** Dropped by random loss (i.i.d. or Gilbert–Elliott), client → server / server → client. */
  lossUp: number;
  lossDown: number;
  /** Dropped because the bottleneck's queue was full (drop-tail). */
  queueUp: number;
  queueDown: number;
}

/** Flows tracked at most; drops of further flows only count in {@link FlowDropTable.untracked}. */
const MAX_FLOWS = 16_384;

function ipv4(buf: Buffer, at: number): string {
  return `${buf[at]}.${buf[at + 1]}.${buf[at + 2]}.${buf[at + 3]}`;
}

/** Counts dropped packets per flow. Bounded: {@link MAX_FLOWS} flows. */
export class FlowDropTable {
  readonly #flows = new Map<number, FlowDrops>();
  readonly #max: number;
  /** Dropped packets of flows beyond the bound, or that were not IPv4. */
  untracked = 0;

  constructor(maxFlows = MAX_FLOWS) {
    this.#max = maxFlows;
  }

  /**
   * Records one dropped packet: `buf[offset, offset+len)` is the IP packet, `dir` is UP (client → server)
   * or DOWN (relay-trace.ts).
   */
  drop(dir: number, reason: DropReason, buf: Buffer, offset: number, len: number): void {
    // IPv4 only (the link disables IPv6): version 4, header length in 32-bit words (RFC 791 §3.1).
    if (len < 20 || buf[offset]! >> 4 !== 4) {
      this.untracked++;
      return;
    }
    const ihl = (buf[offset]! & 0x0f) * 4;
    const protocol = buf[offset + 9]!;
    // Ports are in the first 4 bytes of TCP and UDP headers, absent from non-first fragments.
    const fragOffset = buf.readUInt16BE(offset + 6) & 0x1fff;
    let srcPort = 0;
    let dstPort = 0;
    if ((protocol === 6 || protocol === 17) && fragOffset === 0 && len >= ihl + 4) {
      srcPort = buf.readUInt16BE(offset + ihl);
      dstPort = buf.readUInt16BE(offset + ihl + 2);
    }
    const up = dir === UP;
    const clientPort = up ? srcPort : dstPort;
    const serverPort = up ? dstPort : srcPort;
    // A number key (protocol·2^32 + ports) so the lookup allocates nothing: one link carries one
    // client and one server address.
    const key = protocol * 0x1_0000_0000 + clientPort * 0x1_0000 + serverPort;
    let f = this.#flows.get(key);
    if (f === undefined) {
      if (this.#flows.size >= this.#max) {
        this.untracked++;
        return;
      }
      const src = ipv4(buf, offset + 12);
      const dst = ipv4(buf, offset + 16);
      f = {
        protocol,
        clientAddress: up ? src : dst,
        clientPort,
        serverAddress: up ? dst : src,
        serverPort,
        lossUp: 0,
        lossDown: 0,
        queueUp: 0,
        queueDown: 0,
      };
      this.#flows.set(key, f);
    }
    if (reason === 'queue') {
      if (up) f.queueUp++;
      else f.queueDown++;
    } else if (up) f.lossUp++;
    else f.lossDown++;
  }

  /** A copy of every tracked flow. */
  flows(): FlowDrops[] {
    return [...this.#flows.values()].map((f) => ({ ...f }));
  }
}

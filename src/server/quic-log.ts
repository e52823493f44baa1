/**
 * The fixture's QUIC connections as its own stack read them — the server's side, the sender's of a
 * download: congestion window, smoothed RTT, packets and bytes sent and received per connection —
 * and the settings its HTTP/3 listener runs with. `/metrics?format=json` carries both; a client
 * finds its connections among the readings by its UDP port (src/load/quic.ts). Where the listener
 * writes qlog, each reading adds what only the qlog has (packets lost and retransmitted, bytes in
 * flight, the initial window), parsed when the readings are asked for — after a run, not during it.
 */
import { type H3ServerConnection, readQlogSenderFacts } from '../h3/index.ts';
import type { QuicConnectionInfo } from '../model/index.ts';

/** One connection's reading, with the client's address and when it was taken. */
export interface QuicServerReading extends QuicConnectionInfo {
  clientAddress: string;
  clientPort: number;
  /** When the reading was taken (the connection's close, or the snapshot for an open one), epoch ms. */
  atEpochMs: number;
}

/** What the QUIC listener runs with, as it was started. */
export interface QuicServerSettings {
  /** package@version of the binding. */
  binding: string;
  /** Whether every handshake starts with a Retry (RFC 9000 §8.1.2): one more round trip. */
  retry: boolean;
  /** initial_max_streams_bidi granted to each client. */
  maxStreams: number;
  /** The congestion controller, and how that is known. */
  congestionControl: string;
  congestionControlSource: string;
}

/** The listener's settings and its connections' readings (the last `cap` closed, every open one). */
export class QuicServerLog {
  settings: QuicServerSettings | undefined;
  private readonly open = new Set<H3ServerConnection>();
  private readonly closed: QuicServerReading[] = [];
  /** Closed readings whose qlog is not parsed yet, and the file. */
  private readonly pendingQlog = new Map<QuicServerReading, string>();
  /** Closed connections whose readings were dropped to keep `cap`. */
  unread = 0;

  constructor(private readonly cap: number) {}

  opened(c: H3ServerConnection): void {
    this.open.add(c);
  }

  ended(c: H3ServerConnection): void {
    if (!this.open.delete(c)) return;
    const r = reading(c);
    if (!r) return;
    this.closed.push(r);
    if (c.qlogPath) this.pendingQlog.set(r, c.qlogPath);
    if (this.closed.length > this.cap) {
      this.pendingQlog.delete(this.closed.shift()!);
      this.unread++;
    }
  }

  /** Every reading: the closed connections', then each open one read now. */
  readings(): QuicServerReading[] {
    for (const [r, path] of this.pendingQlog) Object.assign(r, qlogFacts(path));
    this.pendingQlog.clear();
    const now: QuicServerReading[] = [];
    for (const c of this.open) {
      const r = reading(c);
      if (r) now.push(c.qlogPath ? { ...r, ...qlogFacts(c.qlogPath) } : r);
    }
    return [...this.closed, ...now];
  }
}

function reading(c: H3ServerConnection): QuicServerReading | undefined {
  const f = c.facts();
  return f
    ? { ...f, clientAddress: c.remoteAddress, clientPort: c.remotePort, atEpochMs: Date.now() }
    : undefined;
}

/** The reading's fields only the qlog at `path` has (none when it cannot be read). */
function qlogFacts(path: string): Partial<QuicServerReading> {
  const q = readQlogSenderFacts(path);
  if (!q) return {};
  // The metrics' count of packets sent stands (the qlog's is the same, to the last packet or two).
  const { packetsSent: _, ...rest } = q;
  return rest;
}

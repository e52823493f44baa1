/**
 * A run's QUIC facts: the HTTP/3 binding's reading of each connection (from each part's transport
 * stats), summarised as the TCP facts are (medians and maxima, sums of packets).
 */
import type { QuicConnectionInfo, QuicFacts } from '../model/index.ts';
import type { TransportStats } from '../transport/index.ts';

/** Readings kept per connection in a result (the summary covers all). */
const PER_CONNECTION = 64;

function medianMax(xs: number[]): { median: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, max: s[s.length - 1]! };
}

/** The run's {@link QuicFacts}, or undefined when no transport read a QUIC connection. */
export function quicFactsOf(transports: readonly TransportStats[]): QuicFacts | undefined {
  const all: QuicConnectionInfo[] = transports.flatMap((t) => t.quic ?? []);
  if (all.length === 0) return undefined;
  const lost = all.filter((q) => q.packetsLost !== undefined);
  return {
    connections: all.length,
    handshakeMs: medianMax(all.map((q) => q.handshakeMs)),
    rttMs: medianMax(all.map((q) => q.rttMs)),
    cwndBytes: medianMax(all.map((q) => q.cwndBytes)),
    packetsSent: all.reduce((n, q) => n + q.packetsSent, 0),
    packetsReceived: all.reduce((n, q) => n + q.packetsReceived, 0),
    ...(lost.length > 0 ? { packetsLost: lost.reduce((n, q) => n + q.packetsLost!, 0) } : {}),
    perConnection: all.slice(0, PER_CONNECTION),
  };
}

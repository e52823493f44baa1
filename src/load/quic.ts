/**
 * A run's QUIC facts: the HTTP/3 binding's reading of each connection (from each part's transport
 * stats), summarised as the TCP facts are (medians and maxima, sums of packets), and — when the
 * target is h2lab's fixture server and its metrics were read after the run — the server's own
 * settings and its stack's reading of the same connections, matched by the client's UDP port: the
 * sender's side of a download.
 */
import { z } from 'zod';
import type { QuicConnectionInfo, QuicFacts, RunResult } from '../model/index.ts';
import { quicConnectionInfoSchema } from '../model/index.ts';
import type { TransportStats } from '../transport/index.ts';

/** Readings kept per connection in a result (the summary covers all). */
const PER_CONNECTION = 64;

function medianMax(xs: number[]): { median: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, max: s[s.length - 1]! };
}

const sum = (xs: readonly QuicConnectionInfo[], f: (q: QuicConnectionInfo) => number) =>
  xs.reduce((n, q) => n + f(q), 0);

/** The run's {@link QuicFacts}, or undefined when no transport read a QUIC connection. */
export function quicFactsOf(
  transports: readonly TransportStats[],
  serverMetrics?: unknown,
): QuicFacts | undefined {
  const all: QuicConnectionInfo[] = transports.flatMap((t) => t.quic ?? []);
  if (all.length === 0) return undefined;
  const lost = all.filter((q) => q.packetsLost !== undefined);
  const facts: QuicFacts = {
    connections: all.length,
    handshakeMs: medianMax(all.map((q) => q.handshakeMs)),
    rttMs: medianMax(all.map((q) => q.rttMs)),
    cwndBytes: medianMax(all.map((q) => q.cwndBytes)),
    packetsSent: sum(all, (q) => q.packetsSent),
    packetsReceived: sum(all, (q) => q.packetsReceived),
    ...(lost.length > 0 ? { packetsLost: sum(lost, (q) => q.packetsLost!) } : {}),
    perConnection: all.slice(0, PER_CONNECTION),
  };
  const server = serverSide(all, serverMetrics);
  if (server) facts.server = server;
  return facts;
}

// z.object (not strict): a newer server's extra fields are dropped, not fatal.
const serverQuic = z.object({
  binding: z.string(),
  retry: z.boolean(),
  maxStreams: z.number(),
  congestionControl: z.string(),
  congestionControlSource: z.string(),
  connections: z.array(z.object({ ...quicConnectionInfoSchema.shape, clientPort: z.number() })),
});

/** The server's side of the `client` connections from a `/metrics?format=json` body, if it has one. */
function serverSide(client: readonly QuicConnectionInfo[], serverMetrics: unknown): QuicFacts['server'] {
  const parsed = serverQuic.safeParse((serverMetrics as { quic?: unknown } | undefined)?.quic);
  if (!parsed.success) return undefined;
  const q = parsed.data;
  const ports = new Set(client.map((c) => c.clientPort).filter((p) => p !== undefined));
  // The latest reading of each of the run's ports (an open connection is read again at each snapshot).
  const byPort = new Map<number, QuicConnectionInfo>();
  for (const r of q.connections) {
    if (!ports.has(r.clientPort)) continue;
    const { clientPort, ...rest } = r;
    byPort.set(clientPort, { ...quicConnectionInfoSchema.parse(rest), clientPort });
  }
  const mine = [...byPort.values()];
  const fromQlog = mine.filter((m) => m.packetsLost !== undefined);
  return {
    binding: q.binding,
    retry: q.retry,
    maxStreams: q.maxStreams,
    congestionControl: q.congestionControl,
    congestionControlSource: q.congestionControlSource,
    connections: mine.length,
    ...(mine.length > 0
      ? { cwndBytes: medianMax(mine.map((m) => m.cwndBytes)), rttMs: medianMax(mine.map((m) => m.rttMs)) }
      : {}),
    packetsSent: sum(mine, (m) => m.packetsSent),
    packetsReceived: sum(mine, (m) => m.packetsReceived),
    bytesSent: sum(mine, (m) => m.bytesSent),
    ...(fromQlog.length > 0
      ? {
          packetsLost: sum(fromQlog, (m) => m.packetsLost!),
          packetsRetransmitted: sum(fromQlog, (m) => m.packetsRetransmitted ?? 0),
        }
      : {}),
    perConnection: mine.slice(0, PER_CONNECTION),
  };
}

/**
 * Adds the server's side to a finished run's QUIC facts from a `/metrics?format=json` body read after
 * it (compare's and a linked run's callers read the metrics themselves). Does nothing when the run
 * has no QUIC facts or the body none of its own.
 */
export function attachServerQuic(run: RunResult, serverMetrics: unknown): void {
  const q = run.connections.quic;
  if (!q || q.server) return;
  const server = serverSide(q.perConnection, serverMetrics);
  if (server) q.server = server;
}

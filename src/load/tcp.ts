/**
 * A run's TCP facts: the client's own readings (from each part's transport) and, when the target is
 * h2lab's fixture server and its metrics were read after the run, the server's readings of the same
 * connections, matched by client port. The server's side is the one whose congestion window decides
 * a download; the client's carries requests.
 */
import { z } from 'zod';
import type { RunResult, TcpConnectionInfo, TcpFacts } from '../model/index.ts';
import { tcpConnectionInfoSchema } from '../model/index.ts';
import { type Link, matchServerReadings, summarizeTcp, type TcpReading } from '../net/index.ts';
import type { TransportStats } from '../transport/index.ts';

// z.object (not strict): a newer server's extra fields are dropped, not fatal.
const serverReading = z.object({ ...tcpConnectionInfoSchema.shape, atEpochMs: z.number() });

/** The TCP readings in a `/metrics?format=json` body, or undefined when it has none (or not valid). */
export function serverTcpReadings(metrics: unknown): TcpReading[] | undefined {
  const list = (metrics as { tcp?: { connections?: unknown } } | undefined)?.tcp?.connections;
  if (!Array.isArray(list)) return undefined;
  const out: TcpReading[] = [];
  for (const item of list) {
    const r = serverReading.safeParse(item);
    if (r.success) out.push(r.data as TcpReading);
  }
  return out;
}

/**
 * The run's {@link TcpFacts} from its parts' transport stats and the server's metrics read after the
 * run (`sinceEpochMs`: the run's start, so an older connection on a reused port is not taken).
 * Undefined when nothing was measurable.
 */
export function tcpFactsOf(
  transports: readonly TransportStats[],
  serverMetrics: unknown,
  sinceEpochMs: number,
): TcpFacts | undefined {
  const readings: TcpConnectionInfo[] = [];
  let unread = 0;
  for (const t of transports) {
    if (!t.tcp) continue;
    readings.push(...t.tcp.readings);
    unread += t.tcp.unread;
  }
  const client = summarizeTcp(readings, unread);
  if (!client) return undefined;
  const server = serverSide(readings, readings.length + unread, serverMetrics, sinceEpochMs);
  return { client, ...(server ? { server } : {}) };
}

/** The server's readings of `client` (of `total` connections in the run), summarised. */
function serverSide(
  client: readonly TcpConnectionInfo[],
  total: number,
  serverMetrics: unknown,
  sinceEpochMs: number,
): TcpFacts['server'] {
  const all = serverTcpReadings(serverMetrics);
  if (!all) return undefined;
  const matched = matchServerReadings(client, all, sinceEpochMs);
  return summarizeTcp(matched, total - matched.length);
}

/**
 * Adds the server's side to a finished run from a `/metrics?format=json` body read after it (for
 * callers that read the server's metrics themselves, as compare does). Matches the run's listed
 * client connections (`connections.tcp.client.perConnection`, at most 64) read since the run
 * started; does nothing when the run has no client readings or the body no TCP facts.
 */
export function attachServerTcp(run: RunResult, serverMetrics: unknown): void {
  const tcp = run.connections.tcp;
  if (!tcp?.client) return;
  const since = Date.parse(run.environment.startedAt);
  const total = tcp.client.connections + (tcp.client.unread ?? 0);
  const server = serverSide(
    tcp.client.perConnection,
    total,
    serverMetrics,
    Number.isFinite(since) ? since : 0,
  );
  if (server) tcp.server = server;
}

/**
 * Adds the server's side to a finished run from a link whose gateway reads the sockets of a server
 * on this host as they close ({@link Link.serverTcp}). Does nothing when the link cannot read them.
 */
export async function attachServerTcpFromLink(run: RunResult, link: Link): Promise<void> {
  const client = run.connections.tcp?.client;
  if (!client) return;
  const readings = await link.serverTcp(client.perConnection);
  if (readings) attachServerTcp(run, { tcp: { connections: readings } });
}

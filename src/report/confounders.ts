/**
 * Confounders: things besides the protocol that can decide an HTTP/2 vs HTTP/1.1 outcome, found
 * from what one run measured (architecture.md, "Extension points"). A pure function of the result:
 * the load engine turns each one into a warning, and the compare verdict names it with its number.
 *
 * Each detector reads a measurement the run recorded and fires on a rule stated here, with the
 * reason for every threshold (docs/design.md, "Confounders").
 */
import { formatBytes, formatMs } from '../core/index.ts';
import type { ConnectionAgeMedians, RunResult } from '../model/index.ts';

/** One confounder found in a run. */
export interface Confounder {
  kind: 'flow-control' | 'nagle';
  /** How much time it cost, ms: flow control — the stalled time; Nagle — the delay per response. */
  magnitudeMs: number;
  /** One sentence with its numbers and what removes it (the run's warning). */
  text: string;
  /** The h2lab flag that removes it, where one does (Nagle is the server's setting). */
  flag?: string;
}

/**
 * Below this share of the time the sessions were open, stalls cannot explain a throughput
 * difference larger than the run-to-run spread of a few percent that repeated runs show.
 */
export const FLOW_STALL_MIN_SHARE = 0.05;

/**
 * Half of Linux's minimum delayed-ACK time (TCP_DELACK_MIN, 40 ms): a segment Nagle holds back waits
 * for an ACK, so for one round trip or, when the client delays its ACK, at least 40 ms.
 */
export const NAGLE_MIN_DELAY_MS = 20;

/** Fewest responses in a group before its median is read. */
export const NAGLE_MIN_SAMPLES = 3;

/** The confounders a run shows, largest first. */
export function confoundersOf(run: RunResult): Confounder[] {
  const out: Confounder[] = [];
  const f = flowControlConfounder(run);
  if (f) out.push(f);
  const n = nagleConfounder(run);
  if (n) out.push(n);
  return out.sort((a, b) => b.magnitudeMs - a.magnitudeMs);
}

/**
 * Flow control: the client's receive windows stopped the server for at least
 * {@link FLOW_STALL_MIN_SHARE} of the time its sessions were open (summed over sessions, so bursts on
 * fresh sessions and rotated sessions are measured against their own lifetimes).
 */
function flowControlConfounder(run: RunResult): Confounder | undefined {
  const f = run.flowControl;
  if (!f || f.sessions === 0 || f.sessionMs <= 0) return undefined;
  const stalls = f.connectionStalls + f.streamStalls;
  if (stalls === 0 || f.stalledMs < FLOW_STALL_MIN_SHARE * f.sessionMs) return undefined;
  const w = run.transport.window;
  const byConnection = f.connectionStalledMs >= f.streamStalledMs;
  const which = w
    ? `${byConnection ? 'connection' : 'stream'} window ${formatBytes(byConnection ? w.connectionWindowBytes : w.streamWindowBytes)}, preset ${w.preset}`
    : `${byConnection ? 'connection' : 'stream'} window`;
  const flag = w?.preset === 'browser' ? '--window max' : '--window browser';
  const remedy =
    flag === '--window max'
      ? '--window max advertises 2^31-1 (flow control off, like h2load)'
      : '--window browser advertises what Chromium does (6 MiB per stream, 15 MiB per connection)';
  const share = (100 * f.stalledMs) / f.sessionMs;
  return {
    kind: 'flow-control',
    magnitudeMs: f.stalledMs,
    flag,
    text: `HTTP/2 flow control stalled the server for ${formatMs(f.stalledMs)} (${share.toFixed(0)}% of the time ${f.sessions > 1 ? `its ${f.sessions} sessions were` : 'the session was'} open) in ${stalls} episodes (${which}), and ${formatBytes(f.bytesAfterStall)} waited for WINDOW_UPDATE: the client's receive window, not the protocol, limited this run; ${remedy}`,
  };
}

/**
 * Nagle / delayed ACK: a server that writes a response in two pieces with TCP_NODELAY off holds a
 * piece smaller than a segment until what it sent before is acknowledged. Two signatures, each
 * against a round trip (the link's, else the run's median TCP handshake) and
 * {@link NAGLE_MIN_DELAY_MS}, whichever is larger:
 * - small bodies (≤ 4 KiB, inside any initial congestion window) end that long after their headers
 *   (the body waited behind the head);
 * - first responses on new connections reach their headers that much later than warm ones (the
 *   response waited behind the server's last handshake flight, probably TLS 1.3 session tickets).
 * Measured through a 100 ms link against a two-write TLS server without TCP_NODELAY (docs/design.md):
 * bodies 143 ms after their headers on warm connections, first responses 233–236 ms to headers
 * against 101 ms warm; with TCP_NODELAY 0.03–0.9 ms and 102 ms against 101 ms.
 */
function nagleConfounder(run: RunResult): Confounder | undefined {
  const a = run.connectionAge;
  if (!a) return undefined;
  const rttMs = run.environment.link?.rttMs ?? run.connections.connectMs?.p50;
  const threshold = Math.max(NAGLE_MIN_DELAY_MS, 0.5 * (rttMs ?? 0));
  const found: Array<{ ms: number; text: string }> = [];
  const body = [a.warmConnection, a.newConnection]
    .filter((g) => g.smallBodyCount >= NAGLE_MIN_SAMPLES)
    .sort((x, y) => y.smallBodyCount - x.smallBodyCount)[0];
  if (body && body.bodyAfterHeadersP50Ms >= threshold) {
    found.push({
      ms: body.bodyAfterHeadersP50Ms,
      text: `responses of up to 4 KiB ended ${formatMs(body.bodyAfterHeadersP50Ms)} after their headers (median of ${body.smallBodyCount})`,
    });
  }
  const excess = firstResponseExcess(a.newConnection, a.warmConnection);
  if (excess !== undefined && excess >= threshold) {
    found.push({
      ms: excess,
      text: `first responses on new connections reached their headers ${formatMs(excess)} later than on warm ones (medians of ${a.newConnection.count} and ${a.warmConnection.count})`,
    });
  }
  if (found.length === 0) return undefined;
  const rtt = rttMs === undefined ? '' : ` (one round trip is ${formatMs(rttMs)})`;
  return {
    kind: 'nagle',
    magnitudeMs: Math.max(...found.map((f) => f.ms)),
    text: `${found.map((f) => f.text).join(', and ')}${rtt}: the server's socket probably has Nagle's algorithm on (TCP_NODELAY off), so a small write waited for the client's ACK of the one before; this charges each protocol by how its server writes, not by what it is — set TCP_NODELAY on the server's sockets (nginx \`tcp_nodelay on\`, Node \`socket.setNoDelay(true)\`)`,
  };
}

function firstResponseExcess(fresh: ConnectionAgeMedians, warm: ConnectionAgeMedians): number | undefined {
  if (fresh.count < NAGLE_MIN_SAMPLES || warm.count < NAGLE_MIN_SAMPLES) return undefined;
  return fresh.ttfbP50Ms - warm.ttfbP50Ms;
}

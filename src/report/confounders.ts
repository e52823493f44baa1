/**
 * Confounders: things besides the protocol that can decide an HTTP/2 vs HTTP/1.1 outcome, found
 * from what one run measured (architecture.md, "Extension points"). A pure function of the result:
 * the load engine turns each one into a warning, and the compare verdict names it with its number.
 *
 * Each detector reads a measurement the run recorded and fires on a rule stated here, with the
 * reason for every threshold (docs/performance.md, "Confounders (src/report/confounders.ts)").
 */
import { formatBytes, formatMs } from '../core/index.ts';
import type { ConnectionAgeMedians, RunResult } from '../model/index.ts';

/** One confounder found in a run. */
interface Confounder {
  /**
   * flow-control: the client's windows stopped the server; nagle: a small write held until an ACK,
   * with the server's TCP_NODELAY not recorded; held-write: the same signature where both ends
   * recorded TCP_NODELAY (a cause h2lab cannot see); queue-at-start / cold-start: first responses on
   * new connections late for a reason that is not Nagle.
   */
  kind: 'flow-control' | 'nagle' | 'held-write' | 'queue-at-start' | 'cold-start';
  /** How much time it cost, ms: flow control — the stalled time; the others — the delay per response. */
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
const FLOW_STALL_MIN_SHARE = 0.05;

/**
 * Half of Linux's minimum delayed-ACK time (TCP_DELACK_MIN, 40 ms): a segment Nagle holds back waits
 * for an ACK, so for one round trip or, when the client delays its ACK, at least 40 ms.
 */
export const NAGLE_MIN_DELAY_MS = 20;

/** Fewest responses in a group before its median is read. */
const NAGLE_MIN_SAMPLES = 3;

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
 * Whether both ends of the run's connections recorded TCP_NODELAY: h2lab's sockets say so in
 * `transport.noDelay`; the server's is known only for the embedded fixture server, which sets it on
 * every socket it accepts. For any other server only h2lab's side is known.
 */
function bothEndsNoDelay(run: RunResult): boolean {
  // The fixture server sets TCP_NODELAY on every socket, in this process or behind a link (a link's
  // run names the fixture's address, so its `target.embedded` is false; its options record that the
  // server is h2lab's fixture).
  const fixture =
    run.target.embedded || (run.options as { serverInProcess?: boolean }).serverInProcess === true;
  return run.transport.noDelay === true && fixture;
}

/**
 * The round trip a sentence about a run quotes, from one source: the link's RTT when the run crossed
 * one, else the kernel's smoothed RTT of its connections (the figure the TCP facts quote), else its
 * median TCP handshake.
 */
function recordedRttMs(run: RunResult): number | undefined {
  return (
    run.environment.link?.rttMs ??
    run.connections.tcp?.client?.rttMs?.median ??
    run.connections.connectMs?.p50
  );
}

/**
 * Nagle / delayed ACK, and what else delays first responses: a server that writes a response in two
 * pieces with TCP_NODELAY off holds a piece smaller than a segment until what it sent before is
 * acknowledged. Two signatures, each against a round trip ({@link recordedRttMs}: the link's, else the kernel's
 * smoothed RTT, else the median TCP handshake) and {@link NAGLE_MIN_DELAY_MS}, whichever is larger:
 * - small bodies (≤ 4 KiB, inside any initial congestion window) end that long after their headers
 *   (the body waited behind the head) — the steady signature of a held write;
 * - first responses on new connections reach their headers that much later than warm ones.
 * Measured through a 100 ms link against a two-write TLS server without TCP_NODELAY (docs/design.md):
 * bodies 143 ms after their headers on warm connections, first responses 233–236 ms to headers
 * against 101 ms warm; with TCP_NODELAY 0.03–0.9 ms and 102 ms against 101 ms.
 *
 * Checked against the recorded settings before it speaks: a held body is Nagle only
 * where the server's TCP_NODELAY is not recorded (with both ends recorded, the cause is unknown and
 * said so); late first responses alone are not Nagle's signature — they are a queue at start when
 * the requests in flight from the first instant take the server at least that long to answer (their
 * count over the run's throughput), else a cold server (JIT, TLS session setup) or a cause h2lab
 * cannot see.
 */
function nagleConfounder(run: RunResult): Confounder | undefined {
  const a = run.connectionAge;
  if (!a) return undefined;
  const rttMs = recordedRttMs(run);
  const threshold = Math.max(NAGLE_MIN_DELAY_MS, 0.5 * (rttMs ?? 0));
  const body = [a.warmConnection, a.newConnection]
    .filter((g) => g.smallBodyCount >= NAGLE_MIN_SAMPLES)
    .sort((x, y) => y.smallBodyCount - x.smallBodyCount)[0];
  const held = body && body.bodyAfterHeadersP50Ms >= threshold ? body : undefined;
  const excess = firstResponseExcess(a.newConnection, a.warmConnection);
  const late = excess !== undefined && excess >= threshold ? excess : undefined;
  if (!held && late === undefined) return undefined;
  const rtt = rttMs === undefined ? '' : ` (one round trip is ${formatMs(rttMs)})`;
  const found: string[] = [];
  if (held)
    found.push(
      `responses of up to 4 KiB ended ${formatMs(held.bodyAfterHeadersP50Ms)} after their headers (median of ${held.smallBodyCount})`,
    );
  if (late !== undefined)
    found.push(
      `first responses on new connections reached their headers ${formatMs(late)} later than on warm ones (medians of ${a.newConnection.count} and ${a.warmConnection.count})`,
    );
  const magnitudeMs = Math.max(held?.bodyAfterHeadersP50Ms ?? 0, late ?? 0);
  const what = `${found.join(', and ')}${rtt}`;
  if (held && !bothEndsNoDelay(run)) {
    return {
      kind: 'nagle',
      magnitudeMs,
      text: `${what}: a small write waited for the client's ACK of the one before — the server's socket probably has Nagle's algorithm on (TCP_NODELAY off; h2lab's own sockets have it off, the server's setting is not visible from here); this charges each protocol by how its server writes, not by what it is — set TCP_NODELAY on the server's sockets (Node \`socket.setNoDelay(true)\`, nginx \`tcp_nodelay on\`; nginx has it on by default, where \`sendfile on\` or \`tcp_nopush on\` can hold a body the same way: try \`sendfile off\`)`,
    };
  }
  if (held) {
    return {
      kind: 'held-write',
      magnitudeMs,
      text: `${what}: a write was held back, but not by Nagle's algorithm — both ends recorded TCP_NODELAY; the cause is not one h2lab measures`,
    };
  }
  // First responses late, bodies on time: not the held-write signature.
  const inFlight = run.schedule.concurrency ?? 0;
  const drainMs = run.throughput.rps > 0 ? (1000 * inFlight) / run.throughput.rps : 0;
  if (inFlight > run.transport.connections && drainMs >= late!) {
    return {
      kind: 'queue-at-start',
      magnitudeMs,
      text: `${what}: a queue at start, not Nagle — ${inFlight.toLocaleString('en-US')} requests were in flight from the first instant and the server answered ${Math.round(run.throughput.rps).toLocaleString('en-US')} req/s, so the first ones waited up to ${formatMs(drainMs)} behind each other`,
    };
  }
  if (!bothEndsNoDelay(run) && !body) {
    return {
      kind: 'cold-start',
      magnitudeMs,
      text: `${what}: the cause is unknown — a cold start (JIT, TLS session setup), or a write held by Nagle's algorithm on the server, whose TCP_NODELAY is not visible from here (no response small enough to show a held write was measured)`,
    };
  }
  const noDelay = bothEndsNoDelay(run)
    ? 'both ends recorded TCP_NODELAY'
    : 'small bodies did not wait after their headers';
  return {
    kind: 'cold-start',
    magnitudeMs,
    text: `${what}: not Nagle (${noDelay}) — probably a cold start (JIT, TLS session setup) or a cause h2lab does not measure; longer runs make it a smaller share`,
  };
}

function firstResponseExcess(fresh: ConnectionAgeMedians, warm: ConnectionAgeMedians): number | undefined {
  if (fresh.count < NAGLE_MIN_SAMPLES || warm.count < NAGLE_MIN_SAMPLES) return undefined;
  return fresh.ttfbP50Ms - warm.ttfbP50Ms;
}

/**
 * Per-connection TCP facts from the kernel: getsockopt(TCP_INFO) through the native addon, read once
 * per connection — as it closes, or when asked for the ones still open — never on the hot path.
 *
 * Both ends use it: the load client on its own sockets (`role: 'client'`: its congestion window is
 * that of the request direction) and the fixture server on the sockets it accepts (`role: 'server'`:
 * the response direction, the one that decides a download). Without Linux or the addon every call is
 * a no-op and the facts are absent, never zero.
 *
 * A connection is named by its client port (and the server's port): the same on both ends and in
 * the emulated link's flow table (`flows.ts`), so the three views of one connection can be joined.
 */
import type net from 'node:net';
import { medianInterpolated as median } from '../core/index.ts';
import type {
  LinkDropsOfConnection,
  LinkDropsSummary,
  RunResult,
  TcpCaState,
  TcpConnectionInfo,
  TcpSideSummary,
} from '../model/index.ts';
import type { FlowDrops } from './flows.ts';
import { type NetNative, tryLoadNative } from './native.ts';

type TcpInfoFn = NonNullable<NetNative['tcpInfo']>;
let reader: TcpInfoFn | null | undefined;

function tcpInfoFn(): TcpInfoFn | undefined {
  if (reader === undefined) {
    const n = process.platform === 'linux' ? tryLoadNative() : undefined;
    reader = n?.tcpInfo ? n.tcpInfo.bind(n) : null;
  }
  return reader ?? undefined;
}

/** True when TCP_INFO can be read here (Linux, the native addon built with `tcpInfo`). */
export function tcpInfoAvailable(): boolean {
  return tcpInfoFn() !== undefined;
}

/**
 * The socket's file descriptor, or undefined once it is closed. A net.Socket's handle is libuv's TCP
 * handle; a TLSSocket's is the TLS wrap, which exposes the fd of the TCP handle under it.
 */
function socketFd(socket: net.Socket): number | undefined {
  const h = (socket as unknown as { _handle?: { fd?: number; _parent?: { fd?: number } } | null })._handle;
  const fd = h?.fd ?? h?._parent?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : undefined;
}

const CA_STATES: readonly TcpCaState[] = ['open', 'disorder', 'cwr', 'recovery', 'loss'];
/** TCP_INFINITE_SSTHRESH: the kernel's "no threshold yet" (still in the initial slow start). */
const INFINITE_SSTHRESH = 0x7fffffff;
/** tcp_min_rtt() before the first RTT sample: ~0U. */
const NO_RTT_SAMPLE = 0xffffffff;

/** Turns the addon's raw `tcp_info` fields into a {@link TcpConnectionInfo} (units in the names). */
function tcpInfoFromRaw(
  raw: Record<string, number | string>,
  ports: { clientPort: number; serverPort: number },
  readAt: TcpConnectionInfo['readAt'],
): TcpConnectionInfo {
  const n = (k: string): number | undefined => (typeof raw[k] === 'number' ? (raw[k] as number) : undefined);
  const us = (k: string): number | undefined => {
    const v = n(k);
    return v === undefined ? undefined : v / 1000;
  };
  const ssthresh = n('snd_ssthresh');
  const minRtt = n('min_rtt');
  const rate = n('delivery_rate');
  const opt = <K extends keyof TcpConnectionInfo>(k: K, v: TcpConnectionInfo[K] | undefined) =>
    v === undefined ? {} : { [k]: v };
  return {
    clientPort: ports.clientPort,
    serverPort: ports.serverPort,
    readAt,
    ...(typeof raw.congestion === 'string' && raw.congestion ? { congestionControl: raw.congestion } : {}),
    cwndSegments: n('snd_cwnd') ?? 0,
    mssBytes: n('snd_mss') ?? 0,
    ...(ssthresh !== undefined && ssthresh < INFINITE_SSTHRESH ? { ssthreshSegments: ssthresh } : {}),
    rttMs: us('rtt') ?? 0,
    rttVarMs: us('rttvar') ?? 0,
    ...(minRtt !== undefined && minRtt < NO_RTT_SAMPLE ? { minRttMs: minRtt / 1000 } : {}),
    retransmittedSegments: n('total_retrans') ?? 0,
    lostSegments: n('lost') ?? 0,
    consecutiveTimeouts: n('retransmits') ?? 0,
    caState: CA_STATES[n('ca_state') ?? 0] ?? 'open',
    ...opt('bytesSent', n('bytes_sent')),
    ...opt('bytesAcked', n('bytes_acked')),
    ...opt('bytesRetransmitted', n('bytes_retrans')),
    ...opt('bytesReceived', n('bytes_received')),
    segmentsOut: n('segs_out') ?? 0,
    segmentsIn: n('segs_in') ?? 0,
    ...opt('deliveryRateBitsPerSec', rate === undefined ? undefined : rate * 8),
    ...opt('busyMs', us('busy_time')),
    ...opt('rwndLimitedMs', us('rwnd_limited')),
    ...opt('sndbufLimitedMs', us('sndbuf_limited')),
  };
}

/** Which end of the connection the socket is. */
type TcpRole = 'client' | 'server';

function portsOf(socket: net.Socket, role: TcpRole): { clientPort: number; serverPort: number } {
  const local = socket.localPort ?? 0;
  const remote = socket.remotePort ?? 0;
  return role === 'client'
    ? { clientPort: local, serverPort: remote }
    : { clientPort: remote, serverPort: local };
}

/** Reads one socket now; undefined when it is closed or TCP_INFO is not available. */
export function readTcpInfo(
  socket: net.Socket,
  role: TcpRole,
  readAt: TcpConnectionInfo['readAt'] = 'open',
): TcpConnectionInfo | undefined {
  const fn = tcpInfoFn();
  const fd = socketFd(socket);
  if (!fn || fd === undefined) return undefined;
  try {
    return tcpInfoFromRaw(fn(fd), portsOf(socket, role), readAt);
  } catch {
    return undefined;
  }
}

/** A reading with when it was taken (epoch ms), so a reader can keep those of its own run. */
export type TcpReading = TcpConnectionInfo & { atEpochMs: number };

interface Watched {
  socket: net.Socket;
  ports: { clientPort: number; serverPort: number };
}

/**
 * The TCP readings of a set of connections: {@link watch} each socket once connected; it is read as
 * it closes (just before its fd is closed, or when the peer's FIN arrives, whichever is first), and
 * {@link readings} adds the ones still open. Keeps the most recent `capacity` closed readings.
 */
export class TcpLog {
  readonly role: TcpRole;
  readonly #capacity: number;
  readonly #open = new Set<Watched>();
  #closed: TcpReading[] = [];
  /** Closed readings dropped because more than `capacity` accumulated. */
  #evicted = 0;
  /** Sockets that closed before they could be read (their fd was already gone). */
  #missed = 0;

  constructor(role: TcpRole, capacity = 4096) {
    this.role = role;
    this.#capacity = capacity;
  }

  /** False where TCP_INFO cannot be read: then {@link watch} does nothing. */
  get enabled(): boolean {
    return tcpInfoAvailable();
  }

  /** Connections that could not be read: evicted past the capacity, or closed unread. */
  get unread(): number {
    return this.#evicted + this.#missed;
  }

  /** Starts watching a connected socket (a net.Socket or a TLSSocket). */
  watch(socket: net.Socket): void {
    if (!this.enabled || socketFd(socket) === undefined) return;
    const w: Watched = { socket, ports: portsOf(socket, this.role) };
    this.#open.add(w);
    const read = (): void => {
      if (!this.#open.delete(w)) return;
      const info = this.#read(w, 'close');
      if (info) this.#push(info);
      else this.#missed++;
    };
    // Every way a socket closes goes through destroy() (autoDestroy after end() too), and its fd is
    // closed inside it: read just before. 'end' (the peer's FIN) comes earlier when the peer closes.
    const destroy = socket.destroy;
    socket.destroy = function (this: net.Socket, err?: Error) {
      read();
      return destroy.call(this, err);
    } as typeof socket.destroy;
    socket.once('end', read);
    socket.once('close', read);
  }

  /** The closed connections' readings, then a fresh reading of each one still open. */
  readings(): TcpReading[] {
    const out = [...this.#closed];
    for (const w of this.#open) {
      const info = this.#read(w, 'open');
      if (info) out.push(info);
    }
    return out;
  }

  #read(w: Watched, readAt: TcpConnectionInfo['readAt']): TcpReading | undefined {
    const fn = tcpInfoFn();
    const fd = socketFd(w.socket);
    if (!fn || fd === undefined) return undefined;
    try {
      return { ...tcpInfoFromRaw(fn(fd), w.ports, readAt), atEpochMs: Date.now() };
    } catch {
      return undefined;
    }
  }

  #push(r: TcpReading): void {
    this.#closed.push(r);
    if (this.#closed.length > this.#capacity * 2) {
      const drop = this.#closed.length - this.#capacity;
      this.#closed = this.#closed.slice(drop);
      this.#evicted += drop;
    }
  }
}

/** At most this many per-connection entries are kept in a result (the summaries cover all). */
const TCP_PER_CONNECTION_MAX = 64;

/** Without the reading time (a result's per-connection entries). */
function strip(r: TcpConnectionInfo | TcpReading): TcpConnectionInfo {
  const { atEpochMs: _, ...info } = r as TcpReading;
  return info;
}

/**
 * Summarises one end's readings (sums, medians, the first {@link TCP_PER_CONNECTION_MAX} entries);
 * undefined when there are none, so an unmeasured run carries no TCP facts rather than zeros.
 */
export function summarizeTcp(
  readings: ReadonlyArray<TcpConnectionInfo | TcpReading>,
  unread = 0,
): TcpSideSummary | undefined {
  if (readings.length === 0) return undefined;
  const cwnd = readings.map((r) => r.cwndSegments);
  const rtt = readings.map((r) => r.rttMs);
  const rates = readings.flatMap((r) =>
    r.deliveryRateBitsPerSec === undefined ? [] : [r.deliveryRateBitsPerSec],
  );
  const retransBytes = readings.flatMap((r) =>
    r.bytesRetransmitted === undefined ? [] : [r.bytesRetransmitted],
  );
  const ccs = [
    ...new Set(readings.flatMap((r) => (r.congestionControl ? [r.congestionControl] : []))),
  ].sort();
  const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
  return {
    connections: readings.length,
    ...(unread > 0 ? { unread } : {}),
    cwndSegments: { sum: sum(cwnd), median: median(cwnd), max: Math.max(...cwnd) },
    cwndBytesSum: sum(readings.map((r) => r.cwndSegments * r.mssBytes)),
    retransmittedSegments: sum(readings.map((r) => r.retransmittedSegments)),
    segmentsOut: sum(readings.map((r) => r.segmentsOut)),
    ...(retransBytes.length > 0 ? { bytesRetransmitted: sum(retransBytes) } : {}),
    rttMs: { median: median(rtt), max: Math.max(...rtt) },
    ...(rates.length > 0 ? { deliveryRateBitsPerSec: { median: median(rates), sum: sum(rates) } } : {}),
    ...(ccs.length > 0 ? { congestionControl: ccs } : {}),
    perConnection: readings.slice(0, TCP_PER_CONNECTION_MAX).map(strip),
    ...(readings.length > TCP_PER_CONNECTION_MAX
      ? { perConnectionOmitted: readings.length - TCP_PER_CONNECTION_MAX }
      : {}),
  };
}

const portKey = (p: { clientPort: number; serverPort: number }) => p.clientPort * 0x1_0000 + p.serverPort;

/**
 * The server's readings of the client's connections: matched on (client port, server port), the
 * latest reading taken at or after `sinceEpochMs` (a port reused by an earlier run is not taken).
 * The server's own other connections (metrics scrapes, other clients) match nothing.
 */
export function matchServerReadings(
  client: ReadonlyArray<{ clientPort: number; serverPort: number }>,
  server: readonly TcpReading[],
  sinceEpochMs: number,
): TcpReading[] {
  const want = new Set(client.map(portKey));
  const best = new Map<number, TcpReading>();
  for (const r of server) {
    const k = portKey(r);
    if (!want.has(k) || r.atEpochMs < sinceEpochMs) continue;
    const prev = best.get(k);
    if (!prev || r.atEpochMs >= prev.atEpochMs) best.set(k, r);
  }
  return [...best.values()];
}

/**
 * The emulated link's drops on the given connections (by client and server port), from a link's
 * flow table (`LinkStats.flows`); connections the link dropped nothing of count with zeros.
 * Undefined when there are no connections or no flow table (netem, no link).
 */
export function linkDropsFor(
  connections: ReadonlyArray<{ clientPort: number; serverPort: number }>,
  flows: readonly FlowDrops[] | undefined,
): LinkDropsSummary | undefined {
  if (connections.length === 0 || flows === undefined) return undefined;
  const byKey = new Map<number, FlowDrops>();
  for (const f of flows) if (f.protocol === 6) byKey.set(portKey(f), f);
  const per: LinkDropsOfConnection[] = connections.map((c) => {
    const f = byKey.get(portKey(c));
    return {
      clientPort: c.clientPort,
      lossUp: f?.lossUp ?? 0,
      lossDown: f?.lossDown ?? 0,
      queueUp: f?.queueUp ?? 0,
      queueDown: f?.queueDown ?? 0,
    };
  });
  let loss = 0;
  let queue = 0;
  let up = 0;
  let down = 0;
  for (const p of per) {
    loss += p.lossUp + p.lossDown;
    queue += p.queueUp + p.queueDown;
    up += p.lossUp + p.queueUp;
    down += p.lossDown + p.queueDown;
  }
  return {
    connections: per.length,
    lossPackets: loss,
    queuePackets: queue,
    upPackets: up,
    downPackets: down,
    perConnection: per.slice(0, TCP_PER_CONNECTION_MAX),
    ...(per.length > TCP_PER_CONNECTION_MAX
      ? { perConnectionOmitted: per.length - TCP_PER_CONNECTION_MAX }
      : {}),
  };
}

/** Client ports of the UDP flows a link has seen so far (read before a run: those are not its own). */
export function udpClientPorts(linkStats: { flows?: readonly FlowDrops[] }): Set<number> {
  return new Set((linkStats.flows ?? []).filter((f) => f.protocol === 17).map((f) => f.clientPort));
}

/**
 * Sets `connections.quic.linkDrops` of an HTTP/3 run from the link's UDP flows (IP protocol 17),
 * leaving out flows whose client port is in `before` (earlier runs on the same link). The binding
 * does not say which UDP port its connection used, so a run's flows are the link's new ones.
 */
export function attachQuicLinkDrops(
  run: RunResult,
  linkStats: { flows?: readonly FlowDrops[] },
  before: ReadonlySet<number> = new Set(),
): void {
  const quic = run.connections.quic;
  if (!quic || !linkStats.flows) return;
  const flows = linkStats.flows.filter((f) => f.protocol === 17 && !before.has(f.clientPort));
  const sum = (k: 'lossUp' | 'lossDown' | 'queueUp' | 'queueDown') => flows.reduce((n, f) => n + f[k], 0);
  quic.linkDrops = {
    flows: flows.length,
    lossPackets: sum('lossUp') + sum('lossDown'),
    queuePackets: sum('queueUp') + sum('queueDown'),
    upPackets: sum('lossUp') + sum('queueUp'),
    downPackets: sum('lossDown') + sum('queueDown'),
  };
}

/**
 * Records in a finished run the link's drops on its connections (those listed in
 * `connections.tcp.client`), from `link.stats()` read after the run. Does nothing without client
 * readings or without a flow table (netem backend).
 */
export function attachLinkDrops(run: RunResult, linkStats: { flows?: readonly FlowDrops[] }): void {
  const tcp = run.connections.tcp;
  if (!tcp?.client) return;
  const drops = linkDropsFor(tcp.client.perConnection, linkStats.flows);
  if (drops) tcp.linkDrops = drops;
}

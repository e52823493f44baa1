/**
 * The server's side of TCP for a server h2lab did not start, when it runs on this host: the kernel
 * reports every TCP socket as it is destroyed, with its `tcp_info`, to whoever listens on sock_diag's
 * destroy group — what `ss -E -ti` prints. Filtered on the address the server sees the gateway's
 * connections come from, those are exactly the server's sockets of this link's connections, read as
 * they closed: what the fixture server records for itself (`connections.tcp.server`), for nginx,
 * caddy or anything else. No code runs in the server.
 *
 * What `ss` prints of `tcp_info` at that moment (iproute2 ≥ 5): `cwnd:`, `ssthresh:`, `mss:`,
 * `rtt:srtt/rttvar`, `minrtt:`, `retrans:cur/total`, `lost:`, `bytes_sent:`, `bytes_acked:`,
 * `bytes_retrans:`, `bytes_received:`, `segs_out:`, `segs_in:`, `delivery_rate Nbps`, `busy:Nms`,
 * `rwnd_limited:Nms(..)`, `sndbuf_limited:Nms(..)`. The congestion control's name and the CA state
 * are not in a destroy notification: left out (absent means not measured).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { TcpReading } from './tcp-info.ts';

/** Parses one socket of `ss -tinH` output (its address line and its info line), or undefined. */
function parseSsSocket(head: string, info: string): TcpReading | undefined {
  // UNCONN 0 0 <local addr:port> <peer addr:port>: the server's local port is the one dialled, the
  // peer's the client's (masquerade keeps source ports where it can).
  const cols = head.trim().split(/\s+/);
  const port = (a: string | undefined) => Number(/:(\d+)$/.exec(a ?? '')?.[1]);
  const serverPort = port(cols[3]);
  const clientPort = port(cols[4]);
  if (!Number.isInteger(serverPort) || !Number.isInteger(clientPort)) return undefined;
  const num = (key: string): number | undefined => {
    const m = new RegExp(`(?:^|\\s)${key}[: ]([\\d.]+)`).exec(info);
    return m ? Number(m[1]) : undefined;
  };
  const rtt = /(?:^|\s)rtt:([\d.]+)\/([\d.]+)/.exec(info);
  const retrans = /(?:^|\s)retrans:(\d+)\/(\d+)/.exec(info);
  const cwnd = num('cwnd');
  const mss = num('mss');
  if (cwnd === undefined || mss === undefined) return undefined;
  const opt = (key: keyof TcpReading, v: number | undefined) => (v === undefined ? {} : { [key]: v });
  const rate = num('delivery_rate');
  return {
    clientPort,
    serverPort,
    readAt: 'close',
    cwndSegments: cwnd,
    mssBytes: mss,
    ...opt('ssthreshSegments', num('ssthresh')),
    rttMs: rtt ? Number(rtt[1]) : 0,
    rttVarMs: rtt ? Number(rtt[2]) : 0,
    ...opt('minRttMs', num('minrtt')),
    retransmittedSegments: retrans ? Number(retrans[2]) : 0,
    lostSegments: num('lost') ?? 0,
    consecutiveTimeouts: retrans ? Number(retrans[1]) : 0,
    ...opt('bytesSent', num('bytes_sent')),
    ...opt('bytesAcked', num('bytes_acked')),
    ...opt('bytesRetransmitted', num('bytes_retrans')),
    ...opt('bytesReceived', num('bytes_received')),
    segmentsOut: num('segs_out') ?? 0,
    segmentsIn: num('segs_in') ?? 0,
    ...opt('deliveryRateBitsPerSec', rate),
    ...opt('busyMs', num('busy')),
    ...opt('rwndLimitedMs', num('rwnd_limited')),
    ...opt('sndbufLimitedMs', num('sndbuf_limited')),
    atEpochMs: Date.now(),
  } as TcpReading;
}

/** The most readings kept: a long run's older ones go first. */
const MAX_READINGS = 100_000;

/** Watches the destruction of TCP sockets whose peer is `peerAddress` (see the file's comment). */
export class ServerSocketWatch {
  private readonly child: ChildProcess | undefined;
  private readonly list: TcpReading[] = [];
  private pendingHead: string | undefined;

  /** Starts `ss -E -tinH dst ADDR`; a machine without `ss` gives a watch that reads nothing. */
  constructor(peerAddress: string) {
    try {
      this.child = spawn('stdbuf', ['-oL', 'ss', '-E', '-t', '-i', '-n', '-H', 'dst', peerAddress], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      this.child.on('error', () => {});
      // Ctrl-C in a terminal reaches the whole process group; the watch ends with its owner.
      this.child.unref();
      const lines = createInterface({ input: this.child.stdout! });
      lines.on('line', (line) => this.onLine(line));
      (this.child.stdout as { unref?: () => void } | null)?.unref?.();
    } catch {
      this.child = undefined;
    }
  }

  private onLine(line: string): void {
    if (!/^\s/.test(line)) {
      this.pendingHead = line;
      return;
    }
    const head = this.pendingHead;
    this.pendingHead = undefined;
    if (!head) return;
    const r = parseSsSocket(head, line);
    if (!r) return;
    this.list.push(r);
    if (this.list.length > MAX_READINGS) this.list.splice(0, this.list.length - MAX_READINGS);
  }

  /**
   * The readings so far, after waiting (at most `settleMs`) until every `want` connection has been
   * reported: the server closes its end a moment after the client does.
   */
  async readings(want: ReadonlyArray<{ clientPort: number; serverPort: number }> = [], settleMs = 500) {
    const key = (p: { clientPort: number; serverPort: number }) => `${p.clientPort}:${p.serverPort}`;
    const deadline = Date.now() + settleMs;
    while (Date.now() < deadline) {
      const seen = new Set(this.list.map(key));
      if (want.every((w) => seen.has(key(w)))) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    return [...this.list];
  }

  close(): void {
    this.child?.kill('SIGKILL');
  }
}

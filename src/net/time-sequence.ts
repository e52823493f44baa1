/**
 * Time-sequence graphs (Stevens / tcptrace style) read back from a link capture: per connection, the
 * server's data (the end of each segment's sequence range) and the client's cumulative ACKs over
 * time, the server's retransmissions and the segments the link dropped (from each packet's fate
 * comment), and the server's round trips of data, counted from the packets:
 *
 * ```
 *   bytes ▲                    ┌─ round 3 ─ …      a round begins with the first data segment the server
 *         │          ┌ round 2 ┘                   sent after the ACK of the previous round's first
 *         │  round 1 ┘   ····· acked               segment reached it (seen at the relay, plus the
 *         └──────────────────────────▶ time        relay → server delay measured on the handshake)
 * ```
 * The capture is the relay's: every packet timestamped as it entered the link, so the server's
 * packets are at their send time and the client's at theirs. It reads only what `capture.ts` writes
 * (pcapng, little-endian, LINKTYPE_RAW IPv4, interface 0 up and 1 down; see `pcapng.ts`).
 *
 * A UDP flow (QUIC) has no acknowledgement the relay can read (QUIC encrypts them), so its rounds
 * are counted from what the relay knows of time alone:
 *
 * ```
 *   server ──P──────────────────────────────Q─────▶   P: the round's first data datagram, sent at p
 *            ╲ down delay             ╱ up delay       C: the first client datagram sent at or after
 *   client ───▶ p + down ──C─────────╱────────────▶      P reached the client (c ≥ p + down)
 *                          c          c + up ≤ q       Q: the first server data datagram sent at or
 *                                                         after C reached the server: the next round
 * ```
 * The delays are each packet's own, from its comment (the time until the link released it: the
 * link's delay, its queue, its jitter); a packet without one (another writer's capture) takes the
 * one-way delay measured on the handshake, the client's first datagram to the server's first
 * reply, both ways. The server's first flight (its Initial and Handshake packets and whatever it
 * sends with them before it can have heard the client's answer), and any later datagram of
 * long-header packets only (the handshake's, sent again), is the handshake, counted in
 * `handshakeSegments`, not a round. Limits: any client datagram counts as the answer, though it may
 * not acknowledge P (QUIC delays ACKs up to 25 ms and acknowledges every second packet), so a server
 * sending without pause can show a round early; a server datagram of {@link QUIC_ACK_BYTES} bytes of
 * payload or fewer is taken for acknowledgements and control frames, neither data nor a round; and
 * nothing is known to be sent again (a QUIC retransmission is new packets with new numbers), so a
 * round's `retransmitted` stays 0 while its `dropped` counts the datagrams the link dropped.
 */
import { readFileSync } from 'node:fs';
import type { ConnectionSequence, TimeSequence } from '../model/index.ts';
import { EPB, IDB, LINKTYPE_RAW, OPT_COMMENT, OPT_END } from './pcapng.ts';
import { quicHandshakeOnly } from './quic-datagram.ts';

/** Points per series drawn at most; beyond it every k-th point is kept (and the last). */
export const MAX_SERIES_POINTS = 600;
/** Marker points (retransmissions, drops) per series at most. */
const MAX_MARKER_POINTS = 200;
/** Connections kept per capture at most (the busiest, by the server's bytes). */
const MAX_CONNECTIONS = 16;
/** Rounds kept per connection (slow start is over long before); the rest are counted. */
export const MAX_ROUNDS = 100;
/** A round that sends fewer than this times the segments of the one before has left slow start. */
const SLOW_START_GROWTH = 1.5;

const SYN = 0x02;
/** The word the capture's comment has for a packet the link dropped (see `capture.ts`). */
const DROPPED = Buffer.from('dropped', 'latin1');
/** What precedes a released packet's delay in its comment ("up: delay 20.000 ms (queue …)"). */
const DELAY = Buffer.from('delay ', 'latin1');
/**
 * A server datagram with at most this much UDP payload is taken for QUIC acknowledgements and
 * control frames: a short header (1 byte, a connection ID of up to 20, a packet number of up to
 * 4), an ACK frame with a few ranges and the 16-byte AEAD tag stay under it.
 */
const QUIC_ACK_BYTES = 64;
const ACK = 0x10;

/**
 * One packet of the capture: direction (0 up, 1 down), time µs since the epoch, its bytes, its fate
 * (dropped, or the ms until the link released it when its comment says).
 */
interface CapturedPacket {
  dir: 0 | 1;
  epochUs: number;
  data: Buffer;
  dropped: boolean;
  delayMs: number | undefined;
}

/** The packets of a pcapng file h2lab wrote, in file order. */
function readCapturedPackets(buf: Buffer): CapturedPacket[] {
  const out: CapturedPacket[] = [];
  let linkType = LINKTYPE_RAW;
  for (let at = 0; at + 12 <= buf.length; ) {
    const type = buf.readUInt32LE(at);
    const total = buf.readUInt32LE(at + 4);
    if (total < 12 || at + total > buf.length) break;
    if (type === IDB) linkType = buf.readUInt16LE(at + 8);
    else if (type === EPB && linkType === LINKTYPE_RAW) {
      const captured = buf.readUInt32LE(at + 20);
      const epochUs = buf.readUInt32LE(at + 12) * 0x100000000 + buf.readUInt32LE(at + 16);
      const data = buf.subarray(at + 28, at + 28 + captured);
      let dropped = false;
      let delayMs: number | undefined;
      for (let o = at + 28 + ((captured + 3) & ~3); o + 4 <= at + total - 4; ) {
        const code = buf.readUInt16LE(o);
        const len = buf.readUInt16LE(o + 2);
        if (code === OPT_END) break;
        if (code === OPT_COMMENT) {
          const comment = buf.subarray(o + 4, o + 4 + len);
          dropped = comment.includes(DROPPED);
          const d = comment.indexOf(DELAY);
          if (d >= 0) delayMs = Number.parseFloat(comment.toString('latin1', d + DELAY.length, d + 24));
        }
        o += 4 + ((len + 3) & ~3);
      }
      if (delayMs !== undefined && !Number.isFinite(delayMs)) delayMs = undefined;
      out.push({ dir: buf.readUInt32LE(at + 8) === 0 ? 0 : 1, epochUs, data, dropped, delayMs });
    }
    at += total;
  }
  return out;
}

/** The IPv4 / TCP or UDP fields a time-sequence graph needs (undefined for anything else). */
interface Segment {
  transport: 'tcp' | 'udp';
  /** Addresses as 32-bit numbers and ports: no string per packet. */
  srcIp: number;
  srcPort: number;
  dstIp: number;
  dstPort: number;
  seq: number;
  ack: number;
  flags: number;
  /** Payload bytes (from the IP header's total length: the capture may be cut to the snap length). */
  len: number;
  /** The payload's first byte, when captured (a TLS record starts with 0x16). */
  first: number | undefined;
  /** UDP: QUIC long-header packets only (the handshake's), see `quic-datagram.ts`. */
  handshake: boolean;
}

function parseSegment(b: Buffer): Segment | undefined {
  // IPv4 only, and no fragment but the first (the others carry no transport header).
  if (b.length < 20 || b[0]! >> 4 !== 4 || b.readUInt16BE(6) & 0x1fff) return undefined;
  const ihl = (b[0]! & 15) * 4;
  const proto = b[9];
  const tcp = proto === 6 && b.length >= ihl + 14;
  if (!tcp && !(proto === 17 && b.length >= ihl + 8)) return undefined;
  const off = tcp ? (b[ihl + 12]! >> 4) * 4 : 8;
  return {
    transport: tcp ? 'tcp' : 'udp',
    srcIp: b.readUInt32BE(12),
    srcPort: b.readUInt16BE(ihl),
    dstIp: b.readUInt32BE(16),
    dstPort: b.readUInt16BE(ihl + 2),
    seq: tcp ? b.readUInt32BE(ihl + 4) : 0,
    ack: tcp ? b.readUInt32BE(ihl + 8) : 0,
    flags: tcp ? b[ihl + 13]! : 0,
    len: tcp ? b.readUInt16BE(2) - ihl - off : b.readUInt16BE(ihl + 4) - 8,
    first: tcp ? b[ihl + off] : undefined,
    handshake: !tcp && quicHandshakeOnly(b, 0, b.length),
  };
}

/** "198.19.0.1:443" */
const endpoint = (ip: number, port: number): string =>
  `${ip >>> 24}.${(ip >>> 16) & 255}.${(ip >>> 8) & 255}.${ip & 255}:${port}`;

/** Appends points and keeps them under a cap (see {@link cap}). */
class Series {
  readonly t: number[] = [];
  readonly y: number[] = [];
  push(t: number, y: number): void {
    this.t.push(Math.round(t * 100) / 100);
    this.y.push(y);
  }
  /** Every k-th point and the last, so at most `max`; returns the series and how many it left out. */
  cap(max: number): [{ t: number[]; y: number[] }, number] {
    const n = this.t.length;
    if (n <= max) return [{ t: this.t, y: this.y }, 0];
    const k = Math.ceil(n / (max - 1));
    const keep = (_: number, i: number): boolean => i % k === 0 || i === n - 1;
    const t = this.t.filter(keep);
    return [{ t, y: this.y.filter(keep) }, n - t.length];
  }
}

/** What one connection's packets build up, in capture order. */
class Flow {
  readonly sent = new Series();
  readonly acked = new Series();
  readonly clientSent = new Series();
  readonly retransmitted = new Series();
  readonly dropped = new Series();
  readonly rounds: ConnectionSequence['rounds'] = [];
  roundCount = 0;
  serverIsn: number | undefined;
  synMs: number | undefined;
  /**
   * Relay → server delay, ms: the SYN-ACK's time minus the SYN's (UDP: the server's first reply's
   * minus the client's first datagram's).
   */
  upMs = 0;
  highest = 0;
  lastAck = 0;
  clientBytes = 0;
  serverBytes = 0;
  mss = 0;
  /** TLS: the server's data before the client answers it is handshake (TLS 1.3's one round trip). */
  tls: boolean | undefined;
  clientAnswered = false;
  handshakeSegments = 0;
  /** The sequence end whose ACK ends the current round, and when that ACK reached the server. */
  marker = -1;
  markerAckedAtServerMs = Number.POSITIVE_INFINITY;
  /**
   * UDP: when the current round's first datagram reached the client, when a client datagram sent
   * after that reached the server (the next round may begin), whether the current round is the
   * handshake, and the client's first datagram's time (for the handshake's one-way delay).
   */
  roundReachedClientMs = Number.POSITIVE_INFINITY;
  answerAtServerMs = Number.POSITIVE_INFINITY;
  handshakeRound = false;
  clientFirstMs: number | undefined;

  constructor(
    readonly transport: 'tcp' | 'udp',
    readonly clientIp: number,
    readonly serverIp: number,
    readonly client: string,
    readonly server: string,
  ) {}

  /** Sequence number relative to the server's first byte of data. */
  rel(seq: number): number {
    return (seq - (this.serverIsn ?? 0) - 1) >>> 0;
  }

  up(s: Segment, ms: number, p: CapturedPacket): void {
    if (this.transport === 'udp') {
      this.clientBytes += s.len;
      this.clientSent.push(ms, this.clientBytes);
      if (p.dropped) return;
      this.clientFirstMs ??= ms;
      if (this.answerAtServerMs === Number.POSITIVE_INFINITY && ms >= this.roundReachedClientMs)
        this.answerAtServerMs = ms + (p.delayMs ?? this.upMs);
      return;
    }
    if (s.flags & SYN) this.synMs = ms;
    if (s.len > 0) {
      this.tls ??= s.first === 0x16;
      if (this.highest > 0) this.clientAnswered = true;
    }
    if (s.flags & ACK && this.serverIsn !== undefined) {
      const a = this.rel(s.ack);
      if (a < 0x80000000 && a > this.lastAck) {
        this.lastAck = a;
        this.acked.push(ms, a);
        if (a >= this.marker && this.marker >= 0 && this.markerAckedAtServerMs === Number.POSITIVE_INFINITY)
          this.markerAckedAtServerMs = ms + this.upMs;
      }
    }
  }

  down(s: Segment, ms: number, p: CapturedPacket): void {
    const dropped = p.dropped;
    if (this.transport === 'udp') {
      this.serverBytes += s.len;
      (dropped ? this.dropped : this.sent).push(ms, this.serverBytes);
      this.udpRound(s, ms, p);
      return;
    }
    if (s.flags & SYN) {
      this.serverIsn = s.seq;
      if (this.synMs !== undefined) this.upMs = ms - this.synMs;
      return;
    }
    if (s.len <= 0) return;
    this.serverIsn ??= (s.seq - 1) >>> 0;
    const end = this.rel(s.seq) + s.len;
    const again = end <= this.highest;
    if (dropped) this.dropped.push(ms, end);
    if (again) this.retransmitted.push(ms, end);
    else {
      this.highest = end;
      this.sent.push(ms, end);
    }
    this.mss = Math.max(this.mss, s.len);
    if (this.tls && !this.clientAnswered) {
      this.handshakeSegments++;
      return;
    }
    // A new round when the server could have seen the ACK of the current round's first segment
    // (half a millisecond for the relay's own scheduling).
    if (this.marker < 0 || ms + 0.5 >= this.markerAckedAtServerMs) {
      this.roundCount++;
      if (this.rounds.length < MAX_ROUNDS)
        this.rounds.push({ startMs: ms, segments: 0, bytes: 0, retransmitted: 0, dropped: 0 });
      this.marker = end;
      this.markerAckedAtServerMs = this.lastAck >= end ? ms : Number.POSITIVE_INFINITY;
    }
    if (this.roundCount > this.rounds.length) return;
    const r = this.rounds[this.rounds.length - 1]!;
    r.segments++;
    r.bytes += s.len;
    if (again) r.retransmitted++;
    if (dropped) r.dropped++;
  }

  /** A server datagram's place in the rounds of a UDP flow (see the file's doc). */
  udpRound(s: Segment, ms: number, p: CapturedPacket): void {
    // The handshake's one-way delay: the client's first datagram to the server's first reply.
    if (this.roundReachedClientMs === Number.POSITIVE_INFINITY && this.clientFirstMs !== undefined)
      this.upMs = ms - this.clientFirstMs;
    if (s.len <= QUIC_ACK_BYTES) return;
    this.mss = Math.max(this.mss, s.len);
    const first = this.roundReachedClientMs === Number.POSITIVE_INFINITY;
    // The handshake's datagrams sent again after the first flight (a loss) begin no round.
    if (s.handshake && !first) {
      this.handshakeSegments++;
      return;
    }
    // Half a millisecond for the relay's own scheduling, as for TCP.
    if (first || ms + 0.5 >= this.answerAtServerMs) {
      this.handshakeRound = first;
      this.roundReachedClientMs = ms + (p.delayMs ?? this.upMs);
      this.answerAtServerMs = Number.POSITIVE_INFINITY;
      if (!first) {
        this.roundCount++;
        if (this.rounds.length < MAX_ROUNDS)
          this.rounds.push({ startMs: ms, segments: 0, bytes: 0, retransmitted: 0, dropped: 0 });
      }
    }
    if (this.handshakeRound) {
      this.handshakeSegments++;
      return;
    }
    if (this.roundCount > this.rounds.length) return;
    const r = this.rounds[this.rounds.length - 1]!;
    r.segments++;
    r.bytes += s.len;
    if (p.dropped) r.dropped++;
  }

  /** The compact, capped form stored in results.json. */
  result(): ConnectionSequence {
    let cut = 0;
    const capped = (s: Series, max: number) => {
      const [v, n] = s.cap(max);
      cut += n;
      return v;
    };
    const [slowStartRounds, slowStartEnd] = slowStartOf(
      this.rounds,
      this.roundCount > this.rounds.length,
      this.transport === 'udp',
    );
    return {
      transport: this.transport,
      client: this.client,
      server: this.server,
      sent: capped(this.sent, MAX_SERIES_POINTS),
      ...(this.transport === 'tcp'
        ? { acked: capped(this.acked, MAX_SERIES_POINTS) }
        : { clientSent: capped(this.clientSent, MAX_SERIES_POINTS) }),
      retransmitted: capped(this.retransmitted, MAX_MARKER_POINTS),
      dropped: capped(this.dropped, MAX_MARKER_POINTS),
      pointsCut: cut,
      rounds: this.rounds,
      roundCount: this.roundCount,
      slowStartRounds,
      slowStartEnd,
      mssBytes: this.mss,
      handshakeSegments: this.handshakeSegments,
    };
  }
}

/**
 * The rounds of slow start among a connection's rounds, judged by growth alone (so whatever the
 * congestion control, BBR included, which random loss does not stop): the rounds before the first
 * that did not grow to {@link SLOW_START_GROWTH} × its predecessor's segments, ended by a loss when
 * its predecessor lost a segment. A round that did not grow is the data's remainder, not the
 * window's limit, when it and every round after it hold fewer segments than a grown round would (a
 * burst's last responses, then the session's closing frames a round later): slow start lasted
 * through it. A last round of nothing but retransmissions is recovery, not slow start. `more`: rounds
 * followed that were not kept (see {@link MAX_ROUNDS}). `unseenRetransmissions` (QUIC, whose
 * retransmissions are new packets): a round that did not grow after one the link dropped from is
 * taken for the recovery.
 */
export function slowStartOf(
  rounds: ReadonlyArray<{ segments: number; retransmitted: number; dropped: number }>,
  more = false,
  unseenRetransmissions = false,
): [number, ConnectionSequence['slowStartEnd']] {
  if (rounds.length === 0) return [0, 'none'];
  for (let i = 1; i < rounds.length; i++) {
    const grown = SLOW_START_GROWTH * rounds[i - 1]!.segments;
    const r = rounds[i]!;
    if (r.segments >= grown) continue;
    if (r.retransmitted === r.segments || (unseenRetransmissions && rounds[i - 1]!.dropped > 0))
      return [i, 'loss'];
    const rest = more ? Number.POSITIVE_INFINITY : rounds.slice(i).reduce((n, x) => n + x.segments, 0);
    if (rest < grown) return [i + 1, 'transfer-end'];
    const before = rounds[i - 1]!;
    return [i, before.retransmitted + before.dropped > 0 ? 'loss' : 'no-growth'];
  }
  return [rounds.length, 'transfer-end'];
}

/**
 * The time-sequence graphs of a capture h2lab wrote: one per TCP connection (or UDP flow) that
 * carried data, the {@link MAX_CONNECTIONS} busiest by the server's bytes (a page load's Chromium
 * opens dozens), in the order they opened; the rest are counted in `connectionsNotDrawn`. With
 * `serverPorts`, only the flows to those ports (a page replay's setting: another setting's idle
 * connections close during its loads, each a TLS alert, and are not part of them).
 * @example const ts = timeSequenceOf(readFileSync('cap/run1.pcapng'));
 */
export function timeSequenceOf(buf: Buffer, serverPorts?: ReadonlySet<number>): TimeSequence {
  const packets = readCapturedPackets(buf);
  const t0 = packets[0]?.epochUs ?? 0;
  // By ports (a number), then by addresses: one link carries one client and one server address.
  const byPorts = new Map<number, Flow[]>();
  const flows: Flow[] = [];
  for (const p of packets) {
    const s = parseSegment(p.data);
    if (!s) continue;
    const up = p.dir === 0;
    const [cIp, cPort, sIp, sPort] = up
      ? [s.srcIp, s.srcPort, s.dstIp, s.dstPort]
      : [s.dstIp, s.dstPort, s.srcIp, s.srcPort];
    if (serverPorts && !serverPorts.has(sPort)) continue;
    const key = cPort * 65536 + sPort + (s.transport === 'udp' ? 2 ** 32 : 0);
    const same = byPorts.get(key) ?? [];
    let f = same.find((x) => x.clientIp === cIp && x.serverIp === sIp);
    if (!f) {
      f = new Flow(s.transport, cIp, sIp, endpoint(cIp, cPort), endpoint(sIp, sPort));
      flows.push(f);
      byPorts.set(key, [...same, f]);
    }
    const ms = (p.epochUs - t0) / 1000;
    if (up) f.up(s, ms, p);
    else f.down(s, ms, p);
  }
  const withData = flows.filter((f) => f.sent.t.length > 0 || f.dropped.t.length > 0);
  const bytes = (f: Flow): number => (f.transport === 'tcp' ? f.highest : f.serverBytes);
  const kept = new Set([...withData].sort((a, b) => bytes(b) - bytes(a)).slice(0, MAX_CONNECTIONS));
  return {
    connections: withData.filter((f) => kept.has(f)).map((f) => f.result()),
    connectionsNotDrawn: withData.length - kept.size,
    startEpochMs: t0 / 1000,
  };
}

/** {@link timeSequenceOf} of a file. */
export function timeSequenceOfFile(path: string, serverPorts?: ReadonlySet<number>): TimeSequence {
  return timeSequenceOf(readFileSync(path), serverPorts);
}

/**
 * A capture's time-sequence graphs to store with its run, computed when the capture is written (not
 * at report time) so that report.html can be rendered again from results.json alone, by renderers
 * that do no I/O; nothing when the file cannot be read back.
 */
export function timeSequenceFrom(
  file: string,
  serverPorts?: ReadonlySet<number>,
): { timeSequence?: TimeSequence } {
  try {
    return { timeSequence: timeSequenceOfFile(file, serverPorts) };
  } catch {
    return {};
  }
}

/**
 * Per-packet timestamps of the relay, for finding where added delay comes from (`bench/net-relay.ts`).
 * Off by default: a link records them only when started with `relayTrace`. Preallocated, so tracing
 * allocates nothing per packet; when full it stops recording (and says how many it missed).
 *
 * For each packet: when the relay read it (`arrivalMs`), when the link model says it is due
 * (`dueMs`: arrival + loss/rate/queue/delay/jitter), and when its `write()` into the other TUN began
 * and returned. `writeStartMs − dueMs` is the relay's own lateness; `dueMs − arrivalMs − delay` is
 * the queueing and serialisation the model imposes; `writeEndMs − writeStartMs` is the receiving
 * stack's work, which the kernel does inline in the relay's `write()`. Times are CLOCK_MONOTONIC ms.
 */

/** Fields of one packet record, in order. */
export const PACKET_FIELDS = [
  'dir',
  'len',
  'arrivalMs',
  'dueMs',
  'writeStartMs',
  'writeEndMs',
  'icmp',
] as const;
const PF = PACKET_FIELDS.length;
/**
 * Fields of one callback record: kind ({@link WAKE_TIMER} or {@link WAKE_READ}), the timer deadline
 * (timer wake-ups), when the callback began and ended, packets it released or read.
 */
export const WAKE_FIELDS = ['kind', 'deadlineMs', 'ranMs', 'endMs', 'packets'] as const;
export const WAKE_TIMER = 0;
export const WAKE_READ = 1;
const WF = WAKE_FIELDS.length;

/** Direction codes in {@link PACKET_FIELDS}.dir. */
export const UP = 0;
export const DOWN = 1;

/** What a trace holds, as sent over IPC / written to disk. */
export interface RelayTraceData {
  /** PACKET_FIELDS.length numbers per packet. */
  packets: Float64Array;
  /** WAKE_FIELDS.length numbers per callback (timer wake-up or readable TUN). */
  wakes: Float64Array;
  /** Garbage collections in the relay process: start (CLOCK_MONOTONIC ms), duration ms, V8 kind. */
  gcs: Array<{ startMs: number; durationMs: number; kind: number }>;
  /** Packets not recorded because the trace was full. */
  missed: number;
}

/**
 * ICMP echo identity of an IPv4 packet: `type·65536 + sequence` for echo request (8) / reply (0),
 * else −1. Lets a harness match ping's probes with their records.
 */
export function icmpEcho(buf: Buffer, offset: number, len: number): number {
  if (len < 28 || buf[offset]! >> 4 !== 4 || buf[offset + 9] !== 1) return -1;
  const ihl = (buf[offset]! & 15) * 4;
  const type = buf[offset + ihl]!;
  if (type !== 8 && type !== 0) return -1;
  return type * 65536 + buf.readUInt16BE(offset + ihl + 6);
}

export class RelayTrace {
  readonly #packets: Float64Array;
  readonly #wakes: Float64Array;
  #np = 0;
  #nw = 0;
  #missed = 0;
  readonly gcs: RelayTraceData['gcs'] = [];

  /** @param capacity packets to record (each 56 bytes); wake-ups get the same capacity. */
  constructor(capacity: number) {
    this.#packets = new Float64Array(capacity * PF);
    this.#wakes = new Float64Array(capacity * WF);
  }

  /** Records a packet as read; returns its index for {@link written}, or −1 when full. */
  packet(dir: number, len: number, arrivalMs: number, dueMs: number, icmp: number): number {
    if ((this.#np + 1) * PF > this.#packets.length) {
      this.#missed++;
      return -1;
    }
    const i = this.#np++;
    const p = this.#packets;
    const o = i * PF;
    p[o] = dir;
    p[o + 1] = len;
    p[o + 2] = arrivalMs;
    p[o + 3] = dueMs;
    p[o + 4] = Number.NaN;
    p[o + 5] = Number.NaN;
    p[o + 6] = icmp;
    return i;
  }

  written(index: number, startMs: number, endMs: number): void {
    if (index < 0) return;
    this.#packets[index * PF + 4] = startMs;
    this.#packets[index * PF + 5] = endMs;
  }

  wake(kind: number, deadlineMs: number, ranMs: number, endMs: number, packets: number): void {
    if ((this.#nw + 1) * WF > this.#wakes.length) return;
    const o = this.#nw++ * WF;
    const w = this.#wakes;
    w[o] = kind;
    w[o + 1] = deadlineMs;
    w[o + 2] = ranMs;
    w[o + 3] = endMs;
    w[o + 4] = packets;
  }

  data(): RelayTraceData {
    return {
      packets: this.#packets.slice(0, this.#np * PF),
      wakes: this.#wakes.slice(0, this.#nw * WF),
      gcs: [...this.gcs],
      missed: this.#missed,
    };
  }
}

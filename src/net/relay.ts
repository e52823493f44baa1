/**
 * The packet relay: moves IP packets between the client-side and the server-side TUN device through
 * the link's pipeline. It runs in its own process (`relay-process.ts`) so its CPU is measured apart from
 * the load engine and so the TUN devices vanish with it if anything crashes.
 *
 * ```
 *   client TUN ──readBatch──▶ up pipeline ──due time──▶ up queue ──timerfd──▶ write ──▶ server TUN
 *   client TUN ◀── write ◀──timerfd── down queue ◀──due time── down pipeline ◀──readBatch── server TUN
 * ```
 * Readiness comes from a uv_poll on Node's loop; a packet that is due already and finds its queue
 * empty is written straight from the read slab. Everything else waits in a {@link PacketQueue} and is
 * released by one timerfd armed at an absolute CLOCK_MONOTONIC deadline (setTimeout is 0.6–1.6 ms
 * late; a timerfd about 0.02 ms). Each wake-up releases every packet due within `slackMs`, which cuts
 * wake-ups under load for a bounded error.
 */
import type { LinkCapture } from './capture.ts';
import { DROP } from './conditions/types.ts';
import { type FlowDrops, FlowDropTable } from './flows.ts';
import type { NetNative } from './native.ts';
import { type DirectionPipeline, type DirectionStats, PacketQueue } from './pipeline.ts';
import { DOWN, icmpEcho, type RelayTrace, UP, WAKE_READ, WAKE_TIMER } from './relay-trace.ts';

/** Slot size: one packet at the largest MTU we allow (9000) would not fit; we cap MTU at 1500 + room. */
const PACKET_STRIDE = 2048;
const BATCH = 64;

interface RelayOptions {
  /** fd of the client-side TUN (packets read here travel up). */
  clientFd: number;
  /** fd of the server-side TUN (packets read here travel down). */
  serverFd: number;
  up: DirectionPipeline;
  down: DirectionPipeline;
  /** Release packets due within this many ms in one wake-up (default 0.05; links use 0.1). */
  slackMs?: number;
  /**
   * When the relay would sleep longer than twice this (ms), wake this much before the deadline and
   * spin until it (default 0: off). Waking a sleeping relay takes 0.03–0.2 ms in a VM (the vCPU is
   * halted); the spin costs at most this much CPU per such wake-up.
   */
  earlyWakeMs?: number;
  /** Record per-packet timestamps here (benchmarks; off by default). */
  trace?: RelayTrace;
}

interface Side {
  dir: number;
  readFd: number;
  writeFd: number;
  pipeline: DirectionPipeline;
  queue: PacketQueue;
  /** Trace index of the packet in each queue slot (only when tracing). */
  traceIdx: Int32Array;
  watch: unknown;
}

export interface RelayStats {
  up: DirectionStats;
  down: DirectionStats;
  /** Timer wake-ups. */
  wakeups: number;
  /**
   * How late queued packets left after their due time, ms (10 µs resolution; negative lateness
   * from the release slack counts as 0). What the relay adds to the configured delay on top of
   * reading and writing the packet.
   */
  releaseLateMs: { count: number; p50: number; p99: number; p999: number; max: number };
  /** Dropped packets per flow (only flows that lost any), by direction and cause. */
  flows: FlowDrops[];
  /** Dropped packets no flow could be named for (non-IPv4, or beyond the flow table's bound). */
  untrackedDrops: number;
}

/** Lateness histogram: 10 µs buckets up to 50 ms, the last bucket collects the rest. */
const LATE_BUCKET_MS = 0.01;
const LATE_BUCKETS = 5000;

function latenessSummary(h: Uint32Array, maxMs: number): RelayStats['releaseLateMs'] {
  let count = 0;
  for (const c of h) count += c;
  const at = (q: number): number => {
    if (count === 0) return 0;
    const rank = Math.ceil(q * count);
    let seen = 0;
    for (let i = 0; i < h.length; i++) {
      seen += h[i]!;
      if (seen >= rank) return +((i + 1) * LATE_BUCKET_MS).toFixed(3);
    }
    return maxMs;
  };
  return { count, p50: at(0.5), p99: at(0.99), p999: at(0.999), max: +maxMs.toFixed(3) };
}

export class Relay {
  readonly #native: NetNative;
  readonly #sides: [Side, Side];
  readonly #timerFd: number;
  readonly #timerWatch: unknown;
  readonly #slab = Buffer.allocUnsafe(PACKET_STRIDE * BATCH);
  readonly #lens = new Int32Array(BATCH);
  readonly #slackMs: number;
  readonly #earlyWakeMs: number;
  readonly #trace: RelayTrace | undefined;
  /** The clock is read into this array: a returned double would be a new heap object per call. */
  readonly #clock = new Float64Array(1);
  readonly #late = new Uint32Array(LATE_BUCKETS);
  readonly #flowDrops = new FlowDropTable();
  #capture: LinkCapture | undefined;
  #lateMax = 0;
  #armedAt = 0;
  #wakeups = 0;
  #closed = false;

  constructor(native: NetNative, opts: RelayOptions) {
    this.#native = native;
    this.#slackMs = opts.slackMs ?? 0.05;
    this.#earlyWakeMs = opts.earlyWakeMs ?? 0;
    this.#trace = opts.trace;
    const up: Side = {
      dir: UP,
      readFd: opts.clientFd,
      writeFd: opts.serverFd,
      pipeline: opts.up,
      queue: new PacketQueue(PACKET_STRIDE),
      traceIdx: new Int32Array(opts.trace ? 1024 : 0),
      watch: undefined,
    };
    const down: Side = {
      dir: DOWN,
      readFd: opts.serverFd,
      writeFd: opts.clientFd,
      pipeline: opts.down,
      queue: new PacketQueue(PACKET_STRIDE),
      traceIdx: new Int32Array(opts.trace ? 1024 : 0),
      watch: undefined,
    };
    this.#sides = [up, down];
    this.#timerFd = native.timerCreate();
    this.#timerWatch = native.watch(this.#timerFd, () => this.#onTimer());
    for (const side of this.#sides) side.watch = native.watch(side.readFd, () => this.#onReadable(side));
  }

  stats(): RelayStats {
    return {
      up: { ...this.#sides[0].pipeline.stats },
      down: { ...this.#sides[1].pipeline.stats },
      wakeups: this.#wakeups,
      releaseLateMs: latenessSummary(this.#late, this.#lateMax),
      flows: this.#flowDrops.flows(),
      untrackedDrops: this.#flowDrops.untracked,
    };
  }

  /**
   * Records every packet from now on into `capture` (the link's capture stage), or stops recording
   * (undefined); returns the capture that was recording.
   */
  captureInto(capture: LinkCapture | undefined): LinkCapture | undefined {
    const was = this.#capture;
    this.#capture = capture;
    return was;
  }

  /** Stops watching and closes the timer; the TUN fds belong to the caller. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const side of this.#sides) this.#native.unwatch(side.watch);
    this.#native.unwatch(this.#timerWatch);
    this.#native.closeFd(this.#timerFd);
  }

  #onReadable(side: Side): void {
    const native = this.#native;
    const slab = this.#slab;
    const lens = this.#lens;
    const { pipeline, queue } = side;
    let earliest = Number.POSITIVE_INFINITY;
    const began = this.#trace ? this.#now() : 0;
    let read = 0;
    for (;;) {
      const n = native.readBatch(side.readFd, slab, PACKET_STRIDE, lens);
      if (n === 0) break;
      const now = this.#now();
      const trace = this.#trace;
      read += n;
      for (let i = 0; i < n; i++) {
        const len = lens[i]!;
        const due = pipeline.admit(len, now);
        const offset = i * PACKET_STRIDE;
        const capture = this.#capture;
        if (capture !== undefined) {
          const dropped = due === DROP;
          const reason = pipeline.lastDropReason;
          capture.record(
            side.dir as 0 | 1,
            slab,
            offset,
            len,
            now,
            dropped ? undefined : due,
            reason,
            dropped ? 0 : pipeline.lastQueueMs,
          );
        }
        if (due === DROP) {
          this.#flowDrops.drop(side.dir, pipeline.lastDropReason, slab, offset, len);
          continue;
        }
        const t = trace ? trace.packet(side.dir, len, now, due, icmpEcho(slab, offset, len)) : -1;
        if (due <= now && queue.size === 0) {
          this.#write(side, slab, offset, len, t);
        } else {
          const slot = queue.push(slab, offset, len, due);
          if (trace) this.#tag(side, slot, t);
          if (due < earliest) earliest = due;
        }
      }
      if (n < BATCH) break;
    }
    this.#trace?.wake(WAKE_READ, 0, began, this.#now(), read);
    if (earliest !== Number.POSITIVE_INFINITY && (this.#armedAt === 0 || earliest < this.#armedAt)) {
      this.#arm(earliest);
    }
  }

  #onTimer(): void {
    const native = this.#native;
    native.timerAck(this.#timerFd);
    const deadline = this.#armedAt;
    this.#armedAt = 0;
    let released = 0;
    this.#wakeups++;
    let now = this.#now();
    // Woken early on purpose (see #arm): wait for the deadline on the CPU, bounded by earlyWakeMs.
    if (this.#earlyWakeMs > 0 && now < deadline && deadline - now <= this.#earlyWakeMs) {
      native.spinUntil?.(deadline);
      now = this.#now();
    }
    const horizon = now + this.#slackMs;
    let next = Number.POSITIVE_INFINITY;
    for (const side of this.#sides) {
      const q = side.queue;
      while (q.size > 0 && q.peekDue() <= horizon) {
        const late = now - q.peekDue();
        if (late > 0) {
          this.#late[Math.min(LATE_BUCKETS - 1, Math.floor(late / LATE_BUCKET_MS))]!++;
          if (late > this.#lateMax) this.#lateMax = late;
        } else this.#late[0]!++;
        const slot = q.pop();
        released++;
        this.#write(
          side,
          q.slab,
          q.offsetOf(slot),
          q.lengthOf(slot),
          this.#trace ? side.traceIdx[slot]! : -1,
        );
      }
      const due = q.peekDue();
      if (due < next) next = due;
    }
    this.#trace?.wake(WAKE_TIMER, deadline, now, this.#now(), released);
    if (next !== Number.POSITIVE_INFINITY) this.#arm(next);
  }

  #now(): number {
    // An addon built before nowInto existed (a stale native/build) still works, allocating.
    if (this.#native.nowInto === undefined) return this.#native.nowMs();
    this.#native.nowInto(this.#clock);
    return this.#clock[0]!;
  }

  #arm(deadlineMs: number): void {
    this.#armedAt = deadlineMs;
    const early = this.#earlyWakeMs;
    const spins = early > 0 && this.#native.spinUntil !== undefined;
    const at = spins && deadlineMs - this.#now() > 2 * early ? deadlineMs - early : deadlineMs;
    this.#native.timerArm(this.#timerFd, at);
  }

  #tag(side: Side, slot: number, traceIndex: number): void {
    if (slot >= side.traceIdx.length) {
      const grown = new Int32Array(Math.max(slot + 1, side.traceIdx.length * 2));
      grown.set(side.traceIdx);
      side.traceIdx = grown;
    }
    side.traceIdx[slot] = traceIndex;
  }

  #write(side: Side, buf: Buffer, offset: number, len: number, traceIndex: number): void {
    const native = this.#native;
    const t0 = traceIndex >= 0 ? this.#now() : 0;
    const r = native.writePacket(side.writeFd, buf, offset, len);
    if (traceIndex >= 0) this.#trace!.written(traceIndex, t0, this.#now());
    if (r < 0) side.pipeline.stats.writeErrors++;
    else {
      side.pipeline.stats.packetsOut++;
      side.pipeline.stats.bytesOut += len;
    }
  }
}

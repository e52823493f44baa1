/**
 * A link's pipeline: each direction is its conditions' stages composed in a fixed order (each
 * condition declares its stage: src/net/conditions/), and a queue of packets waiting for their
 * departure time. Pure TypeScript with an injected clock, so it is unit-tested without devices; the
 * relay (`relay.ts`) feeds it packets and writes them out when due.
 *
 * ```
 *   packet in ─▶ loss (i.i.d. or Gilbert–Elliott) ─▶ rate + shared drop-tail queue ─▶ delay ─▶ jitter ─▶ due time
 *                                                                                     fate ─▶ capture (capture.ts)
 * ```
 * Loss comes first (a lost packet does not occupy the bottleneck), then the bottleneck, then
 * propagation; jitter last because with `reorder` it is the only stage whose output is not in order.
 */
import { createRng } from '../core/index.ts';
import { buildStages } from './conditions/index.ts';
import { type DirectionSpec, DROP, type DropReason, type LinkCondition } from './conditions/types.ts';

/** Counters for one direction. Bytes are IP packet bytes. */
export interface DirectionStats {
  packetsIn: number;
  bytesIn: number;
  packetsOut: number;
  bytesOut: number;
  droppedLoss: number;
  droppedQueue: number;
  /** Packets the kernel refused when the relay wrote them (should stay 0). */
  writeErrors: number;
}

function emptyDirectionStats(): DirectionStats {
  return {
    packetsIn: 0,
    bytesIn: 0,
    packetsOut: 0,
    bytesOut: 0,
    droppedLoss: 0,
    droppedQueue: 0,
    writeErrors: 0,
  };
}

/** One direction of the link: decides each packet's fate and due time, and counts. */
export class DirectionPipeline {
  readonly stats: DirectionStats = emptyDirectionStats();
  /** Why the last packet {@link admit} returned DROP for was dropped. */
  lastDropReason: DropReason = 'loss';
  readonly #stages: LinkCondition[];
  readonly #queue: LinkCondition | undefined;

  constructor(stages: LinkCondition[]) {
    this.#stages = stages;
    this.#queue = stages.find((s) => s.lastWaitMs !== undefined);
  }

  /** How long the last packet {@link admit} passed waits in the bottleneck queue, ms (0 without one). */
  get lastQueueMs(): number {
    return this.#queue?.lastWaitMs ?? 0;
  }

  /** True when packets pass through unchanged and at once (the relay may skip its queue). */
  get passthrough(): boolean {
    return this.#stages.length === 0;
  }

  /** A packet of `sizeBytes` arrives at `nowMs`: its due time, or {@link DROP}. */
  admit(sizeBytes: number, nowMs: number): number {
    this.stats.packetsIn++;
    this.stats.bytesIn += sizeBytes;
    let t = nowMs;
    for (const stage of this.#stages) {
      t = stage.admit(sizeBytes, t);
      if (t === DROP) {
        this.#countDrop(stage.dropReason ?? 'loss');
        return DROP;
      }
    }
    return t;
  }

  #countDrop(reason: DropReason): void {
    this.lastDropReason = reason;
    if (reason === 'queue') this.stats.droppedQueue++;
    else this.stats.droppedLoss++;
  }
}

/** Both directions of a link, seeded: the same seed drops the same packets. */
export function createLinkPipeline(
  spec: { up: DirectionSpec; down: DirectionSpec },
  seed: number,
): { up: DirectionPipeline; down: DirectionPipeline } {
  return {
    up: new DirectionPipeline(buildStages(spec.up, createRng(seed))),
    down: new DirectionPipeline(buildStages(spec.down, createRng(seed ^ 0x5bd1e995))),
  };
}

/**
 * Packets waiting for their due time: copies in a slab of fixed-size slots, ordered by a binary
 * min-heap on (due time, arrival order) so equal times keep their order. Grows by doubling.
 */
export class PacketQueue {
  #stride: number;
  #capacity: number;
  #slab: Buffer;
  #due: Float64Array;
  #seq: Float64Array;
  #len: Int32Array;
  #free: Int32Array;
  #freeTop: number;
  #heap: Int32Array;
  #size = 0;
  #nextSeq = 0;
  #bytes = 0;

  /** @param stride bytes per slot (≥ the MTU). @param capacity initial number of slots. */
  constructor(stride: number, capacity = 1024) {
    this.#stride = stride;
    this.#capacity = capacity;
    this.#slab = Buffer.allocUnsafe(stride * capacity);
    this.#due = new Float64Array(capacity);
    this.#seq = new Float64Array(capacity);
    this.#len = new Int32Array(capacity);
    this.#heap = new Int32Array(capacity);
    this.#free = new Int32Array(capacity);
    for (let i = 0; i < capacity; i++) this.#free[i] = capacity - 1 - i;
    this.#freeTop = capacity;
  }

  get size(): number {
    return this.#size;
  }

  /** Bytes held. */
  get bytes(): number {
    return this.#bytes;
  }

  /** The slab holding packets: read slot `s` at `s * stride`. */
  get slab(): Buffer {
    return this.#slab;
  }

  /** Due time of the earliest packet, or Infinity when empty. */
  peekDue(): number {
    return this.#size === 0 ? Number.POSITIVE_INFINITY : this.#due[this.#heap[0]!]!;
  }

  /** Copies `src[offset, offset+len)` in with its due time; returns the slot it took. */
  push(src: Buffer, offset: number, len: number, dueMs: number): number {
    if (this.#freeTop === 0) this.#grow();
    const slot = this.#free[--this.#freeTop]!;
    // Buffer#copy allocates nothing (a subarray would, per packet, and feed the GC).
    src.copy(this.#slab, slot * this.#stride, offset, offset + len);
    this.#due[slot] = dueMs;
    this.#seq[slot] = this.#nextSeq++;
    this.#len[slot] = len;
    this.#bytes += len;
    let i = this.#size++;
    const heap = this.#heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(slot, heap[parent]!)) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = slot;
    return slot;
  }

  /**
   * Removes the earliest packet and returns its slot; read it from {@link slab} at slot·stride with
   * {@link lengthOf} before the next push. Call only when size > 0.
   */
  pop(): number {
    const heap = this.#heap;
    const top = heap[0]!;
    const last = heap[--this.#size]!;
    let i = 0;
    const n = this.#size;
    while (true) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && this.#less(heap[r]!, heap[l]!) ? r : l;
      if (!this.#less(heap[c]!, last)) break;
      heap[i] = heap[c]!;
      i = c;
    }
    if (n > 0) heap[i] = last;
    this.#free[this.#freeTop++] = top;
    this.#bytes -= this.#len[top]!;
    return top;
  }

  lengthOf(slot: number): number {
    return this.#len[slot]!;
  }

  offsetOf(slot: number): number {
    return slot * this.#stride;
  }

  #less(a: number, b: number): boolean {
    const da = this.#due[a]!;
    const db = this.#due[b]!;
    return da < db || (da === db && this.#seq[a]! < this.#seq[b]!);
  }

  #grow(): void {
    const old = this.#capacity;
    const cap = old * 2;
    const slab = Buffer.allocUnsafe(this.#stride * cap);
    this.#slab.copy(slab, 0, 0, this.#stride * old);
    this.#slab = slab;
    const grow64 = (a: Float64Array) => {
      const b = new Float64Array(cap);
      b.set(a);
      return b;
    };
    const grow32 = (a: Int32Array) => {
      const b = new Int32Array(cap);
      b.set(a);
      return b;
    };
    this.#due = grow64(this.#due);
    this.#seq = grow64(this.#seq);
    this.#len = grow32(this.#len);
    this.#heap = grow32(this.#heap);
    this.#free = new Int32Array(cap);
    this.#freeTop = 0;
    for (let i = cap - 1; i >= old; i--) this.#free[this.#freeTop++] = i;
    this.#capacity = cap;
  }
}

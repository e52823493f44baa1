/**
 * A session's open streams by id, in an array indexed by the id (client streams are odd: id >>> 1),
 * not a `Map`: a map that gains and loses a stream per request leaves a chain of dead tables that
 * keeps finished requests alive through young-generation collections (src/core/slots.ts says how).
 *
 * Open streams' ids lie in a window that moves up; the array is a ring over that window and doubles
 * when two open streams would share a slot. Past {@link MAX_RING_SLOTS} (one stream open while a
 * million later ones came and went) the colliding stream goes to a small map instead.
 */

const FIRST_RING_SLOTS = 64;
/** 2^20 slots (4 MiB of pointers at most): a ring never grows past it. */
export const MAX_RING_SLOTS = 2 ** 20;

export class StreamTable<T extends { readonly id: number }> {
  private ring: Array<T | undefined> = new Array<T | undefined>(FIRST_RING_SLOTS).fill(undefined);
  private mask = FIRST_RING_SLOTS - 1;
  private inRing = 0;
  /** Streams that collided with an open one once the ring was at its largest. */
  private spill: Map<number, T> | undefined;

  get size(): number {
    return this.inRing + (this.spill?.size ?? 0);
  }

  get(id: number): T | undefined {
    const s = this.ring[(id >>> 1) & this.mask];
    if (s !== undefined && s.id === id) return s;
    return this.spill?.get(id);
  }

  /** Adds stream `s`; its id must not be open. */
  add(s: T): void {
    for (;;) {
      const i = (s.id >>> 1) & this.mask;
      const held = this.ring[i];
      if (held === undefined) {
        this.ring[i] = s;
        this.inRing++;
        return;
      }
      if (this.ring.length >= MAX_RING_SLOTS) {
        this.spill ??= new Map();
        this.spill.set(s.id, s);
        return;
      }
      this.grow();
    }
  }

  /** Removes the stream with this id; false when none was open. */
  delete(id: number): boolean {
    const i = (id >>> 1) & this.mask;
    const s = this.ring[i];
    if (s !== undefined && s.id === id) {
      this.ring[i] = undefined;
      this.inRing--;
      return true;
    }
    return this.spill?.delete(id) ?? false;
  }

  /** The open streams in id order (a copy: the caller may delete while walking it). */
  values(): T[] {
    const out: T[] = [];
    for (const s of this.ring) if (s !== undefined) out.push(s);
    if (this.spill) out.push(...this.spill.values());
    return out.sort((a, b) => a.id - b.id);
  }

  clear(): void {
    this.ring.fill(undefined);
    this.inRing = 0;
    this.spill = undefined;
  }

  /** Doubles the ring until its open streams occupy distinct slots. */
  private grow(): void {
    const open = this.ring.filter((s): s is T => s !== undefined);
    let size = this.ring.length * 2;
    for (;;) {
      const mask = size - 1;
      const next = new Array<T | undefined>(size).fill(undefined);
      let clash = false;
      for (const s of open) {
        const i = (s.id >>> 1) & mask;
        if (next[i] !== undefined) {
          clash = true;
          break;
        }
        next[i] = s;
      }
      if (!clash || size >= MAX_RING_SLOTS) {
        if (clash) {
          // At the largest ring, streams that share a slot go to the spill map.
          this.spill ??= new Map();
          next.fill(undefined);
          for (const s of open) {
            const i = (s.id >>> 1) & mask;
            if (next[i] === undefined) next[i] = s;
            else this.spill.set(s.id, s);
          }
        }
        // The old ring is dropped cleared, so that nothing it held outlives it.
        this.ring.fill(undefined);
        this.ring = next;
        this.mask = mask;
        this.inRing = 0;
        for (const s of next) if (s !== undefined) this.inRing++;
        return;
      }
      size *= 2;
    }
  }
}

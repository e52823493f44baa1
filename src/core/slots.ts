/**
 * What is in flight (requests, streams), held without a hash table.
 *
 * A `Set` or `Map` that gains and loses an entry per request rebuilds its table every few hundred
 * requests, and V8 leaves each old table pointing at its successor (for iterators still walking it).
 * Once one table has been promoted to the old generation, that dead table keeps every later table —
 * and every request each of them held — alive through the young-generation collections until a full
 * collection: in a worker thread about a fifth of what a run allocated survived each scavenge and was
 * promoted (docs/performance.md, "Found: dead hash tables chained"; docs/design.md). An array whose
 * slots are reused has no such chain: a slot is cleared when its item leaves.
 */

/** An item {@link Slots} can hold: the slot it occupies, -1 when it is in none. */
export interface Slotted {
  slot: number;
}

/** A set of items that carry their own slot index. Iterates in slot order, not insertion order. */
export class Slots<T extends Slotted> implements Iterable<T> {
  private readonly items: Array<T | undefined> = [];
  private readonly free: number[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Adds `x`, which must be in no set. */
  add(x: T): void {
    const i = this.free.length > 0 ? this.free.pop()! : this.items.length;
    this.items[i] = x;
    x.slot = i;
    this.count++;
  }

  has(x: T): boolean {
    return x.slot >= 0 && this.items[x.slot] === x;
  }

  /** Removes `x`; false when it was not in this set. */
  delete(x: T): boolean {
    if (!this.has(x)) return false;
    this.items[x.slot] = undefined;
    this.free.push(x.slot);
    x.slot = -1;
    this.count--;
    return true;
  }

  /** A copy of the items, so that the caller may add and delete while walking it. */
  toArray(): T[] {
    const out: T[] = [];
    for (const x of this.items) if (x !== undefined) out.push(x);
    return out;
  }

  [Symbol.iterator](): Iterator<T> {
    return this.toArray()[Symbol.iterator]();
  }
}

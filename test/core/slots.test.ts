/**
 * `Slots` (src/core/slots.ts), the in-flight sets of the HTTP/2 and HTTP/3 connections: a set's
 * answers, slots reused, a walk that may end items as it goes, and no promotion of finished items by
 * the young generation's collections (a Set promotes them all: its dead tables chain).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Slots, type Slotted } from '../../src/core/slots.ts';
import { promotedWhile } from '../helpers/gc.ts';

interface Item extends Slotted {
  n: number;
  pad: number[];
}
const item = (n: number): Item => ({ n, slot: -1, pad: [n, n] });

test('answers as a Set does, for any order of adds and deletes', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.boolean(), fc.nat(30)), { maxLength: 300 }), (ops) => {
      const s = new Slots<Item>();
      const model = new Set<Item>();
      const made: Item[] = [];
      for (const [add, pick] of ops) {
        if (add || made.length === 0) {
          const x = item(made.length);
          made.push(x);
          s.add(x);
          model.add(x);
        } else {
          const x = made[pick % made.length]!;
          assert.equal(s.delete(x), model.delete(x));
        }
        assert.equal(s.size, model.size);
      }
      for (const x of made) assert.equal(s.has(x), model.has(x));
      assert.deepEqual(
        s
          .toArray()
          .map((x) => x.n)
          .sort((a, b) => a - b),
        [...model].map((x) => x.n).sort((a, b) => a - b),
      );
    }),
    { numRuns: 200 },
  );
});

test('a freed slot is reused, and an item of another set is not this one’s', () => {
  const a = new Slots<Item>();
  const b = new Slots<Item>();
  const x = item(1);
  const y = item(2);
  a.add(x);
  b.add(y); // y.slot is 0 too
  assert.equal(a.has(y), false);
  assert.equal(a.delete(y), false);
  assert.equal(b.has(y), true);
  a.delete(x);
  assert.equal(x.slot, -1);
  const z = item(3);
  a.add(z);
  assert.equal(z.slot, 0);
});

test('a walk may delete what it walks', () => {
  const s = new Slots<Item>();
  const all = [1, 2, 3, 4].map(item);
  for (const x of all) s.add(x);
  const seen: number[] = [];
  for (const x of s) {
    seen.push(x.n);
    s.delete(x);
  }
  assert.deepEqual(seen, [1, 2, 3, 4]);
  assert.equal(s.size, 0);
});

test('finished items are not promoted by young-generation collections (a Set promotes them)', async (t) => {
  const run = (add: (x: Item) => void, del: (x: Item) => void) => () => {
    const open: Item[] = [];
    for (let i = 0; i < 100; i++) {
      const x = item(i);
      add(x);
      open.push(x);
    }
    for (let i = 0; i < 20_000; i++) {
      const x = item(i);
      add(x);
      open.push(x);
      del(open.shift()!);
    }
  };
  const slots = new Slots<Item>();
  slots.add(item(-1));
  const set = new Set<Item>([item(-1)]);
  const viaSlots = await promotedWhile(
    run(
      (x) => slots.add(x),
      (x) => slots.delete(x),
    ),
  );
  const viaSet = await promotedWhile(
    run(
      (x) => set.add(x),
      (x) => set.delete(x),
    ),
  );
  t.diagnostic(`old space grew ${viaSlots} bytes with Slots, ${viaSet} with a Set`);
  assert.ok(viaSlots < 600_000, `Slots promoted ${viaSlots} bytes`);
});

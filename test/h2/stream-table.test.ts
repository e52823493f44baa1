/**
 * The session's table of open streams (src/h2/stream-table.ts): the same answers as a Map under any
 * sequence of opens and ends, a ring that grows around a stream left open, the spill past its
 * largest size, and the reason it exists — finished streams are not promoted by the young
 * generation's collections, where a Map's chain of dead tables promotes them all.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { MAX_RING_SLOTS, StreamTable } from '../../src/h2/stream-table.ts';
import { promotedWhile } from '../helpers/gc.ts';

interface S {
  readonly id: number;
  pad: number[];
}

test('answers as a Map does, for any order of opens and ends', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.boolean(), fc.nat(40)), { maxLength: 400 }), (ops) => {
      const t = new StreamTable<S>();
      const m = new Map<number, S>();
      let next = 1;
      for (const [open, pick] of ops) {
        if (open || m.size === 0) {
          const s = { id: next, pad: [] };
          next += 2;
          t.add(s);
          m.set(s.id, s);
        } else {
          // End any open stream, not only the oldest: some stay open while later ones come and go.
          const ids = [...m.keys()];
          const id = ids[pick % ids.length]!;
          assert.equal(t.delete(id), true);
          m.delete(id);
          assert.equal(t.delete(id), false);
        }
        assert.equal(t.size, m.size);
      }
      for (let id = 1; id < next; id += 2) assert.equal(t.get(id), m.get(id));
      assert.deepEqual(
        t.values().map((s) => s.id),
        [...m.keys()].sort((a, b) => a - b),
      );
    }),
    { numRuns: 200 },
  );
});

test('a stream left open while 100,000 later ones come and go stays found', () => {
  const t = new StreamTable<S>();
  const stuck = { id: 1, pad: [] };
  t.add(stuck);
  for (let id = 3; id < 200_003; id += 2) {
    t.add({ id, pad: [] });
    if (id > 3) t.delete(id - 2);
  }
  assert.equal(t.get(1), stuck);
  assert.equal(t.size, 2);
  assert.deepEqual(
    t.values().map((s) => s.id),
    [1, 200_001],
  );
});

test('past the largest ring, streams that share a slot spill into a map and are still found', () => {
  const t = new StreamTable<S>();
  const span = 2 * MAX_RING_SLOTS; // ids this far apart share a slot at every ring size
  const a = { id: 1, pad: [] };
  const b = { id: 1 + span, pad: [] };
  const c = { id: 1 + 2 * span, pad: [] };
  t.add(a);
  t.add(b);
  t.add(c);
  assert.equal(t.size, 3);
  assert.equal(t.get(b.id), b);
  assert.equal(t.get(c.id), c);
  assert.equal(t.delete(a.id), true);
  assert.equal(t.get(b.id), b);
  assert.deepEqual(
    t.values().map((s) => s.id),
    [b.id, c.id],
  );
  t.clear();
  assert.equal(t.size, 0);
  assert.equal(t.get(b.id), undefined);
});

/** 100 streams open; 20,000 times the oldest ends and a new one opens. */
function churn(add: (s: S) => void, end: (id: number) => void): () => void {
  return () => {
    const open: number[] = [];
    let id = 1;
    for (; id < 201; id += 2) {
      add({ id, pad: [id] });
      open.push(id);
    }
    for (let i = 0; i < 20_000; i++, id += 2) {
      add({ id, pad: [id] });
      open.push(id);
      end(open.shift()!);
    }
  };
}

test('finished streams are not promoted by young-generation collections (a Map promotes them)', async (t) => {
  const table = new StreamTable<S>();
  // Opened and made old before the churn, as a session's table is by the time it carries a run.
  table.add({ id: 100_001, pad: [] });
  const map = new Map<number, S>([[100_001, { id: 100_001, pad: [] }]]);
  const viaTable = await promotedWhile(
    churn(
      (s) => table.add(s),
      (id) => table.delete(id),
    ),
  );
  const viaMap = await promotedWhile(
    churn(
      (s) => map.set(s.id, s),
      (id) => map.delete(id),
    ),
  );
  t.diagnostic(`old space grew ${viaTable} bytes with the table, ${viaMap} with a Map`);
  // 20,000 finished streams take about 1.4 MB; the table's survivors are the 100 still open.
  assert.ok(viaTable < 600_000, `the table promoted ${viaTable} bytes`);
});

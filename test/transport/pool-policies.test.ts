// The pool policies (src/transport/policies/): whatever connections a pool holds — usable or not,
// full or not, announcing no streams at all — a policy never picks one that is unusable or full, and
// answers `open` only when the pool may open one. Property-tested over random pools with fast-check.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { type PickContext, POLICIES } from '../../src/transport/policies/index.ts';
import type { PoolConn } from '../../src/transport/pool-conn.ts';
import { POOL_POLICIES } from '../../src/transport/presets.ts';

/** A connection as a policy sees it: only its state, no socket. */
function conn(id: number, usable: boolean, inFlight: number, capacity: number): PoolConn {
  return {
    id,
    inFlight,
    usable: () => usable,
    capacity: () => capacity,
  } as PoolConn;
}

const pools = fc.record({
  conns: fc.array(fc.record({ usable: fc.boolean(), inFlight: fc.nat(6), capacity: fc.nat(6) }), {
    maxLength: 8,
  }),
  canOpen: fc.boolean(),
  cursor: fc.nat(16),
});

test('every policy in POOL_POLICIES has a function in the table', () => {
  assert.deepEqual(Object.keys(POLICIES).sort(), [...POOL_POLICIES].sort());
});

for (const name of POOL_POLICIES) {
  test(`${name}: never an unusable or full connection; 'open' only when the pool may open`, () => {
    fc.assert(
      fc.property(pools, fc.nat(4), ({ conns, canOpen, cursor }, picks) => {
        const ctx: PickContext = {
          conns: conns.map((c, i) => conn(i + 1, c.usable, c.inFlight, c.capacity)),
          canOpen,
          cursor: ctx0(cursor, conns.length),
        };
        // Several picks in a row, as a pool makes them: round-robin's cursor moves between them.
        for (let i = 0; i <= picks; i++) {
          const choice = POLICIES[name](ctx);
          if (choice === 'open') assert.ok(canOpen, 'open although the pool may not');
          else if (choice !== undefined) {
            assert.ok(ctx.conns.includes(choice), 'a connection of the pool');
            assert.ok(choice.usable(), `connection ${choice.id} is unusable`);
            assert.ok(choice.inFlight < choice.capacity(), `connection ${choice.id} is full`);
          }
        }
      }),
      { numRuns: 2000 },
    );
  });
}

test('the property can fail: a policy that takes the first connection is caught', () => {
  const naive = (p: PickContext) => p.conns[0];
  assert.throws(() =>
    fc.assert(
      fc.property(pools, ({ conns, canOpen }) => {
        const c = naive({
          conns: conns.map((x, i) => conn(i + 1, x.usable, x.inFlight, x.capacity)),
          canOpen,
          cursor: 0,
        });
        assert.ok(c === undefined || (c.usable() && c.inFlight < c.capacity()));
      }),
    ),
  );
});

test('least-busy, first-free, lease and round-robin choose as their names say', () => {
  const a = conn(1, true, 2, 10);
  const b = conn(2, true, 1, 10);
  const idle = conn(3, true, 0, 10);
  const ctx = (conns: PoolConn[], canOpen = false): PickContext => ({ conns, canOpen, cursor: 0 });
  assert.equal(POLICIES['least-busy'](ctx([a, b])), b);
  assert.equal(POLICIES['least-busy'](ctx([a, b], true)), 'open');
  assert.equal(POLICIES['first-free'](ctx([a, idle], true)), idle);
  assert.equal(POLICIES['first-free'](ctx([a, b], true)), 'open');
  assert.equal(POLICIES['first-free'](ctx([a, b])), b);
  assert.equal(POLICIES.lease(ctx([a, b])), undefined);
  const rr = ctx([a, b, idle]);
  assert.deepEqual(
    [1, 2, 3, 4].map(() => (POLICIES['round-robin'](rr) as PoolConn).id),
    [1, 2, 3, 1],
  );
});

/** A cursor within the pool's size (a pool keeps it so). */
function ctx0(cursor: number, n: number): number {
  return n > 0 ? cursor % n : 0;
}

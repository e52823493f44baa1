// The three kinds of claim (src/studies/claims.ts), on the figures the issue found worded against
// themselves: a direction is compare's decision over the runs, never the interval alone; "agrees" needs the report's
// direction and a tolerance below its effect; a mechanism accounts only within its tolerance.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { bootstrapRatio, decide } from '../../src/compare/index.ts';
import {
  accounts,
  agreement,
  decideRuns,
  direction,
  directionProblem,
  directionText,
  noDifference,
  toleranceFor,
  wouldTell,
} from '../../src/studies/claims.ts';
import { Evidence, makeFinding } from '../../src/studies/findings.ts';

const words = {
  above: (x: string) => `${x} faster`,
  below: (x: string) => `${x} slower`,
  same: 'the same',
  undecided: 'undecided',
};

const n4 = { candidate: 4, baseline: 4 };

describe('claims', () => {
  test('direction: the decision, never the interval alone', () => {
    const slower = { interval: { ratio: 0.36, lo: 0.19, hi: 0.74, n: n4 }, outcome: 'worse' as const };
    assert.equal(direction(slower), 'below');
    assert.equal(directionText(slower, words), '2.8× slower (0.36×, interval 0.19–0.74)');
    // The same interval from 2 runs a side: the rank test cannot decide, and the words say so.
    const quick = { interval: { ratio: 0.36, lo: 0.19, hi: 0.74, n: { candidate: 2, baseline: 2 } } };
    assert.equal(direction({ ...quick, outcome: 'undecided' }), 'undecided');
    assert.equal(
      directionText({ ...quick, outcome: 'undecided', runsNeeded: 22 }, words),
      'undecided (0.36×, interval 0.19–0.74; 2 kept runs a side; the rank test decides nothing with fewer than 4)',
    );
    // An interval containing 1 but reaching far beyond ±5% is undecided, not "no difference".
    const wide = { interval: { ratio: 1.04, lo: 0.34, hi: 1.1, n: n4 }, outcome: 'undecided' as const };
    assert.equal(noDifference(wide), false);
    assert.equal(
      directionText({ ...wide, runsNeeded: 9 }, words),
      'undecided (1.04×, interval 0.34–1.10; about 9 runs a side would tell)',
    );
  });

  test('direction words never contradict decide() over the runs', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 1, max: 100, noNaN: true }), { minLength: 2, maxLength: 8 }),
        fc.array(fc.double({ min: 1, max: 100, noNaN: true }), { minLength: 2, maxLength: 8 }),
        (a, b) => {
          const d = decideRuns(a, b, { higherIsBetter: true })!;
          const { outcome } = decide(a, b, bootstrapRatio(a, b, { seed: 1 }), { higherIsBetter: true });
          assert.equal(d.outcome, outcome);
          const t = directionText(d, words);
          if (outcome === 'better') assert.match(t, /faster/);
          else if (outcome === 'worse') assert.match(t, /slower/);
          else if (outcome === 'no-clear-difference') assert.match(t, /^the same/);
          else assert.match(t, /^undecided/);
          // Fewer kept runs than the rank test needs: never an estimate of how many would tell.
          if (Math.min(a.length, b.length) < 4) assert.doesNotMatch(t, /about \d+ runs/);
          assert.equal(directionProblem('x', direction(d), d), undefined);
        },
      ),
    );
  });

  test('directionProblem: "no difference" beside a decided slower result', () => {
    const d = { interval: { ratio: 0.36, lo: 0.19, hi: 0.74, n: n4 }, outcome: 'worse' as const };
    assert.equal(
      directionProblem('both fixes', 'same', d),
      'both fixes: the words say same, the runs decided below (0.36×, 0.19–0.74, worse)',
    );
  });

  test('wouldTell: no estimate from fewer runs than the rank test needs', () => {
    const d = decideRuns([30, 31, 29, 30.5], [10, 10.5, 9.5, 10.2], { higherIsBetter: true })!;
    assert.equal(d.outcome, 'better');
    const u = decideRuns([30, 31, 29], [10, 10.5, 9.5], { higherIsBetter: true })!;
    assert.equal(u.outcome, 'undecided');
    assert.equal(wouldTell(u), '3 kept runs a side; the rank test decides nothing with fewer than 4');
    assert.equal(
      wouldTell({
        interval: { ratio: 1, lo: 1, hi: 1, n: { candidate: 1, baseline: 1 } },
        outcome: 'insufficient',
      }),
      '1 kept run a side: no spread to decide from',
    );
  });

  test("agreement: the report's +11% cannot agree with this run's 0.95×, nor be judged ±20%", () => {
    assert.ok(toleranceFor(1.112, 0.2) < 0.112);
    const a = agreement(1.112, 0.95, 0.2);
    assert.equal(a.verdict, 'differs');
    assert.equal(a.sameDirection, false);
    // The report's 1.10× (9.5% lower latency) against 0.93× in the saved quick run: the other side.
    assert.equal(agreement(1 / (1 - 0.095), 0.93, 0.2).verdict, 'differs');
    assert.equal(agreement(0.42, 0.49, 0.2).verdict, 'agrees');
    // A report of no difference is judged with the stated tolerance.
    assert.equal(agreement(1.001, 0.98, 0.1).verdict, 'agrees');
  });

  test('agreement: a band never contains 1 for a report with an effect', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.1, max: 10, noNaN: true }),
        fc.double({ min: 0.01, max: 0.5, noNaN: true }),
        (ref, tol) => {
          if (Math.abs(Math.log(ref)) < Math.log(1.05)) return;
          const t = toleranceFor(ref, tol);
          assert.ok(Math.abs(1 / ref - 1) > t, `1 agrees with ${ref} within ${t}`);
        },
      ),
    );
  });

  test("makeFinding with ratio: the verdict is agreement's, the tolerance recorded is the one used", () => {
    const ev = new Evidence();
    const f = makeFinding({
      id: 'x',
      row: 'r',
      report: ev.x('reportRatio', 1.112),
      measured: ev.x('ratio', 0.95),
      reference: 1.112,
      value: 0.95,
      tolerance: 0.2,
      ratio: true,
      explain: () => undefined,
      ev,
    });
    assert.equal(f.verdict, 'differs');
    assert.ok(Number(f.evidence.tolerance) < 0.112);
    assert.match(f.difference!, /the other side of 1 from the report/);
  });

  test('makeFinding: an "agrees" the runs decide no direction for says it is figures only', () => {
    const make = (outcome: 'undecided' | 'worse') => {
      const ev = new Evidence();
      return makeFinding({
        id: 'x',
        row: 'r',
        report: ev.x('reportRatio', 0.77),
        measured: ev.x('ratio', 0.84),
        reference: 0.77,
        value: 0.84,
        tolerance: 0.1,
        ratio: true,
        decision: {
          interval: { ratio: 0.84, lo: 0.68, hi: 1.03, n: { candidate: 2, baseline: 2 } },
          outcome,
        },
        explain: () => undefined,
        ev,
      });
    };
    assert.equal(make('undecided').verdict, 'agrees');
    assert.match(make('undecided').difference!, /figures only: the runs decide no direction\)$/);
    assert.doesNotMatch(make('worse').difference!, /figures only/);
  });

  test("accounts: Little's law's 0.66× does not account for means of 0.83×; the same side of 1 is needed", () => {
    assert.equal(accounts(0.66, 0.83, { tolerance: 0.2, ratio: true }), false);
    assert.equal(accounts(0.8, 0.83, { tolerance: 0.2, ratio: true }), true);
    assert.equal(accounts(1.1, 0.95, { tolerance: 0.2, ratio: true }), false);
    // A slow-start prediction of 150 ms against a measured 96 ms.
    assert.equal(accounts(150, 96, { tolerance: 0.25 }), false);
  });
});

test('noDifference: only compare\'s "no clear difference"', () => {
  const i = { ratio: 0.99, lo: 0.97, hi: 0.998, n: n4 };
  assert.equal(noDifference({ interval: i, outcome: 'no-clear-difference' }), true);
  assert.equal(noDifference({ interval: { ...i, lo: 0.8, hi: 1.2 }, outcome: 'undecided' }), false);
  assert.equal(noDifference({ interval: { ...i, lo: 0.85, hi: 0.95 }, outcome: 'worse' }), false);
});

// The three kinds of claim (src/studies/claims.ts), on the figures the issue found worded against
// themselves: an interval below 1 is "slower", never "no difference"; "agrees" needs the report's
// direction and a tolerance below its effect; a mechanism accounts only within its tolerance.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  accounts,
  agreement,
  direction,
  directionText,
  noDifference,
  toleranceFor,
} from '../../src/studies/claims.ts';
import { Evidence, makeFinding } from '../../src/studies/findings.ts';

const words = {
  above: (x: string) => `${x} faster`,
  below: (x: string) => `${x} slower`,
  either: 'no difference the runs could show',
};

describe('claims', () => {
  test('direction: proxy 0.36× (0.19–0.74) is slower, and says so with its interval', () => {
    const i = { ratio: 0.36, lo: 0.19, hi: 0.74 };
    assert.equal(direction(i), 'below');
    assert.equal(directionText(i, words), '2.8× slower (0.36×, interval 0.19–0.74)');
    assert.equal(
      directionText({ ratio: 1.63, lo: 0.85, hi: 4.01 }, words),
      'no difference the runs could show (1.63×, interval 0.85–4.01)',
    );
  });

  test('direction words never contradict the interval', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.05, max: 20, noNaN: true }),
        fc.double({ min: 1, max: 3, noNaN: true }),
        (r, w) => {
          const i = { ratio: r, lo: r / w, hi: r * w };
          const t = directionText(i, words);
          if (i.lo > 1) assert.match(t, /faster/);
          else if (i.hi < 1) assert.match(t, /slower/);
          else assert.match(t, /^no difference/);
        },
      ),
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

  test("accounts: Little's law's 0.66× does not account for means of 0.83×; the same side of 1 is needed", () => {
    assert.equal(accounts(0.66, 0.83, { tolerance: 0.2, ratio: true }), false);
    assert.equal(accounts(0.8, 0.83, { tolerance: 0.2, ratio: true }), true);
    assert.equal(accounts(1.1, 0.95, { tolerance: 0.2, ratio: true }), false);
    // A slow-start prediction of 150 ms against a measured 96 ms.
    assert.equal(accounts(150, 96, { tolerance: 0.25 }), false);
  });
});

test('noDifference: 0.97–1.00 is a tie, 0.85–0.95 is not', () => {
  assert.equal(noDifference({ lo: 0.97, hi: 0.998 }), true);
  assert.equal(noDifference({ lo: 0.85, hi: 0.95 }), false);
  assert.equal(noDifference({ lo: 0.8, hi: 1.2 }), true);
});

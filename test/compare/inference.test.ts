// Property tests of the statistics behind every verdict (fast-check): medians, bootstrap intervals
// of a ratio, and the "no clear difference" rule.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  bootstrapRatio,
  classifyRatio,
  decide,
  mannWhitneyP,
  minRunsForRankTest,
  runsNeeded,
  separation,
  summarize,
  withinMinEffect,
} from '../../src/compare/inference.ts';
import { medianInterpolated as median, quantileInterpolated as quantile } from '../../src/core/index.ts';

const positive = fc.double({ min: 0.001, max: 1e6, noNaN: true, noDefaultInfinity: true });
const runs = fc.array(positive, { minLength: 1, maxLength: 9 });

test('median lies between min and max and equals the middle element for odd lengths', () => {
  fc.assert(
    fc.property(runs, (xs) => {
      const s = summarize(xs);
      assert.ok(s.min <= s.median && s.median <= s.max);
      assert.equal(s.n, xs.length);
      if (xs.length % 2 === 1) {
        const sorted = [...xs].sort((a, b) => a - b);
        assert.equal(median(xs), sorted[(xs.length - 1) / 2]);
      }
    }),
  );
  assert.ok(Number.isNaN(median([])));
  assert.equal(quantile([1, 2, 3, 4], 0), 1);
  assert.equal(quantile([1, 2, 3, 4], 1), 4);
  assert.equal(quantile([1, 2, 3, 4], 0.5), 2.5);
});

test('the interval contains the estimate and stays inside min/max ratio bounds', () => {
  fc.assert(
    fc.property(runs, runs, fc.integer(), (a, b, seed) => {
      const r = bootstrapRatio(a, b, { seed, iterations: 300 });
      assert.ok(r.lo <= r.ratio * (1 + 1e-12) && r.ratio <= r.hi * (1 + 1e-12), JSON.stringify(r));
      const eps = 1e-9;
      assert.ok(r.lo >= (Math.min(...a) / Math.max(...b)) * (1 - eps));
      assert.ok(r.hi <= (Math.max(...a) / Math.min(...b)) * (1 + eps));
    }),
    { numRuns: 200 },
  );
});

test('scaling the candidate by k scales the ratio and its interval by k (same seed)', () => {
  fc.assert(
    fc.property(runs, runs, fc.double({ min: 0.01, max: 100, noNaN: true }), (a, b, k) => {
      const r1 = bootstrapRatio(a, b, { seed: 7, iterations: 200 });
      const r2 = bootstrapRatio(
        a.map((x) => x * k),
        b,
        { seed: 7, iterations: 200 },
      );
      const close = (x: number, y: number) => Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(y));
      assert.ok(close(r2.ratio, r1.ratio * k));
      assert.ok(close(r2.lo, r1.lo * k));
      assert.ok(close(r2.hi, r1.hi * k));
    }),
    { numRuns: 100 },
  );
});

test('identical strategies (the same runs under two names) are never a win or a loss', () => {
  fc.assert(
    fc.property(
      fc.array(positive, { minLength: 2, maxLength: 8 }),
      fc.boolean(),
      fc.integer(),
      (xs, hib, seed) => {
        const r = bootstrapRatio(xs, [...xs], { seed, iterations: 500 });
        const o = classifyRatio(r, { higherIsBetter: hib });
        // No difference when the interval is bounded within the minimum effect, else undecided.
        const bounded = Math.max(Math.abs(Math.log(r.lo)), Math.abs(Math.log(r.hi))) <= Math.log(1.05);
        assert.equal(o, bounded ? 'no-clear-difference' : 'undecided');
      },
    ),
    { numRuns: 200 },
  );
});

test('a difference inside the minimum effect is no clear difference even with a tight interval', () => {
  const r = bootstrapRatio([103, 103.1, 102.9, 103], [100, 100.1, 99.9, 100]);
  assert.ok(r.lo > 1, 'the interval excludes 1');
  assert.equal(classifyRatio(r, { higherIsBetter: true }), 'no-clear-difference');
  assert.equal(classifyRatio(r, { higherIsBetter: true, minEffect: 0.01 }), 'better');
});

test('a large injected difference with noise is a clear winner, in the direction of the metric', () => {
  fc.assert(
    fc.property(
      fc.array(fc.double({ min: 0.9, max: 1.1, noNaN: true }), { minLength: 3, maxLength: 8 }),
      fc.array(fc.double({ min: 0.9, max: 1.1, noNaN: true }), { minLength: 3, maxLength: 8 }),
      fc.double({ min: 1.5, max: 20, noNaN: true }),
      (noiseA, noiseB, factor) => {
        const base = noiseB.map((x) => 1000 * x);
        const cand = noiseA.map((x) => 1000 * factor * x);
        const r = bootstrapRatio(cand, base, { iterations: 300 });
        assert.equal(classifyRatio(r, { higherIsBetter: true }), 'better');
        assert.equal(classifyRatio(r, { higherIsBetter: false }), 'worse');
      },
    ),
    { numRuns: 100 },
  );
});

test('one run per side is insufficient, whatever the numbers', () => {
  const r = bootstrapRatio([1000], [1]);
  assert.equal(r.lo, r.hi);
  assert.equal(classifyRatio(r, { higherIsBetter: true }), 'insufficient');
  assert.equal(classifyRatio(bootstrapRatio([], [1, 2]), { higherIsBetter: true }), 'insufficient');
});

test('Mann–Whitney: exact values, symmetry, and what few runs can claim', () => {
  assert.equal(mannWhitneyP([5, 6, 7, 8], [1, 2, 3, 4]), 2 / 70);
  assert.equal(mannWhitneyP([1, 2, 3], [4, 5, 6]), 2 / 20, 'with 3 runs a side nothing is ever below 0.05');
  assert.equal(mannWhitneyP([1, 2, 3, 4], [1, 2, 3, 4]), 1);
  fc.assert(
    fc.property(runs, runs, (a, b) => {
      const p = mannWhitneyP(a, b);
      assert.ok(p > 0 && p <= 1);
      assert.ok(Math.abs(p - mannWhitneyP(b, a)) < 1e-12);
      // Shifting one side far above the other can only make the evidence stronger.
      const shifted = a.map((x) => x + 2e6);
      assert.ok(mannWhitneyP(shifted, b) <= p + 1e-12);
    }),
    { numRuns: 200 },
  );
  // Large samples use the normal approximation: a clear shift is still found.
  const big = Array.from({ length: 60 }, (_, i) => i);
  assert.ok(
    mannWhitneyP(
      big.map((x) => x + 20),
      big,
    ) < 0.001,
  );
});

test('the rank test vetoes an interval that excludes 1 when the runs overlap too much', () => {
  const cand = [110, 112, 90, 111];
  const base = [100, 101, 99, 95];
  const r = bootstrapRatio(cand, base);
  const p = mannWhitneyP(cand, base);
  assert.ok(p > 0.05);
  assert.equal(classifyRatio(r, { higherIsBetter: true, pValue: p }), 'undecided');
  const sep = [110, 112, 109, 111];
  assert.equal(
    classifyRatio(bootstrapRatio(sep, base), { higherIsBetter: true, pValue: mannWhitneyP(sep, base) }),
    'better',
  );
});

test('runsNeeded: never fewer than the rank test needs, more when the spread is large against the effect', () => {
  assert.equal(minRunsForRankTest(0.05), 4);
  assert.equal(minRunsForRankTest(0.01), 5);
  assert.equal(runsNeeded([30, 31, 29], [10, 10.5, 9.5]), 4);
  // Never as few as the runs that could not tell: 6 a side whose spread says 4 → 7.
  assert.equal(runsNeeded([30, 31, 29, 30, 31, 29], [10, 10.5, 9.5, 10, 10.5, 9.5]), 7);
  const noisy = runsNeeded([12, 9, 14, 10], [10, 8, 11, 9.5]);
  assert.ok(noisy !== undefined && noisy > 4, String(noisy));
  // Half the effect with the same spread needs about four times the runs.
  const spread = [1, 1.25, 0.8, 1.1];
  const a = runsNeeded(
    spread.map((x) => x * 1.2),
    spread,
    { minEffect: 0.01 },
  )!;
  const b = runsNeeded(
    spread.map((x) => x * 1.1),
    spread,
    { minEffect: 0.01 },
  )!;
  assert.ok(b > 2.5 * a, `${a} → ${b}`);
});

test('"no clear difference" only when the whole interval lies within the minimum effect', () => {
  const n = { candidate: 4, baseline: 4 };
  const iv = (ratio: number, lo: number, hi: number) => ({ ratio, lo, hi, confidence: 0.95, n });
  // The shapes a report printed as "no difference": estimates near 1, intervals reaching far.
  for (const [r, lo, hi] of [
    [1.04, 0.34, 1.1],
    [1.02, 0.98, 1.52],
    [1.05, 0.35, 3.23],
    [0.985, 0.879, 1.003],
  ] as const)
    assert.equal(classifyRatio(iv(r, lo, hi), { higherIsBetter: true, pValue: 0.2 }), 'undecided');
  assert.equal(
    classifyRatio(iv(1.01, 0.97, 1.04), { higherIsBetter: true, pValue: 0.5 }),
    'no-clear-difference',
  );
  // An interval that excludes 1 around a small estimate may still hold a large effect: undecided.
  assert.equal(classifyRatio(iv(1.03, 1.01, 1.09), { higherIsBetter: true, pValue: 0.03 }), 'undecided');
  // The edges of the band count as inside it, in log space both ways.
  assert.ok(withinMinEffect(1.05) && withinMinEffect(1 / 1.05) && !withinMinEffect(1.051));
});

test('every run of one side beyond the other decides the cell whatever one outlier does to the spread', () => {
  // h3 slower in every run, one run far slower: 4 a side, p = 2/70 < 0.05.
  const h3 = [118, 121, 119, 400];
  const h2 = [100, 101, 99, 102];
  assert.equal(separation(h3, h2), 'above');
  const d = decide(h3, h2, bootstrapRatio(h3, h2), { higherIsBetter: false });
  assert.equal(d.outcome, 'worse');
  // With 3 a side the rank test cannot reach 0.05 (best p 0.10): undecided, and what tells is the
  // rank test's minimum (4 a side), not a spread the outlier inflated.
  const d3 = decide(h3.slice(1), h2.slice(1), bootstrapRatio(h3.slice(1), h2.slice(1)), {
    higherIsBetter: false,
  });
  assert.equal(d3.outcome, 'undecided');
  assert.equal(d3.runsNeeded, 4);
});

test('runsNeeded: one outlier does not inflate the estimate; none when no honest number exists', () => {
  const base = [100, 104, 97, 101, 99];
  const cand = [108, 103, 111, 106, 109];
  const clean = runsNeeded(cand, base)!;
  const outlier = runsNeeded([...cand.slice(0, 4), 400], base)!;
  assert.ok(outlier <= clean * 1.5, `${clean} → ${outlier}`);
  // An estimate sitting on the edge of the band: nothing would tell, so nothing is printed.
  assert.equal(runsNeeded([105, 106, 104, 105.5], [100, 101, 99, 100.5]), undefined);
});

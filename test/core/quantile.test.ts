// The two named quantiles of src/core: nearest rank (a value that was seen) and linear interpolation.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  medianInterpolated,
  medianNearestRank,
  quantileInterpolated,
  quantileNearestRank,
} from '../../src/core/index.ts';

test('quantileNearestRank is nearest-rank and lies between min and max', () => {
  assert.equal(quantileNearestRank([4, 1, 3, 2], 0.5), 2);
  assert.equal(quantileNearestRank([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.9), 9);
  assert.ok(Number.isNaN(quantileNearestRank([], 0.5)));
  fc.assert(
    fc.property(
      fc.array(fc.double({ noNaN: true, min: -1e6, max: 1e6 }), { minLength: 1 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      (xs, q) => {
        const v = quantileNearestRank(xs, q);
        return v >= Math.min(...xs) && v <= Math.max(...xs) && xs.includes(v);
      },
    ),
  );
});

test('the two medians differ on an even count only', () => {
  assert.equal(medianNearestRank([4, 1, 3, 2]), 2);
  assert.equal(medianInterpolated([4, 1, 3, 2]), 2.5);
  assert.equal(medianNearestRank([3, 1, 2]), 2);
  assert.equal(medianInterpolated([3, 1, 2]), 2);
  assert.equal(quantileInterpolated([1, 2, 3, 4], 0.25), 1.75);
});

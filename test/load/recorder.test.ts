// Issue 29: samples are counted with integer arithmetic in HdrHistogram's layout (UsRecorder) and
// handed to hdr-histogram-js at the end. The histogram that comes out must be the one recording every
// value into hdr-histogram-js directly would have made: same encoding, same percentiles.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  decodeHistogram,
  encodeHistogram,
  HISTOGRAM_SETTINGS,
  newHistogram,
  summarizeHistogram,
  UsRecorder,
} from '../../src/load/index.ts';

const HIST_LOWEST_US = HISTOGRAM_SETTINGS.lowestUs;
const HIST_HIGHEST_US = HISTOGRAM_SETTINGS.highestUs;

// Values across every bucket of the range: small ones (exact), bucket edges, and up to one hour.
const edge = fc
  .integer({ min: 0, max: 22 })
  .chain((k) =>
    fc
      .constantFrom(2 ** (k + 10) - 1, 2 ** (k + 10), 2 ** (k + 10) + 1)
      .map((v) => Math.min(v, HIST_HIGHEST_US)),
  );
const value = fc.oneof(
  fc.integer({ min: HIST_LOWEST_US, max: 5000 }),
  fc.integer({ min: HIST_LOWEST_US, max: HIST_HIGHEST_US }),
  edge,
);

test('UsRecorder gives the histogram hdr-histogram-js records itself, across the whole range', () => {
  fc.assert(
    fc.property(fc.array(value, { minLength: 1, maxLength: 300 }), (values) => {
      const direct = newHistogram();
      const rec = new UsRecorder();
      for (const v of values) {
        direct.recordValue(v);
        rec.record(v);
      }
      const mine = rec.toHistogram();
      assert.equal(mine.totalCount, values.length, 'every value counted');
      assert.equal(
        encodeHistogram(mine).base64,
        encodeHistogram(direct).base64,
        'same counts in the same buckets',
      );
      // Its maximum and minimum are those hdr-histogram-js finds in a histogram read back from an encoding.
      const decoded = decodeHistogram(encodeHistogram(direct));
      assert.equal(mine.maxValue, decoded.maxValue, 'maximum');
      assert.equal(mine.minNonZeroValue, decoded.minNonZeroValue, 'minimum');
      // What results carry: a histogram decoded from its encoding (a tally that crossed a thread or a shard file is decoded).
      assert.deepEqual(
        summarizeHistogram(decodeHistogram(encodeHistogram(mine))),
        summarizeHistogram(decodeHistogram(encodeHistogram(direct))),
      );
    }),
    { numRuns: 300 },
  );
});

test('an empty UsRecorder gives an empty histogram', () => {
  assert.equal(new UsRecorder().toHistogram().totalCount, 0, 'no counts');
});

test('summarizeHistogram reads percentiles and mean in one pass exactly as hdr-histogram-js computes them', () => {
  const ms = (us: number): number => Math.round(us) / 1000;
  fc.assert(
    fc.property(fc.array(value, { minLength: 1, maxLength: 400 }), (values) => {
      const rec = new UsRecorder();
      for (const v of values) rec.record(v);
      // As the engine has them: a part's histogram added into the run's.
      const h = newHistogram();
      h.add(rec.toHistogram());
      const expected = {
        p50: ms(h.getValueAtPercentile(50)),
        p90: ms(h.getValueAtPercentile(90)),
        p99: ms(h.getValueAtPercentile(99)),
        p999: ms(h.getValueAtPercentile(99.9)),
        max: ms(h.maxValue),
        min: ms(h.minNonZeroValue),
        mean: Math.round(h.mean) / 1000,
        count: values.length,
      };
      assert.deepEqual(summarizeHistogram(h), expected);
    }),
    { numRuns: 300 },
  );
});

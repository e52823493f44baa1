import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { H2labError } from '../src/core/errors.ts';
import { createRng } from '../src/core/rng.ts';
import {
  formatBytes,
  parseBitRate,
  parseBytes,
  parseDurationMs,
  parseFraction,
  parseInteger,
  parseList,
} from '../src/core/units.ts';

test('sizes: binary and decimal units', () => {
  assert.equal(parseBytes('1KiB'), 1024);
  assert.equal(parseBytes('1MiB'), 1048576);
  assert.equal(parseBytes('64k'), 65536);
  assert.equal(parseBytes('1kB'), 1000);
  assert.equal(parseBytes('100'), 100);
  assert.equal(parseBytes('1.5KiB'), 1536);
});

test('bad values name the option and the accepted forms', () => {
  assert.throws(
    () => parseBytes('12parsecs', '--size'),
    (e: unknown) =>
      e instanceof H2labError &&
      e.code === 'H2LAB_ERR_INVALID_OPTION' &&
      e.message.includes('--size') &&
      e.message.includes('12parsecs') &&
      e.message.includes('1KiB'),
  );
  assert.throws(() => parseDurationMs('soon', '--duration'), /--duration "soon" is not valid/);
  assert.throws(() => parseBitRate('fast', '--rate'), /--rate/);
  assert.throws(() => parseFraction('150%', '--loss'), /--loss/);
  assert.throws(() => parseInteger('-1', '--port', 0, 65535), /--port/);
  assert.throws(() => parseInteger('70000', '--port', 0, 65535), /from 0 to 65535/);
});

test('durations, rates, fractions, lists', () => {
  assert.equal(parseDurationMs('10s'), 10000);
  assert.equal(parseDurationMs('250ms'), 250);
  assert.equal(parseDurationMs('500us'), 0.5);
  assert.equal(parseDurationMs('2m'), 120000);
  assert.equal(parseDurationMs('40'), 40);
  assert.equal(parseBitRate('50mbit'), 50e6);
  assert.equal(parseBitRate('1gbit'), 1e9);
  assert.equal(parseFraction('1%'), 0.01);
  assert.equal(parseFraction('0.02'), 0.02);
  assert.deepEqual(parseList(' h1, h2 ,,h2-pool'), ['h1', 'h2', 'h2-pool']);
});

test('formatBytes round-trips through parseBytes within rounding', () => {
  fc.assert(
    fc.property(
      fc.oneof(fc.integer({ min: 0, max: 2 ** 40 }), fc.constantFrom(0, 1023, 1024, 2 ** 40, 2 ** 42)),
      (n) => {
        const [num, unit] = formatBytes(n).split(' ');
        const back = parseBytes(`${num}${unit === 'B' ? '' : unit}`);
        return Math.abs(back - n) <= n * 0.01 + 1;
      },
    ),
  );
});

test('rng: same seed, same sequence; ints stay in range', () => {
  const a = createRng(7);
  const b = createRng(7);
  const xs = Array.from({ length: 100 }, () => a.next());
  assert.deepEqual(
    xs,
    Array.from({ length: 100 }, () => b.next()),
  );
  assert.notDeepEqual(
    xs,
    Array.from({ length: 100 }, () => createRng(8).next()),
  );
  const r = createRng(1);
  for (let i = 0; i < 10000; i++) {
    const v = r.int(3, 9);
    assert.ok(v >= 3 && v <= 9 && Number.isInteger(v));
  }
  const mean = Array.from({ length: 20000 }, () => r.exponential(5)).reduce((s, x) => s + x, 0) / 20000;
  assert.ok(Math.abs(mean - 5) < 0.25, `exponential mean ${mean}`);
});

// compare's flags → options: the link axes, the h1 pool per cell, and the errors that name the flag.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareOptionsFromFlags } from '../../src/cli/compare.ts';
import { h1PoolFor, resolveCompareOptions } from '../../src/compare/options.ts';

const base = { out: 'x' };

test('--rtt/--loss/--bandwidth/--cc/--jitter are lists with units; TCP settings go with them', () => {
  const o = compareOptionsFromFlags(undefined, {
    ...base,
    rtt: '20ms,200ms',
    loss: '0,1%',
    bandwidth: '10mbit',
    cc: 'cubic,bbr',
    jitter: '2ms',
    initcwnd: '4',
    queue: '64KiB',
    slowStartAfterIdle: false,
  });
  assert.deepEqual(o.links, {
    rttMs: [20, 200],
    jitterMs: [2],
    loss: [0, 0.01],
    rateBitsPerSec: [10e6],
    congestionControl: ['cubic', 'bbr'],
    initialCwnd: 4,
    queueBytes: 65536,
    slowStartAfterIdle: false,
  });
  assert.throws(
    () => compareOptionsFromFlags(undefined, { ...base, cc: 'vegas' }),
    /--cc "vegas".*reno, cubic, bbr/,
  );
});

test('--h1-connections: a number, =concurrency, or one per concurrency value', () => {
  assert.equal(compareOptionsFromFlags(undefined, { ...base, h1Connections: '8' }).h1Connections, 8);
  assert.equal(
    compareOptionsFromFlags(undefined, { ...base, h1Connections: '=concurrency' }).h1Connections,
    'concurrency',
  );
  assert.deepEqual(
    compareOptionsFromFlags(undefined, { ...base, h1Connections: '1,6,16' }).h1Connections,
    [1, 6, 16],
  );
  assert.throws(
    () => compareOptionsFromFlags(undefined, { ...base, h1Connections: 'many' }),
    /--h1-connections "many"/,
  );
  assert.throws(
    () => resolveCompareOptions({ concurrency: [1, 8, 64], h1Connections: [1, 6] }),
    /2 values for 3 --concurrency values/,
  );
  assert.equal(h1PoolFor('concurrency', [1, 8, 64], 64), 64);
  assert.equal(h1PoolFor(6, [1, 8, 64], 1), 1);
  assert.equal(h1PoolFor([1, 6, 16], [1, 8, 64], 64), 16);
  assert.equal(h1PoolFor([4], [1, 8, 64], 64), 4);
});

test('--h2-pool-policy: the h2-pool policy of every run, least-busy unless named', () => {
  assert.equal(resolveCompareOptions(compareOptionsFromFlags(undefined, base)).h2PoolPolicy, 'least-busy');
  const o = compareOptionsFromFlags(undefined, { ...base, h2PoolPolicy: 'first-free' });
  assert.equal(resolveCompareOptions(o).h2PoolPolicy, 'first-free');
});

test('--urls and --paths: each entry once and at most 64 workloads, before anything runs (2,000 URLs made 90,000 runs)', () => {
  const dup = Array.from({ length: 2000 }, () => 'http://127.0.0.1:1/x').join(',');
  assert.throws(
    () => compareOptionsFromFlags(undefined, { ...base, urls: dup }),
    (e: Error & { code?: string }) =>
      e.code === 'H2LAB_ERR_INVALID_OPTION' &&
      /--urls .*http:\/\/127\.0\.0\.1:1\/x is listed 2,000 times \(1 distinct of 2,000\)/.test(e.message),
  );
  const many = Array.from({ length: 65 }, (_, i) => `/p${i}`).join(',');
  assert.throws(
    () => compareOptionsFromFlags(undefined, { ...base, paths: many }),
    (e: Error & { code?: string }) =>
      e.code === 'H2LAB_ERR_INVALID_OPTION' && /--paths .*give at most 64/.test(e.message),
  );
  const ok = compareOptionsFromFlags(undefined, {
    ...base,
    paths: Array.from({ length: 64 }, (_, i) => `/p${i}`).join(','),
  });
  assert.equal(ok.workloads?.length, 64);
  assert.equal(new Set(ok.workloads?.map((w) => w.id)).size, 64, 'one id a workload');
  // A library caller gets the same bound from the schema.
  assert.throws(() =>
    resolveCompareOptions({
      workloads: Array.from({ length: 65 }, (_, i) => ({ id: `w${i}`, label: `w${i}`, paths: [`/p${i}`] })),
    }),
  );
});

// An answer line joins adjacent levels of one decision; the strategy it quotes must carry that
// decision at every level it speaks for. "c=8, 64 undecided — h2-pool 0.98–1.27×" once quoted
// h2-pool at c=8, where h2 was the undecided one and h2-pool had no difference.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Comparison } from '../../src/model/index.ts';
import { type LevelDecision, quoteCarriers } from '../../src/report/answer.ts';

const cmp = (protocol: string, concurrency: number, ratio: number, outcome: string): Comparison =>
  ({
    workload: 'w',
    concurrency,
    net: 'loopback',
    protocol,
    metric: 'rps',
    higherIsBetter: true,
    outcome,
    interval: { ratio, lo: ratio * 0.9, hi: ratio * 1.1, level: 0.95 },
  }) as unknown as Comparison;

const level = (l: number, carriers: string[], cmps: Comparison[]): LevelDecision =>
  ({ level: l, decision: 'undecided', cmps, carriers }) as unknown as LevelDecision;

test('undecided by different strategies at each level: each level quotes its own', () => {
  const at8 = level(8, ['h2'], [cmp('h2', 8, 1.05, 'undecided'), cmp('h2-pool', 8, 1.3, 'same')]);
  const at64 = level(64, ['h2-pool'], [cmp('h2', 64, 1.01, 'same'), cmp('h2-pool', 64, 1.27, 'undecided')]);
  assert.deepEqual(quoteCarriers('undecided', [at8, at64]), { perLevel: ['h2', 'h2-pool'] });
});

test('a strategy undecided at every level is quoted once, the largest effect at the highest level', () => {
  const at8 = level(
    8,
    ['h2', 'h2-pool'],
    [cmp('h2', 8, 1.05, 'undecided'), cmp('h2-pool', 8, 1.3, 'undecided')],
  );
  const at64 = level(64, ['h2'], [cmp('h2', 64, 1.1, 'undecided'), cmp('h2-pool', 64, 1.5, 'same')]);
  // h2-pool has the larger effect at 64 but was not undecided there: h2, the common carrier.
  assert.deepEqual(quoteCarriers('undecided', [at8, at64]), { quoted: 'h2' });
});

test('on: the carrier with the largest gain at the highest level', () => {
  const at8 = level(8, ['h2', 'h2-pool'], [cmp('h2', 8, 1.2, 'better'), cmp('h2-pool', 8, 1.4, 'better')]);
  const at64 = level(
    64,
    ['h2', 'h2-pool'],
    [cmp('h2', 64, 1.6, 'better'), cmp('h2-pool', 64, 1.3, 'better')],
  );
  assert.equal(quoteCarriers('on', [at8, at64]).quoted, 'h2');
});

/**
 * Bursty loss: the Gilbert–Elliott two-state Markov model (as in tc-netem's `loss gemodel`).
 *
 * ```
 *            p                 Good: loses with probability lossInGood (default 0)
 *   ┌──── Good ────▶ Bad ────┐ Bad:  loses with probability lossInBad  (default 1)
 *   │       ◀──────          │
 *   └──(1-p)    r      (1-r)─┘ one transition per packet, before the loss draw
 * ```
 *
 * Parameterised the way people describe a path: a mean loss rate and a mean burst length in packets.
 * With lossInGood = 0 and lossInBad = 1 the mean burst length is 1/r and the stationary share of the
 * Bad state is p/(p+r) = loss, so p = loss·r/(1−loss).
 *
 * Key: `burstPackets` (`--loss-burst`); the loss rate is loss.ts's keys. Stage: loss, in place of the
 * i.i.d. loss when bursts are longer than one packet.
 */
import type { Rng } from '../../core/index.ts';
import { DROP, defineCondition, type LinkCondition, STAGE } from './types.ts';

interface GilbertElliottOptions {
  /** Long-run fraction of packets lost, in [0, 1). */
  loss: number;
  /** Mean number of consecutive packets spent in the Bad state (≥ 1). */
  burstPackets: number;
  /** Loss probability in the Good state (default 0). */
  lossInGood?: number;
  /** Loss probability in the Bad state (default 1). */
  lossInBad?: number;
}

/** The transition probabilities p (Good→Bad) and r (Bad→Good) for the options. */
export function gilbertElliottTransitions(opts: GilbertElliottOptions): { p: number; r: number } {
  const k = opts.lossInGood ?? 0;
  const h = opts.lossInBad ?? 1;
  const r = 1 / opts.burstPackets;
  // Stationary Bad share πB solves loss = πB·h + (1−πB)·k.
  const piB = h === k ? 0 : Math.min(Math.max((opts.loss - k) / (h - k), 0), 0.999999);
  return { p: (piB * r) / (1 - piB), r };
}

export function gilbertElliott(opts: GilbertElliottOptions, rng: Rng): LinkCondition {
  const { p, r } = gilbertElliottTransitions(opts);
  const lossInGood = opts.lossInGood ?? 0;
  const lossInBad = opts.lossInBad ?? 1;
  let bad = false;
  return {
    kind: 'gilbert-elliott',
    dropReason: 'loss',
    admit(_size, atMs) {
      bad = bad ? rng.next() >= r : rng.next() < p;
      return rng.next() < (bad ? lossInBad : lossInGood) ? DROP : atMs;
    },
  };
}

export const gilbertElliottCondition = defineCondition({
  kind: 'gilbert-elliott',
  stage: STAGE.loss,
  keys: {
    burstPackets: {
      type: 'number',
      min: 1,
      default: 1,
      doc: 'Mean loss burst length in packets: > 1 selects Gilbert–Elliott bursty loss, 1 = i.i.d.',
      flag: 'loss-burst',
      grammar: 'number',
      arg: 'packets',
      help: 'mean loss burst length (> 1 = Gilbert–Elliott bursty loss)',
      fix: 'use a mean burst length in packets ≥ 1, e.g. 4',
    },
  },
  direction: (own) => ({ burstPackets: own.burstPackets }),
  build: (d, rng) =>
    d.loss > 0 && d.burstPackets > 1
      ? gilbertElliott({ loss: d.loss, burstPackets: d.burstPackets }, rng)
      : undefined,
});

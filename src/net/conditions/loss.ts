/**
 * Independent (i.i.d., Bernoulli) packet loss: each packet is lost with probability `loss`.
 * Keys: `loss`, `lossUp`, `lossDown` (`--loss`, `--loss-up`, `--loss-down`). Stage: loss, first. With
 * `burstPackets` > 1 the loss is bursty instead (gilbert-elliott.ts).
 */
import type { Rng } from '../../core/index.ts';
import { DROP, defineCondition, type LinkCondition, STAGE } from './types.ts';

/** @param loss probability in [0, 1] that a packet is lost. */
export function loss(lossProbability: number, rng: Rng): LinkCondition {
  return {
    kind: 'loss',
    dropReason: 'loss',
    admit: (_size, atMs) => (rng.next() < lossProbability ? DROP : atMs),
  };
}

export const lossCondition = defineCondition({
  kind: 'loss',
  stage: STAGE.loss,
  keys: {
    loss: {
      type: 'number',
      min: 0,
      max: 1,
      default: 0,
      doc: 'Packet loss probability in each direction, [0, 1].',
      flag: 'loss',
      grammar: 'fraction',
      arg: 'fraction',
      help: 'packet loss in each direction, e.g. 1%',
      axisTag: (v) => (v === 0 ? undefined : `loss${+(v * 100).toPrecision(6)}%`),
      asksForLink: true,
    },
    lossUp: {
      type: 'number',
      min: 0,
      max: 1,
      doc: 'Loss on the client → server direction only (overrides `loss` there).',
      flag: 'loss-up',
      grammar: 'fraction',
      arg: 'fraction',
      help: 'loss client → server only',
      axisTag: (v) => (v === 0 ? undefined : `lossup${+(v * 100).toPrecision(6)}%`),
      asksForLink: true,
    },
    lossDown: {
      type: 'number',
      min: 0,
      max: 1,
      doc: 'Loss on the server → client direction only (overrides `loss` there).',
      flag: 'loss-down',
      grammar: 'fraction',
      arg: 'fraction',
      help: 'loss server → client only',
      axisTag: (v) => (v === 0 ? undefined : `lossdown${+(v * 100).toPrecision(6)}%`),
      asksForLink: true,
    },
  },
  direction: (own, _spec, dir) => ({ loss: (dir === 'up' ? own.lossUp : own.lossDown) ?? own.loss }),
  build: (d, rng) => (d.loss > 0 && d.burstPackets <= 1 ? loss(d.loss, rng) : undefined),
});

/** The chunks study's plan: the links of its grid and the strategies it compares. */
import type { CompareOptionsInput } from '../../compare/index.ts';
import { type CONGESTION_CONTROLS, NO_LINK, planLinks } from '../../net/index.ts';
import {
  baselineStrategy,
  multiplexedStrategy,
  type Strategy as TransportStrategy,
} from '../../transport/index.ts';
import type { ChunksOptions } from './options.ts';

/** One link of the grid, as the explanation reads it: its name in compare's `net` axis and its settings. */
export interface LinkCase {
  id: string;
  rttMs?: number;
  loss?: number;
  cc?: string;
  bandwidth?: number;
}

/**
 * The grid's links, planned as `h2lab compare --rtt … --loss … --cc … --bandwidth …` plans them
 * (src/net/axes.ts): the same names, seed and link settings. Each comes with the `net`/`links` that
 * plan it alone, so every link is its own comparison (its own cell) and compare names it the same.
 */
export function linkCases(
  o: ChunksOptions,
  seed: number,
): Array<{ link: LinkCase; input: CompareOptionsInput }> {
  if (o.loopback) return [{ link: { id: 'loopback' }, input: {} }];
  const axes = {
    rttMs: o.rttMs,
    loss: o.loss,
    congestionControl: o.cc as Array<(typeof CONGESTION_CONTROLS)[number]>,
    ...(o.bandwidth ? { rateBitsPerSec: o.bandwidth } : {}),
  };
  return planLinks([NO_LINK], axes, seed).map((p) => {
    const l = p.alone.links;
    const bandwidth = l.rateBitsPerSec?.[0];
    return {
      link: {
        id: p.name,
        ...(l.rttMs ? { rttMs: l.rttMs[0] } : {}),
        loss: l.loss?.[0] ?? 0,
        ...(l.congestionControl ? { cc: l.congestionControl[0] } : {}),
        ...(bandwidth !== undefined ? { bandwidth } : {}),
      },
      input: p.alone,
    };
  });
}

/** The three strategies of the report, by role: the HTTP/1.1 pool, one HTTP/2 session, a pool of them. */
export function strategies(): { h1: TransportStrategy; h2: TransportStrategy; pool: TransportStrategy } {
  const h2 = multiplexedStrategy('one');
  const pool = multiplexedStrategy('pool');
  if (!h2 || !pool) throw new Error('the registry has no single-session or pooled HTTP/2 strategy');
  return { h1: baselineStrategy(), h2, pool };
}

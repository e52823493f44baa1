/**
 * The shards beside the merged result, as text (a pure function; the CLI prints it under the run's
 * own table).
 */
import type { MergedResult } from '../model/index.ts';

const f = (x: number | undefined, d = 2): string => (x === undefined ? '-' : x.toFixed(d));

/** A table of the shards, the clock and the start, then the merge's warnings. */
export function renderMergedText(m: MergedResult): string {
  const head = [
    'shard',
    'total',
    'ok',
    'failed',
    'p50 ms',
    'p99 ms',
    'max ms',
    'offset ms',
    'rtt ms',
    'skew ms',
    'lag ms',
    'first ms',
    '',
  ];
  const rows = m.perShard.map((r) => [
    String(r.index),
    String(r.total),
    String(r.ok),
    String(r.failed),
    f(r.latencyP50Ms, 3),
    f(r.latencyP99Ms, 3),
    f(r.latencyMaxMs, 3),
    f(r.clockOffsetMs),
    f(r.clockRttMs),
    f(r.startSkewMs),
    f(r.barrierLagMs),
    f(r.firstSendMs),
    [m.slowShards.includes(r.index) ? 'SLOW' : '', r.error ?? ''].filter(Boolean).join(' '),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  const out = [
    `run ${m.runId}: ${m.shards} shards merged (plan ${m.planHash.slice(0, 12)}…)`,
    line(head),
    ...rows.map(line),
    m.clock.reference === 'coordinator'
      ? `reference clock: coordinator; shards released within ${m.clock.skewMs.toFixed(2)} ms (warn above ${m.clock.maxSkewMs} ms); rates over ${m.clock.windowMs.toFixed(0)} ms on that clock`
      : `reference clock: none; rates over the longest shard's ${m.clock.windowMs.toFixed(0)} ms`,
  ];
  return `${out.join('\n')}\n`;
}

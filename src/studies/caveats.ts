/**
 * What a reader must know before any figure of a study, said the same way by every study: the
 * decisions a `--quick` run cannot make, and the one load-average rule (a machine whose 1-minute load
 * average exceeded its cores at the start or the end of the study shared its cores with other work).
 * The harness records them under `data.upFront` (renderers print them under the title) and the load
 * one among the warnings too.
 */
import { minRunsForRankTest } from '../core/index.ts';

/** The confidence every study's comparisons decide at. */
const CONFIDENCE = 0.95;

/**
 * The decisions a run with `kept` runs a side cannot make: compare's rank test cannot reject "same
 * distribution" at 95% with fewer than {@link minRunsForRankTest} a side, so no comparison can read
 * better, worse or same. Undefined when the runs suffice.
 *
 * @example quickCaveat(2, 3) // "Quick: 2 kept runs a side (3 a cell, the first discarded) …"
 */
export function quickCaveat(kept: number, runs: number): string | undefined {
  const need = minRunsForRankTest(1 - CONFIDENCE);
  if (kept >= need) return undefined;
  return `Quick: ${kept} kept run${kept === 1 ? '' : 's'} a side (${runs} a cell, the first discarded); the rank test behind "better", "worse" and "same" needs at least ${need} a side at ${Math.round(CONFIDENCE * 100)}%, so no comparison here can decide: every outcome reads undecided, its ratio and interval a direction, not a result.`;
}

/**
 * The load-average rule of every study: above the machine's cores at the start or the end, other
 * work competed for them (at the end the study's own client, server and browser count too).
 *
 * @example loadCaveat(7.4, 6.9, 2) // "The machine's 1-minute load average was 7.40 at the start …"
 */
export function loadCaveat(start: number, end: number | undefined, cpus: number): string | undefined {
  if (Math.max(start, end ?? start) <= cpus) return undefined;
  return `The machine's 1-minute load average was ${start.toFixed(2)} at the start${end !== undefined ? ` and ${end.toFixed(2)} at the end` : ''} on ${cpus} cores: more runnable work than cores, so every time and ratio here is noisier than on a quiet machine (counts are not).`;
}

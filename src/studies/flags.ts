/** Flags several studies share, declared once (docs/design.md, "Options"), and their uses. */

import { RUNS_FLAG } from '../compare/meta.ts';
import { declareFlag, invalidOption, parseList } from '../core/index.ts';

/** `--loopback`: the study without an emulated link (no root needed). */
export const LOOPBACK_FLAG = declareFlag({
  flag: 'loopback',
  grammar: 'bool',
  description: 'no emulated link (no root needed): the protocols alone',
});

/**
 * A study's `--runs`: compare's flag, at most 100 — a study's grid multiplies every run by its cells
 * and links (compare's 1000 would be days).
 */
export const STUDY_RUNS = {
  of: RUNS_FLAG,
  key: 'runs',
  min: 2,
  max: 100,
  why: "the first run is discarded; a study's grid multiplies every run by its cells and links",
} as const;

/**
 * A comma-separated flag value parsed item by item with `parse` (which names the flag when an item is
 * bad). Throws H2LAB_ERR_INVALID_OPTION for an empty list.
 *
 * @example listOf('2,4,8', '--pools', (x) => parseInteger(x, '--pools')) // [2, 4, 8]
 */
export function listOf<T>(v: string, flag: string, parse: (x: string) => T): T[] {
  const xs = parseList(v).map(parse);
  if (xs.length === 0) throw invalidOption(flag, v, 'give at least one value');
  return xs;
}

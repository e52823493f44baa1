/** Parsing of the studies' own flags, shared by the study files. */
import { invalidOption, parseList } from '../core/index.ts';

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

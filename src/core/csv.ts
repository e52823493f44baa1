/**
 * CSV as RFC 4180 writes it: fields separated by commas, records ended by CRLF, a field quoted when
 * it holds a comma, a double quote, CR or LF, and a double quote inside a quoted field doubled. A
 * number is written with at most 12 significant digits (so 4.066000000000001 reads 4.066: binary
 * floating-point noise, not a measurement); a missing value or a number that is not finite is an
 * empty field, so a spreadsheet reads "no value" rather than "NaN".
 */

/** One field's value as a writer accepts it. */
export type CsvValue = string | number | boolean | null | undefined;

const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One field, quoted when RFC 4180 §2 requires it.
 *
 * @example csvField('a,b') // '"a,b"'
 * @example csvField('say "hi"') // '"say ""hi"""'
 */
export function csvField(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(+value.toPrecision(12)) : '';
  const text = String(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * A whole document: the header record, then one record per row (values in the header's order),
 * each ended by CRLF.
 *
 * @example toCsv(['a', 'b'], [[1, 'x,y']]) // 'a,b\r\n1,"x,y"\r\n'
 */
export function toCsv(header: readonly string[], rows: ReadonlyArray<readonly CsvValue[]>): string {
  return [header, ...rows].map((r) => `${r.map(csvField).join(',')}\r\n`).join('');
}

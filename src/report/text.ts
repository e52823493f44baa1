/** The plain-text helpers the terminal renderers share: word wrapping and aligned tables. */

/** Units that follow a number in h2lab's text (with trailing punctuation). */
const UNIT =
  /^(?:B|KiB|MiB|GiB|kB|MB|GB|ms|µs|s|req\/s|MiB\/s|KiB\/s|Mbit\/s|Gbit\/s|segments|runs?|%)[,.;:)]*$/;

/** Statistic names that lead a number ("p99 25.7 ms", "max 43.1 ms"). */
const STAT = /^(?:p\d+(?:\.\d+)?|max|min|median|mean)$/;

/** Wraps `text` at word boundaries to `width` columns, each line prefixed with `indent`. */
export function wrapText(text: string, width: number, indent: string): string {
  // A number stays with its unit ("15.0 MiB", "40 ms") and its statistic ("p99 25.7 ms").
  const words = text.split(/\s+/).reduce<string[]>((acc, w) => {
    const prev = acc[acc.length - 1];
    const joins =
      prev !== undefined && ((/\d$/.test(prev) && UNIT.test(w)) || (STAT.test(prev) && /^[\d.,]+/.test(w)));
    if (joins) acc[acc.length - 1] = `${prev} ${w}`;
    else acc.push(w);
    return acc;
  }, []);
  const lines: string[] = [];
  let line = '';
  const room = Math.max(20, width - indent.length);
  for (const w of words) {
    if (line && line.length + 1 + w.length > room) {
      lines.push(line);
      line = w;
    } else line = line ? `${line} ${w}` : w;
  }
  if (line) lines.push(line);
  return lines.map((l) => indent + l).join('\n');
}

/**
 * An aligned table: a header line and one line per row, columns two spaces apart, each line
 * prefixed with `indent`. Columns whose cells all look numeric are right-aligned.
 */
export function alignTable(
  head: readonly string[],
  rows: readonly (readonly string[])[],
  indent = '  ',
): string[] {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const numeric = head.map(
    (_, i) => rows.length > 0 && rows.every((r) => /^[-–+]?[\d.,]+\s*\S{0,6}$|^–$/.test(r[i] ?? '')),
  );
  const line = (cells: readonly string[]) =>
    `${indent}${cells.map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ')}`.trimEnd();
  return [line(head), ...rows.map(line)];
}

/**
 * {@link alignTable} within `width` columns: a table too wide is cut into column groups, printed one
 * under the other, each repeating the first `keys` columns (the row's label), so no line wraps on a
 * terminal.
 */
export function fitTable(
  head: readonly string[],
  rows: readonly (readonly string[])[],
  width: number,
  indent = '  ',
  keys = 1,
): string[] {
  const colWidth = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const total = indent.length + colWidth.reduce((a, b) => a + b, 0) + 2 * (head.length - 1);
  if (total <= width || head.length <= keys + 1) return alignTable(head, rows, indent);
  const keyWidth = indent.length + colWidth.slice(0, keys).reduce((a, b) => a + b, 0) + 2 * (keys - 1);
  const groups: number[][] = [];
  let current: number[] = [];
  let used = keyWidth;
  for (let i = keys; i < head.length; i++) {
    if (current.length > 0 && used + 2 + colWidth[i]! > width) {
      groups.push(current);
      current = [];
      used = keyWidth;
    }
    current.push(i);
    used += 2 + colWidth[i]!;
  }
  if (current.length > 0) groups.push(current);
  const out: string[] = [];
  for (const [g, cols] of groups.entries()) {
    if (g > 0) out.push('');
    const pick = (r: readonly string[]) => [...r.slice(0, keys), ...cols.map((i) => r[i] ?? '')];
    out.push(...alignTable(pick(head), rows.map(pick), indent));
  }
  return out;
}

/** The plain-text helpers the terminal renderers share: word wrapping and aligned tables. */

/** Wraps `text` at word boundaries to `width` columns, each line prefixed with `indent`. */
export function wrapText(text: string, width: number, indent: string): string {
  const words = text.split(/\s+/);
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
    (_, i) => rows.length > 0 && rows.every((r) => /^[-–+]?[\d.,]+\s*\S{0,3}$|^–$/.test(r[i] ?? '')),
  );
  const line = (cells: readonly string[]) =>
    `${indent}${cells.map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ')}`.trimEnd();
  return [line(head), ...rows.map(line)];
}

/**
 * {@link alignTable} within `width` columns: a table too wide is cut into column groups, printed one
 * under the other, each repeating the first column (the row's label), so no line wraps on a terminal.
 */
export function fitTable(
  head: readonly string[],
  rows: readonly (readonly string[])[],
  width: number,
  indent = '  ',
): string[] {
  const colWidth = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const total = indent.length + colWidth.reduce((a, b) => a + b, 0) + 2 * (head.length - 1);
  if (total <= width || head.length <= 2) return alignTable(head, rows, indent);
  const groups: number[][] = [];
  let current: number[] = [];
  let used = indent.length + colWidth[0]!;
  for (let i = 1; i < head.length; i++) {
    if (current.length > 0 && used + 2 + colWidth[i]! > width) {
      groups.push(current);
      current = [];
      used = indent.length + colWidth[0]!;
    }
    current.push(i);
    used += 2 + colWidth[i]!;
  }
  if (current.length > 0) groups.push(current);
  const out: string[] = [];
  for (const [g, cols] of groups.entries()) {
    if (g > 0) out.push('');
    const pick = (r: readonly string[]) => [r[0] ?? '', ...cols.map((i) => r[i] ?? '')];
    out.push(...alignTable(pick(head), rows.map(pick), indent));
  }
  return out;
}

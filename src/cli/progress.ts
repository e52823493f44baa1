/**
 * The one progress display of the long commands (compare, study): a bar with an ETA redrawn on a
 * terminal, and nothing but one line per finished unit elsewhere (a log file, CI).
 */

/** "1m05s", "12s", "…" while unknown. */
export function formatEta(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '…';
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/** A progress bar on `stream`. */
export interface ProgressBar {
  /** Redraws the bar (a terminal only): `done` of `total` units, what is running now. */
  update: (done: number, total: number, unit: string, label: string) => void;
  /** A line that stays (above the bar on a terminal, a plain line elsewhere). */
  line: (text: string) => void;
  /** Removes the bar before other output. */
  clear: () => void;
}

export function progressBar(stream: NodeJS.WriteStream): ProgressBar {
  const t0 = performance.now();
  const tty = stream.isTTY === true;
  let shown = false;
  return {
    update(done, total, unit, label) {
      if (!tty) return;
      const width = 24;
      const fill = total > 0 ? Math.min(width, Math.round((done / total) * width)) : 0;
      const elapsed = performance.now() - t0;
      const eta = done > 0 ? (elapsed / done) * (total - done) : Number.NaN;
      const text = `[${'#'.repeat(fill)}${'-'.repeat(width - fill)}] ${Math.round(done)}/${Math.round(total)} ${unit} · ETA ${formatEta(eta)} · ${label}`;
      stream.write(`\r\x1b[2K${text.slice(0, (stream.columns ?? 80) - 1)}`);
      shown = true;
    },
    line(text) {
      if (tty) stream.write(`\r\x1b[2K${text}\n`);
      else stream.write(`${text}\n`);
      shown = false;
    },
    clear() {
      if (tty && shown) stream.write('\r\x1b[2K');
      shown = false;
    },
  };
}

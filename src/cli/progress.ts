/**
 * The one progress display of the long commands (compare, study): a bar with an ETA redrawn on a
 * terminal; elsewhere (a log file, CI) the same text as plain lines, at most one per
 * {@link PLAIN_EVERY_MS}, so a long run shows it is alive without flooding the log.
 */

/** Least time between two plain progress lines when the stream is not a terminal, ms. */
export const PLAIN_EVERY_MS = 10_000;

/** "1m05s", "12s", "…" while unknown. */
export function formatEta(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '…';
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/** A progress bar on `stream`. */
interface ProgressBar {
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
  let lastPlain = Number.NEGATIVE_INFINITY;
  return {
    update(done, total, unit, label) {
      const elapsed = performance.now() - t0;
      const eta = done > 0 ? (elapsed / done) * (total - done) : Number.NaN;
      const counts = `${Math.round(done)}/${Math.round(total)} ${unit} · ETA ${formatEta(eta)} · ${label}`;
      if (!tty) {
        if (elapsed - lastPlain < PLAIN_EVERY_MS) return;
        lastPlain = elapsed;
        stream.write(`${counts}\n`);
        return;
      }
      const width = 24;
      const fill = total > 0 ? Math.min(width, Math.round((done / total) * width)) : 0;
      const text = `[${'#'.repeat(fill)}${'-'.repeat(width - fill)}] ${counts}`;
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

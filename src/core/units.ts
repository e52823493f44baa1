/**
 * Human units on the command line, integers with units in their names inside the code.
 *
 * Sizes: `1024`, `1KiB`, `1MiB`, `1GiB`, `1KB`/`1kB` (=1000), `1MB`, `64k` (=1024). Durations: `250`
 * (ms, or seconds where the caller says so: a load period), `250ms`, `10s`, `2m`, `1h`, `500us`. Bit rates: `10mbit`, `1gbit`, `500kbit`, `10Mbps`.
 * Percentages: `1%`, `0.01`.
 */
import { invalidOption } from './errors.ts';

const SIZE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kib: 1024,
  kb: 1000,
  m: 1024 ** 2,
  mib: 1024 ** 2,
  mb: 1000 ** 2,
  g: 1024 ** 3,
  gib: 1024 ** 3,
  gb: 1000 ** 3,
  t: 1024 ** 4,
  tib: 1024 ** 4,
  tb: 1000 ** 4,
};

/**
 * Parses a byte size. Returns undefined for text that is not a size (the caller names the option).
 * @example parseBytesOrUndefined('1MiB') === 1048576
 */
export function parseBytesOrUndefined(text: string | number): number | undefined {
  if (typeof text === 'number') return Number.isFinite(text) && text >= 0 ? Math.floor(text) : undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  if (!m) return undefined;
  const unit = SIZE_UNITS[m[2]!.toLowerCase()];
  if (unit === undefined) return undefined;
  const n = Number(m[1]) * unit;
  return Number.isFinite(n) ? Math.round(n) : undefined;
}

/**
 * Parses a byte size for `option`, throwing H2LAB_ERR_INVALID_OPTION with the accepted forms, or
 * naming `max` (bytes, inclusive) when the size is above it.
 */
export function parseBytes(text: string | number, option = 'size', max = Number.POSITIVE_INFINITY): number {
  const n = parseBytesOrUndefined(text);
  if (n === undefined)
    throw invalidOption(option, text, 'use a byte count such as 1024, 1KiB, 64KiB or 1MiB');
  if (n > max) throw invalidOption(option, text, `use at most ${max} bytes (${max / 1024 ** 2} MiB)`);
  return n;
}

const DURATION_UNITS: Record<string, number> = {
  '': 1,
  us: 0.001,
  µs: 0.001,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * What a duration without a unit means: `ms` (link delays, timers in config files), or `s`, as
 * h2load, oha and k6 read a load period (`-d 10` is ten seconds there, never 10 ms).
 */
type BareDurationUnit = 'ms' | 's';

/** Parses a duration into milliseconds (may be fractional, e.g. `500us` → 0.5). */
function parseDurationMsOrUndefined(
  text: string | number,
  bare: BareDurationUnit = 'ms',
): number | undefined {
  if (typeof text === 'number') return Number.isFinite(text) && text >= 0 ? text : undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(us|µs|ms|s|m|h|)\s*$/i.exec(text);
  if (!m) return undefined;
  const unit = m[2] === '' && bare === 's' ? 1000 : DURATION_UNITS[m[2]!.toLowerCase()];
  if (unit === undefined) return undefined;
  return Number(m[1]) * unit;
}

/**
 * The longest duration h2lab accepts, ms: 2^31 − 1 (24.8 days, 596 h), the longest a Node.js timer
 * waits. A longer delay is not an error to `setTimeout`: it warns and fires after 1 ms, so
 * `--duration 999999h` ran for 10 ms and exited 0 with a normal-looking result.
 */
export const MAX_DURATION_MS = 2 ** 31 - 1;

/**
 * Parses a duration for `option` into milliseconds; throws H2LAB_ERR_INVALID_OPTION otherwise, and
 * above {@link MAX_DURATION_MS}. `bare` says what a number without a unit is (default ms).
 */
export function parseDurationMs(
  text: string | number,
  option = 'duration',
  bare: BareDurationUnit = 'ms',
): number {
  const n = parseDurationMsOrUndefined(text, bare);
  if (n === undefined)
    throw invalidOption(
      option,
      text,
      `use a duration such as 250ms, 10s or 2m (a bare number is ${bare === 's' ? 'seconds' : 'ms'})`,
    );
  if (n > MAX_DURATION_MS)
    throw invalidOption(
      option,
      text,
      `use at most 596h (${MAX_DURATION_MS} ms, the longest a Node.js timer waits)`,
    );
  return n;
}

const RATE_UNITS: Record<string, number> = {
  bit: 1,
  bps: 1,
  kbit: 1e3,
  kbps: 1e3,
  mbit: 1e6,
  mbps: 1e6,
  gbit: 1e9,
  gbps: 1e9,
};

/** Parses a bit rate into bits per second (`50mbit` → 50e6). */
export function parseBitRate(text: string | number, option = 'rate'): number {
  if (typeof text === 'number' && Number.isFinite(text) && text > 0) return text;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]+)\s*$/.exec(String(text));
  const unit = m ? RATE_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined || Number(m[1]) <= 0) {
    throw invalidOption(option, text, 'use a bit rate such as 500kbit, 10mbit or 1gbit');
  }
  return Number(m[1]) * unit;
}

/** Parses a probability: `1%` → 0.01, `0.01` → 0.01. Must lie in [0, 1]. */
export function parseFraction(text: string | number, option = 'loss'): number {
  const s = String(text).trim();
  const pct = s.endsWith('%');
  const n = Number(pct ? s.slice(0, -1) : s);
  const f = pct ? n / 100 : n;
  if (!Number.isFinite(f) || f < 0 || f > 1 || s === '' || s === '%') {
    throw invalidOption(
      option,
      text,
      'use a percentage such as 1% or a fraction such as 0.01 (between 0 and 1)',
    );
  }
  return f;
}

/** Parses a positive integer (counts, ports…). `min`/`max` are inclusive. */
export function parseInteger(
  text: string | number,
  option: string,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const s = String(text).trim();
  const n = /^\d+$/.test(s) ? Number(s) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw invalidOption(option, text, `use a whole number from ${min} to ${max}`);
  }
  return n;
}

/** Splits a comma-separated list option, trimming blanks: `"h1, h2"` → `['h1','h2']`. */
export function parseList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** 1536 → "1.5 KiB". */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0
    ? `${v} B`
    : `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)} ${units[i]}`;
}

/** 0.5 → "0.50 ms", 1234 → "1.23 s". */
export function formatMs(ms: number): string {
  if (Number.isNaN(ms)) return '—';
  if (!Number.isFinite(ms)) return String(ms);
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  if (ms >= 10) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(2)} ms`;
}

/** 50e6 → "50 Mbit/s". */
export function formatBitRate(bitsPerSec: number): string {
  if (bitsPerSec >= 1e9) return `${+(bitsPerSec / 1e9).toFixed(2)} Gbit/s`;
  if (bitsPerSec >= 1e6) return `${+(bitsPerSec / 1e6).toFixed(2)} Mbit/s`;
  if (bitsPerSec >= 1e3) return `${+(bitsPerSec / 1e3).toFixed(2)} kbit/s`;
  return `${+bitsPerSec.toFixed(0)} bit/s`;
}

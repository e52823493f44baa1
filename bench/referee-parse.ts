// The pure parts of bench/referee.ts: reading h2load's and curl's output, and judging whether two
// H2/H1 ratios disagree beyond their intervals. Kept apart so test/bench/ can check them.
import type { RatioInterval } from '../src/compare/inference.ts';

/** A duration as h2load prints it (`523.40us`, `324.27ms`, `2.03s`) in ms; NaN when unreadable. */
export function parseH2loadDuration(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m|h)$/.exec(text.trim());
  if (!m) return Number.NaN;
  const v = Number(m[1]);
  const unit = m[2] as 'us' | 'ms' | 's' | 'm' | 'h';
  return unit === 'us' ? v / 1000 : v * { ms: 1, s: 1e3, m: 60e3, h: 3600e3 }[unit];
}

/** What one h2load run reported. */
export interface H2loadRun {
  /** "finished in …": from the first connection attempt to the last response, ms. */
  durationMs: number;
  total: number;
  succeeded: number;
  failed: number;
  /** "Application protocol:" (`h2`, `http/1.1`, `h2c`), when printed. */
  protocol: string | undefined;
  /** Mean of "time for connect" (TCP + TLS, per connection), ms. */
  connectMeanMs: number;
  /** Min of "time to 1st byte" (per connection), ms. */
  firstByteMinMs: number;
}

/** Reads h2load's summary. Throws when it printed no "finished in" line (it did not run to the end). */
export function parseH2load(out: string): H2loadRun {
  const fin = /finished in (\S+?),/.exec(out);
  if (!fin) throw new Error(`h2load printed no "finished in" line:\n${out.slice(-2000)}`);
  const req = /requests: (\d+) total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed/.exec(out);
  const row = (name: string): string[] => {
    const m = new RegExp(`${name}:\\s+(\\S+)\\s+(\\S+)\\s+(\\S+)`).exec(out);
    return m ? [m[1]!, m[2]!, m[3]!] : [];
  };
  return {
    durationMs: parseH2loadDuration(fin[1]!),
    total: req ? Number(req[1]) : 0,
    succeeded: req ? Number(req[2]) : 0,
    failed: req ? Number(req[3]) : 0,
    protocol: /Application protocol: (\S+)/.exec(out)?.[1],
    connectMeanMs: parseH2loadDuration(row('time for connect')[2] ?? ''),
    firstByteMinMs: parseH2loadDuration(row('time to 1st byte')[0] ?? ''),
  };
}

/**
 * The `-w` format the harness gives curl: one line per transfer. Times are curl's, in seconds from the
 * start of that transfer.
 */
export const CURL_WRITE_OUT =
  '%{http_version} %{response_code} %{size_download} %{num_connects} %{time_appconnect} %{time_total}\\n';

/** One transfer as {@link CURL_WRITE_OUT} prints it. */
export interface CurlTransfer {
  httpVersion: string;
  status: number;
  bytes: number;
  /** Connections this transfer opened (0 when it reused or multiplexed onto one). */
  connects: number;
  appConnectMs: number;
  totalMs: number;
}

/** Reads the lines {@link CURL_WRITE_OUT} printed. Lines that do not match are ignored. */
export function parseCurlWriteOut(out: string): CurlTransfer[] {
  const rows: CurlTransfer[] = [];
  for (const line of out.split('\n')) {
    const m = /^(\S+) (\d+) (\d+) (\d+) ([\d.]+) ([\d.]+)$/.exec(line.trim());
    if (!m) continue;
    rows.push({
      httpVersion: m[1]!,
      status: Number(m[2]),
      bytes: Number(m[3]),
      connects: Number(m[4]),
      appConnectMs: Number(m[5]) * 1000,
      totalMs: Number(m[6]) * 1000,
    });
  }
  return rows;
}

/**
 * Do two ratio intervals disagree beyond noise? Only when they do not overlap — a conservative test
 * (two 95% intervals can overlap a little and still differ), chosen because the harness has few runs
 * and the standard is "h2lab is wrong until shown otherwise": a flag must mean something.
 */
export function disagree(a: RatioInterval, b: RatioInterval): 'disagree' | 'agree' | 'too few runs' {
  const n = Math.min(a.n.candidate, a.n.baseline, b.n.candidate, b.n.baseline);
  // With one or two runs a side the bootstrap interval collapses onto the runs themselves.
  if (n < MIN_RUNS_TO_JUDGE || ![a.lo, a.hi, b.lo, b.hi].every(Number.isFinite)) return 'too few runs';
  return a.hi < b.lo || b.hi < a.lo ? 'disagree' : 'agree';
}

/** Fewest runs per client before {@link disagree} judges. */
export const MIN_RUNS_TO_JUDGE = 3;

/** `1.23 (1.10–1.40)`, or `—` when there is nothing to show. */
export function formatRatio(r: RatioInterval): string {
  if (!Number.isFinite(r.ratio)) return '—';
  return `${r.ratio.toFixed(2)} (${r.lo.toFixed(2)}–${r.hi.toFixed(2)})`;
}

/** `"64x10KiB"` → { count: 64, size: '10KiB' }. */
export function parseWorkload(text: string): { count: number; size: string } {
  const m = /^(\d+)\s*[x×]\s*(\S+)$/.exec(text.trim());
  if (!m) throw new Error(`workload "${text}": write COUNTxSIZE, e.g. 64x10KiB`);
  return { count: Number(m[1]), size: m[2]! };
}

/**
 * CSV renderers (pure: result → text, src/core's RFC 4180 writer): a comparison as one row per cell
 * (workload × level × net × strategy), a bench run as one summary row, a request (a Sample) as one
 * row of `--samples FILE.csv`.
 */
import { type CsvValue, csvField, toCsv } from '../core/index.ts';
import {
  type CompareResult,
  type Comparison,
  type RunResult,
  type Sample,
  sampleSchema,
} from '../model/index.ts';

/** Columns of a samples CSV: every field of a Sample, in the schema's order (docs/sample.schema.json). */
export const SAMPLE_CSV_COLUMNS: readonly string[] = Object.keys(sampleSchema.shape);

/** The header record of a samples CSV, CRLF-ended. */
export function sampleCsvHeader(): string {
  return `${SAMPLE_CSV_COLUMNS.join(',')}\r\n`;
}

/** One request as a CSV record (RFC 4180, CRLF-ended); a field the sample lacks is empty. */
export function sampleCsvRow(s: Sample): string {
  const r = s as unknown as Record<string, CsvValue>;
  return `${SAMPLE_CSV_COLUMNS.map((k) => csvField(r[k])).join(',')}\r\n`;
}

import { comparisonOf } from './verdict.ts';

const SUMMARY = ['median', 'min', 'max'] as const;
const RATIO = ['ratio', 'ratio_lo', 'ratio_hi', 'outcome'] as const;

/** Columns of {@link compareCsv}, in order. */
export const COMPARE_CSV_COLUMNS: readonly string[] = [
  'workload',
  'workload_label',
  'level_kind',
  'level',
  'net',
  'strategy',
  'baseline',
  'status',
  'runs_kept',
  ...['rps', 'p50_ms', 'p90_ms', 'p99_ms', 'burst_completion_ms'].flatMap((m) =>
    SUMMARY.map((s) => `${m}_${s}`),
  ),
  'requests',
  'errors',
  ...['rps', 'p50', 'p99', 'burst_completion'].flatMap((m) => RATIO.map((s) => `${m}_${s}`)),
];

type Summary = { median: number; min: number; max: number } | undefined;
const summary = (s: Summary): CsvValue[] => [s?.median, s?.min, s?.max];

/**
 * One row per cell: its level (`concurrency`, `burst` N or `rate` in requests per second), the
 * medians and min–max over the kept runs, requests and failed requests over them, and per compared
 * metric the ratio to the baseline with its interval bounds and the outcome (empty for the baseline
 * and for metrics not compared: a burst compares only its completion time).
 */
export function compareCsv(result: CompareResult): string {
  const workloads = new Map(result.axes.workloads.map((w) => [w.id, w]));
  const rows = result.cells.map((cell) => {
    const w = workloads.get(cell.workload);
    const s = cell.stats;
    const ratio = (metric: Comparison['metric']): CsvValue[] => {
      const c = comparisonOf(result, cell.workload, cell.concurrency, cell.net, cell.protocol, metric);
      return c
        ? [c.interval.ratio, c.interval.lo, c.interval.hi, c.outcome]
        : [undefined, undefined, undefined, undefined];
    };
    return [
      cell.workload,
      w?.label ?? cell.workload,
      w?.burst ? 'burst' : w?.rateRps ? 'rate' : 'concurrency',
      cell.concurrency,
      cell.net,
      cell.protocol,
      result.baseline,
      cell.status,
      s?.runsKept ?? 0,
      ...summary(s?.rps),
      ...summary(s?.latencyP50Ms),
      ...summary(s?.latencyP90Ms),
      ...summary(s?.latencyP99Ms),
      ...summary(s?.burstCompletionMs),
      s?.totalRequests,
      s?.failedRequests,
      ...ratio('rps'),
      ...ratio('latencyP50Ms'),
      ...ratio('latencyP99Ms'),
      ...ratio('burstCompletionMs'),
    ];
  });
  return toCsv(COMPARE_CSV_COLUMNS, rows);
}

/** Columns of {@link runCsv}, in order. */
export const RUN_CSV_COLUMNS: readonly string[] = [
  'url',
  'strategy',
  'negotiated',
  'schedule',
  'concurrency',
  'rate_rps',
  'duration_ms',
  'requests',
  'ok',
  'errors',
  'rps',
  'bytes_per_sec',
  'p50_ms',
  'p90_ms',
  'p99_ms',
  'p999_ms',
  'max_ms',
  'mean_ms',
  'ttfb_p50_ms',
  'burst_completion_ms',
  'error',
];

/** A bench run as one summary row (latency in ms; open loop: from the intended send time). */
export function runCsv(run: RunResult): string {
  const l = run.latencyMs;
  return toCsv(RUN_CSV_COLUMNS, [
    [
      run.target.url,
      run.transport.name,
      run.protocol.negotiated,
      run.schedule.mode,
      run.schedule.concurrency,
      run.schedule.rateRps,
      run.durationMs,
      run.counts.total,
      run.counts.ok,
      run.counts.failed,
      run.throughput.rps,
      run.throughput.bytesPerSec,
      l.p50,
      l.p90,
      l.p99,
      l.p999,
      l.max,
      l.mean,
      run.ttfbMs.p50,
      run.burst?.completionMs,
      run.error?.code,
    ],
  ]);
}

/** The proxy study's results per configuration and its tables. */
import { keptRuns, sizeWorkload } from '../../compare/index.ts';
import { formatBytes } from '../../core/index.ts';
import type { CellResult, CompareResult, ProbeResult, StudySection } from '../../model/index.ts';
import { baselineStrategy, multiplexedStrategy } from '../../transport/index.ts';
import { type ClaimDecision, decideRuns, directionText } from '../claims.ts';
import type { Evidence } from '../findings.ts';
import { intervalText, medianOf, outcomeWord, rounded } from '../table.ts';
import {
  BROKEN,
  BUFFERS,
  FIXED,
  LARGE_BYTES,
  PROXY_REPORT,
  type ProxyConfig,
  type ProxyOptions,
  UPSTREAM_KEEPALIVE,
} from './options.ts';
import { SPOOL_SAMPLE_MS, type Spool } from './plan.ts';

/** Upstream churn of one configuration over its load cell. */
export interface Churn {
  requests: number;
  /** Of which for the 2.7 MB response, and for chunks. */
  large: number;
  chunks: number;
  connections: number;
  perRequest: number;
}

/** The probe's account of one configuration. */
interface ProbeView {
  keepAliveHonoured: boolean | null;
  /** Connections the fixture accepted for the probe's keep-alive requests (probe's upstream check). */
  upstreamConnections: number | null;
  upstreamRequests: number | null;
  upstreamReused: boolean | null;
  large: string | null;
  largeDetail: string | null;
  /** Findings at level warn, by id. */
  warnings: string[];
}

export function probeView(r: ProbeResult): ProbeView {
  const up = r.keepAlive?.upstream;
  return {
    keepAliveHonoured: r.keepAlive?.honoured ?? null,
    upstreamConnections: up?.connections ?? null,
    upstreamRequests: up?.requests ?? null,
    upstreamReused: up?.reused ?? null,
    large: r.large?.verdict ?? null,
    largeDetail: r.large?.detail ?? null,
    warnings: r.findings.filter((f) => f.level === 'warn').map((f) => f.id),
  };
}

/** Everything measured for one configuration. */
export interface ConfigResult {
  config: ProxyConfig;
  url: string;
  churn?: Churn;
  spool?: Spool;
  probe?: ProbeView;
  /**
   * The per-run p50 latencies (ms) of each cell's kept runs, by {@link timesKey}: what every time,
   * speedup and sentence of the study is computed from (kept in the result's data, so a saved run's
   * words can be derived again without its comparisons).
   */
  times?: Record<string, number[]>;
}

/** The key of one cell's times: workload, concurrency, protocol. */
const timesKey = (workload: string, concurrency: number, protocol: string) =>
  `${workload}/c${concurrency}/${protocol}`;

/** Each cell's per-run p50s (ms) over its kept runs, from a comparison. */
export function timesOf(compare: CompareResult): Record<string, number[]> {
  return Object.fromEntries(
    compare.cells.map((cell: CellResult) => [
      timesKey(cell.workload, cell.concurrency, cell.protocol),
      keptRuns(cell).map((r) => r.latencyMs.p50),
    ]),
  );
}

/** The per-run p50 latencies (ms) of one configuration's cell; none when it was not measured. */
export function p50s(
  r: ConfigResult | undefined,
  workload: string,
  concurrency: number,
  protocol: string,
): number[] {
  return r?.times?.[timesKey(workload, concurrency, protocol)] ?? [];
}

export const med = (xs: number[]) => medianOf(xs);
const round = (x: number | undefined, d = 1) => rounded(x, d);

/**
 * Broken over fixed p50 (above 1: the fix is faster), decided by compare's rule over the runs (the
 * interval, the rank test, the minimum effect).
 */
export function speedup(broken: number[], fixed: number[], seed: number): ClaimDecision | undefined {
  return decideRuns(broken, fixed, { higherIsBetter: true, seed });
}

const ratioText = (d: ClaimDecision | undefined) => intervalText(d?.interval, { unit: '×' });

export function configSection(results: ConfigResult[], o: ProxyOptions): StudySection {
  return {
    id: 'configurations',
    title: 'nginx in front of the fixture: upstream churn, spooling, and what the probe flags',
    note: `Connections per request: connections the fixture accepted over requests it served during the load cell (/metrics before and after, the after-read's own connection subtracted). Spooled: nginx's "buffered to a temporary file" warnings (one per response written to proxy_temp_path) over the responses of that kind; temp files and bytes seen: the files open in nginx's worker sampled every ${SPOOL_SAMPLE_MS} ms through /proc, each at its largest size seen (a lower bound). nginx: 1 worker, TLS with h2 by ALPN, listen sndbuf=${o.sndbufBytes > 0 ? formatBytes(o.sndbufBytes) : 'kernel default'}, upstream keepalive ${UPSTREAM_KEEPALIVE}. Probe: h2lab probe --large /bytes/${LARGE_BYTES} against each configuration.`,
    table: {
      columns: [
        { key: 'config', label: 'configuration' },
        { key: 'keepalive', label: 'upstream keep-alive' },
        { key: 'buffers', label: 'proxy_buffers' },
        { key: 'perRequest', label: 'conns/request' },
        { key: 'requests', label: 'requests' },
        { key: 'spooledLarge', label: 'spooled 2.7 MB' },
        { key: 'spooledChunks', label: 'spooled chunks' },
        { key: 'spoolFiles', label: 'temp files seen' },
        { key: 'spoolBytes', label: 'bytes seen', unit: 'MiB' },
        { key: 'probeUpstream', label: 'probe: upstream' },
        { key: 'probeLarge', label: 'probe: --large' },
        { key: 'probeFlags', label: 'probe warns' },
      ],
      rows: results.map((r) => ({
        config: r.config.id,
        keepalive: r.config.keepalive ? 'on' : 'off',
        buffers: BUFFERS[r.config.buffers].buffers,
        perRequest: round(r.churn?.perRequest, 2),
        requests: r.churn?.requests ?? null,
        spooledLarge: r.spool && r.churn ? `${r.spool.responses.bytes}/${r.churn.large}` : null,
        spooledChunks: r.spool && r.churn ? `${r.spool.responses.chunks}/${r.churn.chunks}` : null,
        spoolFiles: r.spool?.files ?? null,
        spoolBytes: r.spool ? round(r.spool.bytesSeen / 2 ** 20, 1) : null,
        probeUpstream: r.probe
          ? r.probe.upstreamReused === null
            ? 'not seen'
            : `${r.probe.upstreamConnections} conns/${r.probe.upstreamRequests} req`
          : null,
        probeLarge: r.probe?.large ?? null,
        probeFlags: r.probe ? r.probe.warnings.join(', ') || 'none' : null,
      })),
    },
  };
}

export function timeSection(
  results: ConfigResult[],
  workload: { id: string; label: string },
  o: ProxyOptions,
  seed: number,
): StudySection {
  const h1 = baselineStrategy().name;
  const h2 = multiplexedStrategy('one')!.name;
  const broken = results.find((r) => r.config.id === BROKEN.id);
  const rows = [];
  for (const c of o.concurrency)
    for (const r of results) {
      const a = p50s(r, workload.id, c, h1);
      const b = p50s(r, workload.id, c, h2);
      const base1 = p50s(broken, workload.id, c, h1);
      const base2 = p50s(broken, workload.id, c, h2);
      rows.push({
        c,
        config: r.config.id,
        http1: round(med(a)),
        http2: round(med(b)),
        h1Speedup: r === broken ? null : ratioText(speedup(base1, a, seed)),
        h2Speedup: r === broken ? null : ratioText(speedup(base2, b, seed)),
      });
    }
  return {
    id: `time-${workload.id}`,
    title: `${workload.label}: time of one response through each configuration`,
    note: `Median over ${o.runs - 1} kept runs (the first discarded) of each run's p50 response time, ${o.durationMs} ms runs, HTTP/1.1 with a connection per request in flight, HTTP/2 on one session. Speedup: ${BROKEN.id}'s time over this configuration's, with its 95% bootstrap interval (above 1: faster than the broken configuration).`,
    table: {
      columns: [
        { key: 'c', label: 'concurrency' },
        { key: 'config', label: 'configuration' },
        { key: 'http1', label: 'HTTP/1.1', unit: 'ms' },
        { key: 'http2', label: 'HTTP/2', unit: 'ms' },
        { key: 'h1Speedup', label: 'h1 speedup (95% CI)' },
        { key: 'h2Speedup', label: 'h2 speedup (95% CI)' },
      ],
      rows,
    },
  };
}

export function proxySummarySection(results: ConfigResult[], o: ProxyOptions, seed: number): StudySection {
  const h1 = baselineStrategy().name;
  const h2 = multiplexedStrategy('one')!.name;
  const broken = results.find((r) => r.config.id === BROKEN.id);
  const fixed = results.find((r) => r.config.id === FIXED.id);
  const big = sizeWorkload(LARGE_BYTES).id;
  const rows = [];
  for (const c of o.concurrency)
    for (const p of [h1, h2]) {
      const a = p50s(broken, big, c, p);
      const b = p50s(fixed, big, c, p);
      const s = speedup(a, b, seed);
      rows.push({
        c,
        protocol: p,
        before: round(med(a), 1),
        after: round(med(b), 1),
        speedup: s ? round(s.interval.ratio, 2) : null,
        ci: s ? `${s.interval.lo.toFixed(2)}–${s.interval.hi.toFixed(2)}` : null,
        outcome: outcomeWord(s, { better: 'fix faster', worse: 'fix slower' }),
      });
    }
  return {
    id: 'summary',
    title: `The fix, beside the report: ${BROKEN.id} → ${FIXED.id}, one 2.7 MB response`,
    note: `Before: no upstream keep-alive and nginx’s default buffers; after: both fixed. Medians of per-run p50s, ${whereOf(o)}. The report measured its production proxy (nginx → uvicorn over a Unix socket) from a client over the internet; its client and RTT were not recorded.`,
    table: {
      columns: [
        { key: 'c', label: 'concurrency' },
        { key: 'protocol', label: 'client → nginx' },
        { key: 'before', label: 'before', unit: 'ms' },
        { key: 'after', label: 'after', unit: 'ms' },
        { key: 'speedup', label: 'speedup', unit: '×' },
        { key: 'ci', label: '95% CI' },
        { key: 'outcome', label: 'decided' },
      ],
      rows,
    },
    reference: {
      source: 'report 001, reverse-proxy audit (one 2.68 MB slice from cat2.cloud)',
      table: {
        columns: [
          { key: 'protocol', label: 'client → nginx' },
          { key: 'before', label: 'before', unit: 's' },
          { key: 'after', label: 'after', unit: 's' },
          { key: 'speedup', label: 'speedup', unit: '×' },
        ],
        rows: [
          {
            protocol: 'HTTP/1.1',
            before: PROXY_REPORT.beforeS,
            after: PROXY_REPORT.afterS,
            speedup: Math.round((PROXY_REPORT.beforeS / PROXY_REPORT.afterS) * 10) / 10,
          },
          {
            protocol: 'HTTP/2',
            before: PROXY_REPORT.beforeH2S,
            after: PROXY_REPORT.afterH2S,
            speedup: Math.round((PROXY_REPORT.beforeH2S / PROXY_REPORT.afterH2S) * 10) / 10,
          },
        ],
      },
      note: 'Its causes: no upstream keep-alive (a new upstream socket per request) and small proxy buffers (the 2.7 MB response spooled to disk).',
    },
  };
}

/** Where the fixture was, for the notes; its round trip recorded in `ev` when a finding says it. */
export const whereOf = (o: ProxyOptions, ev?: Evidence) =>
  o.upstreamRttMs > 0
    ? `the fixture behind a ${ev ? ev.ms('upstreamRttMs', o.upstreamRttMs) : `${o.upstreamRttMs} ms`} link`
    : o.upstream === 'unix'
      ? 'the client on loopback, nginx → the fixture over a Unix socket'
      : 'on loopback';

/** Broken over this configuration in words, from the decision: "2.7× faster", "2.8× slower", the same or undecided. */
export function speedWords(d: ClaimDecision): string {
  return directionText(d, {
    above: (x) => `${x} faster`,
    below: (x) => `${x} slower`,
    same: 'the same',
    undecided: 'undecided',
  });
}

export const share = (n: number, of: number) => (of > 0 ? `${Math.round((100 * n) / of)}%` : '–');

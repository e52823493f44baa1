/** The echo study's rows (one per body and window) and their tables. */

import { keptRuns } from '../../compare/index.ts';
import { formatBytes } from '../../core/index.ts';
import type { CellResult, CompareResult, Comparison, StudySection } from '../../model/index.ts';
import { baselineStrategy, resolveWindow } from '../../transport/index.ts';
import { type ClaimDecision, decideRuns } from '../claims.ts';
import { intervalText, outcomeWord, percentCell, rounded, sideFacts } from '../table.ts';
import { type EchoOptions, REPORT, VARIANT_LABEL, type Variant, type WindowName } from './options.ts';

/** What one strategy's kept runs of one cell show. */
interface Side {
  latencyP50Ms?: number;
  rps?: number;
  /** Each kept run's throughput, req/s, in run order: what a decision between presets is made over. */
  rpsRuns?: number[];
  /** Wait inside the client for a connection or stream slot, ms (median of run means). */
  clientQueueMs?: number;
  sessions?: number;
  /** Highest number of streams one session carried at once (median over runs). */
  peakStreams?: number;
  /** Share of the sessions' open time during which a receive window stopped the server. */
  stalledShare?: number;
  connectionStalls?: number;
  streamStalls?: number;
  /** CPU of the process (client and the fixture in its thread) / wall: cores used. */
  cpu?: number;
  /** CPU ms per request: cpu / req/s (the steady figure on a noisy machine). */
  cpuMsPerRequest?: number;
  /** Σ congestion windows of the server's sockets at the run's end (the response direction), bytes. */
  cwndBytes?: number;
  /** Mean latency, ms (median of run means): Little's law reads the mean. */
  latencyMeanMs?: number;
  /** The fixture's own thread: CPU ms per request it saw, and its event loop's busy share (cpuApart). */
  serverCpuMsPerRequest?: number;
  serverElu?: number;
  /** h2lab's client without the fixture's thread: CPU ms per request, and its event loop's busy share. */
  clientCpuMsPerRequest?: number;
  clientElu?: number;
  /** Connections (sessions) each run opened, and their mTLS handshake time at the median, ms. */
  opened?: number;
  tlsP50Ms?: number;
}

function sideOf(cell: CellResult | undefined): Side {
  if (!cell?.stats) return {};
  const st = cell.stats;
  return {
    latencyP50Ms: st.latencyP50Ms.median,
    rps: st.rps.median,
    rpsRuns: keptRuns(cell).map((r) => r.throughput.rps),
    clientQueueMs: st.breakdownMs.clientQueue,
    ...(st.connectionsOpened !== undefined ? { sessions: st.connectionsOpened } : {}),
    ...sideFacts(cell, [
      'peakStreams',
      'stalledShare',
      'connectionStalls',
      'streamStalls',
      'cpu',
      'cpuMsPerRequest',
      'cwndBytes',
      'latencyMeanMs',
      'serverCpuMsPerRequest',
      'serverElu',
      'clientCpuMsPerRequest',
      'clientElu',
      'opened',
      'tlsP50Ms',
    ]),
  };
}

/** One HTTP/2 variant against the HTTP/1.1 pool of the same comparison. */
export interface Row {
  body: number;
  window: WindowName;
  concurrency: number;
  variant: Variant;
  h1: Side;
  h2: Side;
  throughput?: Comparison;
  latency?: Comparison;
}

export function rowsOf(
  result: CompareResult,
  body: number,
  window: WindowName,
  variants: Array<[Variant, string]>,
  concurrencies: number[],
): Row[] {
  const h1 = baselineStrategy().name;
  const cell = (c: number, p: string) => result.cells.find((x) => x.concurrency === c && x.protocol === p);
  const cmp = (c: number, p: string, metric: Comparison['metric']) =>
    result.comparisons.find((x) => x.concurrency === c && x.protocol === p && x.metric === metric);
  const rows: Row[] = [];
  for (const c of concurrencies)
    for (const [variant, name] of variants) {
      const throughput = cmp(c, name, 'rps');
      const latency = cmp(c, name, 'latencyP50Ms');
      rows.push({
        body,
        window,
        concurrency: c,
        variant,
        h1: sideOf(cell(c, h1)),
        h2: sideOf(cell(c, name)),
        ...(throughput ? { throughput } : {}),
        ...(latency ? { latency } : {}),
      });
    }
  return rows;
}

const r2 = (x: number | undefined) => rounded(x, 2);
const r0 = (x: number | undefined) => rounded(x);

export function bodyLabel(n: number): string {
  return formatBytes(n);
}

export function cellSection(body: number, window: WindowName, rows: Row[], o: EchoOptions): StudySection {
  const w = resolveWindow(window);
  return {
    id: `echo-${body}-${window}`,
    title: `${bodyLabel(body)} echoed over mTLS, windows "${window}": HTTP/2 against the HTTP/1.1 pool`,
    note: `POST /echo, ${bodyLabel(body)} up and the same back, ${o.headerBytes} B of extra headers. Both ends' HTTP/2 receive windows ${formatBytes(w.streamWindowBytes)} per stream, ${formatBytes(w.connectionWindowBytes)} per connection. Medians over the kept runs; latency h1/h2 above 1: HTTP/2 lower; throughput h2/h1 above 1: HTTP/2 more (95% bootstrap intervals). Each variant is measured against the HTTP/1.1 pool of its own comparison. "stalled" is the share of session time a client receive window held the server's response data.`,
    table: {
      columns: [
        { key: 'c', label: 'conc.' },
        { key: 'variant', label: 'HTTP/2 as' },
        { key: 'h1p50', label: 'h1 p50', unit: 'ms' },
        { key: 'h2p50', label: 'h2 p50', unit: 'ms' },
        { key: 'lat', label: 'latency h1/h2' },
        { key: 'h1rps', label: 'h1 req/s' },
        { key: 'h2rps', label: 'h2 req/s' },
        { key: 'thr', label: 'throughput h2/h1' },
        { key: 'sessions', label: 'sessions' },
        { key: 'streams', label: 'streams/session' },
        { key: 'stalled', label: 'stalled', unit: '%' },
        { key: 'outcome', label: 'throughput' },
      ],
      rows: rows.map((r) => ({
        c: r.concurrency,
        variant: VARIANT_LABEL[r.variant],
        h1p50: r2(r.h1.latencyP50Ms),
        h2p50: r2(r.h2.latencyP50Ms),
        // A candidate/baseline latency, shown as h1/h2.
        lat: intervalText(r.latency?.interval, { invert: true }),
        h1rps: r0(r.h1.rps),
        h2rps: r0(r.h2.rps),
        thr: intervalText(r.throughput?.interval),
        sessions: r.h2.sessions ?? null,
        streams: r.h2.peakStreams ?? null,
        stalled: percentCell(r.h2.stalledShare),
        outcome: outcomeWord(r.throughput, { better: 'h2 better', worse: 'h1 better' }),
      })),
    },
  };
}

/**
 * One session's throughput against HTTP/1.1 in preset `b` over preset `a`, decided by compare's rule
 * over the runs: each kept run's h2/h1 throughput (the runs of a comparison are interleaved, so run i
 * of both sides met the same moment of the machine), `b`'s against `a`'s. Undefined when the rows
 * kept no runs (older saved rows) or too few to pair.
 */
export function presetDecision(a: Row, b: Row): ClaimDecision | undefined {
  const ratios = (r: Row) => {
    const h1 = r.h1.rpsRuns ?? [];
    const h2 = r.h2.rpsRuns ?? [];
    return h2.slice(0, h1.length).map((x, i) => x / h1[i]!);
  };
  const x = ratios(b);
  const y = ratios(a);
  if (x.length === 0 || y.length === 0) return undefined;
  return decideRuns(x, y, { higherIsBetter: true });
}

export const latencyRatio = (r: Row) => (r.latency ? 1 / r.latency.interval.ratio : undefined);
export const throughputRatio = (r: Row) => r.throughput?.interval.ratio;

/** The report's table for one body size, beside h2lab's ratios in every window preset. */
export function summarySection(body: number, rows: Row[], windows: WindowName[], top: number): StudySection {
  const large = body >= 64 * 1024;
  const ref = large ? REPORT.large : REPORT.small;
  const at = (v: Variant, w: WindowName) =>
    rows.find((r) => r.variant === v && r.window === w && r.concurrency === top);
  return {
    id: `summary-${body}`,
    title: `${bodyLabel(body)}: HTTP/2 against HTTP/1.1, beside the report (${large ? '1 MB' : '1 KB'} bodies)`,
    note: `Ratios at concurrency ${top}: latency h1/h2 (above 1: HTTP/2 lower), throughput h2/h1 (above 1: HTTP/2 more), one column pair per window preset.`,
    table: {
      columns: [
        { key: 'variant', label: 'HTTP/2 as' },
        ...windows.flatMap((w) => [
          { key: `lat-${w}`, label: `latency ${w}`, unit: '×' },
          { key: `thr-${w}`, label: `thr. ${w}`, unit: '×' },
        ]),
      ],
      rows: (['one', 'shared', 'independent'] as Variant[]).map((v) => ({
        variant: VARIANT_LABEL[v],
        ...Object.fromEntries(
          windows.flatMap((w) => {
            const r = at(v, w);
            return [
              [`lat-${w}`, r ? r2(latencyRatio(r)) : null],
              [`thr-${w}`, r ? r2(throughputRatio(r)) : null],
            ];
          }),
        ),
      })),
    },
    reference: {
      source: `report 003, conclusion ${large ? '6 (1 MB' : '5 (1 KB'} bodies + 300 B of headers)`,
      note: 'Its own words turned into the same ratios ("9.5% lower latency" = 1.10×, "2.4× less throughput" = 0.42×). Spring Boot on Tomcat, Apache HttpClient 5; its concurrency, RTT, pool sizes and windows were not recorded; CPU about 50%.',
      table: {
        columns: [
          { key: 'variant', label: 'HTTP/2 as' },
          { key: 'lat', label: 'latency h1/h2', unit: '×' },
          { key: 'thr', label: 'throughput h2/h1', unit: '×' },
        ],
        rows: ref.map((r) => ({
          variant: VARIANT_LABEL[r.variant as Variant],
          lat: r2(r.latency),
          thr: r2(r.throughput),
        })),
      },
    },
  };
}

/** Per window preset: the one-session result with the stalls that explain it. */
export function windowSection(body: number, rows: Row[], windows: WindowName[], top: number): StudySection {
  return {
    id: `windows-${body}`,
    title: `${bodyLabel(body)}: what the flow-control windows did (concurrency ${top})`,
    note: "Client receive windows (the response direction) as measured by h2lab's client: stall episodes of the connection's and the streams' windows, and the share of session time during which one of them held the server. The server's receive windows (the upload direction) were set to the same preset; h2lab does not measure the client's send-side waits.",
    table: {
      columns: [
        { key: 'window', label: 'window' },
        { key: 'stream', label: 'stream win.' },
        { key: 'conn', label: 'conn. win.' },
        { key: 'variant', label: 'HTTP/2 as' },
        { key: 'thr', label: 'thr. h2/h1', unit: '×' },
        { key: 'stalled', label: 'stalled', unit: '%' },
        { key: 'connStalls', label: 'conn. stalls' },
        { key: 'streamStalls', label: 'stream stalls' },
      ],
      rows: windows.flatMap((w) => {
        const ws = resolveWindow(w);
        return (['one', 'independent'] as Variant[]).map((v) => {
          const r = rows.find((x) => x.window === w && x.variant === v && x.concurrency === top);
          return {
            window: w,
            stream: formatBytes(ws.streamWindowBytes),
            conn: formatBytes(ws.connectionWindowBytes),
            variant: VARIANT_LABEL[v],
            thr: r ? r2(throughputRatio(r)) : null,
            stalled: r ? percentCell(r.h2.stalledShare) : null,
            connStalls: r0(r?.h2.connectionStalls),
            streamStalls: r0(r?.h2.streamStalls),
          };
        });
      }),
    },
  };
}

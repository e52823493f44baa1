/**
 * `h2lab study echo`: request/response echo behind mutual TLS (report 003). The fixture's `POST /echo`
 * with client certificates required (a CA, a server and a client certificate, as `h2lab certs` makes
 * them), 1 KiB and 1 MiB bodies plus ~300 B of request headers, driven by
 *
 *   h1           a pool of HTTP/1.1 connections (one per request in flight by default)
 *   h2           one HTTP/2 session carrying every request as a stream
 *   h2 leased    a pool of K sessions opened at the start, each carrying one exchange at a time
 *                (h2-pool's `lease` policy; a request waits for an idle session): the report's
 *                "library pool" as Apache HttpClient 5's pooling manager had it — an HTTP/2
 *                connection leased like an HTTP/1.1 one (sharing one connection between concurrent
 *                exchanges came to that library only later, as an experimental pool), K = 5, its
 *                default per route
 *   h2 indep.    as many sessions as requests in flight, opened before the run, each request on one
 *                with nothing in flight: the steady state of the report's pool of independent HTTP/2
 *                clients ("each caller takes a free one or creates one"). Not `first-free`: that
 *                policy opens its sessions on demand inside the timed period, and h2lab's runs are
 *                short and open their connections afresh, so it would be charged handshakes that the
 *                report's long-lived pool paid once (mTLS handshakes took 75–180 ms at the median on
 *                a loaded two-core machine).
 *
 * with the HTTP/2 flow-control windows of both ends (node / browser / max) as an axis, so the 1 MiB
 * result comes with the stalls the client measured; then the lifetime of a session at both ends: the
 * server's idle timeout (GOAWAY) and the client's `--idle-timeout` / `--max-age`, with timestamps.
 */

import os from 'node:os';
import { formatBytes, invalidOption, medianInterpolated } from '../../core/index.ts';
import { type LoadOptionsInput, runLoad } from '../../load/index.ts';
import type {
  CellResult,
  CompareResult,
  Comparison,
  ConnectionLifetime,
  RunResult,
  StudyFinding,
  StudyResult,
  StudySection,
  WorkloadInput,
} from '../../model/index.ts';
import { checkNetAvailable } from '../../net/index.ts';
import { type FixtureTarget, type ServerOptionsInput, startFixtureTarget } from '../../server/index.ts';
import { CERT_FILES, generateCertificates, writeCertificateSet } from '../../tls/index.ts';
import {
  baselineStrategy,
  multiplexedStrategy,
  resolveWindow,
  type Strategy as TransportStrategy,
} from '../../transport/index.ts';
import { quickCaveat } from '../caveats.ts';
import { accounts, direction } from '../claims.ts';
import { compareCell } from '../compare-cell.ts';
import { Evidence, evidenceNumber, makeFinding, notMeasured } from '../findings.ts';
import { defineStudy, type Rederived, type StudyContext } from '../study.ts';
import { intervalText, outcomeWord, percentCell, rounded, sideFacts, timesWords } from '../table.ts';
import { ECHO_STUDY, LIBRARY_POOL_SESSIONS } from './descriptor.ts';

/** The window presets (`--window`'s). */
type WindowName = 'node' | 'browser' | 'max';

/** The grid: full mode, and the quick one the tests run (under two minutes on two cores). */
const GRID = {
  full: {
    bodies: [1024, 1024 * 1024],
    windows: ['node', 'browser', 'max'] as WindowName[],
    concurrency: [32],
    runs: 7,
    durationMs: 1000,
    serverIdleMs: 3000,
    clientIdleMs: 1000,
    maxAgeMs: 1000,
  },
  quick: {
    bodies: [1024, 1024 * 1024],
    windows: ['node', 'max'] as WindowName[],
    concurrency: [8],
    runs: 3,
    durationMs: 300,
    serverIdleMs: 600,
    clientIdleMs: 300,
    maxAgeMs: 300,
  },
};

/** The report's findings as ratios to HTTP/1.1: latency h1/h2 (above 1: HTTP/2 lower), throughput h2/h1. */
const REPORT = {
  small: [
    { variant: 'one', latency: 6.8, throughput: 12.7 },
    { variant: 'shared', latency: 1, throughput: 2.9 },
    { variant: 'independent', latency: 6.8, throughput: 22.9 },
  ],
  // "latency 9.5% lower" → 1 / (1 − 0.095); "throughput 2.4× less" → 1 / 2.4.
  large: [
    { variant: 'one', latency: 1 / (1 - 0.095), throughput: 1 / 2.4 },
    { variant: 'shared', latency: 1 / (1 - 0.016), throughput: 1.008 },
    { variant: 'independent', latency: 1 / (1 - 0.066), throughput: 1.112 },
  ],
};

type Variant = 'one' | 'shared' | 'independent';
const VARIANT_LABEL: Record<Variant, string> = {
  one: 'HTTP/2, one session',
  shared: 'HTTP/2, leased pool',
  independent: 'HTTP/2, independent sessions',
};

/** What the study assumes about the report's clients, printed with the results. */
function assumptions(o: EchoOptions, top: number): string {
  const h1 = o.h1Connections === 'concurrency' ? top : Math.min(o.h1Connections, top);
  return `Assumed about the report's clients (not recorded there): its HTTP/1.1 client was a pool of ${h1} connection(s) (--h1-connections; Apache HttpClient 5 defaults to ${LIBRARY_POOL_SESSIONS} per route), its "library pool" leased each HTTP/2 connection to one exchange at a time (${o.h2Sessions} sessions, --h2-sessions: the library's per-route default), its "pool of independent clients" had a client, and so a connection, per caller (${top} here, opened before the run), and its "HTTP/2 without a pool" was one connection carrying every exchange. Both ends' windows as named per table; the report's were the libraries' defaults (64 KiB, h2lab's "node" preset). ${top} requests in flight, on loopback unless --rtt.`;
}

export interface EchoOptions {
  bodies: number[];
  windows: WindowName[];
  concurrency: number[];
  runs: number;
  durationMs: number;
  h1Connections: number | 'concurrency';
  h2Sessions: number;
  headerBytes: number;
  serverIdleMs: number;
  clientIdleMs: number;
  maxAgeMs: number;
  rttMs?: number;
}

function resolve(o: Partial<EchoOptions>, quick: boolean): EchoOptions {
  const g = quick ? GRID.quick : GRID.full;
  return {
    bodies: o.bodies ?? [...g.bodies],
    windows: o.windows ?? [...g.windows],
    concurrency: o.concurrency ?? [...g.concurrency],
    runs: o.runs ?? g.runs,
    durationMs: o.durationMs ?? g.durationMs,
    h1Connections: o.h1Connections ?? LIBRARY_POOL_SESSIONS,
    h2Sessions: o.h2Sessions ?? LIBRARY_POOL_SESSIONS,
    headerBytes: o.headerBytes ?? 300,
    serverIdleMs: o.serverIdleMs ?? g.serverIdleMs,
    clientIdleMs: o.clientIdleMs ?? g.clientIdleMs,
    maxAgeMs: o.maxAgeMs ?? g.maxAgeMs,
    ...(o.rttMs !== undefined ? { rttMs: o.rttMs } : {}),
  };
}

/**
 * About `bytes` of request headers as an API client sends them, counted as HTTP/1.1 writes them
 * (`name: value` CRLF): a JSON content type, an accept, a request id and a bearer token padded to
 * the size.
 */
export function apiHeaders(bytes: number): Record<string, string> {
  const h: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
    'x-request-id': '6f1c2a9e-4b7d-4e0a-9a51-2c8d3f7b1e64',
  };
  const line = (k: string, v: string) => k.length + 2 + v.length + 2;
  const used = Object.entries(h).reduce((n, [k, v]) => n + line(k, v), 0);
  const room = Math.max(16, bytes - used - line('authorization', 'Bearer '));
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  let token = '';
  for (let i = 0; i < room; i++) token += alphabet[(i * 37 + 11) % alphabet.length];
  h.authorization = `Bearer ${token}`;
  return h;
}

/** Σ `name: value` CRLF: the size the headers have on an HTTP/1.1 wire. */
function headerWireBytes(h: Record<string, string>): number {
  return Object.entries(h).reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
}

/** The strategies by role; the registry names them. */
function roles(): { h1: TransportStrategy; one: TransportStrategy; pool: TransportStrategy } {
  const one = multiplexedStrategy('one');
  const pool = multiplexedStrategy('pool');
  if (!one || !pool) throw new Error('the registry has no single-session or pooled HTTP/2 strategy');
  return { h1: baselineStrategy(), one, pool };
}

/** Certificates as `h2lab certs` makes them: a CA, a server certificate, a client certificate. */
interface CertFiles {
  caFile: string;
  certFile: string;
  keyFile: string;
  serverCert: string;
  serverKey: string;
}

async function makeCertificates(dir: string): Promise<CertFiles> {
  const set = await generateCertificates({ caName: 'h2lab echo study CA' });
  writeCertificateSet(dir, set, { force: true });
  const at = (f: string) => `${dir}/${f}`;
  return {
    caFile: at(CERT_FILES.caPem),
    certFile: at(CERT_FILES.clientPem),
    keyFile: at(CERT_FILES.clientKeyPem),
    serverCert: at(CERT_FILES.serverPem),
    serverKey: at(CERT_FILES.serverKeyPem),
  };
}

/** The fixture with client certificates required, and both ends' windows set to one preset. */
function fixtureFor(
  certs: CertFiles,
  window: WindowName,
  extra: ServerOptionsInput = {},
): ServerOptionsInput {
  const w = resolveWindow(window);
  return {
    cert: certs.serverCert,
    key: certs.serverKey,
    ca: certs.caFile,
    clientAuth: 'require',
    // The upload direction: the server's receive windows, the same preset as the client's.
    initialWindowSizeBytes: Math.min(w.streamWindowBytes, 2 ** 31 - 1),
    connectionWindowSizeBytes: Math.max(65_535, w.connectionWindowBytes),
    ...extra,
  };
}

/** What one strategy's kept runs of one cell show. */
interface Side {
  latencyP50Ms?: number;
  rps?: number;
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

function rowsOf(
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

function bodyLabel(n: number): string {
  return formatBytes(n);
}

function cellSection(body: number, window: WindowName, rows: Row[], o: EchoOptions): StudySection {
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

const latencyRatio = (r: Row) => (r.latency ? 1 / r.latency.interval.ratio : undefined);
const throughputRatio = (r: Row) => r.throughput?.interval.ratio;

/** The report's table for one body size, beside h2lab's ratios in every window preset. */
function summarySection(body: number, rows: Row[], windows: WindowName[], top: number): StudySection {
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
function windowSection(body: number, rows: Row[], windows: WindowName[], top: number): StudySection {
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

/** "2.10× lower latency" / "1.30× higher latency" from an h1/h2 latency ratio. */
const latencyWords = (x: number) => timesWords(x, 'lower latency', 'higher latency');
/** "1.80× the throughput of" / "2.40× less throughput than" from an h2/h1 throughput ratio. */
const throughputWords = (x: number) => timesWords(x, 'the throughput of', 'less throughput than');

function outcomeClause(c: Comparison | undefined): string {
  if (!c) return 'not measured';
  switch (c.outcome) {
    case 'better':
    case 'worse':
      return 'the runs show the throughput difference';
    case 'no-clear-difference':
      return 'the throughput difference is below the 5% threshold';
    case 'undecided':
      return `the runs cannot tell the throughputs apart yet (about ${c.runsNeeded ?? 'more'} runs a side would)`;
    case 'insufficient':
      return 'too few runs for an interval';
  }
}

/** The explanation of one body size, from its rows. */
function explainBody(body: number, rows: Row[], windows: WindowName[], top: number, o: EchoOptions): string {
  const parts: string[] = [];
  const at = (v: Variant, w: WindowName) =>
    rows.find((r) => r.variant === v && r.window === w && r.concurrency === top);
  // The preset of the row-by-row findings (the report's libraries' 64 KiB), so the two agree.
  const w0 = reportWindow(windows);
  const one = at('one', w0);
  const tr = one && throughputRatio(one);
  const lr = one && latencyRatio(one);
  if (!one || tr === undefined || lr === undefined)
    return `${bodyLabel(body)}: the comparison at concurrency ${top} did not finish, so it says nothing.`;
  parts.push(
    `${bodyLabel(body)} bodies at concurrency ${top} (windows "${w0}"): one HTTP/2 session had ${latencyWords(lr)} and ${throughputWords(tr)} the HTTP/1.1 pool; ${outcomeClause(one.throughput)}.`,
  );
  const q = one.h1.clientQueueMs;
  const h1conns = o.h1Connections === 'concurrency' ? top : Math.min(o.h1Connections, top);
  const mean = one.h1.latencyMeanMs;
  if (q !== undefined && mean !== undefined) {
    // The client queue is a mean wait: set against the mean latency, not the median.
    const queued = `HTTP/1.1 had ${h1conns} connections for ${top} requests in flight and its requests waited ${q.toFixed(2)} ms on average in the client for one (of a ${mean.toFixed(2)} ms mean latency)`;
    const lower = one.latency ? direction(one.latency.interval) === 'below' : false;
    parts.push(
      q <= 0.25 * mean
        ? `HTTP/1.1 had a connection for nearly every request in flight (${h1conns}; ${q.toFixed(2)} ms waiting in the client on average), so no client-side queue explains a difference.`
        : lower
          ? `${queued}: that queue is the latency HTTP/2's streams avoid.`
          : `${queued}, yet HTTP/2's latency was not lower by the runs' interval: its streams did not turn that queue into lower latency here.`,
    );
  }
  const ind = at('independent', w0);
  const sh = at('shared', w0);
  const ti = ind && throughputRatio(ind);
  const ts = sh && throughputRatio(sh);
  if (ti !== undefined && ts !== undefined) {
    parts.push(
      `The shared pool of ${o.h2Sessions} sessions reached ${ts.toFixed(2)}× HTTP/1.1's throughput (up to ${sh!.h2.peakStreams ?? '?'} streams on a session) and the independent sessions (${ind!.h2.sessions ?? '?'} of them, up to ${ind!.h2.peakStreams ?? '?'} stream${ind!.h2.peakStreams === 1 ? '' : 's'} each) ${ti.toFixed(2)}×, against ${tr.toFixed(2)}× for one session${ti > tr * 1.05 ? ': spreading the requests over connections helped' : ti < tr * 0.95 ? ': more connections cost more than they gave here' : ': the number of connections made little difference here'}.`,
    );
  }
  if (windows.length > 1) {
    const byWindow = windows
      .map((w) => ({ w, r: at('one', w) }))
      .filter((x): x is { w: WindowName; r: Row } => x.r?.throughput !== undefined);
    if (byWindow.length > 1) {
      const list = byWindow
        .map(
          ({ w, r }) =>
            `${w} ${throughputRatio(r)!.toFixed(2)}× (stalled ${r.h2.stalledShare !== undefined ? `${(r.h2.stalledShare * 100).toFixed(1)}%` : '?'} of session time, ${r.h2.connectionStalls !== undefined ? Math.round(r.h2.connectionStalls) : '?'} connection-window stalls)`,
        )
        .join(', ');
      parts.push(
        `One session's throughput against HTTP/1.1 by window preset: ${list}. ${windowVerdict(byWindow.map((x) => x.r))}`,
      );
    }
  }
  return parts.join(' ');
}

/**
 * What the window presets did to one session's result: flow control decides only where a preset's
 * windows stalled the server and the ratio followed the stalls beyond the runs' spread.
 */
function windowVerdict(rows: Row[]): string {
  const stalled = (r: Row) => r.h2.stalledShare ?? 0;
  const most = rows.reduce((a, b) => (stalled(b) > stalled(a) ? b : a));
  const least = rows.reduce((a, b) => (stalled(b) < stalled(a) ? b : a));
  const ratios = rows.map((r) => throughputRatio(r)!);
  const spread = Math.round((Math.max(...ratios) / Math.min(...ratios) - 1) * 100);
  if (stalled(most) <= 0.05)
    return `No preset's windows held the server for more than ${(stalled(most) * 100).toFixed(1)}% of session time, so flow control does not explain the ${spread}% between presets: that is the runs' spread.`;
  const gain = throughputRatio(least)! / throughputRatio(most)!;
  const a = most.throughput!.interval;
  const b = least.throughput!.interval;
  const apart = b.lo > a.hi;
  const pair = `"${least.window}" (${(stalled(least) * 100).toFixed(1)}% stalled) against "${most.window}" (${(stalled(most) * 100).toFixed(1)}%)`;
  // A preset that hardly stalled yet did no better than the most stalled one says the stalls were not
  // the limit, whatever another preset gained (the issue's 0.61× "max" beside node's 0.62×).
  const unstalledSame = rows.find(
    (r) =>
      r !== most && stalled(r) <= 0.05 && Math.abs(throughputRatio(r)! / throughputRatio(most)! - 1) <= 0.1,
  );
  if (gain > 1.1 && unstalledSame)
    return `"${unstalledSame.window}" hardly stalled (${(stalled(unstalledSame) * 100).toFixed(1)}%) yet gave ${throughputRatio(unstalledSame)!.toFixed(2)}×, the same as "${most.window}" with ${(stalled(most) * 100).toFixed(1)}% stalled (${throughputRatio(most)!.toFixed(2)}×): flow control does not explain the difference between presets (${pair} is the runs' spread or something else).`;
  if (gain > 1.1 && apart)
    return `Larger windows gave ${((gain - 1) * 100).toFixed(0)}% more throughput, ${pair}, beyond the runs' spread: flow control decides part of this result.`;
  if (gain > 1.1)
    return `Larger windows gave ${((gain - 1) * 100).toFixed(0)}% more throughput, ${pair}, but the intervals overlap: the direction of flow control, not yet a result.`;
  const connStalls = Math.round(most.h2.connectionStalls ?? 0);
  const why =
    connStalls === 0
      ? "while one stream waited for credit the others' data kept the connection busy"
      : `the connection's own window stalled too (${connStalls} times in "${most.window}"), so the stalls held every stream at once, and still the throughput did not fall`;
  return `The windows stalled the server (${pair}) without costing throughput (${gain >= 1 ? '+' : ''}${((gain - 1) * 100).toFixed(0)}%): ${why}, so flow control is not what limits one session here.`;
}

// --- row by row against the report ----------------------------------------------------------

/** The window preset that stands for the report's libraries' defaults (64 KiB), else the first. */
function reportWindow(windows: readonly WindowName[]): WindowName {
  return windows.includes('node') ? 'node' : windows[0]!;
}

/**
 * The mechanisms this run can show for one variant's ratio against HTTP/1.1, each with its numbers:
 * callers queueing in the client for a connection; the client's and the server's CPU per request and
 * their event loops (a loop busy in both runs bounds the throughput, which then follows its CPU per
 * request); for latency, Little's law (with the same requests always in flight, latency follows
 * throughput); the handshakes each run paid; and (1 MiB) what the window presets changed and the
 * congestion windows. Returns the sentences and whether they account for the ratio measured.
 */
function mechanisms(
  r: Row,
  metric: 'latency' | 'throughput',
  rows: readonly Row[],
  o: EchoOptions,
  machine: Machine,
  ev: Evidence,
): { text: string[]; accounts: boolean } {
  const text: string[] = [];
  const queue = queueMechanism(r, metric, o, ev);
  if (queue.text) text.push(queue.text);
  const cpu = cpuMechanism(r, machine, ev);
  text.push(...cpu.text);
  let accounts = queue.accounts;
  if (metric === 'throughput') accounts ||= cpu.accounts;
  else {
    const little = littleMechanism(r, ev, cpu.accounts);
    if (little.text) text.push(little.text);
    accounts ||= little.accounts;
  }
  const hs = handshakeMechanism(r, ev);
  if (hs) text.push(hs);
  if (r.body >= 64 * 1024) text.push(...windowMechanisms(r, rows, ev));
  return { text, accounts };
}

/** Callers waiting in the client for a connection: accounts for a latency gap it mostly covers. */
function queueMechanism(
  r: Row,
  metric: 'latency' | 'throughput',
  o: EchoOptions,
  ev: Evidence,
): { text?: string; accounts: boolean } {
  const h1conns =
    o.h1Connections === 'concurrency' ? r.concurrency : Math.min(o.h1Connections, r.concurrency);
  const q1 = r.h1.clientQueueMs;
  const q2 = r.h2.clientQueueMs;
  const l1 = r.h1.latencyP50Ms;
  const l2 = r.h2.latencyP50Ms;
  if (q1 === undefined || q2 === undefined || l1 === undefined || l2 === undefined)
    return { accounts: false };
  // The client queue accounts for a latency gap when removing it leaves at most half the gap.
  const gap = Math.abs(l1 - l2) > 0.1 * Math.max(l1, l2);
  const accounts = metric === 'latency' && gap && Math.abs(l1 - q1 - (l2 - q2)) <= 0.5 * Math.abs(l1 - l2);
  return {
    text: `callers waited in the client ${ev.ms('h1QueueMs', q1)} for one of HTTP/1.1's ${ev.n('h1Connections', h1conns)} connections and ${ev.ms('h2QueueMs', q2)} for HTTP/2 (median latencies ${ev.ms('h1LatencyMs', l1)} and ${ev.ms('h2LatencyMs', l2)})`,
    accounts,
  };
}

/** A loop is the bottleneck when it was at least this busy in both runs. */
const BUSY_LOOP = 0.8;

/** The machine the comparisons ran on: its cores and its lowest 1-minute load average around them. */
export interface Machine {
  cpus: number;
  loadAverage: number;
}

/**
 * The machine's cores were the limit: its load average at least its cores all along (every runnable
 * thread waited for one), or the process (client and fixture threads) kept 80% of the cores it can
 * use (two threads: at most two) busy in both runs.
 */
function machineBusy(m: Machine, cores: ReadonlyArray<number | undefined>): boolean {
  return m.loadAverage >= m.cpus || cores.every((u) => u !== undefined && u >= 0.8 * Math.min(m.cpus, 2));
}

/**
 * The client's and the server's CPU per request, told apart, and their event loops. A loop busy in
 * both runs bounds the throughput: the ratio then follows that side's CPU per request (within 20%).
 * Without the server's own figures (an older run), the process's CPU as before: CPU-bound when the
 * process kept a core busy in both runs.
 */
function cpuMechanism(r: Row, m: Machine, ev: Evidence): { text: string[]; accounts: boolean } {
  const tr = throughputRatio(r);
  const [a, b] = [r.h1, r.h2];
  if (
    a.serverCpuMsPerRequest === undefined ||
    b.serverCpuMsPerRequest === undefined ||
    a.clientCpuMsPerRequest === undefined ||
    b.clientCpuMsPerRequest === undefined
  )
    return processCpuMechanism(r, ev);
  const text = [
    `per request over the whole run (warm-up and handshakes included) h2lab's client used ${ev.n('h1ClientCpuUs', a.clientCpuMsPerRequest * 1000)} µs of CPU over HTTP/1.1 and ${ev.n('h2ClientCpuUs', b.clientCpuMsPerRequest * 1000)} µs over HTTP/2, the fixture server's thread ${ev.n('h1ServerCpuUs', a.serverCpuMsPerRequest * 1000)} µs and ${ev.n('h2ServerCpuUs', b.serverCpuMsPerRequest * 1000)} µs; the server's event loop was busy ${ev.pct('h1ServerElu', a.serverElu ?? Number.NaN)} and ${ev.pct('h2ServerElu', b.serverElu ?? Number.NaN)} of the runs, the client's ${ev.pct('h1ClientElu', a.clientElu ?? Number.NaN)} and ${ev.pct('h2ClientElu', b.clientElu ?? Number.NaN)}`,
  ];
  const sides = [
    {
      key: 'server',
      label: "the server's event loop",
      busy: [a.serverElu, b.serverElu],
      cost: [a.serverCpuMsPerRequest, b.serverCpuMsPerRequest],
    },
    {
      key: 'client',
      label: "the client's event loop",
      busy: [a.clientElu, b.clientElu],
      cost: [a.clientCpuMsPerRequest, b.clientCpuMsPerRequest],
    },
  ];
  const busy = sides.filter((x) => x.busy.every((u) => u !== undefined && u >= BUSY_LOOP));
  if (tr === undefined) return { text, accounts: false };
  for (const x of busy) {
    const predicted = x.cost[0]! / x.cost[1]!;
    if (Math.abs(tr / predicted - 1) <= 0.2) {
      ev.set('bottleneck', x.key).set('busyLoop', BUSY_LOOP);
      text.push(
        `${x.label} was the bottleneck (at least ${ev.pct('busyLoop', BUSY_LOOP)} busy in both runs), so throughput follows CPU per request on its side: ${ev.x('cpuPredictedRatio', predicted)} predicted, ${ev.x('throughputRatio', tr)} measured`,
      );
      return { text, accounts: true };
    }
  }
  const machine = machineMechanism(r, m, tr, ev);
  if (machine.text) text.push(machine.text);
  if (machine.accounts) return { text, accounts: true };
  if (busy.length > 0) {
    const x = busy[0]!;
    text.push(
      `${x.label} was busy in both runs, yet its CPU per request predicts ${ev.x('busyPredictedRatio', x.cost[0]! / x.cost[1]!)} against ${ev.x('throughputRatio', tr)} measured`,
    );
  } else
    text.push(
      machine.text
        ? `neither event loop was ${ev.pct('busyLoop', BUSY_LOOP)} busy in both runs`
        : `neither event loop was ${ev.pct('busyLoop', BUSY_LOOP)} busy in both runs and the machine had cores to spare (1-minute load average ${ev.d2('loadAverage', m.loadAverage)} on ${ev.n('cpus', m.cpus)} cores, the process at ${ev.d2('h1Cores', r.h1.cpu ?? Number.NaN)} and ${ev.d2('h2Cores', r.h2.cpu ?? Number.NaN)} cores), so no side's CPU bounded the throughput`,
    );
  return { text, accounts: false };
}

/**
 * When the machine's cores were the limit, throughput = cores used ÷ CPU per request over the
 * measured period: with both sides using about the same cores (within 20%), the ratio follows the
 * process's (client + server) CPU per request (within 20%). On a busy machine whose process kept different cores busy on the two sides, CPU per request
 * alone does not give the ratio (throughput = cores ÷ CPU per request on each side).
 */
function machineMechanism(
  r: Row,
  m: Machine,
  tr: number,
  ev: Evidence,
): { text?: string; accounts: boolean } {
  const [a, b] = [r.h1, r.h2];
  if (!machineBusy(m, [a.cpu, b.cpu]) || a.cpu === undefined || b.cpu === undefined)
    return { accounts: false };
  // The process's CPU over the measured period (client and the fixture's thread): the period the
  // throughput is measured over, without the warm-up's handshakes that the per-side figures include.
  const t1 = a.cpuMsPerRequest ?? Number.NaN;
  const t2 = b.cpuMsPerRequest ?? Number.NaN;
  const predicted = t1 / t2;
  const sameCores = Math.abs(b.cpu / a.cpu - 1) <= 0.2;
  const load = `1-minute load average ${ev.d2('loadAverage', m.loadAverage)} on ${ev.n('cpus', m.cpus)} cores; the process kept ${ev.d2('h1Cores', a.cpu)} and ${ev.d2('h2Cores', b.cpu)} cores busy`;
  const costs = `client + server CPU per request in the measured period ${ev.n('h1TotalCpuUs', t1 * 1000)} µs against ${ev.n('h2TotalCpuUs', t2 * 1000)} µs`;
  if (sameCores && Number.isFinite(predicted) && Math.abs(tr / predicted - 1) <= 0.2) {
    ev.set('bottleneck', 'machine');
    return {
      text: `the machine's cores were the limit (${load}), so throughput follows CPU per request, ${costs}: ${ev.x('cpuPredictedRatio', predicted)} predicted, ${ev.x('throughputRatio', tr)} measured`,
      accounts: true,
    };
  }
  return {
    text: `the machine was busy (${load}), but ${costs} predict ${ev.x('machinePredictedRatio', predicted)} against ${ev.x('throughputRatio', tr)} measured${sameCores ? '' : ': the two sides did not keep the same cores busy, so CPU per request alone does not give the ratio'}`,
    accounts: false,
  };
}

/** The process's CPU (client and fixture together), for runs without the server's own figures. */
function processCpuMechanism(r: Row, ev: Evidence): { text: string[]; accounts: boolean } {
  const c1 = r.h1.cpuMsPerRequest;
  const c2 = r.h2.cpuMsPerRequest;
  const u1 = r.h1.cpu;
  const u2 = r.h2.cpu;
  if (c1 === undefined || c2 === undefined || u1 === undefined || u2 === undefined)
    return { text: [], accounts: false };
  const text = [
    `the process (h2lab's client and the fixture in one process) used ${ev.d2('h1Cores', u1)} and ${ev.d2('h2Cores', u2)} of a core, ${ev.ms('h1CpuMsPerRequest', c1)} and ${ev.ms('h2CpuMsPerRequest', c2)} of CPU a request`,
  ];
  const tr = throughputRatio(r);
  if (Math.min(u1, u2) >= 0.8 && tr !== undefined && Math.abs(tr / (c1 / c2) - 1) <= 0.2) {
    text.push(
      `CPU-bound, so throughput follows CPU per request: ${ev.x('cpuPredictedRatio', c1 / c2)} predicted, ${ev.x('throughputRatio', tr)} measured`,
    );
    return { text, accounts: true };
  }
  return { text, accounts: false };
}

/** How close the means (and medians) must come to Little's law's prediction. */
const LITTLE_TOLERANCE = 0.2;

/**
 * Little's law: with the same number of requests always in flight on both sides (a closed loop),
 * mean latency is that number ÷ throughput, so latency h1/h2 follows throughput h2/h1. It accounts for
 * the latency ratio when the means follow it (within 20%, the same side of 1) and the medians too and the throughput ratio is itself
 * accounted for.
 */
function littleMechanism(
  r: Row,
  ev: Evidence,
  throughputAccounted: boolean,
): { text?: string; accounts: boolean } {
  const tr = throughputRatio(r);
  const lr = latencyRatio(r);
  const m1 = r.h1.latencyMeanMs;
  const m2 = r.h2.latencyMeanMs;
  if (tr === undefined || lr === undefined || m1 === undefined || m2 === undefined)
    return { accounts: false };
  // Little's law ties the means; the finding's ratio is of medians, so both must follow it.
  const meansFollow = accounts(tr, m1 / m2, { tolerance: LITTLE_TOLERANCE, ratio: true });
  const mediansFollow = accounts(tr, lr, { tolerance: LITTLE_TOLERANCE, ratio: true });
  const head = `with ${ev.n('inFlight', r.concurrency)} requests always in flight, mean latency is that number ÷ throughput (Little's law): the throughput ratio predicts ${ev.x('littlePredicted', tr)} for latency h1/h2, the means gave ${ev.x('meanLatencyRatio', m1 / m2)} and the medians ${ev.x('medianLatencyRatio', lr)}`;
  if (!meansFollow || !mediansFollow)
    return {
      text: `${head}: ${
        meansFollow
          ? 'the means follow throughput and the medians do not, so the two latency distributions differ in shape'
          : `the means do not follow within ${ev.pct('littleTolerance', LITTLE_TOLERANCE)}, so Little’s law does not tie these latencies to throughput here`
      }`,
      accounts: false,
    };
  return {
    text: `${head}: latency follows throughput${throughputAccounted ? '' : ', whose own ratio this run does not account for'}`,
    accounts: throughputAccounted,
  };
}

/** Connections each run opened and their mTLS handshakes, when the two sides opened different numbers. */
function handshakeMechanism(r: Row, ev: Evidence): string | undefined {
  const o1 = r.h1.opened;
  const o2 = r.h2.opened;
  if (o1 === undefined || o2 === undefined || o1 === o2) return undefined;
  const t = (x: number | undefined, k: string) =>
    x === undefined ? '' : ` (handshake median ${ev.ms(k, x)})`;
  return `each run opened ${ev.n('h1Opened', o1)} mTLS connection(s) for HTTP/1.1${t(r.h1.tlsP50Ms, 'h1TlsMs')} and ${ev.n('h2Opened', o2)} for HTTP/2${t(r.h2.tlsP50Ms, 'h2TlsMs')} before its measured period; their CPU is in the whole-run figures, not in the measured period's`;
}

/** 1 MiB: what the window presets changed for this variant, and the server's congestion windows. */
function windowMechanisms(r: Row, rows: readonly Row[], ev: Evidence): string[] {
  const text: string[] = [];
  const at = (w: WindowName) =>
    rows.find(
      (x) =>
        x.body === r.body && x.variant === r.variant && x.window === w && x.concurrency === r.concurrency,
    );
  const node = at('node');
  const max = at('max');
  const rn = node && throughputRatio(node);
  const rm = max && throughputRatio(max);
  if (rn !== undefined && rm !== undefined) {
    const same = Math.abs(rm / rn - 1) <= 0.1;
    text.push(
      `the largest windows (max, ${ev.pct('maxStalled', max!.h2.stalledShare ?? Number.NaN)} of session time stalled) gave ${ev.x('maxRatio', rm)} against ${ev.x('nodeRatio', rn)} with node's ${ev.n('nodeWindowKiB', resolveWindow('node').streamWindowBytes / 1024)} KiB windows (${ev.pct('nodeStalled', node!.h2.stalledShare ?? Number.NaN)} stalled): ${same ? 'flow control did not decide this result' : rm > rn ? 'flow control decides part of it' : 'larger windows did worse, which flow control does not explain'}`,
    );
  }
  if (r.h1.cwndBytes !== undefined && r.h2.cwndBytes !== undefined)
    text.push(
      `the server's congestion windows summed ${ev.n('h1CwndKiB', r.h1.cwndBytes / 1024)} KiB over HTTP/1.1's connections against ${ev.n('h2CwndKiB', r.h2.cwndBytes / 1024)} KiB over HTTP/2's at the runs' end`,
    );
  return text;
}

/**
 * One finding per row of the report's conclusions 5 and 6: each variant's latency and throughput, from
 * the rows of a run (exported for the tests that feed it rows of other machines).
 */
export function echoFindings(
  rows: readonly Row[],
  o: EchoOptions,
  top: number,
  machine: Machine,
): StudyFinding[] {
  const out: StudyFinding[] = [];
  const w = reportWindow(o.windows);
  for (const body of o.bodies) {
    const large = body >= 64 * 1024;
    const ref = large ? REPORT.large : REPORT.small;
    for (const rr of ref) {
      const v = rr.variant as Variant;
      const r = rows.find(
        (x) => x.body === body && x.window === w && x.variant === v && x.concurrency === top,
      );
      for (const metric of ['latency', 'throughput'] as const) {
        const ev = new Evidence();
        ev.set('bodyBytes', body).set('window', w).set('concurrency', top);
        const refValue = metric === 'latency' ? rr.latency : rr.throughput;
        const value = r && (metric === 'latency' ? latencyRatio(r) : throughputRatio(r));
        const what = metric === 'latency' ? 'latency h1/h2' : 'throughput h2/h1';
        const row = `${large ? '1 MB' : '1 KB'} bodies, ${VARIANT_LABEL[v]}: ${what}`;
        const common = {
          id: `${large ? 'large' : 'small'}-${v}-${metric}`,
          section: `summary-${body}`,
          row,
          report: ev.x('reportRatio', refValue),
          ev,
        };
        if (!r || value === undefined) {
          out.push(notMeasured(common, 'not measured: the comparison did not finish'));
          continue;
        }
        const m = mechanisms(r, metric, rows, o, machine, ev);
        const direction =
          Math.abs(refValue - 1) < 0.05
            ? 'the report saw no difference'
            : value >= 1 === refValue >= 1
              ? 'the same direction as the report'
              : 'the opposite direction to the report';
        out.push(
          makeFinding({
            ...common,
            measured: `${ev.x('ratio', value)} (windows ${w}, ${top} in flight; ${direction})`,
            reference: refValue,
            value,
            tolerance: 0.2,
            ratio: true,
            explain: () => (m.accounts ? `${capital(m.text.join('; '))}.` : undefined),
            unexplained: `${m.text.join('; ') || 'this run measured nothing that bears on it'} — none of which accounts for the ${ev.x('ratio', value)}`,
          }),
        );
      }
    }
  }
  return out;
}

/** The report's rows this run does not measure, each with its reason in one line. */
export function echoUnmeasured(o: EchoOptions, top: number): StudyFinding[] {
  const ev = new Evidence();
  const h1 = o.h1Connections === 'concurrency' ? top : Math.min(o.h1Connections, top);
  const factors = notMeasured(
    {
      id: 'report-factors',
      row: '1 KB bodies: HTTP/2 6.8× lower latency, 12.7× (one session) and 22.9× (independent clients) the throughput',
      report: `${ev.x('reportOne', 12.7)} and ${ev.x('reportIndependent', 22.9)} the throughput`,
      ev,
    },
    `not reproduced as a controlled cell, because the report's HTTP/1.1 pool size and concurrency are not recorded: the rows above run the likeliest cause, ${ev.n('h1Connections', h1)} HTTP/1.1 connections (Apache HttpClient 5's default per route) for ${ev.n('inFlight', top)} callers, and show what remains of it here`,
    'the report did not record the client settings that would make its factors a cell to rerun',
  );
  const bev = new Evidence();
  const browser = notMeasured(
    {
      id: 'lifetime-browser',
      row: 'Browsers close idle connections after about a minute',
      report: `idle connections closed after about ${bev.n('reportIdleMinutes', 1)} minute`,
      ev: bev,
    },
    'not measured here, because this study drives no browser (the tiles study does, in bursts that never leave a connection idle for a minute)',
    'no browser idles a connection in this study',
  );
  return [factors, browser];
}

/** The report's conclusions 2 and 4 (who can bound a session's life) and its curl -v ALPN lines. */
function lifetimeFindings(
  cases: readonly LifetimeCase[],
  hs: readonly HandshakeCase[] | undefined,
  o: EchoOptions,
): StudyFinding[] {
  const out: StudyFinding[] = [];
  const server = cases.find((c) => c.id === 'server-idle');
  if (server) {
    const ev = new Evidence();
    const g = server.lives.filter((l) => l.closedBy === 'goaway' && l.goawayMs !== undefined);
    const idle = g.length ? medianInterpolated(g.map((l) => l.goawayMs! - l.lastActiveMs)) : Number.NaN;
    out.push(
      makeFinding({
        id: 'lifetime-server',
        section: 'lifetime',
        row: 'The server can bound an HTTP/2 connection’s life (Tomcat Http2Protocol keepAliveTimeout)',
        report: 'the only bound the report found',
        measured: g.length
          ? `the server's idle timeout ended ${ev.n('goaways', g.length)} session(s) with GOAWAY a median ${ev.ms('idleMs', idle)} after the last response (server --h2-idle-timeout ${ev.ms('serverIdleMs', o.serverIdleMs)})`
          : `no session was ended by the server's idle timeout (${ev.ms('serverIdleMs', o.serverIdleMs)})`,
        verdict: g.length ? 'agrees' : 'differs',
        explain: () =>
          g.length
            ? 'A server’s idle timeout closes an idle HTTP/2 session with GOAWAY whatever the client does, as the report found'
            : undefined,
        unexplained: 'no GOAWAY arrived within the idle case',
        ev,
      }),
    );
  }
  const idleCase = cases.find((c) => c.id === 'client-idle');
  const ageCase = cases.find((c) => c.id === 'client-max-age');
  if (idleCase || ageCase) {
    const ev = new Evidence();
    const idleClosed = (idleCase?.lives ?? []).filter((l) => l.closedBy === 'idle-timeout').length;
    const aged = (ageCase?.lives ?? []).filter((l) => l.closedBy === 'max-age').length;
    out.push(
      makeFinding({
        id: 'lifetime-client',
        section: 'lifetime',
        row: 'The client cannot bound a session’s life (no idle timeout or TTL in Apache HttpClient 5)',
        report: 'no client-side control found; only closing the client instance closed its connection',
        measured: `h2lab's client closed ${ev.n('idleClosed', idleClosed)} idle session(s) itself (--idle-timeout) and retired ${ev.n('aged', aged)} by age under load (--max-age)`,
        verdict: idleClosed + aged > 0 ? 'differs' : 'agrees',
        explain: () =>
          idleClosed + aged > 0
            ? 'Nothing in HTTP/2 stops a client from closing its own sessions: the limit the report met was its client library’s, not the protocol’s'
            : undefined,
        unexplained: 'h2lab’s client controls closed no session in this run',
        ev,
      }),
    );
  }
  if (hs) {
    const ev = new Evidence();
    const h1 = hs.find((h) => h.offered === 'http/1.1' && h.certificate);
    const h2 = hs.find((h) => h.offered.includes('h2') && h.certificate);
    const noCert = hs.find((h) => !h.certificate);
    const ok = h1?.negotiated === 'http/1.1' && h2?.negotiated === 'h2' && noCert?.ok === 0;
    out.push(
      makeFinding({
        id: 'mtls-alpn',
        section: 'mtls',
        row: 'curl -v: “server did not agree to a protocol” (HTTP/1.1 endpoint), “server accepted to use h2” (HTTP/2 endpoint), both behind mTLS',
        report: 'two endpoints, one offering only HTTP/1.1, one h2, client certificates required',
        measured: `HTTP/1.1 client: ${h1?.negotiated ?? 'not measured'}; HTTP/2 client: ${h2?.negotiated ?? 'not measured'}; without a client certificate: ${noCert?.outcome ?? 'not measured'}`,
        verdict: ok ? 'agrees' : 'differs',
        explain: () =>
          ok
            ? `ALPN (RFC ${ev.n('rfc', 7301)}) gives each client the protocol it offered that the server accepts, after the client certificate is verified; one listener here serves both, where the report ran two endpoints`
            : undefined,
        unexplained: 'the handshakes did not come out as the report’s',
        ev,
      }),
    );
  }
  return out;
}

const capital = (t: string) => t.charAt(0).toUpperCase() + t.slice(1);

/** The echo findings checked against the result's own rows and tables. */
export function verifyEcho(r: StudyResult): string[] {
  const problems: string[] = [];
  for (const f of r.findings) {
    const nodeR = evidenceNumber(f, 'nodeRatio');
    const maxR = evidenceNumber(f, 'maxRatio');
    if (nodeR !== undefined && maxR !== undefined) {
      const same = Math.abs(maxR / nodeR - 1) <= 0.1;
      if (same && /flow control decides/.test(f.explanation))
        problems.push(`${f.id}: flow control named although the largest windows gave the same ratio`);
      if (!same && /flow control did not decide/.test(f.explanation))
        problems.push(`${f.id}: flow control ruled out although the windows changed the ratio`);
    }
    if (/follows CPU per request/.test(f.explanation)) {
      const p = evidenceNumber(f, 'cpuPredictedRatio');
      const m = evidenceNumber(f, 'throughputRatio');
      if (p === undefined || m === undefined || Math.abs(m / p - 1) > 0.2)
        problems.push(`${f.id}: CPU named, but CPU per request predicts ${p} against ${m}`);
    }
    problems.push(...verifyLoopAndLittle(f, r.findings));
    const section = r.sections.find((s) => s.id === f.section);
    const ratio = evidenceNumber(f, 'ratio');
    if (section && ratio !== undefined) {
      const v = (Object.keys(VARIANT_LABEL) as Variant[]).find((k) => f.row.includes(VARIANT_LABEL[k]));
      const row = section.table.rows.find((x) => x.variant === (v && VARIANT_LABEL[v]));
      const key = `${f.id.endsWith('latency') ? 'lat' : 'thr'}-${String(f.evidence.window)}`;
      const cell = row?.[key];
      if (typeof cell === 'number' && Math.abs(cell - ratio) > 0.006)
        problems.push(`${f.id}: ratio ${ratio} is not the table's ${cell}`);
    }
  }
  // The paragraphs too: flow control named for a body whose unstalled preset did no better.
  const rows = (r.data.rows ?? []) as Row[];
  for (const body of new Set(rows.map((x) => x.body))) {
    const top = Math.max(...rows.filter((x) => x.body === body).map((x) => x.concurrency));
    const one = rows.filter(
      (x) => x.body === body && x.variant === 'one' && x.concurrency === top && x.throughput,
    );
    if (one.length < 2) continue;
    const stalled = (x: Row) => x.h2.stalledShare ?? 0;
    const most = one.reduce((a, b) => (stalled(b) > stalled(a) ? b : a));
    const same = one.some(
      (x) =>
        x !== most && stalled(x) <= 0.05 && Math.abs(throughputRatio(x)! / throughputRatio(most)! - 1) <= 0.1,
    );
    const paragraph = r.explanation.find((p) => p.startsWith(`${bodyLabel(body)} bodies`));
    if (same && paragraph && /flow control decides|the direction of flow control/.test(paragraph))
      problems.push(
        `${bodyLabel(body)}: flow control named although an unstalled preset gave the same ratio`,
      );
    if (paragraph) problems.push(...verifyBodyParagraph(body, paragraph, one, rows));
  }
  const life = r.sections.find((s) => s.id === 'lifetime');
  for (const row of life?.table.rows ?? [])
    if (
      typeof row.opened === 'number' &&
      typeof row.last === 'number' &&
      row.requests !== 0 &&
      row.opened > row.last
    )
      problems.push(
        `lifetime ${String(row.case)} #${String(row.id)}: opened ${row.opened} ms after its last response ${row.last} ms`,
      );
  return problems;
}

/**
 * A body's paragraph against its rows: it headlines the findings' window preset; "that queue is the
 * latency HTTP/2's streams avoid" only where one session's latency was lower by its interval; "the
 * others' data kept the connection busy" only where the connection's window never stalled.
 */
function verifyBodyParagraph(
  body: number,
  paragraph: string,
  one: readonly Row[],
  rows: readonly Row[],
): string[] {
  const problems: string[] = [];
  const label = bodyLabel(body);
  const windows = [...new Set(rows.map((x) => x.window))];
  const w = reportWindow(windows);
  const said = paragraph.match(/\(windows "(\w+)"\)/)?.[1];
  if (said && said !== w)
    problems.push(`${label}: the paragraph headlines windows "${said}", the findings "${w}"`);
  const head = one.find((x) => x.window === (said ?? w));
  if (/that queue is the latency HTTP\/2's streams avoid/.test(paragraph) && head?.latency) {
    const i = head.latency.interval;
    if (direction(i) !== 'below')
      problems.push(
        `${label}: "that queue is the latency HTTP/2's streams avoid", but HTTP/2's latency ratio was ${i.ratio.toFixed(2)} (${i.lo.toFixed(2)}–${i.hi.toFixed(2)})`,
      );
  }
  if (/others' data kept the connection busy/.test(paragraph)) {
    const stalls = Math.max(...one.map((x) => x.h2.connectionStalls ?? 0));
    if (stalls > 0)
      problems.push(
        `${label}: "the others' data kept the connection busy", with ${Math.round(stalls)} connection-window stalls`,
      );
  }
  return problems;
}

/**
 * A finding that names a bottleneck loop must show it busy in both runs; one that says latency
 * follows throughput (Little's law) must show the medians within 20% of the throughput ratio, and
 * when it calls that an explanation, the same variant's throughput row must be explained too.
 */
function verifyLoopAndLittle(f: StudyFinding, all: readonly StudyFinding[]): string[] {
  const problems: string[] = [];
  const side = f.evidence.bottleneck;
  if (/was the bottleneck/.test(f.explanation)) {
    const key = side === 'server' ? 'ServerElu' : 'ClientElu';
    const floor = evidenceNumber(f, 'busyLoop') ?? 1;
    const busy = [evidenceNumber(f, `h1${key}`), evidenceNumber(f, `h2${key}`)];
    if (typeof side !== 'string' || busy.some((u) => u === undefined || u < floor))
      problems.push(
        `${f.id}: the ${String(side)} loop named the bottleneck, but it was busy ${busy.join(' and ')}`,
      );
  }
  if (/cores were the limit, so throughput follows/.test(f.explanation)) {
    const m = { cpus: evidenceNumber(f, 'cpus') ?? 0, loadAverage: evidenceNumber(f, 'loadAverage') ?? 0 };
    const cores = [evidenceNumber(f, 'h1Cores'), evidenceNumber(f, 'h2Cores')];
    const same = cores[0] !== undefined && cores[1] !== undefined && Math.abs(cores[1] / cores[0] - 1) <= 0.2;
    if (m.cpus <= 0 || !machineBusy(m, cores) || !same)
      problems.push(
        `${f.id}: the machine's cores named the limit, but load ${m.loadAverage} on ${m.cpus} cores and the process at ${cores.join(' and ')}`,
      );
  }
  if (/latency follows throughput/.test(f.explanation)) {
    const p = evidenceNumber(f, 'littlePredicted');
    const m = evidenceNumber(f, 'medianLatencyRatio');
    const mean = evidenceNumber(f, 'meanLatencyRatio');
    for (const x of [m, mean])
      if (p === undefined || x === undefined || !accounts(p, x, { tolerance: LITTLE_TOLERANCE, ratio: true }))
        problems.push(`${f.id}: latency said to follow throughput, but ${x} against ${p}`);
    const sibling = all.find((x) => x.id === f.id.replace(/-latency$/, '-throughput'));
    if (f.explained && !/whose own ratio/.test(f.explanation) && sibling && !sibling.explained)
      problems.push(`${f.id}: explained through a throughput ratio its own row leaves unexplained`);
  }
  return problems;
}

/** One connection lifetime case: a run, and the lives of its sessions. */
interface LifetimeCase {
  id: string;
  /** The case in a few words, for the table. */
  label: string;
  configured: string;
  run?: RunResult;
  lives: ConnectionLifetime[];
}

function lifetimeSection(cases: LifetimeCase[]): StudySection {
  return {
    id: 'lifetime',
    title: 'Connection lifetime at both ends (HTTP/2 over mTLS, timestamps on the run clock)',
    note: "Each row is one session (#) of one run: when it was ready, when its last response ended, when the server's GOAWAY arrived, when it closed (ms since the run began), and who ended it. idle = GOAWAY (else close) − last response; age = close − opened. server idle: one request every 2× the longer timeout, the server's --h2-idle-timeout on; client idle: the same with the client's --idle-timeout, shorter than the server's; max age: 4 requests in flight without a pause, the client's --max-age on.",
    table: {
      columns: [
        { key: 'case', label: 'case' },
        { key: 'id', label: '#' },
        { key: 'opened', label: 'opened', unit: 'ms' },
        { key: 'last', label: 'last', unit: 'ms' },
        { key: 'goaway', label: 'GOAWAY', unit: 'ms' },
        { key: 'closed', label: 'closed', unit: 'ms' },
        { key: 'idle', label: 'idle', unit: 'ms' },
        { key: 'age', label: 'age', unit: 'ms' },
        { key: 'requests', label: 'req.' },
        { key: 'by', label: 'ended by' },
      ],
      rows: cases.flatMap((c) =>
        c.lives.map((l) => ({
          case: c.label,
          id: l.id,
          opened: r0(l.openedMs),
          last: r0(l.lastActiveMs),
          goaway: l.goawayMs !== undefined ? r0(l.goawayMs) : null,
          closed: r0(l.closedMs),
          idle: r0((l.goawayMs ?? l.closedMs) - l.lastActiveMs),
          age: r0(l.closedMs - l.openedMs),
          requests: l.requests,
          by: l.closedBy,
        })),
      ),
    },
    reference: {
      source: 'report 003, conclusions 2 and 4',
      table: {
        columns: [
          { key: 'control', label: 'control' },
          { key: 'report', label: 'what the report found' },
        ],
        rows: [
          {
            control: 'server idle timeout',
            report: 'the only bound (Tomcat Http2Protocol keepAliveTimeout)',
          },
          {
            control: 'client idle timeout / max age',
            report: 'none in Apache HttpClient 5: a session lives until the client closes',
          },
          { control: 'browser', report: 'idle connections closed after about 1 minute' },
        ],
      },
    },
  };
}

function explainLifetime(cases: LifetimeCase[]): string {
  const parts: string[] = [];
  const byId = (id: string) => cases.find((c) => c.id === id);
  const server = byId('server-idle');
  const goaways = (server?.lives ?? []).filter((l) => l.closedBy === 'goaway' && l.goawayMs !== undefined);
  if (server && goaways.length > 0) {
    const idle = medianInterpolated(goaways.map((l) => l.goawayMs! - l.lastActiveMs));
    parts.push(
      `The server ended ${goaways.length} idle session${goaways.length > 1 ? 's' : ''} with GOAWAY(${goaways[0]!.goawayCode ?? '?'}) a median ${idle.toFixed(0)} ms after the last response (${server.configured}); ${server.run ? `the client needed ${server.lives.length} sessions for ${server.run.counts.ok} requests.` : ''}`,
    );
  } else if (server) {
    parts.push(
      `No session was ended by the server's idle timeout (${server.configured}): ${server.lives.map((l) => l.closedBy).join(', ') || 'no session closed'}.`,
    );
  }
  const idleCase = byId('client-idle');
  const retiredIdle = (idleCase?.lives ?? []).filter((l) => l.closedBy === 'idle-timeout');
  if (idleCase) {
    parts.push(
      retiredIdle.length > 0
        ? `The client's --idle-timeout (${idleCase.configured}) closed ${retiredIdle.length} session${retiredIdle.length > 1 ? 's' : ''} itself, a median ${medianInterpolated(retiredIdle.map((l) => l.closedMs - l.lastActiveMs)).toFixed(0)} ms after its last response and before the server's timeout: the control the report could not find in its client library.`
        : `The client's --idle-timeout (${idleCase.configured}) closed no session: ${idleCase.lives.map((l) => l.closedBy).join(', ') || 'none closed'}.`,
    );
  }
  const ageCase = byId('client-max-age');
  const retiredOld = (ageCase?.lives ?? []).filter((l) => l.closedBy === 'max-age');
  if (ageCase?.run) {
    const failed = ageCase.run.counts.failed;
    parts.push(
      retiredOld.length > 0
        ? `Under steady load, --max-age (${ageCase.configured}) retired ${retiredOld.length} session${retiredOld.length > 1 ? 's' : ''} at a median age of ${medianInterpolated(retiredOld.map((l) => l.closedMs - l.openedMs)).toFixed(0)} ms, each drained before it closed, with ${failed} of ${ageCase.run.counts.total} requests failed.`
        : `Under steady load --max-age (${ageCase.configured}) retired no session (${ageCase.run.counts.total} requests).`,
    );
  }
  return parts.join(' ');
}

/** The mTLS and ALPN facts: what each client negotiated, and that a client without a certificate is refused. */
interface HandshakeCase {
  client: string;
  certificate: boolean;
  offered: string;
  negotiated: string;
  ok: number;
  outcome: string;
}

function handshakeSection(rows: HandshakeCase[]): StudySection {
  return {
    id: 'mtls',
    title: 'mTLS and ALPN: what each client got from the echo server',
    note: 'One POST /echo per client against the fixture with client certificates required.',
    table: {
      columns: [
        { key: 'client', label: 'client' },
        { key: 'cert', label: 'client cert' },
        { key: 'offered', label: 'ALPN offered' },
        { key: 'negotiated', label: 'negotiated' },
        { key: 'ok', label: 'responses' },
        { key: 'outcome', label: 'outcome' },
      ],
      rows: rows.map((r) => ({
        client: r.client,
        cert: r.certificate ? 'yes' : 'no',
        offered: r.offered,
        negotiated: r.negotiated,
        ok: r.ok,
        outcome: r.outcome,
      })),
    },
    reference: {
      source: 'report 003, `curl -v` against its two endpoints',
      table: {
        columns: [
          { key: 'endpoint', label: 'endpoint' },
          { key: 'curl', label: 'curl -v said' },
        ],
        rows: [
          { endpoint: 'HTTP/1.1 (port 8443)', curl: 'ALPN, server did not agree to a protocol' },
          { endpoint: 'HTTP/2 (port 9443)', curl: 'ALPN, server accepted to use h2' },
        ],
      },
    },
  };
}

async function handshakes(target: FixtureTarget, certs: CertFiles): Promise<HandshakeCase[]> {
  const s = roles();
  const cases: Array<{ strategy: TransportStrategy; cert: boolean }> = [
    { strategy: s.h1, cert: true },
    { strategy: s.one, cert: true },
    { strategy: s.one, cert: false },
  ];
  const out: HandshakeCase[] = [];
  for (const c of cases) {
    const r = await runLoad({
      url: `${target.tlsUrl}/echo`,
      protocol: c.strategy.name,
      method: 'POST',
      bodySizeBytes: 64,
      requests: 2,
      concurrency: 1,
      ca: certs.caFile,
      ...(c.cert ? { cert: certs.certFile, key: certs.keyFile } : {}),
      timeoutMs: 5000,
      connectTimeoutMs: 5000,
    }).done;
    const failures = Object.entries(r.counts.byFailure ?? {})
      .filter(([, n]) => (n as number) > 0)
      .map(([k, n]) => `${k} ×${n}`);
    out.push({
      client: `${c.strategy.name} (${c.strategy.summary})`,
      certificate: c.cert,
      offered: c.strategy.requests.tls,
      negotiated: r.protocol.negotiated,
      ok: r.counts.ok,
      outcome: r.error
        ? `refused: ${r.error.code}`
        : r.counts.ok > 0
          ? 'answered'
          : `no response (${failures.join(', ') || 'nothing sent'})`,
    });
  }
  return out;
}

async function lifetimes(ctx: StudyContext, certs: CertFiles, o: EchoOptions): Promise<LifetimeCase[]> {
  const s = roles();
  const target = await startFixtureTarget(
    fixtureFor(certs, 'browser', { h2IdleTimeoutMs: o.serverIdleMs }),
    'thread',
  );
  const cases: LifetimeCase[] = [];
  const base: LoadOptionsInput = {
    url: `${target.tlsUrl}/echo`,
    protocol: s.one.name,
    method: 'POST',
    bodySizeBytes: 1024,
    headers: apiHeaders(o.headerBytes),
    ca: certs.caFile,
    cert: certs.certFile,
    key: certs.keyFile,
  };
  // Three requests a gap apart, the gap twice the longer idle timeout: each session goes idle.
  const gapMs = 2 * Math.max(o.serverIdleMs, o.clientIdleMs);
  const sparse = { rateRps: 1000 / gapMs, durationMs: 2 * gapMs + 1 };
  const run = async (id: string, label: string, configured: string, opts: LoadOptionsInput) => {
    const r = await ctx.cell(
      `lifetime-${id}`,
      async () => {
        const res = await runLoad({ ...base, ...opts }).done;
        if (res.error) throw new Error(`${res.error.code}: ${res.error.message}`);
        return res;
      },
      { weight: 4 },
    );
    cases.push({
      id,
      label,
      configured,
      ...(r ? { run: r } : {}),
      lives: r?.connections.lifetimes?.connections ?? [],
    });
  };
  try {
    const sIdle = `server --h2-idle-timeout ${o.serverIdleMs} ms`;
    await run('server-idle', `server idle ${o.serverIdleMs} ms`, sIdle, sparse);
    await run(
      'client-idle',
      `client idle ${o.clientIdleMs} ms`,
      `--idle-timeout ${o.clientIdleMs} ms, ${sIdle}`,
      {
        ...sparse,
        idleTimeoutMs: o.clientIdleMs,
      },
    );
    await run('client-max-age', `max age ${o.maxAgeMs} ms`, `--max-age ${o.maxAgeMs} ms, 4 in flight`, {
      concurrency: 4,
      durationMs: 4 * o.maxAgeMs,
      maxAgeMs: o.maxAgeMs,
    });
  } finally {
    await target.close();
  }
  return cases;
}

/**
 * The findings and paragraphs of a saved run from its rows (data.rows keeps each row's comparisons):
 * the comparisons' findings and paragraphs as this code words them; the lifetime and mTLS findings
 * and the lifetime paragraph as saved, since the rows do not carry their runs.
 */
function rederiveEcho(r: StudyResult): Rederived | undefined {
  const rows = r.data.rows as Row[] | undefined;
  const machine = r.data.machine as
    | { cpus: number; loadAverage1m: { before: number; after: number } }
    | undefined;
  if (!rows?.length || !machine) return undefined;
  const o = resolve(r.options as Partial<EchoOptions>, r.mode === 'quick');
  const top = Math.max(...o.concurrency);
  const bodies = o.bodies.filter((b) => rows.some((x) => x.body === b));
  const m = {
    cpus: machine.cpus,
    loadAverage: Math.min(machine.loadAverage1m.before, machine.loadAverage1m.after),
  };
  const fresh = [...echoFindings(rows, o, top, m), ...echoUnmeasured(o, top)];
  const ids = new Set(fresh.map((f) => f.id));
  const paragraphs = [
    assumptions(o, top),
    ...bodies.map((b) =>
      explainBody(
        b,
        rows.filter((x) => x.body === b),
        o.windows,
        top,
        o,
      ),
    ),
  ];
  return {
    findings: [...fresh, ...r.findings.filter((f) => !ids.has(f.id))],
    explanation: [...paragraphs, ...r.explanation.slice(paragraphs.length)],
  };
}

export const echoStudy = defineStudy<EchoOptions>({
  ...ECHO_STUDY,
  verify: verifyEcho,
  rederive: rederiveEcho,
  quickLimits: (o) => quickCaveat(o.runs - 1, o.runs),
  resolve,
  check(o) {
    if (o.rttMs !== undefined) checkNetAvailable('relay');
    if (o.clientIdleMs >= o.serverIdleMs)
      throw invalidOption(
        '--idle-timeout',
        `${o.clientIdleMs}ms`,
        `use less than --server-idle-timeout (${o.serverIdleMs} ms), or the server closes the session first and the client's timeout is never seen`,
      );
  },
  async run(ctx) {
    const o = ctx.options;
    const loadBefore = os.loadavg()[0]!;
    const s = roles();
    const headers = apiHeaders(o.headerBytes);
    const certs = await makeCertificates(ctx.tmpDir);
    const perComparison = (n: number) => n * o.concurrency.length * o.runs;
    ctx.plan(2 + o.windows.length * o.bodies.length * (perComparison(3) + perComparison(2)) + 3 * 4);
    ctx.setData('settings', {
      headers,
      headerWireBytes: headerWireBytes(headers),
      h1Connections: o.h1Connections,
      sharedPool: { sessions: o.h2Sessions, policy: 'lease', streamsPerSession: 1 },
      independentPool: {
        sessions: 'concurrency (capped per cell)',
        policy: 'least-busy',
        openedBeforeRun: true,
      },
      clientAuth: 'require',
      ...(o.rttMs !== undefined ? { rttMs: o.rttMs } : { link: 'loopback' }),
    });
    ctx.log(
      `mTLS: a CA, a server and a client certificate generated; ${headerWireBytes(headers)} B of extra headers per request`,
    );

    ctx.explain(assumptions(o, Math.max(...o.concurrency)));
    const rows: Row[] = [];
    let handshakeDone = false;
    let handshakeData: HandshakeCase[] | undefined;
    for (const window of o.windows) {
      const fixture = fixtureFor(certs, window);
      const target = await startFixtureTarget(fixture, 'thread');
      try {
        if (!handshakeDone) {
          handshakeDone = true;
          const hs = await ctx.cell('mtls', () => handshakes(target, certs), { weight: 2 });
          if (hs) {
            handshakeData = hs;
            ctx.section(handshakeSection(hs));
            ctx.setData('mtls', hs);
          }
        }
        for (const body of o.bodies) {
          const workload: WorkloadInput = {
            id: `echo-${body}`,
            label: `echo ${bodyLabel(body)}`,
            paths: ['/echo'],
            method: 'POST',
            bodySizeBytes: body,
            responseSizeBytes: body,
            headers,
          };
          const common = {
            concurrency: o.concurrency,
            h1Connections: o.h1Connections,
            runs: o.runs,
            durationMs: o.durationMs,
            window,
            workloads: [workload],
            tls: { ca: certs.caFile, cert: certs.certFile, key: certs.keyFile },
            ...(o.rttMs !== undefined ? { links: { rttMs: [o.rttMs] } } : {}),
          };
          const hooks = { target, fixture };
          const shared = await compareCell(
            ctx,
            `${bodyLabel(body).replace(' ', '')}-${window}-shared`,
            {
              ...common,
              protocols: [s.h1.name, s.one.name, s.pool.name],
              h2PoolPolicy: 'lease',
              h2PoolSessions: o.h2Sessions,
            },
            hooks,
            perComparison(3),
          );
          const independent = await compareCell(
            ctx,
            `${bodyLabel(body).replace(' ', '')}-${window}-independent`,
            {
              ...common,
              protocols: [s.h1.name, s.pool.name],
              h2PoolPolicy: 'least-busy',
              h2PoolSessions: Math.max(...o.concurrency),
            },
            hooks,
            perComparison(2),
          );
          const these: Row[] = [
            ...(shared
              ? rowsOf(
                  shared,
                  body,
                  window,
                  [
                    ['one', s.one.name],
                    ['shared', s.pool.name],
                  ],
                  o.concurrency,
                )
              : []),
            ...(independent
              ? rowsOf(independent, body, window, [['independent', s.pool.name]], o.concurrency)
              : []),
          ];
          rows.push(...these);
          for (const c of [shared, independent])
            for (const cell of c?.cells ?? [])
              if (cell.stats && cell.stats.saturatedRuns > 0)
                ctx.warn(
                  `${cell.id}: the load client was probably the bottleneck in ${cell.stats.saturatedRuns} of ${cell.stats.runsKept} runs (the client and the server share this machine's cores)`,
                );
          if (these.length > 0) ctx.section(cellSection(body, window, these, o));
        }
      } finally {
        await target.close();
      }
    }
    ctx.setData('rows', rows);
    const top = Math.max(...o.concurrency);
    for (const body of o.bodies) {
      const mine = rows.filter((r) => r.body === body);
      if (mine.length === 0) continue;
      ctx.section(summarySection(body, mine, o.windows, top));
      ctx.section(windowSection(body, mine, o.windows, top));
      ctx.explain(explainBody(body, mine, o.windows, top, o));
    }
    // The machine's cores and load feed the CPU mechanisms (the load warning is the harness's).
    const loadAfter = os.loadavg()[0]!;
    const cpus = os.availableParallelism();
    for (const f of echoFindings(rows, o, top, { cpus, loadAverage: Math.min(loadBefore, loadAfter) }))
      ctx.finding(f);
    for (const f of echoUnmeasured(o, top)) ctx.finding(f);
    ctx.setData('machine', { cpus, loadAverage1m: { before: loadBefore, after: loadAfter } });
    const cases = await lifetimes(ctx, certs, o);
    ctx.setData(
      'lifetime',
      cases.map(({ run: _run, ...c }) => c),
    );
    if (cases.some((c) => c.lives.length > 0)) {
      ctx.section(lifetimeSection(cases));
      ctx.explain(explainLifetime(cases));
    }
    for (const f of lifetimeFindings(cases, handshakeData, o)) ctx.finding(f);
  },
});

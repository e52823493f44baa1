/**
 * The fixture server's own view of a run: the METRICS CONTRACT of docs/design.md. `/metrics` renders
 * it as Prometheus text, `/metrics?format=json` and {@link RunningServer.metrics} as a
 * {@link MetricsSnapshot}. Counting is on the hot path, so counters are plain object fields on rows
 * created once per route; nothing allocates per request.
 */

import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';
import type { WireProtocol } from '../model/index.ts';
import { TcpLog, type TcpReading } from '../net/index.ts';
import { QuicServerLog, type QuicServerReading, type QuicServerSettings } from './quic-log.ts';

/** Route families (the `route` label). `other` is any path the server does not know (404). */
export const ROUTES = [
  'bytes',
  'echo',
  'chunks',
  'tiles',
  'vector-tiles',
  'page',
  'metrics',
  'healthz',
  'options',
  'slow-headers',
  'reset',
  'hang',
  'goaway',
  'other',
] as const;
export type RouteName = (typeof ROUTES)[number];

const PROTOCOLS: readonly WireProtocol[] = ['http/1.1', 'h2', 'h2c', 'h3'];
/** Listener names (the `listener` label). */
export type ListenerName = 'plain' | 'tls' | 'quic';
/** Protocol of a connection; `unknown` = closed before it chose one (no preface, failed handshake). */
type ConnectionProtocol = WireProtocol | 'unknown';
/** Where a cancelled request's pool job was when the client went away. */
export type CancelStage = 'queued' | 'running' | 'after';
/** What became of a pool job. */
type JobOutcome = 'completed' | 'dropped' | 'aborted' | 'unwanted';

/** Upper bounds (seconds) of the pool histograms' buckets: 0.5 ms … 30 s. */
export const POOL_BUCKETS_SECONDS: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

/** A Prometheus-style histogram: cumulative bucket counts, sum and count. */
export interface HistogramSnapshot {
  /** Cumulative: `count` observations were ≤ `le` seconds. The last bucket is `le: "+Inf"`. */
  buckets: Array<{ le: number | '+Inf'; count: number }>;
  sum: number;
  count: number;
}

class Histogram {
  private counts = new Float64Array(POOL_BUCKETS_SECONDS.length + 1);
  sum = 0;
  count = 0;
  observe(seconds: number): void {
    let i = 0;
    while (i < POOL_BUCKETS_SECONDS.length && seconds > POOL_BUCKETS_SECONDS[i]!) i++;
    this.counts[i]!++;
    this.sum += seconds;
    this.count++;
  }
  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }
  snapshot(): HistogramSnapshot {
    let acc = 0;
    const buckets: HistogramSnapshot['buckets'] = [];
    for (let i = 0; i <= POOL_BUCKETS_SECONDS.length; i++) {
      acc += this.counts[i]!;
      buckets.push({ le: i < POOL_BUCKETS_SECONDS.length ? POOL_BUCKETS_SECONDS[i]! : '+Inf', count: acc });
    }
    return { buckets, sum: this.sum, count: this.count };
  }
}

type ProtoRow = Record<WireProtocol, number>;
const protoRow = (): ProtoRow => ({ 'http/1.1': 0, h2: 0, h2c: 0, h3: 0 });
const routeTable = (): Record<RouteName, ProtoRow> =>
  Object.fromEntries(ROUTES.map((r) => [r, protoRow()])) as Record<RouteName, ProtoRow>;
type ConnRow = Record<ConnectionProtocol, number>;
const connTable = (): Record<ListenerName, ConnRow> => ({
  plain: { 'http/1.1': 0, h2: 0, h2c: 0, h3: 0, unknown: 0 },
  tls: { 'http/1.1': 0, h2: 0, h2c: 0, h3: 0, unknown: 0 },
  // The HTTP/3 listener (UDP): a QUIC connection is counted once its handshake chose h3.
  quic: { 'http/1.1': 0, h2: 0, h2c: 0, h3: 0, unknown: 0 },
});
const cancelTable = (): Record<WireProtocol, Record<CancelStage, number>> => ({
  'http/1.1': { queued: 0, running: 0, after: 0 },
  h2: { queued: 0, running: 0, after: 0 },
  h2c: { queued: 0, running: 0, after: 0 },
  h3: { queued: 0, running: 0, after: 0 },
});

/** The pool's live state, read at snapshot time. */
interface PoolGauges {
  size: number;
  busy: number;
  queued: number;
}

/** Everything `/metrics?format=json` returns. Field names follow the metric names of the contract. */
export interface MetricsSnapshot {
  /** Shape version of this object. */
  schema: 'h2lab.server-metrics/1';
  /** Seconds since the server started or since the last reset. */
  sinceResetSeconds: number;
  /** `h2lab_requests_total` by route and protocol. */
  requests: Record<RouteName, ProtoRow>;
  /** `h2lab_response_bytes_total` by route and protocol. */
  responseBytes: Record<RouteName, ProtoRow>;
  inFlight: number;
  inFlightPeak: number;
  connections: { total: Record<ListenerName, ConnRow>; open: Record<ListenerName, ConnRow> };
  streamsOpen: number;
  pool: PoolGauges & {
    queueSeconds: HistogramSnapshot;
    serviceSeconds: HistogramSnapshot;
    jobs: Record<JobOutcome, number>;
  };
  /** `h2lab_cancellations_total` by protocol and stage. */
  cancellations: Record<WireProtocol, Record<CancelStage, number>>;
  /** `h2lab_rst_stream_total`: RST_STREAM frames received, by error code (8 = CANCEL). */
  rstStream: Record<string, number>;
  /**
   * TCP_INFO of the server's connections (Linux with the native addon; absent elsewhere): the most
   * recent {@link SERVER_TCP_READINGS} closed ones, read as they closed, and every open one, read
   * now. The server's side is the response direction: its congestion window is the download's. A
   * client finds its own connections by client port (`matchServerReadings`). Not reset by a reset.
   */
  tcp?: { connections: TcpReading[]; unread: number };
  /**
   * HTTP/3: the QUIC listener's settings and its stack's reading of each connection — the most
   * recent {@link SERVER_TCP_READINGS} closed ones, read at their last stream's end, and every open
   * one, read now. Absent when the server serves no HTTP/3. Not reset by a reset.
   */
  quic?: QuicServerSettings & { connections: QuicServerReading[]; unread: number };
  /**
   * The server's own cost since start or reset: CPU seconds (user + system) of the thread that runs
   * its event loop (`scope: 'thread'`, a worker thread of its own) or of its whole process
   * (`'process'`, a process of its own), and how long that event loop was busy and idle. Absent when
   * the server shares its thread with its client (the in-process placement), whose cost it would
   * include, or where the thread's CPU cannot be read (not Linux).
   */
  loop?: LoopReading;
}

/** The server's own CPU and event-loop time (see {@link MetricsSnapshot.loop}). */
interface LoopReading {
  scope: 'thread' | 'process';
  cpuSeconds: number;
  activeSeconds: number;
  idleSeconds: number;
}

/**
 * CPU seconds of the calling thread: /proc/thread-self/schedstat (nanoseconds on a CPU, brought up
 * to date at each scheduler tick), else /proc/thread-self/stat's utime + stime (clock ticks, 100 per
 * second on Linux). Undefined where neither exists. Node 20 has no `process.threadCpuUsage()`, and
 * `process.cpuUsage()` in a worker thread is the whole process's (its client's too).
 */
function threadCpuSeconds(): number | undefined {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e9;
  } catch {
    try {
      // Fields 14 and 15 (1-based) after the parenthesised command name, which may hold spaces.
      const stat = readFileSync('/proc/thread-self/stat', 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(f[11]) + Number(f[12])) / 100;
    } catch {
      return undefined;
    }
  }
}

/** The loop's cumulative readings, or undefined where the CPU cannot be read on its own. */
function loopNow(scope: LoopReading['scope']): LoopReading | undefined {
  const cpu = scope === 'thread' ? threadCpuSeconds() : cpuOfProcess();
  if (cpu === undefined) return undefined;
  const elu = performance.eventLoopUtilization();
  return { scope, cpuSeconds: cpu, activeSeconds: elu.active / 1000, idleSeconds: elu.idle / 1000 };
}

function cpuOfProcess(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** Closed connections whose TCP readings the server keeps for `/metrics?format=json`. */
const SERVER_TCP_READINGS = 512;

/** The mutable counters. One instance per running server. */
export class ServerMetrics {
  requests = routeTable();
  responseBytes = routeTable();
  inFlight = 0;
  inFlightPeak = 0;
  connectionsTotal = connTable();
  connectionsOpen = connTable();
  streamsOpen = 0;
  queueSeconds = new Histogram();
  serviceSeconds = new Histogram();
  jobs: Record<JobOutcome, number> = { completed: 0, dropped: 0, aborted: 0, unwanted: 0 };
  cancellations = cancelTable();
  rstStream: Record<string, number> = {};
  /** The connections' TCP facts: the server watches each accepted socket here. */
  readonly tcp = new TcpLog('server', SERVER_TCP_READINGS);
  /** The QUIC listener's settings and connections (HTTP/3 only). */
  readonly quic = new QuicServerLog(SERVER_TCP_READINGS);
  private resetAt = performance.now();
  /**
   * Whose CPU the server can call its own: its worker thread's, its process's (a process of its own:
   * `h2lab serve`, the namespace placement), or none (`shared`: it runs on its client's thread).
   */
  private loopScope: LoopReading['scope'] | 'shared' = isMainThread ? 'process' : 'thread';
  private loopAtReset: LoopReading | undefined = loopNow(this.loopScope as LoopReading['scope']);

  constructor(private readonly pool: () => PoolGauges) {}

  /**
   * The server runs on the thread of the code that started it (startFixtureTarget's in-process
   * placement): its CPU and event loop are its client's too, so its snapshots leave them out.
   */
  shareThread(): void {
    this.loopScope = 'shared';
    this.loopAtReset = undefined;
  }

  /** The loop's readings since start or reset. */
  private loop(): LoopReading | undefined {
    if (this.loopScope === 'shared' || !this.loopAtReset) return undefined;
    const now = loopNow(this.loopScope);
    const was = this.loopAtReset;
    if (!now) return undefined;
    return {
      scope: now.scope,
      cpuSeconds: now.cpuSeconds - was.cpuSeconds,
      activeSeconds: now.activeSeconds - was.activeSeconds,
      idleSeconds: now.idleSeconds - was.idleSeconds,
    };
  }

  /** A request's handler started. */
  begin(route: RouteName, protocol: WireProtocol): void {
    this.requests[route][protocol]++;
    if (++this.inFlight > this.inFlightPeak) this.inFlightPeak = this.inFlight;
  }

  /** A request's handler finished (response ended or client gone); `bytes` = body bytes written. */
  end(route: RouteName, protocol: WireProtocol, bytes: number): void {
    this.inFlight--;
    this.responseBytes[route][protocol] += bytes;
  }

  rst(code: number): void {
    const k = String(code);
    this.rstStream[k] = (this.rstStream[k] ?? 0) + 1;
  }

  /**
   * Zeroes counters and histograms and sets the in-flight peak to the current in-flight. Gauges
   * (in-flight, open connections, streams, pool) keep describing the present.
   */
  reset(): void {
    this.requests = routeTable();
    this.responseBytes = routeTable();
    this.inFlightPeak = this.inFlight;
    this.connectionsTotal = connTable();
    this.queueSeconds.reset();
    this.serviceSeconds.reset();
    this.jobs = { completed: 0, dropped: 0, aborted: 0, unwanted: 0 };
    this.cancellations = cancelTable();
    this.rstStream = {};
    this.resetAt = performance.now();
    if (this.loopScope !== 'shared') this.loopAtReset = loopNow(this.loopScope);
  }

  snapshot(): MetricsSnapshot {
    const clone = <T>(v: T): T => structuredClone(v);
    const loop = this.loop();
    return {
      schema: 'h2lab.server-metrics/1',
      sinceResetSeconds: (performance.now() - this.resetAt) / 1000,
      requests: clone(this.requests),
      responseBytes: clone(this.responseBytes),
      inFlight: this.inFlight,
      inFlightPeak: this.inFlightPeak,
      connections: { total: clone(this.connectionsTotal), open: clone(this.connectionsOpen) },
      streamsOpen: this.streamsOpen,
      pool: {
        ...this.pool(),
        queueSeconds: this.queueSeconds.snapshot(),
        serviceSeconds: this.serviceSeconds.snapshot(),
        jobs: { ...this.jobs },
      },
      cancellations: clone(this.cancellations),
      rstStream: { ...this.rstStream },
      ...(this.tcp.enabled ? { tcp: { connections: this.tcp.readings(), unread: this.tcp.unread } } : {}),
      ...(this.quic.settings
        ? { quic: { ...this.quic.settings, connections: this.quic.readings(), unread: this.quic.unread } }
        : {}),
      ...(loop ? { loop } : {}),
    };
  }
}

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** Renders a snapshot in the Prometheus text exposition format (version 0.0.4). */
export function renderPrometheus(s: MetricsSnapshot): string {
  const out: string[] = [];
  const head = (name: string, type: string, help: string) => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  };
  const line = (name: string, labels: Record<string, string>, v: number) => {
    const l = Object.entries(labels)
      .map(([k, x]) => `${k}="${esc(x)}"`)
      .join(',');
    out.push(`${name}${l ? `{${l}}` : ''} ${Number.isInteger(v) ? v : v.toPrecision(9)}`);
  };
  const byRoute = (name: string, help: string, t: Record<RouteName, ProtoRow>) => {
    head(name, 'counter', help);
    for (const route of ROUTES)
      for (const protocol of PROTOCOLS)
        if (t[route][protocol] > 0) line(name, { route, protocol }, t[route][protocol]);
  };
  byRoute('h2lab_requests_total', 'Requests whose handler started.', s.requests);
  byRoute('h2lab_response_bytes_total', 'Response body bytes written.', s.responseBytes);
  head('h2lab_in_flight', 'gauge', 'Requests in handlers now.');
  line('h2lab_in_flight', {}, s.inFlight);
  head('h2lab_in_flight_peak', 'gauge', 'Highest in-flight since start or reset.');
  line('h2lab_in_flight_peak', {}, s.inFlightPeak);
  const conns = (name: string, type: string, help: string, t: Record<ListenerName, ConnRow>) => {
    head(name, type, help);
    for (const listener of ['plain', 'tls', 'quic'] as const)
      for (const [protocol, v] of Object.entries(t[listener]))
        if (v > 0) line(name, { listener, protocol }, v);
  };
  conns('h2lab_connections_total', 'counter', 'Connections accepted.', s.connections.total);
  conns('h2lab_connections_open', 'gauge', 'Connections open now.', s.connections.open);
  head('h2lab_streams_open', 'gauge', 'HTTP/2 streams open now.');
  line('h2lab_streams_open', {}, s.streamsOpen);
  head('h2lab_pool_size', 'gauge', 'Backend pool workers.');
  line('h2lab_pool_size', {}, s.pool.size);
  head('h2lab_pool_busy', 'gauge', 'Backend pool workers busy now.');
  line('h2lab_pool_busy', {}, s.pool.busy);
  head('h2lab_pool_queued', 'gauge', 'Jobs waiting for a pool worker now.');
  line('h2lab_pool_queued', {}, s.pool.queued);
  const hist = (name: string, help: string, h: HistogramSnapshot) => {
    head(name, 'histogram', help);
    for (const b of h.buckets) line(`${name}_bucket`, { le: String(b.le) }, b.count);
    line(`${name}_sum`, {}, h.sum);
    line(`${name}_count`, {}, h.count);
  };
  hist('h2lab_pool_queue_seconds', 'Time a job waited for a pool worker.', s.pool.queueSeconds);
  hist('h2lab_pool_service_seconds', 'Time a job held a pool worker.', s.pool.serviceSeconds);
  head('h2lab_cancellations_total', 'counter', 'Clients that went away before their response was complete.');
  for (const protocol of PROTOCOLS)
    for (const [stage, v] of Object.entries(s.cancellations[protocol]))
      if (v > 0) line('h2lab_cancellations_total', { protocol, stage }, v);
  head('h2lab_pool_jobs_total', 'counter', 'Pool jobs by outcome.');
  for (const [outcome, v] of Object.entries(s.pool.jobs)) line('h2lab_pool_jobs_total', { outcome }, v);
  head(
    'h2lab_rst_stream_total',
    'counter',
    'RST_STREAM frames received from clients, by error code (8 = CANCEL).',
  );
  for (const [code, v] of Object.entries(s.rstStream)) line('h2lab_rst_stream_total', { code }, v);
  if (s.loop) {
    const scope = { scope: s.loop.scope };
    head(
      'h2lab_cpu_seconds_total',
      'counter',
      "CPU seconds (user + system) of the server's thread or process.",
    );
    line('h2lab_cpu_seconds_total', scope, s.loop.cpuSeconds);
    head('h2lab_event_loop_active_seconds_total', 'counter', "Time the server's event loop was busy.");
    line('h2lab_event_loop_active_seconds_total', scope, s.loop.activeSeconds);
    head('h2lab_event_loop_idle_seconds_total', 'counter', "Time the server's event loop waited for events.");
    line('h2lab_event_loop_idle_seconds_total', scope, s.loop.idleSeconds);
  }
  return `${out.join('\n')}\n`;
}

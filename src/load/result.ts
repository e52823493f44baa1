/**
 * The one builder of a RunResult: {@link toRunResult} turns a {@link RunTally} (one part's, the worker
 * threads' merged, or a plan's shards' merged) and what the run knew besides (its options, target and
 * environment) into the result. Run notes are a list of detectors, each a function of the finished
 * result, after src/report/confounders.ts.
 */
import { readFileSync } from 'node:fs';
import { H2labError, hostFacts, medianInterpolated } from '../core/index.ts';
import type { ConnectionAgeMedians, RunResult } from '../model/index.ts';
import { RUN_RESULT_VERSION } from '../model/index.ts';
import {
  getStrategy,
  MAX_GOAWAY_RETRIES,
  MAX_RETRIES,
  RECONNECT_BACKOFF,
  requestedWire,
  resolveWindow,
  streamWaitCause,
  streamWaitWords,
} from '../transport/index.ts';
import { judgeClient } from './judge.ts';
import type { ResolvedLoadOptions } from './options.ts';
import { quicFactsOf } from './quic.ts';
import { countsSection, encodeHistogram, type newHistogram, summarizeHistogram } from './stats.ts';
import type { ProcessReading, RunTally, ServerReadings } from './tally.ts';
import { tcpFactsOf } from './tcp.ts';

/** What a result needs besides its tally. */
export interface ResultContext {
  options: ResolvedLoadOptions;
  target: { url: string; embedded: boolean; cpuIncludesServer?: boolean };
  environment: RunResult['environment'];
  /** The measured window when it is not the tally's own period (a plan's shards: the reference clock's). */
  durationMs?: number;
  /** The server's view from its readings around the run (the server module's functions). */
  serverView?: (readings: ServerReadings) => RunResult['server'];
  /** More run notes, from the finished result (the report's confounders). */
  confounders?: (r: RunResult) => ReadonlyArray<{ text: string }>;
}

/** A detector of the run's notes: a sentence about the finished result, or nothing. */
type RunNote = (r: RunResult, o: ResolvedLoadOptions) => string | undefined;

/**
 * The result of a tally. Deterministic: the same tally and context give the same result (the shard
 * merge relies on it: test/shard/merge-exact.test.ts).
 */
export function toRunResult(tally: RunTally, ctx: ResultContext): RunResult {
  const o = ctx.options;
  const durationMs = ctx.durationMs ?? Math.max(0, tally.measureEndMs - tally.measureStartMs);
  const secs = durationMs / 1000;
  const c = tally.counts;
  const h = tally.histograms;
  const open = o.rateRps !== undefined;
  const burst = burstSection(o, tally);
  const client = clientSection(o, tally, ctx, secs);
  const server = tally.server && ctx.serverView ? ctx.serverView(tally.server) : undefined;
  const result: RunResult = {
    kind: 'h2lab.run',
    version: RUN_RESULT_VERSION,
    options: { ...o },
    environment: ctx.environment,
    target: { url: ctx.target.url, embedded: ctx.target.embedded },
    transport: transportInfo(o),
    protocol: {
      requested: requestedWire(getStrategy(o.protocol), ctx.target.url),
      negotiated: tally.negotiated,
    },
    schedule: {
      ...scheduleOf(o),
      ...(tally.firstSentMs !== undefined ? { firstSendMs: tally.firstSentMs } : {}),
    },
    ...(burst ? { burst } : {}),
    durationMs,
    warmupMs: o.warmupMs,
    counts: countsSection(c, open),
    throughput: {
      rps: secs > 0 ? c.total / secs : 0,
      bytesPerSec: secs > 0 ? c.bytesIn / secs : 0,
      bytesIn: c.bytesIn,
      bytesOut: c.bytesOut,
    },
    ...(c.headerResponses > 0
      ? { responseHeaders: { responses: c.headerResponses, bytes: c.headerBytesIn } }
      : {}),
    latencyMs: summarizeHistogram(h.latency),
    ...(open ? { latencyUncorrectedMs: summarizeHistogram(h.latencyUncorrected) } : {}),
    ttfbMs: summarizeHistogram(h.ttfb),
    clientQueueMs: summarizeHistogram(h.clientQueue),
    histograms: {
      latency: encodeHistogram(h.latency),
      ttfb: encodeHistogram(h.ttfb),
      ...(open ? { latencyUncorrected: encodeHistogram(h.latencyUncorrected) } : {}),
    },
    connections: connectionsSection(o, tally, ctx),
    client: client.section,
    ...(server ? { server } : {}),
    ...(tally.transport.flowControl ? { flowControl: tally.transport.flowControl } : {}),
    ...connectionAgeSection(tally),
    warnings: [],
  };
  for (const note of [...client.notes, ...RUN_NOTES.map((d) => d(result, o))]) {
    if (note) result.warnings.push(note);
  }
  const error = tally.error ?? errorRate(result, o);
  if (error) result.error = error;
  for (const f of ctx.confounders?.(result) ?? []) result.warnings.push(f.text);
  return result;
}

/** The windows the options ask for. */
export function resolveWindowFor(o: ResolvedLoadOptions): ReturnType<typeof resolveWindow> {
  return resolveWindow(o.window, o.streamWindowBytes, o.connectionWindowBytes);
}

/** The machine the run ran on, and when it started. */
export function environmentOf(startedAt: string): RunResult['environment'] {
  let cc: string | undefined;
  try {
    cc = readFileSync('/proc/sys/net/ipv4/tcp_congestion_control', 'utf8').trim();
  } catch {
    cc = undefined;
  }
  return { ...hostFacts(), ...(cc ? { congestionControl: cc } : {}), startedAt };
}

/** What the transport was, as the options and its strategy made it. */
function transportInfo(o: ResolvedLoadOptions): RunResult['transport'] {
  const s = getStrategy(o.protocol);
  return {
    name: o.protocol,
    connections: o.connections,
    // src/transport/connect.ts sets TCP_NODELAY on every socket it opens (a stated default).
    noDelay: true,
    ...(s.connections.policy ? { policy: o.policy } : {}),
    ...(s.http2 ? { client: o.h2Client, window: resolveWindowFor(o) } : {}),
    // QUIC takes the same presets as its initial_max_stream_data_bidi_local and initial_max_data.
    ...(s.quic ? { quic: { ...s.quic, window: resolveWindowFor(o) } } : {}),
    reconnect: { ...RECONNECT_BACKOFF, giveUpMs: o.reconnectGiveUpMs },
    retries: { refusedStream: MAX_RETRIES, goaway: MAX_GOAWAY_RETRIES },
  };
}

/** The schedule the options asked for. */
function scheduleOf(o: ResolvedLoadOptions): RunResult['schedule'] {
  if (o.burst !== undefined) {
    return {
      mode: 'burst',
      concurrency: o.burst,
      bursts: o.bursts ?? 1,
      gapMs: o.burstGapMs ?? 0,
      handshakes: o.burstHandshakes ?? 'include',
    };
  }
  return o.rateRps !== undefined
    ? { mode: 'open', rateRps: o.rateRps, arrivals: o.arrivals }
    : { mode: 'closed', concurrency: o.concurrency };
}

/** The burst section from the tally's bursts; undefined when no burst ran. */
function burstSection(o: ResolvedLoadOptions, tally: RunTally): RunResult['burst'] {
  const all = tally.bursts ?? [];
  if (o.burst === undefined || all.length === 0) return undefined;
  const firsts = all.flatMap((b) => (b.firstResponseMs === undefined ? [] : [b.firstResponseMs]));
  return {
    requests: o.burst,
    bursts: all.length,
    handshakes: o.burstHandshakes ?? 'include',
    completionMs: medianInterpolated(all.map((b) => b.completionMs)),
    ...(firsts.length > 0 ? { firstResponseMs: medianInterpolated(firsts) } : {}),
    failed: all.reduce((n, b) => n + b.failed, 0),
    connectionsOpened: all.reduce((n, b) => n + b.connectionsOpened, 0),
    perBurst: all.map(({ requests: _n, ...b }) => b),
  };
}

/** The connections section: what was opened, set up how fast, carried how much, and each one's facts. */
function connectionsSection(
  o: ResolvedLoadOptions,
  tally: RunTally,
  ctx: ResultContext,
): RunResult['connections'] {
  const t = tally.transport;
  const h = tally.histograms;
  const multiplexed = getStrategy(o.protocol).multiplexed;
  const tcp = tcpFactsOf([t], tally.server?.after?.metrics, Date.parse(ctx.environment.startedAt));
  const quic = quicFactsOf([t], tally.server?.after?.metrics);
  const rpc = t.requestsPerConnection;
  return {
    opened: t.opened,
    ...(h.connect.totalCount > 0 ? { connectMs: summarizeHistogram(h.connect) } : {}),
    ...(h.tls.totalCount > 0 ? { tlsMs: summarizeHistogram(h.tls) } : {}),
    peakInFlight: t.peakInFlight,
    // Streams share a connection: their peak and the waits at the server's stream limit are facts.
    ...(multiplexed
      ? { peakStreamsPerConnection: t.peakStreamsPerConnection, streamCapHits: t.capHits }
      : {}),
    ...(t.serverMaxConcurrentStreams !== undefined
      ? { serverMaxConcurrentStreams: t.serverMaxConcurrentStreams }
      : {}),
    ...(t.tlsVersion !== undefined ? { tlsVersion: t.tlsVersion } : {}),
    requestsPerConnection: { mean: rpc.connections > 0 ? rpc.requests / rpc.connections : 0, max: rpc.max },
    ...(tcp ? { tcp } : {}),
    ...(t.lifetimes ? { lifetimes: t.lifetimes } : {}),
    ...(quic ? { quic } : {}),
    ...(t.outages ? { outages: t.outages } : {}),
  };
}

/** CPU per measured second of a process's reading (1.0 = one core). */
function cpuOf(p: ProcessReading): number {
  return p.measuredCpu.wallMs > 0 ? p.measuredCpu.us / 1000 / p.measuredCpu.wallMs : 0;
}

/**
 * The client section, each load process judged on its own machine's numbers (is the client the
 * bottleneck? src/load/judge.ts), and the note that says so.
 */
function clientSection(
  o: ResolvedLoadOptions,
  tally: RunTally,
  ctx: ResultContext,
  secs: number,
): { section: RunResult['client']; notes: string[] } {
  const ps = Object.values(tally.processes);
  const withServer = ctx.target.cpuIncludesServer === true || o.serverInProcess === true;
  const judged = ps.map((p) =>
    judgeClient(
      p.eventLoopUtilization,
      cpuOf(p),
      p.threads,
      p.cpus ?? ctx.environment.cpus,
      p.loadAverage ?? 0,
      withServer,
    ),
  );
  const cpu = ps.reduce((n, p) => n + cpuOf(p), 0);
  const saturatedCount = judged.filter((j) => j.saturated).length;
  let note = judged.find((j) => j.saturated)?.note ?? judged.find((j) => j.note)?.note;
  if (note && ps.length > 1) {
    note = `${saturatedCount > 0 ? saturatedCount : judged.filter((j) => j.note).length} of ${ps.length} load processes: ${note}`;
  }
  if (note && getStrategy(o.protocol).quic && tally.counts.total > 0) {
    // The number that explains it: HTTP/3's client costs several times HTTP/2's per request.
    const us = ((cpu * secs) / tally.counts.total) * 1e6;
    note += `; the HTTP/3 client (the QUIC binding) used ${us.toFixed(0)} µs CPU per request${ctx.target.cpuIncludesServer ? ' with the embedded server' : ''}, where h2lab's HTTP/2 client needed about a seventh of that on the machine docs/performance.md measured (bench/h3-client-cpu.ts; compare sets HTTP/3's beside HTTP/2's of the same comparison)`;
  }
  const threads = ps.reduce((n, p) => n + p.threads, 0);
  const rss = ps.flatMap((p) => (p.maxRssBytes === undefined ? [] : [p.maxRssBytes]));
  const section: RunResult['client'] = {
    eventLoopUtilization: ps.reduce((n, p) => Math.max(n, p.eventLoopUtilization), 0),
    cpu,
    ...(ps.length > 0 && ps.every((p) => p.cpuSeconds !== undefined)
      ? { cpuSeconds: ps.reduce((n, p) => n + p.cpuSeconds!, 0) }
      : {}),
    workers: threads > 0 ? threads : o.workers,
    ...(rss.length > 0 ? { maxRssBytes: Math.max(...rss) } : {}),
    saturated: saturatedCount > 0,
    ...(note ? { note } : {}),
  };
  return { section, notes: note ? [note] : [] };
}

type Histogram = ReturnType<typeof newHistogram>;

/** First responses on new connections against warm ones, when any response came. */
function connectionAgeSection(tally: RunTally): Pick<RunResult, 'connectionAge'> {
  const h = tally.histograms;
  if (h.ttfbNew.totalCount + h.ttfbWarm.totalCount === 0) return {};
  return {
    connectionAge: {
      newConnection: ageMedians(h.ttfbNew, h.responseNew, h.bodyGapNew),
      warmConnection: ageMedians(h.ttfbWarm, h.responseWarm, h.bodyGapWarm),
    },
  };
}

function ageMedians(ttfb: Histogram, response: Histogram, bodyGap: Histogram): ConnectionAgeMedians {
  return {
    count: ttfb.totalCount,
    ttfbP50Ms: summarizeHistogram(ttfb).p50,
    responseP50Ms: summarizeHistogram(response).p50,
    smallBodyCount: bodyGap.totalCount,
    bodyAfterHeadersP50Ms: summarizeHistogram(bodyGap).p50,
  };
}

/** Requests that waited for a stream slot, with the limit a connection reached (src/transport/stream-wait.ts). */
const streamWaits: RunNote = (r, o) => {
  const s = getStrategy(o.protocol);
  const c = r.connections;
  if (!s.multiplexed) return undefined;
  const waits = {
    streamCapHits: c.streamCapHits ?? 0,
    serverMaxConcurrentStreams: c.serverMaxConcurrentStreams,
    peakStreamsPerConnection: c.peakStreamsPerConnection ?? 0,
    lifetimes: c.lifetimes,
  };
  const cause = streamWaitCause(waits, s.quic !== undefined);
  return cause
    ? `requests waited in the client for a stream slot ${waits.streamCapHits} times: ${streamWaitWords(cause, waits)}`
    : undefined;
};

const retries: RunNote = (r) => {
  const c = r.counts;
  if (!c.retried) return undefined;
  return `the server refused ${c.retried} requests unprocessed (GOAWAY or REFUSED_STREAM) and they were sent again, as browsers do (${c.attempts} attempts in all, ${c.unprocessed ?? 0} named unprocessed by GOAWAY); their latency includes the retry (a server ending sessions after N requests, e.g. nginx keepalive_requests, does this)`;
};

const late: RunNote = (r, o) =>
  r.counts.late
    ? `${r.counts.late} requests left later than ${o.lateToleranceMs} ms after their intended time (open loop)`
    : undefined;

const burstFailures: RunNote = (r) => {
  const b = r.burst;
  if (!b || b.failed === 0) return undefined;
  return `${b.failed} of ${b.requests * b.bursts} requests of the burst${b.bursts > 1 ? 's' : ''} failed (see counts.byFailure): the completion time still ends at the last response or failure`;
};

/**
 * Share of a sending connection's busy time the peer's TCP receive window held it
 * (`tcpi_rwnd_limited` over `tcpi_busy_time`) from which timeouts are put down to a server that
 * stopped reading: a receiver that reads keeps its window open, so a sender held most of its busy
 * time had bytes waiting that the receiver's socket did not take in.
 */
const STOPPED_READING_SHARE = 0.5;

/**
 * Requests that timed out while the server's TCP receive window held h2lab's connections: the
 * server stopped reading its sockets, so what the client sent (request bodies) waited unsent. A
 * Node.js HTTP/2 server whose session memory is below the windows it advertises does this
 * (docs/reliability.md, "Session memory and receive windows").
 */
const serverStoppedReading: RunNote = (r) => {
  const timeouts = r.counts.byFailure.timeout ?? 0;
  if (timeouts === 0) return undefined;
  const held = (r.connections.tcp?.client?.perConnection ?? []).filter(
    (c) =>
      c.busyMs !== undefined && c.busyMs > 0 && (c.rwndLimitedMs ?? 0) / c.busyMs >= STOPPED_READING_SHARE,
  );
  if (held.length === 0) return undefined;
  const limited = held.reduce((n, c) => n + (c.rwndLimitedMs ?? 0), 0);
  const busy = held.reduce((n, c) => n + (c.busyMs ?? 0), 0);
  const all = r.connections.tcp?.client?.perConnection.length ?? held.length;
  const ms = (x: number) => `${Math.round(x).toLocaleString('en-US')} ms`;
  return `${timeouts} request(s) timed out while the server's TCP receive window held ${held.length} of ${all} connection(s) for ${((limited / busy) * 100).toFixed(0)}% of their busy time (${ms(limited)} of ${ms(busy)}): the server stopped reading its socket, so what the client sent waited unsent`;
};

/** The run's notes, in the order they are printed (after the client's). */
const RUN_NOTES: readonly RunNote[] = [streamWaits, retries, late, burstFailures, serverStoppedReading];

/** H2LAB_ERR_ERROR_RATE when more failed than `--max-error-rate` allows, or nothing succeeded. */
function errorRate(r: RunResult, o: ResolvedLoadOptions): RunResult['error'] {
  const c = r.counts;
  if (c.total === 0) return undefined;
  const rate = c.failed / c.total;
  if (!((o.maxErrorRate !== undefined && rate > o.maxErrorRate) || c.ok === 0)) return undefined;
  return new H2labError(
    'H2LAB_ERR_ERROR_RATE',
    c.ok === 0
      ? `no request succeeded (${c.failed} of ${c.total} failed): see counts.byStatus and counts.byFailure`
      : `${(rate * 100).toFixed(2)}% of requests failed, more than --max-error-rate ${(o.maxErrorRate! * 100).toFixed(2)}%`,
    { failed: c.failed, total: c.total, maxErrorRate: o.maxErrorRate },
  ).toJSON();
}

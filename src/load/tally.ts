/**
 * A run's tally: everything measured, as mergeable data. A part (one thread's share) makes one; worker
 * threads hand theirs over encoded; a shard ships its encoded tally in its result file; the engine,
 * the worker merge and the shard merge all combine tallies with the one {@link mergeTallies}, and
 * {@link toRunResult} (src/load/result.ts) is the only place a RunResult is made from one.
 *
 *   part ─▶ RunTally ─(encode)─▶ thread / shard file ─(decode)─▶ mergeTallies ─▶ toRunResult ─▶ RunResult
 *
 * Merge rules, field by field (each is associative, so any grouping of parts gives the same tally;
 * test/load/tally.test.ts): counts and histograms add (HdrHistogram addition is exact for one set of
 * settings); the measured period is the earliest start to the latest end; per-connection facts (TCP
 * and QUIC readings, lifetimes, outages) concatenate into their bounded logs; peaks take the highest,
 * except in-flight requests, whose peaks add when the parts ran at the same time (threads, shards: an
 * upper bound of the simultaneous peak) and take the highest when one followed the other (bursts);
 * a process's own readings (CPU, event loop, memory) are kept per process and combined per process.
 */
import os from 'node:os';
import type * as Hdr from 'hdr-histogram-js';
import { mergeFlowControl } from '../h2/index.ts';
import type { EncodedHistogram, ShardTally, WireProtocol } from '../model/index.ts';
import type { MetricsSnapshot } from '../server/index.ts';
import { LIFETIMES_KEPT, OUTAGES_KEPT, type TransportStats } from '../transport/index.ts';
import {
  addCounts,
  type Counts,
  decodeHistogram,
  emptyCounts,
  encodeHistogram,
  HISTOGRAM_NAMES,
  type HistogramName,
  newHistogram,
} from './stats.ts';

/** One burst as a part measured it; times in ms. */
export interface BurstRecord {
  /** t0, ms since the run's origin. */
  startMs: number;
  /** t0 → the end of the last response (failed requests included: their end is when they failed). */
  completionMs: number;
  /** t0 → the first response headers; undefined when no response came. */
  firstResponseMs?: number;
  requests: number;
  ok: number;
  failed: number;
  /** Connections opened between t0 and the burst's end (its timed period). */
  connectionsOpened: number;
}

/**
 * One load process's reading of itself. Threads of one process share it (`process.cpuUsage()` is
 * process-wide): their readings combine as the busiest; separate processes (shards) keep one each.
 */
export interface ProcessReading {
  /** Threads of this process that ran a part. */
  threads: number;
  /** The busiest thread's event-loop utilisation over the measured period, 0..1. */
  eventLoopUtilization: number;
  /**
   * CPU time of the whole process over a part's measured period (after the warm-up) and that period's
   * wall time, µs and ms: the busiest reading of its threads.
   */
  measuredCpu: { us: number; wallMs: number };
  /** CPU seconds of the process from opening connections to the run's end (set by the engine). */
  cpuSeconds?: number;
  /** The process's peak resident memory, bytes (set by the engine). */
  maxRssBytes?: number;
  /** The machine's cores and 1-minute load average when the run ended: the saturation check reads them. */
  cpus?: number;
  loadAverage?: number;
}

/** The fixture or target server's metrics read around the run (epoch ms of each reading). */
export interface ServerReadings {
  before?: ServerReading;
  after?: ServerReading;
}

/** One reading of the server's metrics, and when it was taken. */
export interface ServerReading {
  atEpochMs: number;
  metrics: MetricsSnapshot;
}

/** What every tally holds, whatever form its histograms take. */
interface TallyFields {
  counts: Counts;
  transport: TransportStats;
  negotiated: WireProtocol | 'none';
  /** Start and end of the measured period, ms since the run's origin. */
  measureStartMs: number;
  measureEndMs: number;
  /** Readings of each load process, by a key naming it (host and pid). */
  processes: Record<string, ProcessReading>;
  /** Burst schedule: one record per burst, in order of start. */
  bursts?: BurstRecord[];
  /** When the first request (warm-up included) was handed to the transport, ms since the origin. */
  firstSentMs?: number;
  server?: ServerReadings;
  error?: { code: string; message: string; details?: Record<string, unknown> };
}

/** A tally with its histograms, ready to merge and to read. */
export interface RunTally extends TallyFields {
  histograms: Record<HistogramName, Hdr.Histogram>;
}

/**
 * A tally in the form that crosses a thread or goes into a shard's file: histograms encoded, and the
 * start of a period that never began (a run that measured nothing) as null, which JSON can carry.
 */
export interface EncodedTally extends Omit<TallyFields, 'measureStartMs'> {
  measureStartMs: number | null;
  histograms: Record<HistogramName, EncodedHistogram>;
}

/** Names this process among a run's load processes (threads share it; shards on other machines do not). */
export const PROCESS_KEY = `${os.hostname()}/${process.pid}`;

/** Whether the merged parts ran at the same time (threads, shards) or one after the other (bursts). */
type Overlap = 'concurrent' | 'sequential';

/** Transport statistics of nothing: the identity of {@link mergeTransportStats}. */
export function emptyTransportStats(): TransportStats {
  return {
    opened: 0,
    inFlight: 0,
    peakInFlight: 0,
    peakStreamsPerConnection: 0,
    capHits: 0,
    requestsPerConnection: { mean: 0, max: 0, connections: 0, requests: 0 },
  };
}

/** A tally of nothing: the identity of {@link mergeTallies}. */
export function emptyTally(): RunTally {
  return {
    counts: emptyCounts(),
    histograms: Object.fromEntries(HISTOGRAM_NAMES.map((k) => [k, newHistogram()])) as Record<
      HistogramName,
      Hdr.Histogram
    >,
    transport: emptyTransportStats(),
    negotiated: 'none',
    measureStartMs: Number.POSITIVE_INFINITY,
    measureEndMs: 0,
    processes: {},
  };
}

/**
 * Two tallies as one (a new object; neither input changes). `overlap` says how their in-flight peaks
 * combine; everything else merges the same way either way.
 */
export function mergeTallies(a: RunTally, b: RunTally, overlap: Overlap = 'concurrent'): RunTally {
  const counts = emptyCounts();
  addCounts(counts, a.counts);
  addCounts(counts, b.counts);
  const histograms = {} as Record<HistogramName, Hdr.Histogram>;
  for (const k of HISTOGRAM_NAMES) {
    const h = newHistogram();
    h.add(a.histograms[k]);
    h.add(b.histograms[k]);
    histograms[k] = h;
  }
  const bursts = [...(a.bursts ?? []), ...(b.bursts ?? [])].sort((x, y) => x.startMs - y.startMs);
  const first = Math.min(
    a.firstSentMs ?? Number.POSITIVE_INFINITY,
    b.firstSentMs ?? Number.POSITIVE_INFINITY,
  );
  const server = mergeServer(a.server, b.server);
  const error = a.error ?? b.error;
  return {
    counts,
    histograms,
    transport: mergeTransportStats(a.transport, b.transport, overlap),
    negotiated: b.negotiated !== 'none' ? b.negotiated : a.negotiated,
    measureStartMs: Math.min(a.measureStartMs, b.measureStartMs),
    measureEndMs: Math.max(a.measureEndMs, b.measureEndMs),
    processes: mergeProcesses(a.processes, b.processes),
    ...(a.bursts || b.bursts ? { bursts } : {}),
    ...(Number.isFinite(first) ? { firstSentMs: first } : {}),
    ...(server ? { server } : {}),
    ...(error ? { error } : {}),
  };
}

/** Every tally of `tallies` as one ({@link emptyTally} for none; the one itself for one). */
export function mergeAll(tallies: readonly RunTally[], overlap: Overlap = 'concurrent'): RunTally {
  // A run of one share (the usual case) is its own tally: no twelve fresh histograms to add it into.
  if (tallies.length === 0) return emptyTally();
  return tallies.slice(1).reduce((acc, t) => mergeTallies(acc, t, overlap), tallies[0]!);
}

/**
 * Transport statistics of several transports as one: sums of what adds up, the highest peaks (in-flight
 * peaks add for concurrent transports), the lowest stream limit announced, the bounded logs joined.
 */
export function mergeTransportStats(a: TransportStats, b: TransportStats, overlap: Overlap): TransportStats {
  const lim = [a.serverMaxConcurrentStreams, b.serverMaxConcurrentStreams].filter(
    (x): x is number => x !== undefined,
  );
  const connections = a.requestsPerConnection.connections + b.requestsPerConnection.connections;
  const requests = a.requestsPerConnection.requests + b.requestsPerConnection.requests;
  const flow = mergeFlowControl(a.flowControl, b.flowControl);
  const tls = a.tlsVersion ?? b.tlsVersion;
  return {
    opened: a.opened + b.opened,
    inFlight: overlap === 'concurrent' ? a.inFlight + b.inFlight : b.inFlight,
    peakInFlight:
      overlap === 'concurrent' ? a.peakInFlight + b.peakInFlight : Math.max(a.peakInFlight, b.peakInFlight),
    peakStreamsPerConnection: Math.max(a.peakStreamsPerConnection, b.peakStreamsPerConnection),
    ...(lim.length > 0 ? { serverMaxConcurrentStreams: Math.min(...lim) } : {}),
    capHits: a.capHits + b.capHits,
    ...(tls !== undefined ? { tlsVersion: tls } : {}),
    requestsPerConnection: {
      mean: connections > 0 ? requests / connections : 0,
      max: Math.max(a.requestsPerConnection.max, b.requestsPerConnection.max),
      connections,
      requests,
    },
    ...(a.tcp || b.tcp
      ? {
          tcp: {
            readings: [...(a.tcp?.readings ?? []), ...(b.tcp?.readings ?? [])],
            unread: (a.tcp?.unread ?? 0) + (b.tcp?.unread ?? 0),
          },
        }
      : {}),
    ...(flow ? { flowControl: flow } : {}),
    ...boundedLog(a.lifetimes, b.lifetimes, LIFETIMES_KEPT, 'connections', 'lifetimes'),
    ...(a.quic || b.quic ? { quic: [...(a.quic ?? []), ...(b.quic ?? [])] } : {}),
    ...boundedLog(a.outages, b.outages, OUTAGES_KEPT, 'periods', 'outages', (x, y) => x.startMs - y.startMs),
  };
}

/** Two bounded logs (the first `kept` entries, the rest counted in `omitted`) as one. */
function boundedLog<K extends 'lifetimes' | 'outages', F extends 'connections' | 'periods', T>(
  a: ({ [f in F]: T[] } & { omitted: number }) | undefined,
  b: ({ [f in F]: T[] } & { omitted: number }) | undefined,
  kept: number,
  field: F,
  key: K,
  order?: (x: T, y: T) => number,
): Partial<Record<K, { [f in F]: T[] } & { omitted: number }>> {
  if (!a && !b) return {};
  const all = [...(a?.[field] ?? []), ...(b?.[field] ?? [])];
  if (order) all.sort(order);
  const list = all.slice(0, kept);
  const omitted = (a?.omitted ?? 0) + (b?.omitted ?? 0) + all.length - list.length;
  if (list.length + omitted === 0) return {};
  return { [key]: { [field]: list, omitted } } as Partial<Record<K, { [f in F]: T[] } & { omitted: number }>>;
}

/** Per-process readings of two tallies: one process's threads combine, other processes stay apart. */
function mergeProcesses(
  a: Record<string, ProcessReading>,
  b: Record<string, ProcessReading>,
): Record<string, ProcessReading> {
  const out: Record<string, ProcessReading> = { ...a };
  for (const [key, p] of Object.entries(b)) {
    const q = out[key];
    out[key] = q ? combineThreads(q, p) : p;
  }
  return out;
}

function combineThreads(a: ProcessReading, b: ProcessReading): ProcessReading {
  const rate = (r: ProcessReading): number =>
    r.measuredCpu.wallMs > 0 ? r.measuredCpu.us / r.measuredCpu.wallMs : 0;
  const max = (x: number | undefined, y: number | undefined): number | undefined =>
    x === undefined ? y : y === undefined ? x : Math.max(x, y);
  const cpuSeconds = max(a.cpuSeconds, b.cpuSeconds);
  const rss = max(a.maxRssBytes, b.maxRssBytes);
  const cpus = max(a.cpus, b.cpus);
  const load = max(a.loadAverage, b.loadAverage);
  return {
    threads: a.threads + b.threads,
    eventLoopUtilization: Math.max(a.eventLoopUtilization, b.eventLoopUtilization),
    measuredCpu: rate(b) > rate(a) ? b.measuredCpu : a.measuredCpu,
    ...(cpuSeconds !== undefined ? { cpuSeconds } : {}),
    ...(rss !== undefined ? { maxRssBytes: rss } : {}),
    ...(cpus !== undefined ? { cpus } : {}),
    ...(load !== undefined ? { loadAverage: load } : {}),
  };
}

/** The server's readings around the union of two runs: the earlier `before`, the later `after`. */
function mergeServer(
  a: ServerReadings | undefined,
  b: ServerReadings | undefined,
): ServerReadings | undefined {
  if (!a || !b) return a ?? b;
  const before = pick(a.before, b.before, (x, y) => y.atEpochMs < x.atEpochMs);
  const after = pick(a.after, b.after, (x, y) => y.atEpochMs > x.atEpochMs);
  return { ...(before ? { before } : {}), ...(after ? { after } : {}) };
}

function pick<T>(a: T | undefined, b: T | undefined, bWins: (a: T, b: T) => boolean): T | undefined {
  if (!a || !b) return a ?? b;
  return bWins(a, b) ? b : a;
}

/** The form that crosses a thread or a file. */
export function encodeTally(t: RunTally): EncodedTally {
  const histograms = {} as Record<HistogramName, EncodedHistogram>;
  for (const k of HISTOGRAM_NAMES) histograms[k] = encodeHistogram(t.histograms[k]);
  return { ...t, histograms, measureStartMs: Number.isFinite(t.measureStartMs) ? t.measureStartMs : null };
}

/** The inverse of {@link encodeTally}. */
export function decodeTally(t: EncodedTally): RunTally {
  const histograms = {} as Record<HistogramName, Hdr.Histogram>;
  for (const k of HISTOGRAM_NAMES) histograms[k] = decodeHistogram(t.histograms[k]);
  return {
    ...t,
    histograms,
    measureStartMs: t.measureStartMs ?? Number.POSITIVE_INFINITY,
  };
}

/**
 * A tally as a shard's file carries it. The file's schema (src/model/shard.ts) checks every counter and
 * histogram but holds the transport's record and the server's metrics as plain objects: this is the
 * one place the two types meet.
 */
export function shipTally(t: RunTally): ShardTally {
  return encodeTally(t) as unknown as ShardTally;
}

/** The inverse of {@link shipTally}. */
export function receiveTally(s: ShardTally): RunTally {
  return decodeTally(s as unknown as EncodedTally);
}

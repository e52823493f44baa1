/**
 * The load engine: options → parts (this thread, or worker threads) → merged statistics → RunResult.
 * It never prints; progress leaves through `events`.
 */

import { EventEmitter } from 'node:events';
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import {
  checkOpenFiles,
  checkOutputPath,
  H2labError,
  isH2labError,
  medianInterpolated,
  readOptionFile,
  VERSION,
} from '../core/index.ts';
import { mergeFlowControl } from '../h2/index.ts';
import type { FlowControlStats, Sample } from '../model/index.ts';
import { type ConnectionAgeMedians, RUN_RESULT_VERSION, type RunResult } from '../model/index.ts';
import type { FixtureTarget, MetricsTls, ServerMetricsClient } from '../server/index.ts';
import { readPemFile } from '../tls/index.ts';
import {
  getStrategy,
  MAX_GOAWAY_RETRIES,
  MAX_RETRIES,
  RECONNECT_BACKOFF,
  requestedWire,
  streamWaitCause,
  streamWaitWords,
  usesQuic,
} from '../transport/index.ts';
import { diagnoseNoSuccess } from './diagnose.ts';
import { type LoadOptionsInput, type ResolvedLoadOptions, resolveLoadOptions } from './options.ts';
import {
  LoadPart,
  mergeLifetimes,
  mergeOutages,
  type PartInput,
  type PartResult,
  resolveWindowFor,
} from './part.ts';
import { type LoadProgress, progressTimer } from './progress.ts';
import { quicFactsOf } from './quic.ts';
import {
  addCounts,
  countsSection,
  decodeHistogram,
  emptyCounts,
  encodeHistogram,
  HISTOGRAM_NAMES,
  newHistogram,
  summarizeHistogram,
} from './stats.ts';
import { tcpFactsOf } from './tcp.ts';
import { runWorkerParts } from './workers.ts';

/** A running load. */
export interface LoadRun {
  /** Resolves with the result, also when the run failed or was stopped (then `error` is set). */
  done: Promise<RunResult>;
  /** Emits `progress` ({@link LoadProgress}). */
  events: EventEmitter;
  /** Ends the run now: requests in flight are aborted; `done` resolves with what was measured. */
  stop(): void;
}

/** What a finished run's parts need from the target side. */
interface Target {
  url: string;
  embedded: boolean;
  /** The fixture server's CPU is counted in this process's (in-process or thread placement). */
  cpuIncludesServer?: boolean;
  metrics?: ServerMetricsClient;
  close?: () => Promise<void>;
  failure?: () => string | undefined;
}

/** The path driven when neither a URL nor a path was given: 1 KiB bodies. */
export const EMBEDDED_DEFAULT_PATH = '/bytes/1024';

/** True when the options name no target, only (optionally) a path on the embedded one. */
export function isEmbedded(url: string | undefined): boolean {
  return url === undefined || url.startsWith('/');
}

/** What {@link runLoad} may be given besides its options. */
export interface LoadDeps {
  /**
   * The fixture server to drive when the options name no URL (or only a path): its TLS listener, or
   * its plain one with `embeddedListener: 'plain'`. The caller owns it (runLoad does not close it).
   * Without it, runLoad starts one in a worker thread of its own and stops it at the end.
   */
  target?: FixtureTarget;
  /**
   * Awaited once every part has opened its transport and before the run's origin is taken: a shard's
   * start barrier (src/shard). The schedule starts when it resolves.
   */
  barrier?: () => Promise<void>;
}

/**
 * Runs one load. Throws synchronously (H2LAB_ERR_INVALID_OPTION, H2LAB_ERR_FILE_UNREADABLE, …) when
 * the options are unusable; every failure after that ends in `done` with `error` set.
 * @example
 * const run = runLoad({ url: 'http://127.0.0.1:8080/bytes/1024', protocol: 'h1', durationMs: 2000 });
 * run.events.on('progress', (p) => console.log(p.rps));
 * const result = await run.done;
 */
export function runLoad(input: LoadOptionsInput, deps: LoadDeps = {}): LoadRun {
  const opts = resolveLoadOptions(input);
  resolveWindowFor(opts);
  const files = loadFiles(opts);
  // Before any load: a samples file that cannot be written would otherwise fail mid-run.
  if (opts.samplesFile) checkOutputPath(opts.samplesFile, '--samples', 'file');
  // …and a pool larger than the process may open would fail part-way with EMFILE. An embedded
  // target in this process holds the server end of every connection too.
  checkOpenFiles(
    opts.connections * (opts.url === undefined || opts.serverInProcess ? 2 : 1),
    '--connections',
    opts.connections,
  );
  const events = new EventEmitter();
  let stopRequested = false;
  let stopHook: ((e: H2labError) => void) | undefined;
  const stop = (): void => {
    if (stopRequested) return;
    stopRequested = true;
    stopHook?.(
      new H2labError(
        'H2LAB_ERR_INTERRUPTED',
        'the run was stopped before its end; the result holds what was measured',
        {},
      ),
    );
  };
  const done = execute(opts, files, deps, events, (hook) => {
    stopHook = hook;
    if (stopRequested) {
      stopRequested = false;
      stop();
    }
  });
  return { done, events, stop };
}

interface Files {
  ca?: string;
  cert?: string;
  key?: string;
  body?: Uint8Array;
}

function loadFiles(o: ResolvedLoadOptions): Files {
  const f: Files = {};
  if (o.ca) f.ca = readPemFile(o.ca, '--ca');
  if (o.cert) f.cert = readPemFile(o.cert, '--cert');
  if (o.key) f.key = readPemFile(o.key, '--key');
  if (o.bodyFile) f.body = readOptionFile(o.bodyFile, '--body', { kind: 'body' });
  else if (o.bodySizeBytes !== undefined && o.bodySizeBytes > 0) {
    // Generated, not zeros: a compressing proxy must not shrink it.
    const b = Buffer.allocUnsafe(o.bodySizeBytes);
    for (let i = 0; i < b.length; i++) b[i] = 97 + ((i * 7919) % 26);
    f.body = b;
  }
  return f;
}

async function startTarget(
  o: ResolvedLoadOptions,
  files: Files,
  given: FixtureTarget | undefined,
): Promise<Target & { ca?: string }> {
  if (!isEmbedded(o.url)) {
    // A URL and a target at once: the run would drive the URL and silently ignore the target (no
    // server view, not its CA). Say which one to drop.
    if (given) {
      throw new H2labError(
        'H2LAB_ERR_INVALID_OPTION',
        `url ${o.url} was given with a fixture target: pass only a path (e.g. ${new URL(o.url!).pathname}) to drive the target, or no target to drive the URL`,
        { option: 'url', value: o.url },
      );
    }
    return { url: o.url!, embedded: false };
  }
  const plain = o.embeddedListener === 'plain';
  // In a thread of its own, so that this client measures only itself (its event loop and CPU).
  const h3 = usesQuic([o.protocol]) ? { h3: true } : {};
  const { startFixtureTarget } = (await loadRunModules()).server;
  const t = given ?? (await startFixtureTarget({ plain, tls: !plain, ...h3 }, 'thread'));
  const base = plain ? t.plainUrl : t.tlsUrl;
  if (!base) {
    if (!given) await t.close();
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `embeddedListener ${plain ? 'plain' : 'tls'}: the given fixture target serves no ${plain ? 'plain' : 'TLS'} listener; start it with that listener or choose the other one`,
      { option: 'embeddedListener', value: plain ? 'plain' : 'tls' },
    );
  }
  return {
    url: `${base}${o.url?.startsWith('/') ? o.url : EMBEDDED_DEFAULT_PATH}`,
    embedded: true,
    cpuIncludesServer: t.placement !== 'namespace',
    metrics: t.metrics,
    failure: t.failure,
    ...(given ? {} : { close: t.close }),
    ...(t.caPem && !files.ca ? { ca: t.caPem } : {}),
  };
}

/** Splits `total` into `n` near-equal integer shares. */
export function split(total: number, n: number, i: number): number {
  return Math.floor(total / n) + (i < total % n ? 1 : 0);
}

/**
 * The fixture server's and the report's modules, loaded when a run starts rather than with the
 * engine: `bench --help` and every command that only builds load options loaded them for nothing
 * (issue 29). {@link execute} loads them before anything that uses them.
 */
let runModules:
  | { server: typeof import('../server/index.ts'); report: typeof import('../report/index.ts') }
  | undefined;
async function loadRunModules(): Promise<NonNullable<typeof runModules>> {
  runModules ??= { server: await import('../server/index.ts'), report: await import('../report/index.ts') };
  return runModules;
}

async function execute(
  o: ResolvedLoadOptions,
  files: Files,
  deps: LoadDeps,
  events: EventEmitter,
  onStopHook: (hook: (e: H2labError) => void) => void,
): Promise<RunResult> {
  const { server, report } = await loadRunModules();
  const { metricsDelta, serverViewOf } = server;
  const { sampleCsvHeader, sampleCsvRow } = report;
  const startedAt = new Date().toISOString();
  let target: Target & { ca?: string };
  try {
    target = await startTarget(o, files, deps.target);
  } catch (err) {
    return failedResult(
      o,
      { url: o.url ?? '(embedded)', embedded: isEmbedded(o.url) },
      startedAt,
      toH2labError(err),
    );
  }
  let samplesOut: WriteStream | undefined;
  let samplesError: H2labError | undefined;
  let stopWith: ((e: H2labError) => void) | undefined;
  const registerStop = (hook: (e: H2labError) => void): void => {
    stopWith = hook;
    onStopHook(hook);
  };
  const ca = files.ca ?? target.ca;
  const tls = {
    ...(ca ? { ca } : {}),
    ...(files.cert ? { cert: files.cert, key: files.key } : {}),
    ...(o.insecure ? { insecure: true } : {}),
  };
  try {
    const n = o.workers;
    // An open-loop shard (src/shard): each worker walks the whole run's arrivals and keeps its own
    // residue class, so shards × workers split one sequence exactly.
    const share = o.shard && o.rateRps !== undefined ? o.shard : undefined;
    const inputs: PartInput[] = Array.from({ length: n }, (_, i) => {
      const own = share ? { index: share.index + share.count * i, count: share.count * n } : undefined;
      return {
        opts: o,
        url: target.url,
        tls,
        ...(files.body ? { body: files.body } : {}),
        concurrency: split(o.concurrency, n, i),
        ...(o.rateRps !== undefined ? { rateRps: share ? o.rateRps : o.rateRps / n } : {}),
        ...(o.requests !== undefined ? { requests: share ? o.requests : split(o.requests, n, i) } : {}),
        // A fixed count (h2: one session) is per worker: each thread holds its own.
        connections: getStrategy(o.protocol).connections.fixed ?? Math.max(1, split(o.connections, n, i)),
        seed: o.seed + (o.shard ? o.shard.index * n : 0) + i,
        seqStart: own?.index ?? i,
        seqStride: own?.count ?? n,
        ...(own ? { arrivals: { seed: o.seed, ...own } } : {}),
      };
    });
    let onSample: ((s: Sample) => void) | undefined;
    let onWorkerLine: ((line: string) => void) | undefined;
    if (o.samplesFile) {
      const out = createWriteStream(o.samplesFile);
      samplesOut = out;
      // A write that fails mid-run (disk full, file system gone) ends the run with what it measured,
      // never as an unhandled 'error' event.
      out.on('error', (err) => {
        if (samplesError) return;
        const reason = (err as NodeJS.ErrnoException).code ?? err.message;
        samplesError = new H2labError(
          'H2LAB_ERR_OUTPUT',
          `--samples ${o.samplesFile}: writing failed (${reason}); the run was stopped and its result keeps what was measured; choose a path on a file system with room`,
          { option: '--samples', path: o.samplesFile, reason },
        );
        stopWith?.(samplesError);
      });
      const csv = samplesFormatOf(o) === 'csv';
      if (csv) out.write(sampleCsvHeader());
      onSample = csv ? (s) => out.write(sampleCsvRow(s)) : (s) => out.write(`${JSON.stringify(s)}\n`);
      // Worker threads hand over NDJSON lines: written as they are, parsed only to become CSV rows.
      onWorkerLine = csv
        ? (line) => out.write(sampleCsvRow(JSON.parse(line) as Sample))
        : (line) => out.write(`${line}\n`);
    }
    const metrics = serverMetricsOf(o, target, tls);
    const serverBefore = await metrics?.tryRead();
    const cpu0 = process.cpuUsage();
    const parts =
      n === 1
        ? await runLocal(inputs[0]!, o, events, registerStop, onSample, deps.barrier)
        : await runWorkerParts(inputs, o, events, registerStop, onWorkerLine, deps.barrier);
    const cpu = process.cpuUsage(cpu0);
    if (samplesOut) await closeSamples(samplesOut);

    const serverAfter = await metrics?.tryRead();
    const result = buildResult(o, target, startedAt, parts, {
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      ...(serverBefore && serverAfter
        ? { server: serverViewOf(metricsDelta(serverBefore, serverAfter)) }
        : {}),
      serverMetricsAfter: serverAfter,
    });
    if (result.error?.code === 'H2LAB_ERR_ERROR_RATE' && result.counts.ok === 0 && !target.embedded) {
      // Every request failed: a wrong scheme or a missing client certificate explains that better.
      const named = await diagnoseNoSuccess(target.url, tls);
      if (named) result.error = { ...named.toJSON(), details: { ...named.details, ...result.error.details } };
    }
    const crashed = target.failure?.();
    if (crashed) result.warnings.push(crashed);
    // A samples write that failed after the last part stopped (the final flush) still fails the run.
    if (samplesError && !result.error) result.error = samplesError.toJSON();
    return result;
  } catch (err) {
    let e = toH2labError(err);
    const cleartext = new URL(target.url).protocol === 'http:';
    if (e.code === 'H2LAB_ERR_TARGET_UNREACHABLE' && (tls.cert || cleartext) && !target.embedded) {
      // A session the server closed before its first frame, after a handshake with our certificate:
      // a refused certificate explains that better (Node's TLS server sends no alert for it). Over
      // http://, a TLS port closes on the h2c preface: the wrong scheme explains that better.
      const named = await diagnoseNoSuccess(target.url, tls);
      if (named) e = new H2labError(named.code, named.message, { ...named.details, ...e.details });
    }
    return failedResult(o, target, startedAt, e);
  } finally {
    if (samplesOut) await closeSamples(samplesOut);
    await target.close?.();
  }
}

/** The format of `--samples`: as asked, else by the file name (`.csv`), else NDJSON. */
export function samplesFormatOf(o: {
  samplesFile?: string;
  samplesFormat?: 'ndjson' | 'csv';
}): 'ndjson' | 'csv' {
  return o.samplesFormat ?? (o.samplesFile && /\.csv$/i.test(o.samplesFile) ? 'csv' : 'ndjson');
}

/** Ends the samples stream; end()'s callback never comes after an error, so either one settles it. */
function closeSamples(out: WriteStream): Promise<void> {
  return new Promise<void>((r) => {
    if (out.errored || out.destroyed || out.writableFinished) return r();
    out.once('error', () => r());
    out.end(() => r());
  });
}

/** Runs one part in this thread. A failure to open becomes a part with `error` and nothing measured. */
async function runLocal(
  input: PartInput,
  o: ResolvedLoadOptions,
  events: EventEmitter,
  onStopHook: (hook: (e: H2labError) => void) => void,
  onSample: ((s: Sample) => void) | undefined,
  barrier: (() => Promise<void>) | undefined,
): Promise<PartResult[]> {
  const part = new LoadPart(input);
  onStopHook((e) => part.stop(e));
  await part.prepare();
  try {
    await barrier?.();
  } catch (err) {
    part.stop(toH2labError(err));
    throw err;
  }
  const origin = performance.timeOrigin + performance.now();
  const progress = progressTimer(o, events, origin, () => [part.live]);
  try {
    return [await part.start({ originEpochMs: origin, inThread: true, ...(onSample ? { onSample } : {}) })];
  } finally {
    clearInterval(progress);
  }
}

function toH2labError(err: unknown): H2labError {
  if (isH2labError(err)) return err;
  const e = err instanceof Error ? err : new Error(String(err));
  return new H2labError('H2LAB_ERR_INTERNAL', e.message, { stack: e.stack });
}

function environment(startedAt: string): RunResult['environment'] {
  let cc: string | undefined;
  try {
    cc = readFileSync('/proc/sys/net/ipv4/tcp_congestion_control', 'utf8').trim();
  } catch {
    cc = undefined;
  }
  return {
    h2labVersion: VERSION,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpus: os.availableParallelism(),
    ...(cc ? { congestionControl: cc } : {}),
    startedAt,
  };
}

/**
 * Was the load client the bottleneck? Busy (event loop > 90 % utilised) *and* using its CPU (> 60 % of
 * a core per thread), or using > 90 % per thread: `saturated`, these numbers may measure h2lab. An
 * event loop that is busy without getting the CPU was starved by other processes on the machine: not
 * saturated, but said, because such numbers measure the machine's contention. With the embedded
 * fixture server the process CPU includes the server's thread, so only the event loop can say.
 */
export function judgeClient(
  elu: number,
  cpu: number,
  workers: number,
  cpus: number,
  loadAverage: number,
  cpuIncludesServer = false,
): { saturated: boolean; note?: string } {
  const threads = Math.max(1, Math.min(workers, cpus));
  const perThread = cpu / threads;
  const loop = `event loop ${(elu * 100).toFixed(0)}% utilised, ${cpu.toFixed(2)} CPU cores${cpuIncludesServer ? ' with the embedded server' : ''}`;
  // With the server's thread in the process CPU, only the event loop can say.
  const busy = cpuIncludesServer ? elu > 0.9 : perThread > 0.9 || (elu > 0.9 && perThread > 0.6);
  if (busy) {
    const more = workers < cpus ? `; try --workers ${Math.min(cpus, workers * 2)}` : '';
    return {
      saturated: true,
      note: `the load client was busy (${loop}): these numbers may measure h2lab rather than the server${more}`,
    };
  }
  if (cpuIncludesServer) return { saturated: false };
  if (elu > 0.9) {
    return {
      saturated: false,
      note: `the load client had work but not the CPU (${loop}, load average ${loadAverage.toFixed(1)} on ${cpus} cores): other processes on this machine slowed it down, so these numbers carry their noise; rerun on a quieter machine`,
    };
  }
  return { saturated: false };
}

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

function schedule(o: ResolvedLoadOptions, parts: PartResult[]): RunResult['schedule'] {
  const firsts = parts.flatMap((p) => (p.firstSentMs === undefined ? [] : [p.firstSentMs]));
  const first = firsts.length > 0 ? { firstSendMs: Math.min(...firsts) } : {};
  return { ...scheduleOf(o), ...first };
}

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

/** The burst section of a result from the parts' bursts; undefined when no burst ran. */
function burstResult(o: ResolvedLoadOptions, parts: PartResult[]): RunResult['burst'] {
  const all = parts.flatMap((p) => p.bursts ?? []).sort((a, b) => a.startMs - b.startMs);
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

/** A result for a run that measured nothing (target unreachable, protocol mismatch at open…). */
function failedResult(o: ResolvedLoadOptions, target: Target, startedAt: string, err: H2labError): RunResult {
  const r = buildResult(o, target, startedAt, [], { cpuSeconds: 0, server: undefined });
  const negotiated = err.details.negotiated;
  if (negotiated === 'http/1.1' || negotiated === 'h2' || negotiated === 'h2c') {
    r.protocol.negotiated = negotiated;
  }
  r.error = err.toJSON();
  return r;
}

/** Merges parts into the RunResult. */
function buildResult(
  o: ResolvedLoadOptions,
  target: Target,
  startedAt: string,
  parts: PartResult[],
  extra: { cpuSeconds: number; server?: RunResult['server']; serverMetricsAfter?: unknown },
): RunResult {
  const counts = emptyCounts();
  const hist = Object.fromEntries(HISTOGRAM_NAMES.map((k) => [k, newHistogram()])) as Record<
    (typeof HISTOGRAM_NAMES)[number],
    ReturnType<typeof newHistogram>
  >;
  let start = Number.POSITIVE_INFINITY;
  let end = 0;
  let elu = 0;
  // Process-wide CPU over the measured period, the busiest reading of the parts (they share one period).
  let cpu = 0;
  let opened = 0;
  let peakInFlight = 0;
  let peakStreams = 0;
  let capHits = 0;
  let maxStreams: number | undefined;
  let rpcSum = 0;
  let rpcN = 0;
  let rpcMax = 0;
  let flow: FlowControlStats | undefined;
  let error: PartResult['error'];
  let negotiated: RunResult['protocol']['negotiated'] = 'none';
  let tlsVersion: string | undefined;
  for (const p of parts) {
    addCounts(counts, p.counts);
    for (const k of HISTOGRAM_NAMES) hist[k].add(p.live ? p.live[k] : decodeHistogram(p.histograms![k]));
    start = Math.min(start, p.measureStartMs);
    end = Math.max(end, p.measureEndMs);
    elu = Math.max(elu, p.eventLoopUtilization);
    if (p.measuredCpu.wallMs > 0) cpu = Math.max(cpu, p.measuredCpu.us / 1000 / p.measuredCpu.wallMs);
    const t = p.transport;
    opened += t.opened;
    peakInFlight += t.peakInFlight;
    peakStreams = Math.max(peakStreams, t.peakStreamsPerConnection);
    capHits += t.capHits;
    tlsVersion ??= t.tlsVersion;
    if (t.serverMaxConcurrentStreams !== undefined) {
      maxStreams = Math.min(maxStreams ?? Number.POSITIVE_INFINITY, t.serverMaxConcurrentStreams);
    }
    rpcSum += t.requestsPerConnection.requests;
    rpcN += t.requestsPerConnection.connections;
    rpcMax = Math.max(rpcMax, t.requestsPerConnection.max);
    flow = mergeFlowControl(flow, t.flowControl);
    if (p.negotiated !== 'none') negotiated = p.negotiated;
    error ??= p.error;
  }
  const durationMs = Math.max(0, end - start);
  const secs = durationMs / 1000;
  // Streams share a connection: their peak and the waits at the server's stream limit are facts.
  const multiplexed = getStrategy(o.protocol).multiplexed;
  const tcp = tcpFactsOf(
    parts.map((p) => p.transport),
    extra.serverMetricsAfter,
    Date.parse(startedAt),
  );
  const quic = quicFactsOf(parts.map((p) => p.transport));
  const warnings: string[] = [];
  const cpus = os.availableParallelism();
  const judged = judgeClient(
    elu,
    cpu,
    o.workers,
    cpus,
    os.loadavg()[0]!,
    target.cpuIncludesServer === true || o.serverInProcess === true,
  );
  const saturated = judged.saturated;
  let note = judged.note;
  if (note && getStrategy(o.protocol).quic && counts.total > 0) {
    // The number that explains it: HTTP/3's client costs several times HTTP/2's per request.
    const us = ((cpu * secs) / counts.total) * 1e6;
    note += `; the HTTP/3 client (the QUIC binding) used ${us.toFixed(0)} µs CPU per request${target.cpuIncludesServer ? ' with the embedded server' : ''}, about 7× h2lab's HTTP/2 client (docs/performance.md, bench/h3-client-cpu.ts)`;
  }
  if (note) warnings.push(note);
  // One rule with the compare verdict's (src/transport/stream-wait.ts): the limit named is the one a
  // connection reached.
  const waits = {
    streamCapHits: capHits,
    serverMaxConcurrentStreams: maxStreams,
    peakStreamsPerConnection: peakStreams,
    lifetimes: mergeLifetimes(parts.map((p) => p.transport)).lifetimes,
  };
  const waitCause = multiplexed
    ? streamWaitCause(waits, getStrategy(o.protocol).quic !== undefined)
    : undefined;
  if (waitCause) {
    warnings.push(
      `requests waited in the client for a stream slot ${capHits} times: ${streamWaitWords(waitCause, waits)}`,
    );
  }
  if (counts.retried > 0) {
    warnings.push(
      `the server refused ${counts.retried} requests unprocessed (GOAWAY or REFUSED_STREAM) and they were sent again, as browsers do (${counts.attempts} attempts in all, ${counts.unprocessed} named unprocessed by GOAWAY); their latency includes the retry (a server ending sessions after N requests, e.g. nginx keepalive_requests, does this)`,
    );
  }
  if (counts.late > 0) {
    warnings.push(
      `${counts.late} requests left later than ${o.lateToleranceMs} ms after their intended time (open loop)`,
    );
  }
  const latency = summarizeHistogram(hist.latency);
  const burst = burstResult(o, parts);
  if (burst && burst.failed > 0) {
    warnings.push(
      `${burst.failed} of ${burst.requests * burst.bursts} requests of the burst${burst.bursts > 1 ? 's' : ''} failed (see counts.byFailure): the completion time still ends at the last response or failure`,
    );
  }
  let finalError = error;
  if (!finalError && counts.total > 0) {
    const rate = counts.failed / counts.total;
    if ((o.maxErrorRate !== undefined && rate > o.maxErrorRate) || counts.ok === 0) {
      finalError = new H2labError(
        'H2LAB_ERR_ERROR_RATE',
        counts.ok === 0
          ? `no request succeeded (${counts.failed} of ${counts.total} failed): see counts.byStatus and counts.byFailure`
          : `${(rate * 100).toFixed(2)}% of requests failed, more than --max-error-rate ${(o.maxErrorRate! * 100).toFixed(2)}%`,
        { failed: counts.failed, total: counts.total, maxErrorRate: o.maxErrorRate },
      ).toJSON();
    }
  }
  const result: RunResult = {
    kind: 'h2lab.run',
    version: RUN_RESULT_VERSION,
    options: { ...o },
    environment: environment(startedAt),
    target: { url: target.url, embedded: target.embedded },
    transport: transportInfo(o),
    protocol: { requested: requestedWire(getStrategy(o.protocol), target.url), negotiated },
    schedule: schedule(o, parts),
    ...(burst ? { burst } : {}),
    durationMs,
    warmupMs: o.warmupMs,
    counts: countsSection(counts, o.rateRps !== undefined),
    throughput: {
      rps: secs > 0 ? counts.total / secs : 0,
      bytesPerSec: secs > 0 ? counts.bytesIn / secs : 0,
      bytesIn: counts.bytesIn,
      bytesOut: counts.bytesOut,
    },
    latencyMs: latency,
    ...(o.rateRps !== undefined ? { latencyUncorrectedMs: summarizeHistogram(hist.latencyUncorrected) } : {}),
    ttfbMs: summarizeHistogram(hist.ttfb),
    clientQueueMs: summarizeHistogram(hist.clientQueue),
    histograms: {
      latency: encodeHistogram(hist.latency),
      ttfb: encodeHistogram(hist.ttfb),
      ...(o.rateRps !== undefined ? { latencyUncorrected: encodeHistogram(hist.latencyUncorrected) } : {}),
    },
    connections: {
      opened,
      ...(hist.connect.totalCount > 0 ? { connectMs: summarizeHistogram(hist.connect) } : {}),
      ...(hist.tls.totalCount > 0 ? { tlsMs: summarizeHistogram(hist.tls) } : {}),
      peakInFlight,
      ...(multiplexed ? { peakStreamsPerConnection: peakStreams, streamCapHits: capHits } : {}),
      ...(maxStreams !== undefined ? { serverMaxConcurrentStreams: maxStreams } : {}),
      ...(tlsVersion !== undefined ? { tlsVersion } : {}),
      requestsPerConnection: { mean: rpcN > 0 ? rpcSum / rpcN : 0, max: rpcMax },
      ...(tcp ? { tcp } : {}),
      ...mergeLifetimes(parts.map((p) => p.transport)),
      ...(quic ? { quic } : {}),
      ...mergeOutages(parts.map((p) => p.transport)),
    },
    client: {
      eventLoopUtilization: elu,
      cpu,
      cpuSeconds: extra.cpuSeconds,
      workers: o.workers,
      maxRssBytes: process.resourceUsage().maxRSS * 1024,
      saturated,
      ...(note ? { note } : {}),
    },
    ...(extra.server ? { server: extra.server } : {}),
    ...(flow ? { flowControl: flow } : {}),
    ...(hist.ttfbNew.totalCount + hist.ttfbWarm.totalCount > 0
      ? {
          connectionAge: {
            newConnection: ageMedians(hist.ttfbNew, hist.responseNew, hist.bodyGapNew),
            warmConnection: ageMedians(hist.ttfbWarm, hist.responseWarm, hist.bodyGapWarm),
          },
        }
      : {}),
    warnings,
    ...(finalError ? { error: finalError } : {}),
  };
  // execute() loaded the report's modules before any result is built.
  for (const c of runModules!.report.confoundersOf(result)) warnings.push(c.text);
  return result;
}

type Histogram = ReturnType<typeof newHistogram>;

function ageMedians(ttfb: Histogram, response: Histogram, bodyGap: Histogram): ConnectionAgeMedians {
  return {
    count: ttfb.totalCount,
    ttfbP50Ms: summarizeHistogram(ttfb).p50,
    responseP50Ms: summarizeHistogram(response).p50,
    smallBodyCount: bodyGap.totalCount,
    bodyAfterHeadersP50Ms: summarizeHistogram(bodyGap).p50,
  };
}

/**
 * The metrics to read around the run, when asked to (default: the embedded target only): the fixture
 * target's own client, or `/metrics` on the origin of the URL.
 */
function serverMetricsOf(
  o: ResolvedLoadOptions,
  target: Target,
  tls: MetricsTls,
): ServerMetricsClient | undefined {
  if (!(o.serverMetrics ?? target.embedded)) return undefined;
  const { metricsClient, metricsUrlOf } = runModules!.server;
  return target.metrics ?? metricsClient(metricsUrlOf(target.url), { tls });
}

/**
 * The load engine: options → parts (this thread, or worker threads) → merged statistics → RunResult.
 * It never prints; progress leaves through `events`.
 */

import { EventEmitter } from 'node:events';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import os from 'node:os';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  checkOpenFiles,
  checkOutputPath,
  H2labError,
  isH2labError,
  KEY_LOG_UNLOCKS,
  readOptionFile,
} from '../core/index.ts';
import { flushFrameLogs } from '../h2/index.ts';
import type { RunResult, Sample } from '../model/index.ts';
import type { FixtureTarget, MetricsTls, ServerMetricsClient } from '../server/index.ts';
import { readTlsFiles } from '../tls/index.ts';
import { getStrategy, usesQuic } from '../transport/index.ts';
import { diagnoseNoSuccess } from './diagnose.ts';
import { type LoadOptionsInput, type ResolvedLoadOptions, resolveLoadOptions } from './options.ts';
import { type LoadProgress, progressTimer } from './progress.ts';
import { environmentOf, type ResultContext, resolveWindowFor, toRunResult } from './result.ts';
import { LoadShare, type ShareInput } from './share.ts';
import { emptyTally, mergeAll, PROCESS_KEY, type RunTally, type ServerReading } from './tally.ts';
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
const EMBEDDED_DEFAULT_PATH = '/bytes/1024';

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
  /** Given the run's tally before its result is built: a shard ships it (src/shard). */
  onTally?: (tally: RunTally) => void;
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
  if (opts.keyLogFile) checkOutputPath(opts.keyLogFile, '--keylog', 'file');
  if (opts.framesFile) checkOutputPath(opts.framesFile, '--frames', 'file');
  if (opts.qlogDir) {
    checkOutputPath(opts.qlogDir, '--qlog', 'dir');
    mkdirSync(opts.qlogDir, { recursive: true });
  }
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
  Object.assign(f, readTlsFiles(o, 'to send no client certificate'));
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
  // With --qlog the fixture writes its side of each QUIC connection beside the client's.
  const h3 = usesQuic([o.protocol])
    ? { h3: true, quicRetry: o.quicRetry, ...(o.qlogDir ? { qlogDir: resolve(o.qlogDir) } : {}) }
    : {};
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
 * engine: `bench --help` and every command that only builds load options needs none of them.
 * {@link execute} loads them before anything that uses them.
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
  const { sampleCsvHeader, sampleCsvRow } = (await loadRunModules()).report;
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
    ...(o.keyLogFile ? { keyLogFile: o.keyLogFile } : {}),
  };
  try {
    const n = o.workers;
    // An open-loop shard (src/shard): each worker walks the whole run's arrivals and keeps its own
    // residue class, so shards × workers split one sequence exactly.
    const share = o.shard && o.rateRps !== undefined ? o.shard : undefined;
    const inputs: ShareInput[] = Array.from({ length: n }, (_, i) => {
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
    const before = await readServer(metrics);
    const cpu0 = process.cpuUsage();
    const parts =
      n === 1
        ? await runLocal(inputs[0]!, o, events, registerStop, onSample, deps.barrier)
        : await runWorkerParts(inputs, o, events, registerStop, onWorkerLine, deps.barrier);
    const cpu = process.cpuUsage(cpu0);
    if (samplesOut) await closeSamples(samplesOut);
    const after = await readServer(metrics);
    const tally = mergeAll(parts);
    // The engine's own readings of this process: the whole run's CPU, its memory, the machine's load.
    const self = tally.processes[PROCESS_KEY];
    if (self) {
      self.cpuSeconds = (cpu.user + cpu.system) / 1e6;
      self.maxRssBytes = process.resourceUsage().maxRSS * 1024;
      self.cpus = os.availableParallelism();
      self.loadAverage = os.loadavg()[0]!;
    }
    if (before || after) tally.server = { ...(before ? { before } : {}), ...(after ? { after } : {}) };
    deps.onTally?.(tally);
    const result = toRunResult(tally, resultContext(o, target, startedAt));
    if (result.error?.code === 'H2LAB_ERR_ERROR_RATE' && result.counts.ok === 0 && !target.embedded) {
      // Every request failed: a wrong scheme or a missing client certificate explains that better.
      const named = await diagnoseNoSuccess(target.url, tls);
      if (named) result.error = { ...named.toJSON(), details: { ...named.details, ...result.error.details } };
    }
    const crashed = target.failure?.();
    if (crashed) result.warnings.push(crashed);
    // A samples write that failed after the last part stopped (the final flush) still fails the run.
    if (samplesError && !result.error) result.error = samplesError.toJSON();
    // h2lab's own client logs frames; HTTP/1.1, HTTP/3 and node:http2 have none to log. The paths are
    // recorded absolute, as the capture's: a report's command lines then open them from anywhere.
    if (o.framesFile && getStrategy(o.protocol).http2 && o.h2Client === 'h2lab') {
      flushFrameLogs();
      result.evidence = { ...result.evidence, frames: { file: resolve(o.framesFile) } };
    }
    if (o.qlogDir && usesQuic([o.protocol]))
      result.evidence = { ...result.evidence, qlog: { dir: resolve(o.qlogDir) } };
    if (o.keyLogFile && new URL(target.url).protocol === 'https:') {
      result.evidence = {
        ...result.evidence,
        keyLog: { file: resolve(o.keyLogFile), unlocks: KEY_LOG_UNLOCKS },
      };
    }
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
function samplesFormatOf(o: { samplesFile?: string; samplesFormat?: 'ndjson' | 'csv' }): 'ndjson' | 'csv' {
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
  input: ShareInput,
  o: ResolvedLoadOptions,
  events: EventEmitter,
  onStopHook: (hook: (e: H2labError) => void) => void,
  onSample: ((s: Sample) => void) | undefined,
  barrier: (() => Promise<void>) | undefined,
): Promise<RunTally[]> {
  const part = new LoadShare(input);
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
    return [await part.start({ originEpochMs: origin, ...(onSample ? { onSample } : {}) })];
  } finally {
    clearInterval(progress);
  }
}

function toH2labError(err: unknown): H2labError {
  if (isH2labError(err)) return err;
  const e = err instanceof Error ? err : new Error(String(err));
  return new H2labError('H2LAB_ERR_INTERNAL', e.message, { stack: e.stack });
}

/** A result for a run that measured nothing (target unreachable, protocol mismatch at open…). */
function failedResult(o: ResolvedLoadOptions, target: Target, startedAt: string, err: H2labError): RunResult {
  const r = toRunResult(emptyTally(), resultContext(o, target, startedAt));
  const negotiated = err.details.negotiated;
  if (negotiated === 'http/1.1' || negotiated === 'h2' || negotiated === 'h2c') {
    r.protocol.negotiated = negotiated;
  }
  r.error = err.toJSON();
  return r;
}

/** What a result of this engine's run needs besides its tally. */
function resultContext(o: ResolvedLoadOptions, target: Target, startedAt: string): ResultContext {
  // execute() loaded the server's and the report's modules before any result is built.
  const { server, report } = runModules!;
  return {
    options: o,
    target: {
      url: target.url,
      embedded: target.embedded,
      ...(target.cpuIncludesServer ? { cpuIncludesServer: true } : {}),
    },
    environment: environmentOf(startedAt),
    serverView: (r) =>
      r.before && r.after
        ? server.serverViewOf(server.metricsDelta(r.before.metrics, r.after.metrics))
        : undefined,
    confounders: report.confoundersOf,
  };
}

/** One reading of the server's metrics, timed; undefined when there is none to read or it failed. */
async function readServer(metrics: ServerMetricsClient | undefined): Promise<ServerReading | undefined> {
  const m = await metrics?.tryRead();
  return m ? { atEpochMs: Date.now(), metrics: m } : undefined;
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

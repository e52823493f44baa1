/**
 * Entry point of the relay child process (spawned by `link.ts` with an IPC channel).
 *
 * Protocol (IPC messages): parent → `{type:'start', clientName, serverName, up, down, seed, slackMs}`;
 * child → `{type:'ready', client, server}` once both TUN devices are open (the parent then moves the
 * server one into its namespace). `{type:'stats'}` → `{type:'stats', stats, cpuUs, uptimeMs, gc}`. With `traceCapacity` in
 * `start`, `{type:'trace', path}` writes the per-packet trace (`relay-trace.ts`) to `path.packets`,
 * `path.wakes` (raw Float64Array) and `path.json`, then answers `{type:'trace'}`.
 * `{type:'capture-start', snapBytes, maxBytes}` starts the capture stage (`capture.ts`) and answers
 * `{type:'capture-start'}`; `{type:'capture-stop', path}` writes what it holds to `path` as pcapng
 * and answers `{type:'capture-stop', summary}` (no summary when none was running).
 * `{type:'stop'}` or a closed channel (the parent died) → exit; the kernel then destroys both TUN
 * devices because they are not persistent.
 */
import { writeFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { PerformanceObserver } from 'node:perf_hooks';
import { LinkCapture } from './capture.ts';
import type { DirectionSpec } from './conditions/types.ts';
import { loadNative } from './native.ts';
import { createLinkPipeline } from './pipeline.ts';
import { Relay } from './relay.ts';
import { RelayTrace } from './relay-trace.ts';

interface StartMessage {
  type: 'start';
  clientName: string;
  serverName: string;
  up: DirectionSpec;
  down: DirectionSpec;
  seed: number;
  slackMs?: number;
  earlyWakeMs?: number;
  /** Packets to record per-packet timestamps for (0 or absent = no trace). */
  traceCapacity?: number;
}

function send(msg: unknown): void {
  process.send?.(msg);
}

let relay: Relay | undefined;
let trace: RelayTrace | undefined;
const gc = { count: 0, totalMs: 0, maxMs: 0 };
const fds: number[] = [];
const cpuStart = process.cpuUsage();
const started = performance.now();

function stop(code: number): never {
  try {
    relay?.close();
    const native = loadNative();
    for (const fd of fds) native.closeFd(fd);
  } catch {}
  process.exit(code);
}

process.on('disconnect', () => stop(0));
process.on('message', async (raw) => {
  const msg = raw as { type: string };
  try {
    if (msg.type === 'start') {
      // Start libuv's thread pool now, while this process still has ordinary priority: the parent
      // then makes only this main thread realtime, and threads created later would inherit that.
      await stat(process.execPath);
      const m = msg as StartMessage;
      const native = loadNative();
      const client = native.openTun(m.clientName);
      fds.push(client.fd);
      const server = native.openTun(m.serverName);
      fds.push(server.fd);
      const pipeline = createLinkPipeline({ up: m.up, down: m.down }, m.seed);
      if (m.traceCapacity) trace = new RelayTrace(m.traceCapacity);
      // Collect start-up garbage now (a full collection took ~10 ms when it came during the first
      // packets instead); `gc` exists because link.ts starts this process with --expose-gc.
      (globalThis as { gc?: () => void }).gc?.();
      // GC pauses stop the relay: count them (and trace them on the relay's clock: performance.now()
      // and CLOCK_MONOTONIC differ by an offset).
      const offset = native.nowMs() - performance.now();
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) {
          gc.count++;
          gc.totalMs += e.duration;
          gc.maxMs = Math.max(gc.maxMs, e.duration);
          const kind = (e as { detail?: { kind?: number } }).detail?.kind ?? 0;
          trace?.gcs.push({ startMs: e.startTime + offset, durationMs: e.duration, kind });
        }
      }).observe({ entryTypes: ['gc'] });
      relay = new Relay(native, {
        clientFd: client.fd,
        serverFd: server.fd,
        up: pipeline.up,
        down: pipeline.down,
        ...(m.slackMs === undefined ? {} : { slackMs: m.slackMs }),
        ...(m.earlyWakeMs === undefined ? {} : { earlyWakeMs: m.earlyWakeMs }),
        ...(trace ? { trace } : {}),
      });
      send({ type: 'ready', client: client.name, server: server.name });
    } else if (msg.type === 'stats') {
      const cpu = process.cpuUsage(cpuStart);
      send({
        type: 'stats',
        stats: relay?.stats(),
        cpuUs: cpu.user + cpu.system,
        gc,
        uptimeMs: performance.now() - started,
      });
    } else if (msg.type === 'trace') {
      const path = (msg as { type: string; path?: string }).path ?? '';
      const data = trace?.data();
      if (data) {
        writeFileSync(`${path}.packets`, data.packets);
        writeFileSync(`${path}.wakes`, data.wakes);
        writeFileSync(`${path}.json`, JSON.stringify({ gcs: data.gcs, missed: data.missed }));
      }
      send({ type: 'trace', ok: data !== undefined });
    } else if (msg.type === 'capture-start') {
      const m = msg as { type: string; snapBytes: number; maxBytes: number };
      const native = loadNative();
      relay?.captureInto(
        new LinkCapture({
          snapBytes: m.snapBytes,
          maxBytes: m.maxBytes,
          monotonicToEpochMs: native.nowMs() - Date.now(),
        }),
      );
      // The capture's chunks were just allocated: let V8 account for them now, not mid-run.
      (globalThis as { gc?: () => void }).gc?.();
      send({ type: 'capture-start', ok: relay !== undefined });
    } else if (msg.type === 'capture-stop') {
      const path = (msg as { type: string; path: string }).path;
      const capture = relay?.captureInto(undefined);
      send({ type: 'capture-stop', summary: capture?.writeTo(path) });
    } else if (msg.type === 'stop') {
      stop(0);
    }
  } catch (err) {
    const e = err as Error & { code?: string; details?: unknown };
    send({ type: 'error', code: e.code, message: e.message, details: e.details });
  }
});

/**
 * The CPU-bound render mode of the backend pool (`--tile-render cpu`): one worker thread per pool
 * worker, each pinned (sched_setaffinity, through util-linux's `taskset`) to the same `--render-cores`
 * CPUs, and each tile burns `--tile-ms` of *CPU time* on its thread. While no more workers are busy
 * than the cores they were given, a tile takes its CPU time in wall time; beyond, the kernel shares
 * the cores and every busy tile takes longer (about busy / cores times) — the regime of a tile
 * renderer whose "tile is single-threaded CPU", where a pool larger than the cores cannot help.
 *
 *   pool job ──▶ free thread (pinned to the render cores) ──▶ burn until its thread has used cpuMs
 *                   │ cancel: a shared flag the burn loop reads between slices
 *
 * CPU time is read from /proc/thread-self/schedstat (the thread's nanoseconds on a CPU), which the
 * kernel brings up to date at each scheduler tick: a tile may overrun its CPU time by up to one tick
 * (1–4 ms).
 */
import { execFileSync } from 'node:child_process';
import { cpus as osCpus } from 'node:os';
import { Worker } from 'node:worker_threads';
import { H2labError } from '../core/index.ts';

/** The burn loop, run in each worker thread (CommonJS, evaluated). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const flags = new Int32Array(workerData.flags);
const slot = workerData.slot;
const cpuNs = () => Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
let sink = 0;
parentPort.on('message', (m) => {
  const end = cpuNs() + m.cpuMs * 1e6;
  for (;;) {
    if (Atomics.load(flags, slot) !== m.seq) break; // cancelled: the pool moved on
    for (let i = 0; i < 50000; i++) sink += Math.sqrt(i + sink);
    if (sink > 1e300) sink = 0;
    if (cpuNs() >= end) break;
  }
  parentPort.postMessage(m.seq);
});
parentPort.postMessage(fs.readlinkSync('/proc/thread-self').split('/').pop());
`;

interface Thread {
  worker: Worker;
  slot: number;
  /** Sequence number of the job it runs; 0 when free. */
  seq: number;
  onDone?: () => void;
}

/** A running CPU job, cancellable. */
export interface CpuJob {
  cancel(): void;
}

/**
 * The CPUs the render threads are pinned to: the last `cores` of this machine's (CPU 0 takes most
 * interrupts). Counted from every CPU of the machine, not this process's affinity, which
 * {@link pinThisProcess} narrows. Throws when there are not that many.
 */
export function renderCpuList(cores: number, available = osCpus().length): number[] {
  if (cores > available)
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `--render-cores ${cores} is not valid: this machine has ${available} CPU(s); give at most ${available}`,
      { option: '--render-cores', value: cores },
    );
  return Array.from({ length: cores }, (_, i) => available - cores + i);
}

/** `size` pinned threads that burn CPU time on request. */
export class CpuRenderer {
  private readonly threads: Thread[] = [];
  private readonly flags: Int32Array;
  private readonly waiting: Array<{
    cpuMs: number;
    job: { seq: number; thread?: Thread; done: () => void };
  }> = [];
  private seq = 0;
  /** Resolves once every thread runs and is pinned. */
  readonly ready: Promise<void>;

  constructor(
    readonly size: number,
    readonly cpus: readonly number[],
  ) {
    this.flags = new Int32Array(new SharedArrayBuffer(4 * size));
    const started: Promise<void>[] = [];
    for (let slot = 0; slot < size; slot++) {
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { flags: this.flags.buffer, slot },
        resourceLimits: { maxOldGenerationSizeMb: 16 },
      });
      worker.unref();
      const t: Thread = { worker, slot, seq: 0 };
      this.threads.push(t);
      started.push(
        new Promise<void>((resolve, reject) => {
          worker.once('error', reject);
          worker.once('message', (tid: string) => {
            try {
              pin(tid, cpus);
              resolve();
            } catch (err) {
              reject(err);
            }
            worker.on('message', (seq: number) => this.finished(t, seq));
          });
        }),
      );
    }
    this.ready = Promise.all(started).then(() => undefined);
    // A failed start surfaces through `ready`; never as an unhandled rejection.
    this.ready.catch(() => {});
  }

  /** Burns `cpuMs` of CPU time on a free thread, then calls `done` (not when cancelled). */
  run(cpuMs: number, done: () => void): CpuJob {
    const job: { seq: number; thread?: Thread; done: () => void } = { seq: ++this.seq, done };
    const free = this.threads.find((t) => t.seq === 0);
    if (free) this.start(free, cpuMs, job);
    else this.waiting.push({ cpuMs, job });
    return {
      cancel: () => {
        job.done = () => {};
        if (job.thread && job.thread.seq === job.seq) Atomics.store(this.flags, job.thread.slot, 0);
        else {
          const i = this.waiting.findIndex((w) => w.job === job);
          if (i >= 0) this.waiting.splice(i, 1);
        }
      },
    };
  }

  private start(t: Thread, cpuMs: number, job: { seq: number; thread?: Thread; done: () => void }): void {
    t.seq = job.seq;
    job.thread = t;
    t.onDone = () => job.done();
    Atomics.store(this.flags, t.slot, job.seq);
    t.worker.postMessage({ cpuMs, seq: job.seq });
  }

  private finished(t: Thread, seq: number): void {
    if (t.seq !== seq) return;
    const done = t.onDone;
    t.seq = 0;
    t.onDone = undefined;
    const next = this.waiting.shift();
    if (next) this.start(t, next.cpuMs, next.job);
    done?.();
  }

  /** Stops every thread. */
  async close(): Promise<void> {
    this.flags.fill(0);
    await Promise.all(this.threads.map((t) => t.worker.terminate()));
  }
}

function pin(tid: string, cpus: readonly number[]): void {
  try {
    execFileSync('taskset', ['-p', '-c', cpus.join(','), tid], { stdio: 'ignore' });
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    throw new H2labError(
      missing ? 'H2LAB_ERR_PEER_MISSING' : 'H2LAB_ERR_INTERNAL',
      missing
        ? '--tile-render cpu pins its render threads with taskset, which is not installed: install util-linux, or use --tile-render sleep'
        : `--tile-render cpu: taskset could not pin render thread ${tid} to CPUs ${cpus.join(',')}: ${(err as Error).message}`,
      { option: '--tile-render' },
    );
  }
}

/**
 * Pins every thread of this process (and so the processes it starts later: Chromium, a fixture in a
 * namespace) to `cpus`, leaving the render cores to the render threads; returns the function that
 * gives the process every CPU back. Render threads pinned afterwards keep their own CPUs.
 *
 * @example const restore = pinThisProcess(otherCpus(1)); try { … } finally { restore(); }
 */
export function pinThisProcess(cpus: readonly number[]): () => void {
  const all = Array.from({ length: osCpus().length }, (_, i) => i).join(',');
  const set = (list: string) => {
    try {
      execFileSync('taskset', ['-a', '-p', '-c', list, String(process.pid)], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  if (!set(cpus.join(','))) return () => {};
  return () => {
    set(all);
  };
}

/** The CPUs not in {@link renderCpuList}(cores): where everything but the render threads runs. */
export function otherCpus(cores: number, available = osCpus().length): number[] {
  return Array.from({ length: Math.max(0, available - cores) }, (_, i) => i);
}

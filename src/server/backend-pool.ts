/**
 * The bounded backend pool behind `/tiles`: `size` workers, a FIFO queue, a service time per job.
 * It stands in for whatever a real server waits on (a database, a renderer, an upstream), which is
 * where HTTP/2's many concurrent streams meet a fixed capacity.
 *
 *   submit ──▶ [ queue (FIFO) ] ──▶ worker 1..size ──▶ done(result)
 *                  │ cancel: dropped    │ cancel: aborted, worker freed at once
 *
 * Cancellation is the point: a job whose client went away is dropped from the queue or aborted while
 * running, so the next job starts immediately — unless `ignoreCancel`, which models a server that
 * renders for nobody (the job finishes and counts as `unwanted`).
 */
import type { CancelStage, ServerMetrics } from './metrics.ts';
import type { CpuJob, CpuRenderer } from './render-cpu.ts';

/** Timing of a finished job, in milliseconds. */
interface JobResult {
  queuedMs: number;
  serviceMs: number;
}

/** A submitted job. */
interface PoolJob {
  /** The client went away. Returns where the job was then. Idempotent. */
  cancel(): CancelStage;
}

type State = 0 | 1 | 2; // queued, running, finished
const QUEUED = 0;
const RUNNING = 1;
const FINISHED = 2;

class Job implements PoolJob {
  state: State = QUEUED;
  unwanted = false;
  cancelledStage: CancelStage | undefined;
  startedAt = 0;
  timer: NodeJS.Timeout | undefined;
  cpu: CpuJob | undefined;
  constructor(
    readonly pool: BackendPool,
    readonly serviceMs: number,
    readonly submittedAt: number,
    readonly done: ((r: JobResult) => void) | undefined,
  ) {}
  cancel(): CancelStage {
    if (this.cancelledStage) return this.cancelledStage;
    const stage: CancelStage =
      this.state === QUEUED ? 'queued' : this.state === RUNNING ? 'running' : 'after';
    this.cancelledStage = stage;
    if (stage !== 'after') this.pool.cancelJob(this);
    return stage;
  }
}

/** The pool. Gauges (`busy`, `queued`) are read by the metrics snapshot. */
export class BackendPool {
  busy = 0;
  queued = 0;
  private queue: Array<Job | undefined> = [];
  private head = 0;
  private readonly running = new Set<Job>();

  /**
   * @param size workers (≥ 1)
   * @param ignoreCancel keep rendering for clients that went away
   * @param renderer when given, a job burns its service time as CPU time on one of the renderer's
   *   pinned threads (`--tile-render cpu`) instead of waiting on a timer
   */
  constructor(
    readonly size: number,
    readonly ignoreCancel: boolean,
    private readonly metrics: ServerMetrics,
    private readonly renderer?: CpuRenderer,
  ) {}

  /** Queues a job of `serviceMs`; `done` runs when it completes for a client that is still there. */
  submit(serviceMs: number, done: (r: JobResult) => void): PoolJob {
    const job = new Job(this, serviceMs, performance.now(), done);
    if (this.busy < this.size) this.start(job);
    else {
      this.queue.push(job);
      this.queued++;
    }
    return job;
  }

  /** @internal called by Job.cancel for a queued or running job. */
  cancelJob(job: Job): void {
    if (this.ignoreCancel) {
      job.unwanted = true; // it runs to completion anyway
      return;
    }
    if (job.state === QUEUED) {
      // Lazy removal: the slot is skipped when dequeued; the gauge drops now.
      job.state = FINISHED;
      this.queued--;
      this.metrics.jobs.dropped++;
      return;
    }
    clearTimeout(job.timer);
    job.cpu?.cancel();
    this.running.delete(job);
    job.state = FINISHED;
    this.busy--;
    this.metrics.jobs.aborted++;
    this.metrics.serviceSeconds.observe((performance.now() - job.startedAt) / 1000);
    this.next();
  }

  private start(job: Job): void {
    job.state = RUNNING;
    job.startedAt = performance.now();
    this.busy++;
    this.running.add(job);
    this.metrics.queueSeconds.observe((job.startedAt - job.submittedAt) / 1000);
    if (this.renderer) job.cpu = this.renderer.run(job.serviceMs, () => this.finish(job));
    else job.timer = setTimeout(() => this.finish(job), job.serviceMs);
  }

  private finish(job: Job): void {
    if (job.state !== RUNNING) return;
    job.state = FINISHED;
    this.running.delete(job);
    this.busy--;
    const now = performance.now();
    this.metrics.serviceSeconds.observe((now - job.startedAt) / 1000);
    if (job.unwanted) this.metrics.jobs.unwanted++;
    else this.metrics.jobs.completed++;
    this.next();
    if (!job.unwanted)
      job.done?.({ queuedMs: job.startedAt - job.submittedAt, serviceMs: now - job.startedAt });
  }

  private next(): void {
    while (this.busy < this.size && this.head < this.queue.length) {
      const job = this.queue[this.head];
      this.queue[this.head++] = undefined;
      if (job && job.state === QUEUED) {
        this.queued--;
        this.start(job);
      }
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  /** Aborts every job (server shutdown): nothing is left holding a timer. */
  clear(): void {
    for (const j of this.running) {
      clearTimeout(j.timer);
      j.cpu?.cancel();
      j.state = FINISHED;
    }
    this.running.clear();
    this.busy = 0;
    for (let i = this.head; i < this.queue.length; i++) {
      const j = this.queue[i];
      if (j && j.state === QUEUED) j.state = FINISHED;
    }
    this.queue = [];
    this.head = 0;
    this.queued = 0;
  }
}

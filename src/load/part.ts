/**
 * One thread's share of a load run: a transport, a schedule and the statistics of its samples. The
 * engine runs one part in its own thread, or one per worker thread (`--workers N`) and merges them.
 *
 * Closed loop: C lanes, each sends its next request when the previous one ends.
 * Open loop: requests leave on a schedule fixed in advance (even or Poisson); latency is taken from
 * the **intended** send time, so a stalled server cannot hide its stall by slowing the client down
 * (coordinated omission, after wrk2). Requests handed over late are counted.
 */
import { performance } from 'node:perf_hooks';
import { H2labError } from '../errors.ts';
import type { EncodedHistogram } from '../report/model.ts';
import { createTransport, resolveWindow } from '../transport/index.ts';
import type { Sample, Transport, TransportStats, WireProtocol } from '../transport/types.ts';
import { createRng } from '../util/rng.ts';
import type { ResolvedLoadOptions } from './options.ts';
import { type Counts, encodeHistogram, type HistogramName, SampleStats } from './stats.ts';
import { buildWorkload } from './workload.ts';

/** What a part needs besides the options: loaded files and its share of the load. */
export interface PartInput {
  opts: ResolvedLoadOptions;
  /** Target URL (the embedded server's when no URL was given). */
  url: string;
  tls: { ca?: string; cert?: string; key?: string; insecure?: boolean };
  body?: Uint8Array;
  /** This part's share. */
  concurrency: number;
  rateRps?: number;
  requests?: number;
  connections: number;
  /** Seed for this part (the run's seed plus the part's index). */
  seed: number;
  /** First sequence number and stride, so sequence numbers are unique across parts. */
  seqStart: number;
  seqStride: number;
}

/** A part's result, serializable across threads. */
export interface PartResult {
  counts: Counts;
  histograms: Record<HistogramName, EncodedHistogram>;
  transport: TransportStats;
  negotiated: WireProtocol | 'none';
  /** Start and end of the measured period, ms since the run's origin. */
  measureStartMs: number;
  measureEndMs: number;
  /** Event-loop utilisation of this thread over the measured period, 0..1. */
  eventLoopUtilization: number;
  error?: { code: string; message: string; details?: Record<string, unknown> };
}

/** Live counters read by the progress timer. */
export interface PartLive {
  completed: number;
  inFlight: number;
}

/** Options of {@link LoadPart.start}. */
export interface StartOptions {
  /** The run's origin as an epoch time, ms (performance.timeOrigin + now()); shared by all threads. */
  originEpochMs: number;
  onSample?: (s: Sample) => void;
}

/** One thread's share of a run. `prepare()` opens connections; `start()` runs the schedule. */
export class LoadPart {
  readonly live: PartLive = { completed: 0, inFlight: 0 };
  private readonly input: PartInput;
  private transport: Transport | undefined;
  private originEpoch = 0;
  private stopping = false;
  private abortError: H2labError | undefined;
  private wake: (() => void) | undefined;

  constructor(input: PartInput) {
    this.input = input;
  }

  /** ms since the run's origin. */
  readonly now = (): number => performance.timeOrigin + performance.now() - this.originEpoch;

  /** Opens the transport (asserting the protocol). Rejects with the H2labError that ends the run. */
  async prepare(): Promise<void> {
    const o = this.input.opts;
    this.originEpoch = performance.timeOrigin + performance.now();
    this.transport = createTransport(o.protocol, {
      url: this.input.url,
      connections: this.input.connections,
      policy: o.policy,
      h2Client: o.h2Client,
      window: resolveWindowFor(o),
      tls: this.input.tls,
      timeoutMs: o.timeoutMs,
      connectTimeoutMs: o.connectTimeoutMs,
      idleTimeoutMs: o.idleTimeoutMs,
      maxAgeMs: o.maxAgeMs,
      now: this.now,
    });
    await this.transport.open();
  }

  /** The protocol negotiated so far. */
  negotiated(): WireProtocol | 'none' {
    return this.transport?.negotiated() ?? 'none';
  }

  /**
   * Stops the run: no new requests; with `abort`, requests in flight end now as `aborted` and the
   * result carries `error`.
   */
  stop(error?: H2labError): void {
    this.stopping = true;
    if (error && !this.abortError) {
      this.abortError = error;
      void this.transport?.close();
    }
    this.wake?.();
  }

  /** Runs the schedule to its end and returns this part's statistics. */
  async start(so: StartOptions): Promise<PartResult> {
    const transport = this.transport;
    if (!transport) throw new Error('LoadPart.start() before prepare()');
    this.originEpoch = so.originEpochMs;
    const o = this.input.opts;
    const open = this.input.rateRps !== undefined;
    const stats = new SampleStats(open, o.lateToleranceMs);
    const rng = createRng(this.input.seed);
    const workload = buildWorkload({
      url: this.input.url,
      ...(o.paths ? { paths: o.paths } : {}),
      pick: o.pick,
      method: o.method,
      headers: o.headers,
      ...(this.input.body ? { body: this.input.body } : {}),
      rng,
    });
    const warmupEnd = o.warmupMs;
    const durationMs = o.durationMs ?? (this.input.requests === undefined ? 10_000 : undefined);
    const stopAt = durationMs === undefined ? Number.POSITIVE_INFINITY : warmupEnd + durationMs;
    const limit = this.input.requests ?? Number.POSITIVE_INFINITY;
    let measuredIssued = 0;
    let seqNext = this.input.seqStart;
    const stride = this.input.seqStride;
    const live = this.live;

    const onDone = (s: Sample): void => {
      live.inFlight--;
      live.completed++;
      if (s.intendedMs < warmupEnd) s.warmup = true;
      stats.add(s);
      so.onSample?.(s);
      if (s.error === 'protocol-mismatch' && !this.abortError) {
        this.stop(
          new H2labError(
            'H2LAB_ERR_PROTOCOL_MISMATCH',
            `requested ${transport.requested} but ${s.errorDetail}`,
            {
              requested: transport.requested,
              negotiated: 'unknown',
            },
          ),
        );
      }
    };
    /** May request number `n` (intended at `t`) still be issued? */
    const mayIssue = (t: number): boolean => {
      if (this.stopping || t >= stopAt) return false;
      return t < warmupEnd || measuredIssued < limit;
    };
    const issue = (intendedMs: number, queuedMs: number): Promise<Sample> => {
      if (intendedMs >= warmupEnd) measuredIssued++;
      live.inFlight++;
      const seq = seqNext;
      seqNext += stride;
      return transport.request(workload.specAt(seq), { seq, intendedMs, queuedMs }).then((s) => {
        onDone(s);
        return s;
      });
    };

    const eluStart = { v: undefined as ReturnType<typeof performance.eventLoopUtilization> | undefined };
    const warmTimer =
      warmupEnd > 0
        ? setTimeout(() => {
            eluStart.v = performance.eventLoopUtilization();
          }, warmupEnd)
        : undefined;
    if (warmupEnd <= 0) eluStart.v = performance.eventLoopUtilization();
    const stopTimer = Number.isFinite(stopAt)
      ? setTimeout(() => this.stop(), Math.max(0, stopAt - this.now()))
      : undefined;

    if (!open) {
      const lane = async (): Promise<void> => {
        for (;;) {
          const t = this.now();
          if (!mayIssue(t)) return;
          await issue(t, t);
        }
      };
      await Promise.all(Array.from({ length: this.input.concurrency }, lane));
    } else {
      await this.openLoop(rng, mayIssue, issue);
    }
    clearTimeout(stopTimer);
    clearTimeout(warmTimer);
    const elu = performance.eventLoopUtilization(eluStart.v ?? performance.eventLoopUtilization());
    const measureEndMs = Math.max(Math.min(this.now(), stopAt), stats.lastEndMs);
    await transport.close();
    const histograms = {} as Record<HistogramName, EncodedHistogram>;
    for (const [k, h] of Object.entries(stats.h) as Array<[HistogramName, (typeof stats.h)[HistogramName]]>) {
      histograms[k] = encodeHistogram(h);
    }
    return {
      counts: stats.counts,
      histograms,
      transport: transport.stats(),
      negotiated: transport.negotiated(),
      measureStartMs: warmupEnd,
      measureEndMs: Math.max(measureEndMs, warmupEnd),
      eventLoopUtilization: elu.utilization,
      ...(this.abortError ? { error: this.abortError.toJSON() } : {}),
    };
  }

  /**
   *   intended: t0 ─ t1 ─ t2 ─ t3 …   (fixed before the run: k / R, or exponential gaps)
   *   pump():   sends every request whose intended time has come, then sleeps until the next one.
   * Requests beyond `maxInFlight` outstanding wait in h2lab (still timed from their intended time).
   */
  private async openLoop(
    rng: ReturnType<typeof createRng>,
    mayIssue: (t: number) => boolean,
    issue: (intendedMs: number, queuedMs: number) => Promise<Sample>,
  ): Promise<void> {
    const o = this.input.opts;
    const rate = this.input.rateRps!;
    const gapMs = 1000 / rate;
    const poisson = o.arrivals === 'poisson';
    let next = poisson ? rng.exponential(gapMs) : 0;
    const outstanding = new Set<Promise<Sample>>();
    for (;;) {
      const now = this.now();
      while (next <= now && mayIssue(next) && outstanding.size < o.maxInFlight) {
        const p = issue(next, now);
        outstanding.add(p);
        p.then(() => {
          outstanding.delete(p);
          if (outstanding.size === o.maxInFlight - 1) this.wake?.();
        });
        next += poisson ? rng.exponential(gapMs) : gapMs;
      }
      if (!mayIssue(next)) break;
      const waitMs = outstanding.size >= o.maxInFlight ? 1000 : next - this.now();
      if (waitMs > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, waitMs);
          function done(): void {
            clearTimeout(timer);
            resolve();
          }
          this.wake = done;
        });
        this.wake = undefined;
      }
    }
    await Promise.all(outstanding);
  }
}

/** The windows the options ask for. */
export function resolveWindowFor(o: ResolvedLoadOptions): ReturnType<typeof resolveWindow> {
  return resolveWindow(o.window, o.streamWindowBytes, o.connectionWindowBytes);
}

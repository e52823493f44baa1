/**
 * One thread's share of a load run: a transport, a schedule and the statistics of its samples. The
 * engine runs one share in its own thread, or one per worker thread (`--workers N`), and merges their
 * tallies (src/load/tally.ts).
 *
 * Closed loop: C lanes, each sends its next request when the previous one ends.
 * Open loop: requests leave on a schedule fixed in advance (even or Poisson); latency is taken from
 * the **intended** send time, so a stalled server cannot hide its stall by slowing the client down
 * (coordinated omission, after wrk2). Requests handed over late are counted.
 * Burst: N requests handed to the transport at one instant t0, the page-load question; the figure is
 * t0 → the last response's end. Each burst gets a transport of its own, so every burst starts from the
 * same state: no connection (handshakes included) or connections just opened and idle (excluded).
 */
import { performance } from 'node:perf_hooks';
import { createRng, H2labError } from '../core/index.ts';
import type { Sample, WireProtocol } from '../model/index.ts';
import type { Transport, TransportStats } from '../transport/index.ts';
import { createTransport, isTargetGone, setupFailureError } from '../transport/index.ts';
import { arrivalTimes, type OwnArrival, ownArrivals } from './arrivals.ts';
import { diagnoseNoSuccess } from './diagnose.ts';
import { LOAD_DEFAULTS } from './flags.ts';
import type { ResolvedLoadOptions } from './options.ts';
import { resolveWindowFor } from './result.ts';
import { SampleStats } from './stats.ts';
import {
  type BurstRecord,
  emptyTransportStats,
  mergeTransportStats,
  PROCESS_KEY,
  type RunTally,
} from './tally.ts';
import { buildRequestSource } from './workload.ts';

/** Failures without a success after which a run asks what is wrong with the target (diagnose.ts). */
const EARLY_DIAGNOSIS_FAILURES = 20;

/** What a share needs besides the options: loaded files and its part of the load. */
export interface ShareInput {
  opts: ResolvedLoadOptions;
  /** Target URL (the embedded server's when no URL was given). */
  url: string;
  tls: { ca?: string; cert?: string; key?: string; insecure?: boolean };
  body?: Uint8Array;
  /** This share's part of the load. */
  concurrency: number;
  rateRps?: number;
  requests?: number;
  connections: number;
  /** Seed for this share (the run's seed plus the share's index). */
  seed: number;
  /** First sequence number and stride, so sequence numbers are unique across shares. */
  seqStart: number;
  seqStride: number;
  /**
   * Open loop, one share of a larger run: `rateRps` is the whole run's rate, its sequence is drawn from
   * `seed` (the run's, not this share's) and this share sends the arrivals k with k mod `count` =
   * `index`; `requests` is the whole run's limit (src/load/arrivals.ts).
   */
  arrivals?: { seed: number; index: number; count: number };
}

/** Live counters read by the progress timer. */
export interface ShareLive {
  completed: number;
  inFlight: number;
}

/** Options of {@link LoadShare.start}. */
interface StartOptions {
  /** The run's origin as an epoch time, ms (performance.timeOrigin + now()); shared by all threads. */
  originEpochMs: number;
  onSample?: (s: Sample) => void;
}

/** One thread's share of a run. `prepare()` opens connections; `start()` runs the schedule. */
export class LoadShare {
  readonly live: ShareLive = { completed: 0, inFlight: 0 };
  private readonly input: ShareInput;
  private transport: Transport | undefined;
  /**
   * performance.timeOrigin − the run's origin (an epoch time, ms), so {@link now} reads one clock and
   * adds (it runs three times a request).
   */
  private nowOffset = 0;
  /** The run's origin, an epoch time, ms. */
  private originEpoch = 0;
  private stopping = false;
  private abortError: H2labError | undefined;
  private wake: (() => void) | undefined;

  constructor(input: ShareInput) {
    this.input = input;
  }

  /** ms since the run's origin. */
  readonly now = (): number => performance.now() + this.nowOffset;

  private setOrigin(epochMs: number): void {
    this.originEpoch = epochMs;
    this.nowOffset = performance.timeOrigin - epochMs;
  }

  /** Opens the transport (asserting the protocol). Rejects with the H2labError that ends the run. */
  async prepare(): Promise<void> {
    this.setOrigin(performance.timeOrigin + performance.now());
    this.transport = this.newTransport();
    await this.transport.open();
  }

  /**
   * A transport as the options ask. With a burst that includes handshakes it connects on demand: the
   * requests of the burst open the connections (h1 up to its pool size, h2 one session).
   */
  private newTransport(): Transport {
    const o = this.input.opts;
    return createTransport(o.protocol, {
      url: this.input.url,
      connections: this.input.connections,
      policy: o.policy,
      h2Client: o.h2Client,
      window: resolveWindowFor(o),
      tls: this.input.tls,
      ...(o.connectTo ? { connectTo: o.connectTo } : {}),
      ...(o.framesFile ? { framesFile: o.framesFile } : {}),
      ...(o.qlogDir ? { qlogDir: o.qlogDir } : {}),
      timeoutMs: o.timeoutMs,
      connectTimeoutMs: o.connectTimeoutMs,
      idleTimeoutMs: o.idleTimeoutMs,
      maxAgeMs: o.maxAgeMs,
      reconnectGiveUpMs: o.reconnectGiveUpMs,
      now: this.now,
      ...(o.burst !== undefined && o.burstHandshakes !== 'exclude' ? { connectOnDemand: true } : {}),
    });
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

  /** Runs the schedule to its end and returns this share's tally. */
  async start(so: StartOptions): Promise<RunTally> {
    const transport = this.transport;
    if (!transport) throw new Error('LoadShare.start() before prepare()');
    // Connections opened by prepare() were timed from its origin: onto the run's clock with them.
    transport.rebaseClock?.(this.originEpoch - so.originEpochMs);
    this.setOrigin(so.originEpochMs);
    const o = this.input.opts;
    const open = this.input.rateRps !== undefined;
    const stats = new SampleStats(open, o.lateToleranceMs);
    const rng = createRng(this.input.seed);
    const workload = buildRequestSource({
      url: this.input.url,
      ...(o.paths ? { paths: o.paths } : {}),
      pick: o.pick,
      method: o.method,
      headers: o.headers,
      ...(this.input.body ? { body: this.input.body } : {}),
      rng,
    });
    const warmupEnd = o.warmupMs;
    const burst = o.burst !== undefined;
    const durationMs =
      o.durationMs ?? (this.input.requests === undefined && !burst ? LOAD_DEFAULTS.durationMs : undefined);
    const stopAt = durationMs === undefined ? Number.POSITIVE_INFINITY : warmupEnd + durationMs;
    const limit = this.input.requests ?? Number.POSITIVE_INFINITY;
    let measuredIssued = 0;
    let seqNext = this.input.seqStart;
    const stride = this.input.seqStride;
    const live = this.live;

    const watch = this.failureWatch(transport.requested);
    const onDone = (s: Sample): void => {
      live.inFlight--;
      live.completed++;
      if (s.intendedMs < warmupEnd) s.warmup = true;
      stats.add(s);
      so.onSample?.(s);
      watch(s);
    };
    /** May request number `n` (intended at `t`) still be issued? */
    const mayIssue = (t: number): boolean => {
      if (this.stopping || t >= stopAt) return false;
      return t < warmupEnd || measuredIssued < limit;
    };
    const issueCb = (intendedMs: number, queuedMs: number, then: (s: Sample) => void): void => {
      if (intendedMs >= warmupEnd) measuredIssued++;
      live.inFlight++;
      const seq = seqNext;
      seqNext += stride;
      const t = this.transport!;
      const timing = { seq, intendedMs, queuedMs };
      const done = (s: Sample): void => {
        onDone(s);
        then(s);
      };
      if (t.requestCb) t.requestCb(workload.specAt(seq), timing, done);
      else void t.request(workload.specAt(seq), timing).then(done);
    };
    const issue = (intendedMs: number, queuedMs: number): Promise<Sample> =>
      new Promise((resolve) => issueCb(intendedMs, queuedMs, resolve));

    const window = measuredWindow(warmupEnd);
    const stopTimer = Number.isFinite(stopAt)
      ? setTimeout(() => this.stop(), Math.max(0, stopAt - this.now()))
      : undefined;

    let bursts: BurstRecord[] | undefined;
    let measureStartMs = warmupEnd;
    let finished = transport.stats();
    if (burst) {
      const r = await this.runBursts(issue);
      bursts = r.bursts;
      finished = r.stats;
      if (bursts.length > 0) measureStartMs = bursts[0]!.startMs;
    } else if (!open) {
      await this.closedLoop(mayIssue, issueCb);
    } else {
      const withinLimit = (a: OwnArrival): boolean =>
        !this.stopping && a.t < stopAt && (a.t < warmupEnd || a.measuredBefore < limit);
      await this.openLoop(rng, withinLimit, issue);
    }
    clearTimeout(stopTimer);
    const { eventLoopUtilization, measuredCpu } = window.end();
    const measureEndMs = burst ? stats.lastEndMs : Math.max(Math.min(this.now(), stopAt), stats.lastEndMs);
    const last = this.transport!;
    await last.close();
    if (!burst) finished = last.stats();
    return {
      counts: stats.counts,
      histograms: stats.h,
      transport: finished,
      negotiated: last.negotiated(),
      measureStartMs,
      measureEndMs: Math.max(measureEndMs, measureStartMs),
      processes: {
        [PROCESS_KEY]: { threads: 1, eventLoopUtilization, measuredCpu },
      },
      ...(bursts ? { bursts } : {}),
      ...(Number.isFinite(stats.firstSentMs) ? { firstSentMs: stats.firstSentMs } : {}),
      ...(this.abortError ? { error: this.abortError.toJSON() } : {}),
    };
  }

  /**
   * The rules a finished request may end the run by: nothing succeeded yet (ask once what is wrong with
   * the target), every connection attempt failed for the give-up time, or the protocol was refused.
   */
  private failureWatch(requested: string): (s: Sample) => void {
    let succeeded = false;
    let failedBeforeSuccess = 0;
    let diagnosing = false;
    const giveUpMs = this.input.opts.reconnectGiveUpMs;
    return (s) => {
      if (s.error === undefined) succeeded = true;
      else if (!succeeded && ++failedBeforeSuccess >= EARLY_DIAGNOSIS_FAILURES && !diagnosing) {
        // Nothing has succeeded yet: a wrong scheme (http:// to a TLS port) or a missing client
        // certificate fails every request, and an h1 pool would open hundreds of connections into it
        // before the run ends (about 870 in 10 s, measured). Ask once, while the run goes on.
        diagnosing = true;
        const unanswered = s.protocol === 'http/1.1' && s.error === 'reset' && s.bytesIn === 0 && !s.status;
        void diagnoseNoSuccess(this.input.url, this.input.tls, undefined, unanswered).then((named) => {
          if (named && !succeeded && !this.abortError) this.stop(named);
        });
      }
      if (isTargetGone(s, giveUpMs) && !this.abortError) {
        this.stop(
          new H2labError(
            'H2LAB_ERR_TARGET_UNREACHABLE',
            `the target stopped accepting connections: every attempt failed for ${giveUpMs} ms; the run stopped there and kept what it measured (check that the server is still running, or allow longer outages with --give-up)`,
            { giveUpMs },
          ),
        );
      }
      if (s.error === 'protocol-mismatch' && !this.abortError) {
        // A connection opened on demand was refused with the connect's own error; a response in the
        // wrong protocol (HTTP/1.1 asked, HTTP/2 answered) says only what it saw.
        this.stop(
          this.transport?.mismatch?.() ??
            new H2labError('H2LAB_ERR_PROTOCOL_MISMATCH', `requested ${requested} but ${s.errorDetail}`, {
              requested,
              negotiated: 'unknown',
            }),
        );
      }
    };
  }

  /**
   * Closed loop: each lane sends its next request from the callback of the previous one, with no
   * promise per request. A request that completes before issueCb returns (a failure at
   * once) sends the next one from a microtask, as an awaited promise did, so that a run of such
   * failures neither grows the stack nor loops without end inside one call.
   */
  private closedLoop(
    mayIssue: (t: number) => boolean,
    issueCb: (intendedMs: number, queuedMs: number, then: (s: Sample) => void) => void,
  ): Promise<void> {
    return new Promise<void>((allDone) => {
      let lanes = this.input.concurrency;
      const lane = (): void => {
        const t = this.now();
        if (!mayIssue(t)) {
          if (--lanes === 0) allDone();
          return;
        }
        let returned = false;
        issueCb(t, t, () => {
          if (returned) lane();
          else queueMicrotask(lane);
        });
        returned = true;
      };
      for (let i = this.input.concurrency; i > 0; i--) lane();
    });
  }

  /**
   *   burst 1: t0 ─▶ N requests handed over at once ─▶ … ─▶ last end │ gap │ burst 2 on a new transport …
   * The transport queues what its connections cannot carry yet (h1: one request per connection, in
   * the client — the page-load queue browsers have; h2: beyond SETTINGS_MAX_CONCURRENT_STREAMS,
   * RFC 9113 §5.1.2), so N above the capacity is measured, not refused.
   */
  private async runBursts(
    issue: (intendedMs: number, queuedMs: number) => Promise<Sample>,
  ): Promise<{ bursts: BurstRecord[]; stats: TransportStats }> {
    const o = this.input.opts;
    const n = o.burst!;
    const count = o.bursts ?? 1;
    const out: BurstRecord[] = [];
    // One transport after another: their in-flight peaks are the highest, not a sum.
    let stats: TransportStats = emptyTransportStats();
    for (let b = 0; b < count && !this.stopping; b++) {
      if (b > 0) {
        await this.transport!.close();
        stats = mergeTransportStats(stats, this.transport!.stats(), 'sequential');
        await this.pause(o.burstGapMs ?? 0);
        if (this.stopping) break;
        this.transport = this.newTransport();
        await this.transport.open();
        if (this.stopping) break;
      }
      const openedBefore = this.transport!.stats().opened;
      const t0 = this.now();
      const samples = await Promise.all(Array.from({ length: n }, () => issue(t0, t0)));
      let lastEnd = t0;
      let firstHeaders = Number.POSITIVE_INFINITY;
      let ok = 0;
      for (const s of samples) {
        if (s.endMs > lastEnd) lastEnd = s.endMs;
        if (s.headersMs !== undefined && s.headersMs < firstHeaders) firstHeaders = s.headersMs;
        if (s.error === undefined && (s.status ?? 0) < 400) ok++;
      }
      const setup = samples.filter((s) => s.error === 'connect' || s.error === 'tls');
      if (ok === 0 && setup.length === n && !this.abortError) {
        // Not one connection could be opened: the run fails as open() would have before a run.
        this.abortError = setupFailureError(setup[0]!.error!, setup[0]!.errorDetail ?? '', o.protocol);
        this.stopping = true;
      }
      out.push({
        startMs: t0,
        completionMs: lastEnd - t0,
        ...(Number.isFinite(firstHeaders) ? { firstResponseMs: firstHeaders - t0 } : {}),
        requests: n,
        ok,
        failed: n - ok,
        connectionsOpened: this.transport!.stats().opened - openedBefore,
      });
    }
    return { bursts: out, stats: mergeTransportStats(stats, this.transport!.stats(), 'sequential') };
  }

  /** Sleeps `ms`, or less when woken (the run stopped, a slot freed). */
  private async pause(ms: number): Promise<void> {
    if (ms <= 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
    this.wake = undefined;
  }

  /**
   *   intended: t0 ─ t1 ─ t2 ─ t3 …   (fixed before the run: k / R, or exponential gaps; src/load/arrivals.ts)
   *   pump():   sends every request whose intended time has come, then sleeps until the next one.
   * Requests beyond `maxInFlight` outstanding wait in h2lab (still timed from their intended time).
   * A share of a larger run walks the whole run's sequence and sends only its own arrivals.
   */
  private async openLoop(
    rng: ReturnType<typeof createRng>,
    withinLimit: (a: OwnArrival) => boolean,
    issue: (intendedMs: number, queuedMs: number) => Promise<Sample>,
  ): Promise<void> {
    const o = this.input.opts;
    const share = this.input.arrivals;
    const times = arrivalTimes(this.input.rateRps!, o.arrivals, share ? createRng(share.seed) : rng);
    const own = ownArrivals(times, share?.index ?? 0, share?.count ?? 1, o.warmupMs);
    let next = own.next().value as OwnArrival;
    // A count, not a set of the promises: a set that gains and loses one per request chains its dead
    // tables (src/core/slots.ts).
    let outstanding = 0;
    let drained: (() => void) | undefined;
    const settled = (): void => {
      outstanding--;
      if (outstanding === o.maxInFlight - 1) this.wake?.();
      if (outstanding === 0) drained?.();
    };
    for (;;) {
      const now = this.now();
      while (next.t <= now && withinLimit(next) && outstanding < o.maxInFlight) {
        outstanding++;
        issue(next.t, now).then(settled);
        next = own.next().value as OwnArrival;
      }
      if (!withinLimit(next)) break;
      await this.pause(outstanding >= o.maxInFlight ? 1000 : next.t - this.now());
    }
    if (outstanding > 0) await new Promise<void>((r) => (drained = r));
  }
}

/**
 * The event loop and the CPU over the measured period only, from the end of the warm-up (a
 * JIT warm-up was a quarter of a short run's CPU, and the saturation check should judge the steady
 * state). `end()` reads both.
 */
function measuredWindow(warmupMs: number): {
  end(): { eventLoopUtilization: number; measuredCpu: { us: number; wallMs: number } };
} {
  let elu: ReturnType<typeof performance.eventLoopUtilization> | undefined;
  let cpu: NodeJS.CpuUsage | undefined;
  let wall = 0;
  const begin = (): void => {
    elu = performance.eventLoopUtilization();
    cpu = process.cpuUsage();
    wall = performance.now();
  };
  const timer = warmupMs > 0 ? setTimeout(begin, warmupMs) : undefined;
  if (warmupMs <= 0) begin();
  return {
    end() {
      clearTimeout(timer);
      const used = cpu ? process.cpuUsage(cpu) : { user: 0, system: 0 };
      return {
        eventLoopUtilization: performance.eventLoopUtilization(elu ?? performance.eventLoopUtilization())
          .utilization,
        measuredCpu: { us: used.user + used.system, wallMs: cpu ? performance.now() - wall : 0 },
      };
    },
  };
}

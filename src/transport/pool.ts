/**
 * One pool for every strategy. A transport is a pool of up to K connections, each able to carry
 * `capacity()` requests at once (1 for HTTP/1.1, SETTINGS_MAX_CONCURRENT_STREAMS for HTTP/2), and a
 * named policy choosing the connection for each request:
 *
 *   request ──▶ pick(policy) ──▶ connection with a free slot ──▶ send ──▶ Sample
 *                  │  none free, fewer than K open ──▶ open one (this request rides it)
 *                  └─ none free, K open ──▶ waiters (FIFO) ──▶ dispatched when a slot frees
 *
 * This file keeps the connections in service and the waiters, and routes, dispatches and drains. It
 * asks a policy which connection (policies/), the supervisor to open, back off and retire
 * (supervisor.ts), and the attempt module what a retried request starts from (attempt.ts); the
 * statistics are pool-stats.ts's. `h1` is this pool with capacity 1 and `first-free`; `h2` is K = 1;
 * `h2-pool` is K sessions with the policy the user named. The engine never branches on protocol;
 * neither does this file.
 */
import { H2labError, headerFieldProblem } from '../core/index.ts';
import type { RequestSpec, RequestTiming, Sample, StrategyName, WireProtocol } from '../model/index.ts';
import { carrySetup, failSample, mayRetry, newSample, nextAttempt } from './attempt.ts';
import { ConnectError } from './connect.ts';
import { type Choice, type PickContext, POLICIES, type Policy } from './policies/index.ts';
import type { ConnOpener, PoolConn, PoolSettings } from './pool-conn.ts';
import { toOpenError } from './setup-errors.ts';
import { Supervisor } from './supervisor.ts';
import type { Transport, TransportStats } from './types.ts';

interface Waiter {
  spec: RequestSpec;
  sample: Sample;
  resolve: (s: Sample) => void;
  /** Queued while a connection was being opened: not (yet) counted as a wait at the cap. */
  forSetup: boolean;
}

/** A pool-backed {@link Transport}. */
export class PoolTransport implements Transport {
  readonly name: StrategyName;
  readonly requested: WireProtocol;
  private readonly s: PoolSettings;
  /** The connections in service (aged ones draining are the supervisor's). */
  private readonly conns: PoolConn[] = [];
  private readonly waiters: Waiter[] = [];
  private waitHead = 0;
  private readonly policy: Policy;
  private readonly pickContext: PickContext = { conns: this.conns, canOpen: false, cursor: 0 };
  private readonly sup: Supervisor;
  private inFlight = 0;
  private peakInFlight = 0;
  private capHits = 0;
  /** Waiters queued while a connection was opening, not yet counted in `capHits`. */
  private setupWaiters = 0;
  private closed = false;
  /** The last headers object found safe to write (see headersProblem). */
  private checkedHeaders: Record<string, string> | undefined;
  /** Connections opened by open() whose setup times no sample carries yet. */
  private readonly unattributed = new Set<PoolConn>();

  constructor(settings: PoolSettings, opener: ConnOpener) {
    this.s = settings;
    this.name = settings.name;
    this.requested = settings.requested;
    this.policy = POLICIES[settings.policy];
    this.sup = new Supervisor(settings, opener, {
      conns: this.conns,
      isClosed: () => this.closed,
      busy: () => this.inFlight > 0,
      drain: () => this.drain(),
      giveUp: (detail) => {
        for (const w of this.takeWaiters()) {
          this.inFlight--;
          w.resolve(this.fail(w.sample, 'connect', detail));
        }
      },
      forget: (c) => this.unattributed.delete(c),
    });
  }

  async open(): Promise<void> {
    this.sup.start();
    const n = this.s.onDemand ? 0 : Math.min(this.s.openAtStart, this.s.size);
    const first = await Promise.allSettled(Array.from({ length: n }, () => this.sup.open(true)));
    for (const r of first) {
      if (r.status === 'rejected') {
        await this.close();
        throw toOpenError(r.reason, this.s.name);
      }
      this.unattributed.add(r.value);
    }
  }

  request(spec: RequestSpec, timing: RequestTiming): Promise<Sample> {
    return new Promise((resolve) => this.requestCb(spec, timing, resolve));
  }

  /**
   * {@link request} with a callback: no promise per request inside the pool, `done` runs once,
   * possibly before this returns (a request that fails at once).
   */
  requestCb(spec: RequestSpec, timing: RequestTiming, done: (s: Sample) => void): void {
    const sample = newSample(timing, this.s.requested);
    if (this.closed) {
      done(this.fail(sample, 'aborted', 'transport closed'));
      return;
    }
    const problem = spec.headers && this.headersProblem(spec.headers);
    if (problem) {
      done(this.fail(sample, 'other', `not sent: ${problem}`));
      return;
    }
    this.route(spec, sample, done);
  }

  /**
   * The load options refuse such headers already; this keeps every connection of every strategy
   * from writing one (an HTTP/1.1 field split by CR/LF is request smuggling). The engine passes the
   * same headers object with each request, so it is checked once.
   */
  private headersProblem(h: Record<string, string>): string | undefined {
    if (h === this.checkedHeaders) return undefined;
    for (const k in h) {
      const problem = headerFieldProblem(k, h[k]!);
      if (problem) return problem;
    }
    this.checkedHeaders = h;
    return undefined;
  }

  /** Sends on the connection the policy picks, a new one, or queues for a free slot. */
  private route(spec: RequestSpec, sample: Sample, done: (s: Sample) => void): void {
    if (++this.inFlight > this.peakInFlight) this.peakInFlight = this.inFlight;
    if (this.inFlight === 1) this.sup.hold();
    const choice = this.pick();
    if (choice === 'open') {
      void this.openAndSend(spec, sample, done);
      return;
    }
    if (choice !== undefined && !this.overShare(choice)) {
      this.dispatch(choice, spec, sample, done);
      return;
    }
    if (this.sup.backoffUntil > 0 && this.sup.serverGone()) {
      this.inFlight--;
      // Through the event loop: a closed loop of failures settled at once would starve every timer,
      // the run's end and the next connection attempt among them.
      setImmediate(() => done(this.fail(sample, 'connect', this.sup.goneDetail())));
      return;
    }
    // Waiting for a connection still being opened is setup, not the limit: such waits count at the
    // cap only if the opened connections cannot take them either (see drain()).
    const forSetup = this.sup.opening > 0 || this.sup.backoffUntil > 0;
    if (forSetup) this.setupWaiters++;
    else this.capHits++;
    this.waiters.push({ spec, sample, resolve: done, forSetup });
  }

  private pick(): Choice {
    this.pickContext.canOpen = this.sup.canOpen();
    return this.policy(this.pickContext);
  }

  mismatch(): H2labError | undefined {
    return this.sup.mismatch;
  }

  negotiated(): WireProtocol | 'none' {
    return this.sup.negotiated;
  }

  stats(): TransportStats {
    const tcp = this.s.tcp;
    return this.sup.record.snapshot(
      this.sup.counts({
        inFlight: this.inFlight,
        peakInFlight: this.peakInFlight,
        capHits: this.capHits,
        ...(tcp?.enabled ? { tcp: { readings: tcp.readings(), unread: tcp.unread } } : {}),
      }),
      [...this.conns, ...this.sup.draining],
    );
  }

  rebaseClock(deltaMs: number): void {
    for (const c of [...this.conns, ...this.sup.draining]) {
      c.createdMs += deltaMs;
      c.lastActiveMs += deltaMs;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.sup.stop();
    for (const w of this.takeWaiters()) w.resolve(this.fail(w.sample, 'aborted', 'transport closed'));
    for (const c of [...this.conns, ...this.sup.draining]) c.close();
    // Let socket close events run so callers see a quiet transport when this resolves.
    await new Promise((r) => setImmediate(r));
  }

  private async openAndSend(spec: RequestSpec, sample: Sample, done: (s: Sample) => void): Promise<void> {
    let conn: PoolConn;
    const startedMs = this.s.now();
    try {
      conn = await this.sup.open();
    } catch (err) {
      this.inFlight--;
      if (err instanceof H2labError) {
        this.sup.mismatch ??= err;
        this.fail(sample, 'protocol-mismatch', err.message);
      } else if (err instanceof ConnectError) {
        this.fail(sample, err.failure, err.message);
        this.sup.backOff(startedMs);
      } else this.fail(sample, 'other', String(err));
      this.drain();
      done(sample);
      return;
    }
    this.sup.connected();
    if (this.closed) {
      // The transport closed while this connection was being set up (the supervisor closed it): the
      // request was never sent. Sent anyway, it ended as a `reset` "closed by the server".
      this.inFlight--;
      done(this.fail(sample, 'aborted', 'transport closed'));
      return;
    }
    carrySetup(sample, conn);
    // A new HTTP/2 session may take more than this request: let queued ones ride it too.
    queueMicrotask(() => this.drain());
    this.dispatch(conn, spec, sample, done);
  }

  private dispatch(conn: PoolConn, spec: RequestSpec, sample: Sample, done: (s: Sample) => void): void {
    if (++conn.inFlight > conn.peakStreams) conn.peakStreams = conn.inFlight;
    sample.connectionId = conn.id;
    sample.protocol = conn.protocol;
    // The first request on a connection opened before the run carries its setup times.
    if (this.unattributed.size > 0 && this.unattributed.delete(conn)) carrySetup(sample, conn);
    const after = (): void => this.afterSend(conn, spec, sample, done);
    if (conn.sendCb) conn.sendCb(spec, sample, after);
    else void conn.send(spec, sample).then(after);
  }

  /** A request's connection is done with it: bookkeeping, a retry if it may have one, then `done`. */
  private afterSend(conn: PoolConn, spec: RequestSpec, sample: Sample, done: (s: Sample) => void): void {
    conn.inFlight--;
    conn.lastActiveMs = sample.endMs;
    this.inFlight--;
    this.sup.afterRequest(conn, sample.endMs);
    if (this.waitHead < this.waiters.length) this.drain();
    if (sample.error === 'protocol-mismatch') this.sup.mismatch ??= conn.mismatch?.();
    // A retry goes on whatever connection the policy picks now: the refusing session takes no new
    // streams after GOAWAY.
    if (mayRetry(sample) && !this.closed) {
      nextAttempt(sample);
      this.route(spec, sample, done);
      return;
    }
    done(sample);
  }

  /**
   * While connections of the pool are still being opened, a multiplexed connection that is up takes
   * no more than its share of the requests outstanding (all of them over the connections open and
   * opening); the rest wait for the connections still in their handshakes. Without this, the first
   * session of a burst whose handshakes are timed took every waiting request (61 of 64 through
   * 200 ms: a pool of one), which is not what a pool client — a browser's connections per origin,
   * a gRPC channel pool, report 003's pool of HTTP/2 clients — does. Once every connection is open
   * (or has failed), the policy alone decides.
   */
  private overShare(c: PoolConn): boolean {
    if (this.sup.opening === 0) return false;
    const share = Math.ceil(this.inFlight / (this.conns.length + this.sup.opening));
    return c.inFlight >= share;
  }

  private drain(): void {
    while (this.waitHead < this.waiters.length && !this.closed) {
      const picked = this.pick();
      const choice = picked !== undefined && picked !== 'open' && this.overShare(picked) ? undefined : picked;
      if (choice === undefined) {
        if (this.sup.opening === 0 && this.sup.backoffUntil === 0 && this.setupWaiters > 0)
          this.countSetupWaiters();
        return;
      }
      const w = this.waiters[this.waitHead]!;
      if (w.forSetup) this.setupWaiters--;
      this.waiters[this.waitHead++] = undefined as unknown as Waiter;
      if (this.waitHead > 1024 && this.waitHead * 2 > this.waiters.length) {
        this.waiters.splice(0, this.waitHead);
        this.waitHead = 0;
      }
      if (choice === 'open') void this.openAndSend(w.spec, w.sample, w.resolve);
      else this.dispatch(choice, w.spec, w.sample, w.resolve);
    }
  }

  /** Every connection is open and none has a free slot: the setup waiters now wait at the cap. */
  private countSetupWaiters(): void {
    for (let i = this.waitHead; i < this.waiters.length; i++) {
      const w = this.waiters[i]!;
      if (!w.forSetup) continue;
      w.forSetup = false;
      this.capHits++;
    }
    this.setupWaiters = 0;
  }

  private takeWaiters(): Waiter[] {
    const out = this.waiters.slice(this.waitHead);
    this.waiters.length = 0;
    this.waitHead = 0;
    this.setupWaiters = 0;
    return out;
  }

  private fail(sample: Sample, error: NonNullable<Sample['error']>, detail: string): Sample {
    this.sup.countFailure();
    return failSample(sample, error, detail, this.s.now());
  }
}

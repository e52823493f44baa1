/**
 * The pool's supervisor: the lives of its connections, apart from the scheduling of requests on them
 * (pool.ts). It opens connections when the pool asks, backs off after failed attempts, records
 * outages, gives the target up when nothing opens for `giveUpMs`, and retires connections: idle ones
 * (`--idle-timeout`), aged ones (`--max-age`) and those that can take nothing more.
 *
 *   open ──▶ in service (pool.conns) ──aged, requests in flight──▶ draining ──last one ends──▶ closed
 *                 │ idle, aged, unusable                                                  ▲
 *                 └───────────────────────────────────────────────────────────────────────┘
 *
 * An aged connection takes no new request: it leaves the pool's connections (so it does not count
 * against K and a fresh one opens beside it), finishes what it carries and closes — h2lab's HTTP/2
 * client with GOAWAY(NO_ERROR), node:http2 by destroying the session — much as gRPC's
 * MAX_CONNECTION_AGE retires a connection from the server's side while its streams finish. A
 * multiplexed session under steady load never reaches zero streams, so waiting for that would keep
 * it for the whole run.
 */
import { createRng, type H2labError } from '../core/index.ts';
import type { ConnectionEnd, Sample, WireProtocol } from '../model/index.ts';
import type { ConnOpener, PoolConn, PoolSettings } from './pool-conn.ts';
import { PoolRecord, type SchedulerCounts } from './pool-stats.ts';
import { OUTAGES_KEPT, type Outage } from './types.ts';

/**
 * Reconnect backoff after a connection attempt fails (refused, reset, timed out, TLS): the pool opens
 * nothing until a delay has passed, and requests wait for the next attempt instead of each failing
 * at once — without it a closed loop spins, and a 3 s outage was 26–30k `connect` failures. The
 * delay doubles per failed round from `baseMs` to `maxMs` with equal jitter (half fixed, half
 * random); a success resets it. The shape is gRPC's connection-backoff protocol (grpc/grpc
 * doc/connection-backoff.md: 1 s ×1.6 up to 120 s, ±20 % jitter, "backoffs started at the same time
 * disperse") and undici's RetryHandler (500 ms ×2 up to 30 s, no jitter), scaled down for a
 * benchmark whose outages are seconds long. After `giveUpMs` of attempts failing without a success
 * the server is taken for gone: requests fail at once as `connect` and the load engine ends the run
 * with H2LAB_ERR_TARGET_UNREACHABLE, keeping what it measured ({@link isTargetGone}) — without this
 * a `--requests N` run against a dead server would wait one delay per request. Recorded in every
 * result (`transport.reconnect`).
 */
export const RECONNECT_BACKOFF = Object.freeze({
  baseMs: 50,
  maxMs: 1000,
  jitter: 'equal' as const,
  giveUpMs: 5000,
});

/** The failure detail of a request failed because the target is taken for gone (see {@link isTargetGone}). */
const goneDetail = (giveUpMs: number): string =>
  `no connection for ${giveUpMs} ms: every attempt failed (reconnect backoff, transport.reconnect)`;

/**
 * True for a sample failed because every connection attempt failed for `giveUpMs` (the run's
 * `reconnectGiveUpMs`): the load engine then ends the run (H2LAB_ERR_TARGET_UNREACHABLE, what was
 * measured kept) rather than failing request after request at memory speed against a server that is
 * gone.
 */
export function isTargetGone(s: Sample, giveUpMs: number = RECONNECT_BACKOFF.giveUpMs): boolean {
  return s.error === 'connect' && s.errorDetail === goneDetail(giveUpMs);
}

/** What the supervisor asks of the pool it serves. */
interface SupervisedPool {
  /** The connections in service (the supervisor adds those it opens, removes closed and aged ones). */
  readonly conns: PoolConn[];
  isClosed(): boolean;
  /** Requests are in the pool. */
  busy(): boolean;
  /** Hands waiting requests to connections (one opened, closed or aged, a limit changed, a backoff ended). */
  drain(): void;
  /** The target is taken for gone: fail every waiting request as `connect` with `detail`. */
  giveUp(detail: string): void;
  /** A connection closed and the record has it. */
  forget(c: PoolConn): void;
}

/** Opens, backs off, retires and records the connections of one pool. */
export class Supervisor {
  /** Connection attempts under way. */
  opening = 0;
  /** Attempts started (counted in the stats as `opened`). */
  opened = 0;
  /** Run-clock time before which no connection is opened (0: none pending). */
  backoffUntil = 0;
  tlsVersion: string | undefined;
  negotiated: WireProtocol | 'none' = 'none';
  /** The mismatch a connection opened during the run was refused with (see Transport.mismatch). */
  mismatch: H2labError | undefined;
  /** What closed connections left (src/transport/pool-stats.ts). */
  readonly record = new PoolRecord();
  /** Aged connections finishing the requests they carry: they take none and do not count against K. */
  readonly draining = new Set<PoolConn>();
  private minAnnounced: number | undefined;
  private nextId = 1;
  /** Why the pool itself closed a connection (a close not in here came from the socket or GOAWAY). */
  private readonly retiring = new Map<PoolConn, ConnectionEnd>();
  /** Failed rounds of connection attempts since the last success (the backoff's exponent). */
  private connectRounds = 0;
  /** Run-clock time of the first failed attempt since the last success (-1: none). */
  private failingSinceMs = -1;
  /** The outage under way (every attempt failing since its start), and those that ended. */
  private outage: Outage | undefined;
  private readonly outages: Outage[] = [];
  private outagesOmitted = 0;
  /** When the current backoff began: failures of attempts started before it do not escalate it. */
  private backoffStartedMs = -1;
  private backoffTimer: NodeJS.Timeout | undefined;
  private sweep: NodeJS.Timeout | undefined;
  /** Jitter only; a fixed seed keeps runs repeatable. */
  private readonly rng = createRng(0x6261636b);

  constructor(
    private readonly s: PoolSettings,
    private readonly opener: ConnOpener,
    private readonly pool: SupervisedPool,
  ) {}

  /**
   * Starts the sweep that times requests out and retires connections, every `timeoutMs / 8` (and a
   * quarter of the idle timeout and max age), between 5 ms and 1 s.
   */
  start(): void {
    const { timeoutMs, idleTimeoutMs, maxAgeMs } = this.s;
    const quarter = (ms: number): number => (ms > 0 ? ms / 4 : 1000);
    const tick = Math.max(5, Math.min(1000, timeoutMs / 8, quarter(idleTimeoutMs), quarter(maxAgeMs)));
    this.sweep = setInterval(() => this.onSweep(), tick);
    this.sweep.unref();
  }

  /**
   * While a request is out, the sweep that times it out holds the process: a connection that goes
   * silent (node:http2 after an invalid HPACK block emits nothing) left nothing else, and the process
   * exited 13 with every request pending. Idle, it lets go (see onSweep).
   */
  hold(): void {
    this.sweep?.ref();
  }

  stop(): void {
    if (this.sweep) clearInterval(this.sweep);
    if (this.backoffTimer) clearTimeout(this.backoffTimer);
  }

  /** One more connection may be opened now: fewer than K in service or opening, no backoff pending. */
  canOpen(): boolean {
    return (
      this.pool.conns.length + this.opening < this.s.size &&
      (this.backoffUntil === 0 || this.s.now() >= this.backoffUntil)
    );
  }

  /** Opens a connection and puts it in service; rejects as the opener did. */
  async open(beforeRun = false): Promise<PoolConn> {
    this.opening++;
    this.opened++;
    try {
      const conn = await this.opener(this.nextId++, (c) => this.closed(c), beforeRun);
      this.tlsVersion ??= conn.tlsVersion;
      if (this.negotiated === 'none') this.negotiated = conn.protocol;
      this.noteLimit(conn);
      conn.onLimitsChanged = () => {
        this.noteLimit(conn);
        if (!this.pool.isClosed()) this.pool.drain();
      };
      this.pool.conns.push(conn);
      if (this.pool.isClosed()) conn.close();
      return conn;
    } finally {
      this.opening--;
    }
  }

  /** A connection opened for a request: the backoff and the outage under way end. */
  connected(): void {
    this.connectRounds = 0;
    this.failingSinceMs = -1;
    if (!this.outage) return;
    this.outage.endMs = this.s.now();
    if (this.outages.length < OUTAGES_KEPT) this.outages.push(this.outage);
    else this.outagesOmitted++;
    this.outage = undefined;
  }

  /**
   * After a failed connection attempt: no new attempt for a jittered, doubling delay. Attempts that
   * were already under way when the backoff began fail into the same round (several slots failing
   * together are one round, not several).
   */
  backOff(attemptStartedMs: number): void {
    if (this.pool.isClosed()) return;
    if (this.failingSinceMs < 0) {
      this.failingSinceMs = attemptStartedMs;
      // The request whose attempt began it failed just before: it is the outage's first.
      this.outage = { startMs: attemptStartedMs, failedRequests: 1 };
    }
    // Requests waiting for a connection would each wait a full delay: fail them now.
    if (this.serverGone()) this.pool.giveUp(this.goneDetail());
    if (attemptStartedMs < this.backoffStartedMs) return;
    const b = RECONNECT_BACKOFF;
    const ceil = Math.min(b.maxMs, b.baseMs * 2 ** this.connectRounds);
    this.connectRounds++;
    const delay = ceil / 2 + (this.rng.next() * ceil) / 2;
    this.backoffStartedMs = this.s.now();
    this.backoffUntil = this.backoffStartedMs + delay;
    if (this.backoffTimer) clearTimeout(this.backoffTimer);
    this.backoffTimer = setTimeout(() => {
      this.backoffUntil = 0;
      this.backoffTimer = undefined;
      if (!this.pool.isClosed()) this.pool.drain();
    }, delay);
  }

  /** Connection attempts have failed for longer than the backoff's `giveUpMs`. */
  serverGone(): boolean {
    return this.failingSinceMs >= 0 && this.s.now() - this.failingSinceMs >= this.giveUpMs();
  }

  goneDetail(): string {
    return goneDetail(this.giveUpMs());
  }

  /** A request failed: counted in the outage under way, if any. */
  countFailure(): void {
    if (this.outage) this.outage.failedRequests++;
  }

  /** A request on `c` ended at `nowMs`: close `c` if it can take nothing more, take it out of service if aged. */
  afterRequest(c: PoolConn, nowMs: number): void {
    if (c.inFlight === 0 && (!c.usable() || this.draining.has(c))) this.endOf(c);
    else if (this.aged(c, nowMs)) this.age(c);
  }

  /** The scheduler's counters and the supervisor's, for a snapshot. */
  counts(pool: Omit<SchedulerCounts, 'opened' | 'minAnnounced' | 'tlsVersion' | 'outages'>): SchedulerCounts {
    return {
      ...pool,
      opened: this.opened,
      minAnnounced: this.minAnnounced,
      tlsVersion: this.tlsVersion,
      outages: { periods: this.outages, current: this.outage, omitted: this.outagesOmitted },
    };
  }

  private giveUpMs(): number {
    return this.s.giveUpMs ?? RECONNECT_BACKOFF.giveUpMs;
  }

  private noteLimit(conn: PoolConn): void {
    const lim = conn.announcedLimit();
    if (lim !== undefined && (this.minAnnounced === undefined || lim < this.minAnnounced))
      this.minAnnounced = lim;
  }

  private aged(c: PoolConn, nowMs: number): boolean {
    return this.s.maxAgeMs > 0 && nowMs - c.createdMs >= this.s.maxAgeMs && c.usable();
  }

  /** `c` reached `--max-age`: closed now if it carries nothing, else it drains out of service. */
  private age(c: PoolConn): void {
    if (c.inFlight === 0) {
      this.retire(c, 'max-age');
      return;
    }
    if (this.draining.has(c)) return;
    const i = this.pool.conns.indexOf(c);
    if (i >= 0) this.pool.conns.splice(i, 1);
    this.draining.add(c);
    if (!this.pool.isClosed()) this.pool.drain();
  }

  /** A connection with nothing in flight that takes nothing more closes: aged, or ended by its peer. */
  private endOf(c: PoolConn): void {
    if (this.draining.has(c)) this.retire(c, 'max-age');
    else c.close();
  }

  /** Closes a connection for the client's own lifetime limit, remembering which. */
  private retire(c: PoolConn, why: ConnectionEnd): void {
    this.retiring.set(c, why);
    c.close();
  }

  private closed(c: PoolConn): void {
    const i = this.pool.conns.indexOf(c);
    if (i >= 0) this.pool.conns.splice(i, 1);
    else if (!this.draining.delete(c)) return;
    const closedBy =
      this.retiring.get(c) ??
      (c.goawayAtMs !== undefined ? 'goaway' : this.pool.isClosed() ? 'run-end' : 'ended');
    this.retiring.delete(c);
    this.record.retire(c, closedBy, this.s.now());
    this.pool.forget(c);
    if (!this.pool.isClosed()) queueMicrotask(() => this.pool.drain());
  }

  private onSweep(): void {
    if (!this.pool.busy()) this.sweep?.unref();
    const now = this.s.now();
    for (const c of [...this.pool.conns, ...this.draining]) {
      c.expire(now, this.s.timeoutMs);
      if (c.inFlight === 0 && (!c.usable() || this.draining.has(c))) this.endOf(c);
      else if (this.aged(c, now)) this.age(c);
      else if (c.inFlight === 0 && this.s.idleTimeoutMs > 0 && now - c.lastActiveMs >= this.s.idleTimeoutMs)
        this.retire(c, 'idle-timeout');
    }
  }
}

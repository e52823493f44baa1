/**
 * One pool for every strategy. A transport is a pool of up to K connections, each able to carry
 * `capacity()` requests at once (1 for HTTP/1.1, SETTINGS_MAX_CONCURRENT_STREAMS for HTTP/2), and a
 * named policy choosing the connection for each request:
 *
 *   request ──▶ pick(policy) ──▶ connection with a free slot ──▶ send ──▶ Sample
 *                  │  none free, fewer than K open ──▶ open one (this request rides it)
 *                  └─ none free, K open ──▶ waiters (FIFO) ──▶ dispatched when a slot frees
 *
 * `h1` is this pool with capacity 1 and `first-free`; `h2` is K = 1; `h2-pool` is K sessions with
 * the policy the user named. The engine never branches on protocol; neither does this file.
 */
import {
  createRng,
  H2labError,
  headerFieldProblem,
  openFilesExhausted,
  tlsFailureHint,
  tlsHintError,
} from '../core/index.ts';
import type {
  ConnectionEnd,
  FailureClass,
  RequestSpec,
  RequestTiming,
  Sample,
  StrategyName,
  WireProtocol,
} from '../model/index.ts';
import type { TcpLog } from '../net/index.ts';
import { ConnectError } from './connect.ts';
import { type ConnectionFacts, PoolRecord } from './pool-stats.ts';
import { OUTAGES_KEPT, type Outage, type Transport, type TransportStats } from './types.ts';

/**
 * Retries of a request refused with REFUSED_STREAM before it counts as a failure: Chromium's
 * budget for a refused stream (HttpNetworkTransaction, kMaxRetryAttempts 2).
 */
export const MAX_RETRIES = 2;

/**
 * Retries of a request that GOAWAY named unprocessed (RFC 9113 §6.8: above its last-stream-id).
 * Larger than {@link MAX_RETRIES}: such a refusal says the session ended, not that the server would
 * not take the request, and in a pool the retry can land on another session whose GOAWAY is already
 * on the wire (a server rotating every session after each response lost 136 of 1000 `h2-pool`
 * requests with 2). Still a bound, so a server that refuses every stream ends the run.
 */
export const MAX_GOAWAY_RETRIES = 10;

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

/** How a pool chooses a connection for a request. */
export type PoolPolicy = 'least-busy' | 'round-robin' | 'first-free' | 'lease';

/** One pooled connection (an HTTP/1.1 socket or an HTTP/2 session). */
export interface PoolConn {
  readonly id: number;
  /** Requests assigned to it now. */
  inFlight: number;
  /** Requests it completed (the connection counts them before resolving, so a close cannot lose one). */
  requests: number;
  /** Highest `inFlight` it saw. */
  peakStreams: number;
  createdMs: number;
  lastActiveMs: number;
  readonly connectMs: number;
  readonly tlsMs: number | undefined;
  /** TLS version of the connection (undefined for cleartext). */
  tlsVersion?: string | undefined;
  readonly protocol: WireProtocol;
  /** False once it must not take new requests (closing, GOAWAY received, Connection: close). */
  usable(): boolean;
  /** Requests it may carry at once, as the peer allows now. */
  capacity(): number;
  /** The peer's announced stream limit, when it announced one (HTTP/2). */
  announcedLimit(): number | undefined;
  /** Sends one request and fills `sample`; never rejects. */
  send(spec: RequestSpec, sample: Sample): Promise<Sample>;
  /**
   * {@link send} with a callback, for connections whose request path is callbacks end to end (h2lab's
   * HTTP/2 client): `done` runs once, when the sample is complete, possibly before `sendCb` returns.
   */
  sendCb?(spec: RequestSpec, sample: Sample, done: (s: Sample) => void): void;
  /** Fails requests older than `timeoutMs` with `timeout` (called by the pool's sweep). */
  expire(nowMs: number, timeoutMs: number): void;
  /** Closes it; requests in flight resolve with `aborted`. */
  close(): void;
  /** HTTP/2: when the server's GOAWAY arrived (run clock, ms) and its error code. */
  goawayAtMs?: number;
  goawayCode?: number;
  /** What the connection alone measures (src/transport/pool-stats.ts); absent: nothing more. */
  facts?(): ConnectionFacts;
  /**
   * The protocol mismatch this connection found after it was handed over (an h2c session that sent
   * its requests before the server's first bytes, which were HTTP/1.1): its requests failed
   * `protocol-mismatch`, and this is the error the run stops with (Transport.mismatch).
   */
  mismatch?(): H2labError | undefined;
  /**
   * Set by the pool when it takes the connection: the connection calls it when `capacity()` or
   * `announcedLimit()` changed after it was handed over (an HTTP/2 server's SETTINGS arriving after
   * the first requests went out), so waiting requests are dispatched and the limit is recorded.
   */
  onLimitsChanged?: () => void;
}

/**
 * What every pooled connection keeps for the pool whatever its protocol: identity, setup times and
 * the counters the pool reads. Connections extend it and add `send`, `usable`, `capacity`, ...
 */
export abstract class PoolConnBase {
  inFlight = 0;
  requests = 0;
  peakStreams = 0;
  tlsVersion?: string | undefined;
  createdMs: number;
  lastActiveMs: number;
  goawayAtMs?: number;
  goawayCode?: number;
  onLimitsChanged?: () => void;

  constructor(
    readonly id: number,
    readonly protocol: WireProtocol,
    /** The run's clock, ms. */
    readonly now: () => number,
    readonly connectMs: number,
    readonly tlsMs: number | undefined,
    protected readonly onClose: (c: PoolConn) => void,
  ) {
    this.createdMs = now();
    this.lastActiveMs = this.createdMs;
  }
}

/**
 * Opens connection number `id`; rejects with a ConnectError or an H2labError (protocol mismatch).
 * `beforeRun`: opened by `open()`, so it should be fully ready when it resolves (an HTTP/2 session
 * has the server's SETTINGS); otherwise a request is waiting for it and may go out as early as the
 * protocol allows.
 */
export type ConnOpener = (
  id: number,
  onClose: (c: PoolConn) => void,
  beforeRun: boolean,
) => Promise<PoolConn>;

/** Settings of one pool. */
export interface PoolSettings {
  name: StrategyName;
  requested: WireProtocol;
  /** K: connections (sessions) allowed at once. */
  size: number;
  policy: PoolPolicy;
  /** Connections opened by `open()` (before the run starts). */
  openAtStart: number;
  /**
   * Open nothing in `open()`: every connection is opened by the request that needs it, so its setup
   * lies inside the caller's timed period (a burst with handshakes included, as a page load pays).
   */
  onDemand?: boolean;
  /** Per-request timeout, ms (checked by a sweep, so it fires up to `timeoutMs / 8` late). */
  timeoutMs: number;
  /** Close a connection idle this long, ms (0 = never). */
  idleTimeoutMs: number;
  /** Stop using a connection this old, ms, and close it once drained (0 = never). */
  maxAgeMs: number;
  /**
   * After every connection attempt has failed for this long, ms, the target is taken for gone:
   * waiting requests fail at once and the run ends (default {@link RECONNECT_BACKOFF}'s giveUpMs).
   */
  giveUpMs?: number;
  now: () => number;
  /** The connections' TCP_INFO log (the same one the connection target records into). */
  tcp?: TcpLog;
}

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
  private readonly opener: ConnOpener;
  private readonly conns: PoolConn[] = [];
  private readonly waiters: Waiter[] = [];
  private waitHead = 0;
  private opening = 0;
  private nextId = 1;
  /** The mismatch a connection opened during the run was refused with (see Transport.mismatch). */
  private mismatchError: H2labError | undefined;
  private rr = 0;
  private inFlight = 0;
  private peakInFlight = 0;
  private opened = 0;
  private capHits = 0;
  private tlsVersion: string | undefined;
  /** Waiters queued while a connection was opening, not yet counted in `capHits`. */
  private setupWaiters = 0;
  /** What closed connections left, and the snapshot of all of them (src/transport/pool-stats.ts). */
  private readonly record = new PoolRecord();
  private minAnnounced: number | undefined;
  private negotiatedProto: WireProtocol | 'none' = 'none';
  private closed = false;
  /** The last headers object found safe to write (see headersProblem). */
  private checkedHeaders: Record<string, string> | undefined;
  /** Connections opened by open() whose setup times no sample carries yet. */
  private readonly unattributed = new Set<PoolConn>();
  private sweep: NodeJS.Timeout | undefined;
  /** Why the pool itself closed a connection (a close not in here came from the socket or GOAWAY). */
  private readonly retiring = new Map<PoolConn, ConnectionEnd>();
  /** Failed rounds of connection attempts since the last success (the backoff's exponent). */
  private connectRounds = 0;
  /** Run-clock time before which no connection is opened (0: none pending). */
  private backoffUntil = 0;
  /** Run-clock time of the first failed attempt since the last success (-1: none). */
  private failingSinceMs = -1;
  /** The outage under way (every attempt failing since its start), and those that ended. */
  private outage: Outage | undefined;
  private readonly outages: Outage[] = [];
  private outagesOmitted = 0;
  /** When the current backoff began: failures of attempts started before it do not escalate it. */
  private backoffStartedMs = -1;
  private backoffTimer: NodeJS.Timeout | undefined;
  /** Jitter only; a fixed seed keeps runs repeatable. */
  private readonly rng = createRng(0x6261636b);

  constructor(settings: PoolSettings, opener: ConnOpener) {
    this.s = settings;
    this.name = settings.name;
    this.requested = settings.requested;
    this.opener = opener;
  }

  async open(): Promise<void> {
    const tick = Math.max(
      5,
      Math.min(
        1000,
        this.s.timeoutMs / 8,
        this.s.idleTimeoutMs > 0 ? this.s.idleTimeoutMs / 4 : 1000,
        this.s.maxAgeMs > 0 ? this.s.maxAgeMs / 4 : 1000,
      ),
    );
    this.sweep = setInterval(() => this.onSweep(), tick);
    this.sweep.unref();
    const first = await Promise.allSettled(
      Array.from({ length: this.s.onDemand ? 0 : Math.min(this.s.openAtStart, this.s.size) }, () =>
        this.openConn(true),
      ),
    );
    for (const r of first) {
      if (r.status === 'rejected') {
        await this.close();
        throw toOpenError(r.reason, this.s);
      }
      this.unattributed.add(r.value);
    }
  }

  request(spec: RequestSpec, timing: RequestTiming): Promise<Sample> {
    return new Promise((resolve) => this.requestCb(spec, timing, resolve));
  }

  /**
   * {@link request} with a callback: no promise per request inside the pool (issue 29), `done` runs
   * once, possibly before this returns (a request that fails at once).
   */
  requestCb(spec: RequestSpec, timing: RequestTiming, done: (s: Sample) => void): void {
    const sample: Sample = {
      seq: timing.seq,
      intendedMs: timing.intendedMs,
      queuedMs: timing.queuedMs,
      sentMs: timing.queuedMs,
      endMs: timing.queuedMs,
      connectionId: 0,
      newConnection: false,
      bytesIn: 0,
      bytesOut: 0,
      protocol: this.s.requested,
    };
    if (this.closed) {
      done(this.fail(sample, 'aborted', 'transport closed'));
      return;
    }
    if (spec.headers) {
      const problem = this.headersProblem(spec.headers);
      if (problem) {
        done(this.fail(sample, 'other', `not sent: ${problem}`));
        return;
      }
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
    // While a request is out, the sweep that times it out holds the process: a connection that goes
    // silent (node:http2 after an invalid HPACK block emits nothing) left nothing else, and the
    // process exited 13 with every request pending. Idle, it lets go (see onSweep).
    if (this.inFlight === 1) this.sweep?.ref();
    const choice = this.pick();
    if (choice === 'open') {
      void this.openAndSend(spec, sample, done);
      return;
    }
    if (choice !== undefined && !this.overShare(choice)) {
      this.dispatch(choice, spec, sample, done);
      return;
    }
    if (this.backoffUntil > 0 && this.serverGone()) {
      this.inFlight--;
      // Through the event loop: a closed loop of failures settled at once would starve every timer,
      // the run's end and the next connection attempt among them.
      setImmediate(() => done(this.fail(sample, 'connect', this.goneDetail())));
      return;
    }
    // Waiting for a connection still being opened is setup, not the limit: such waits count at the
    // cap only if the opened connections cannot take them either (see drain()).
    const forSetup = this.opening > 0 || this.backoffUntil > 0;
    if (forSetup) this.setupWaiters++;
    else this.capHits++;
    this.waiters.push({ spec, sample, resolve: done, forSetup });
  }

  mismatch(): H2labError | undefined {
    return this.mismatchError;
  }

  negotiated(): WireProtocol | 'none' {
    return this.negotiatedProto;
  }

  stats(): TransportStats {
    return this.record.snapshot(
      {
        opened: this.opened,
        inFlight: this.inFlight,
        peakInFlight: this.peakInFlight,
        capHits: this.capHits,
        minAnnounced: this.minAnnounced,
        tlsVersion: this.tlsVersion,
        ...(this.s.tcp?.enabled
          ? { tcp: { readings: this.s.tcp.readings(), unread: this.s.tcp.unread } }
          : {}),
        outages: { periods: this.outages, current: this.outage, omitted: this.outagesOmitted },
      },
      this.conns,
    );
  }

  rebaseClock(deltaMs: number): void {
    for (const c of this.conns) {
      c.createdMs += deltaMs;
      c.lastActiveMs += deltaMs;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.sweep) clearInterval(this.sweep);
    if (this.backoffTimer) clearTimeout(this.backoffTimer);
    for (const w of this.takeWaiters()) w.resolve(this.fail(w.sample, 'aborted', 'transport closed'));
    for (const c of [...this.conns]) c.close();
    // Let socket close events run so callers see a quiet transport when this resolves.
    await new Promise((r) => setImmediate(r));
  }

  private pick(): PoolConn | 'open' | undefined {
    const canOpen =
      this.conns.length + this.opening < this.s.size &&
      (this.backoffUntil === 0 || this.s.now() >= this.backoffUntil);
    let best: PoolConn | undefined;
    switch (this.s.policy) {
      case 'first-free': {
        for (const c of this.conns) {
          if (c.inFlight === 0 && c.usable()) return c;
        }
        if (canOpen) return 'open';
        best = this.leastBusy();
        break;
      }
      case 'lease': {
        // One exchange per connection at a time, as a connection pool that leases an HTTP/2
        // connection like an HTTP/1.1 one (Apache HttpClient 5's pooling manager; its HTTP/2 sharing
        // came later, as an experimental pool): an idle one, else a new one up to K, else wait.
        for (const c of this.conns) {
          if (c.inFlight === 0 && c.usable()) return c;
        }
        return canOpen ? 'open' : undefined;
      }
      case 'least-busy': {
        if (canOpen) return 'open';
        best = this.leastBusy();
        break;
      }
      case 'round-robin': {
        if (canOpen) return 'open';
        const n = this.conns.length;
        for (let i = 0; i < n; i++) {
          const c = this.conns[(this.rr + i) % n]!;
          if (c.usable() && c.inFlight < c.capacity()) {
            this.rr = (this.rr + i + 1) % n;
            return c;
          }
        }
        return undefined;
      }
    }
    return best;
  }

  private leastBusy(): PoolConn | undefined {
    let best: PoolConn | undefined;
    for (const c of this.conns) {
      if (!c.usable() || c.inFlight >= c.capacity()) continue;
      if (best === undefined || c.inFlight < best.inFlight) best = c;
    }
    return best;
  }

  private async openConn(beforeRun = false): Promise<PoolConn> {
    this.opening++;
    this.opened++;
    try {
      const conn = await this.opener(this.nextId++, (c) => this.onConnClose(c), beforeRun);
      this.tlsVersion ??= conn.tlsVersion;
      if (this.negotiatedProto === 'none') this.negotiatedProto = conn.protocol;
      this.noteLimit(conn);
      conn.onLimitsChanged = () => {
        this.noteLimit(conn);
        if (!this.closed) this.drain();
      };
      this.conns.push(conn);
      if (this.closed) conn.close();
      return conn;
    } finally {
      this.opening--;
    }
  }

  /**
   * After a failed connection attempt: no new attempt for a jittered, doubling delay. Attempts that
   * were already under way when the backoff began fail into the same round (several slots failing
   * together are one round, not several).
   */
  private backOff(attemptStartedMs: number): void {
    if (this.closed) return;
    if (this.failingSinceMs < 0) {
      this.failingSinceMs = attemptStartedMs;
      // The request whose attempt began it failed just before: it is the outage's first.
      this.outage = { startMs: attemptStartedMs, failedRequests: 1 };
    }
    if (this.serverGone()) {
      // Requests waiting for a connection would each wait a full delay: fail them now.
      for (const w of this.takeWaiters()) {
        this.inFlight--;
        w.resolve(this.fail(w.sample, 'connect', this.goneDetail()));
      }
    }
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
      if (!this.closed) this.drain();
    }, delay);
  }

  /** Connection attempts have failed for longer than the backoff's `giveUpMs`. */
  private serverGone(): boolean {
    return this.failingSinceMs >= 0 && this.s.now() - this.failingSinceMs >= this.giveUpMs();
  }

  private giveUpMs(): number {
    return this.s.giveUpMs ?? RECONNECT_BACKOFF.giveUpMs;
  }

  private goneDetail(): string {
    return goneDetail(this.giveUpMs());
  }

  /** The outage under way ends: a connection opened. */
  private endOutage(): void {
    if (!this.outage) return;
    this.outage.endMs = this.s.now();
    if (this.outages.length < OUTAGES_KEPT) this.outages.push(this.outage);
    else this.outagesOmitted++;
    this.outage = undefined;
  }

  private noteLimit(conn: PoolConn): void {
    const lim = conn.announcedLimit();
    if (lim !== undefined && (this.minAnnounced === undefined || lim < this.minAnnounced))
      this.minAnnounced = lim;
  }

  private async openAndSend(spec: RequestSpec, sample: Sample, done: (s: Sample) => void): Promise<void> {
    let conn: PoolConn;
    const startedMs = this.s.now();
    try {
      conn = await this.openConn();
    } catch (err) {
      this.inFlight--;
      if (err instanceof H2labError) {
        this.mismatchError ??= err;
        this.fail(sample, 'protocol-mismatch', err.message);
      } else if (err instanceof ConnectError) {
        this.fail(sample, err.failure, err.message);
        this.backOff(startedMs);
      } else this.fail(sample, 'other', String(err));
      this.drain();
      done(sample);
      return;
    }
    this.connectRounds = 0;
    this.failingSinceMs = -1;
    this.endOutage();
    if (this.closed) {
      // The transport closed while this connection was being set up (openConn closed it): the
      // request was never sent. Sent anyway, it ended as a `reset` "closed by the server".
      this.inFlight--;
      done(this.fail(sample, 'aborted', 'transport closed'));
      return;
    }
    sample.newConnection = true;
    sample.connectMs = conn.connectMs;
    if (conn.tlsMs !== undefined) sample.tlsMs = conn.tlsMs;
    // A new HTTP/2 session may take more than this request: let queued ones ride it too.
    queueMicrotask(() => this.drain());
    this.dispatch(conn, spec, sample, done);
  }

  private dispatch(conn: PoolConn, spec: RequestSpec, sample: Sample, done: (s: Sample) => void): void {
    if (++conn.inFlight > conn.peakStreams) conn.peakStreams = conn.inFlight;
    sample.connectionId = conn.id;
    sample.protocol = conn.protocol;
    if (this.unattributed.size > 0 && this.unattributed.delete(conn)) {
      // The first request on a connection opened before the run carries its setup times.
      sample.newConnection = true;
      sample.connectMs = conn.connectMs;
      if (conn.tlsMs !== undefined) sample.tlsMs = conn.tlsMs;
    }
    const after = (): void => this.afterSend(conn, spec, sample, done);
    if (conn.sendCb) conn.sendCb(spec, sample, after);
    else void conn.send(spec, sample).then(after);
  }

  /** A request's connection is done with it: bookkeeping, a retry if it may have one, then `done`. */
  private afterSend(conn: PoolConn, spec: RequestSpec, sample: Sample, done: (s: Sample) => void): void {
    conn.inFlight--;
    conn.lastActiveMs = sample.endMs;
    this.inFlight--;
    if (!conn.usable() && conn.inFlight === 0) conn.close();
    else if (this.s.maxAgeMs > 0 && sample.endMs - conn.createdMs >= this.s.maxAgeMs && conn.inFlight === 0) {
      this.retire(conn, 'max-age');
    }
    if (this.waitHead < this.waiters.length) this.drain();
    if (sample.error === 'protocol-mismatch') this.mismatchError ??= conn.mismatch?.();
    if (sample.error === 'goaway') sample.unprocessed = (sample.unprocessed ?? 0) + 1;
    const budget =
      sample.error === 'goaway' ? MAX_GOAWAY_RETRIES : sample.error === 'refused-stream' ? MAX_RETRIES : 0;
    if ((sample.retries ?? 0) < budget && !this.closed) {
      this.retry(spec, sample, done);
      return;
    }
    done(sample);
  }

  /**
   * Sends a request the server refused unprocessed once more, on whatever connection the policy picks
   * now (the refusing session takes no new streams after GOAWAY), as browsers do: such requests are
   * safe to retry (RFC 9113 §8.7), and counting them as failures would charge HTTP/2 for a server's
   * routine session rotation (nginx: `keepalive_requests`) that HTTP/1.1 pays with a quiet close.
   */
  private retry(spec: RequestSpec, sample: Sample, done: (s: Sample) => void): void {
    sample.retries = (sample.retries ?? 0) + 1;
    delete sample.error;
    delete sample.errorDetail;
    delete sample.streamId;
    delete sample.headersMs;
    delete sample.status;
    delete sample.headerBytesIn;
    sample.bytesIn = 0;
    sample.bytesOut = 0;
    sample.newConnection = false;
    delete sample.connectMs;
    delete sample.tlsMs;
    this.route(spec, sample, done);
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
    if (this.opening === 0) return false;
    const share = Math.ceil(this.inFlight / (this.conns.length + this.opening));
    return c.inFlight >= share;
  }

  private drain(): void {
    while (this.waitHead < this.waiters.length && !this.closed) {
      const picked = this.pick();
      const choice = picked !== undefined && picked !== 'open' && this.overShare(picked) ? undefined : picked;
      if (choice === undefined) {
        if (this.opening === 0 && this.backoffUntil === 0 && this.setupWaiters > 0) this.countSetupWaiters();
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

  private onConnClose(c: PoolConn): void {
    const i = this.conns.indexOf(c);
    if (i < 0) return;
    this.unattributed.delete(c);
    this.conns.splice(i, 1);
    const closedBy =
      this.retiring.get(c) ?? (c.goawayAtMs !== undefined ? 'goaway' : this.closed ? 'run-end' : 'ended');
    this.retiring.delete(c);
    this.record.retire(c, closedBy, this.s.now());
    if (!this.closed) queueMicrotask(() => this.drain());
  }

  private onSweep(): void {
    if (this.inFlight === 0) this.sweep?.unref();
    const now = this.s.now();
    for (const c of [...this.conns]) {
      c.expire(now, this.s.timeoutMs);
      if (c.inFlight > 0) continue;
      if (!c.usable()) {
        c.close();
        continue;
      }
      const old = this.s.maxAgeMs > 0 && now - c.createdMs >= this.s.maxAgeMs;
      const idle = this.s.idleTimeoutMs > 0 && now - c.lastActiveMs >= this.s.idleTimeoutMs;
      if (old) this.retire(c, 'max-age');
      else if (idle) this.retire(c, 'idle-timeout');
    }
  }

  /** Closes a connection for the client's own lifetime limit, remembering which. */
  private retire(c: PoolConn, why: ConnectionEnd): void {
    this.retiring.set(c, why);
    c.close();
  }

  private fail(sample: Sample, error: NonNullable<Sample['error']>, detail: string): Sample {
    if (this.outage) this.outage.failedRequests++;
    sample.error = error;
    sample.errorDetail = detail;
    sample.endMs = this.s.now();
    if (sample.sentMs < sample.queuedMs) sample.sentMs = sample.queuedMs;
    return sample;
  }
}

/** Turns the first connection's failure into the error that ends the run before it starts. */
function toOpenError(reason: unknown, s: PoolSettings): H2labError {
  if (reason instanceof H2labError) return reason;
  if (reason instanceof ConnectError) return setupFailureError(reason.failure, reason.message, s.name);
  return setupFailureError('connect', String(reason), s.name);
}

/**
 * A TLS server that answered the client's ALPN offer with the no_application_protocol alert (RFC 7301
 * §3.2): the handshake worked as far as the protocol, and the server speaks none of those offered —
 * H2LAB_ERR_PROTOCOL_MISMATCH (compare: the cell is not offered), not a certificate problem.
 */
function alpnRefused(strategy: StrategyName, cause: string): H2labError {
  // By the name's version (strategies are named h1…, h2…, h3…). The registry, which once imported this
  // file through the strategies, loads no transport now: asking it (`findStrategy`) is the next step.
  const http = strategy.startsWith('h1') ? 'HTTP/1.1' : strategy.startsWith('h3') ? 'HTTP/3' : 'HTTP/2';
  return new H2labError(
    'H2LAB_ERR_PROTOCOL_MISMATCH',
    `the server refused ${http} in the TLS handshake (ALPN: no_application_protocol alert): it does not offer ${http} on this port; measure the protocols it offers (h2lab probe URL lists them), or enable ${http} on the server`,
    {
      transport: strategy,
      requested: strategy,
      negotiated: 'none',
      cause: /ERR_SSL_[A-Z0-9_]+/.exec(cause)?.[0] ?? cause,
    },
  );
}

/**
 * A handshake the server ended by closing the connection (a reset or an end of stream, no alert and
 * no certificate verdict): the client's trust settings played no part in it.
 */
const closedInHandshake = (cause: string) =>
  /ECONNRESET|EPIPE|socket disconnected before secure TLS|socket hang up/i.test(cause) &&
  !/certificate|CERT_|self[- ]signed|UNABLE_TO_|altnames/i.test(cause);

/**
 * The error that ends a run whose connections could not be set up: H2LAB_ERR_TLS_HANDSHAKE for a
 * `tls` failure, else H2LAB_ERR_TARGET_UNREACHABLE, each naming the fix. Also used when connections
 * are opened on demand (a burst with handshakes included) and none of them could be.
 */
export function setupFailureError(failure: FailureClass, cause: string, strategy: StrategyName): H2labError {
  const hint = tlsFailureHint(cause);
  if (hint) return tlsHintError(hint, cause, { transport: strategy, cause });
  if (/NO_APPLICATION_PROTOCOL|no application protocol/i.test(cause)) return alpnRefused(strategy, cause);
  const fds = openFilesExhausted(cause, { transport: strategy });
  if (fds) return fds;
  if (failure === 'tls' && closedInHandshake(cause)) {
    return new H2labError(
      'H2LAB_ERR_TLS_HANDSHAKE',
      `the server closed the connection during the TLS handshake (${cause}), before any certificate was checked, so neither --ca nor -k changes it: check that the port speaks TLS (else use http://), pass --cert/--key if the server asks for a client certificate, and see the server's log for why it refused`,
      { transport: strategy, cause, hint: 'closed-in-handshake' },
    );
  }
  if (failure === 'tls') {
    return new H2labError(
      'H2LAB_ERR_TLS_HANDSHAKE',
      `the TLS handshake with the target failed (${cause}): pass --ca FILE with the server's CA, --cert/--key if it asks for a client certificate, or -k (--insecure) to skip verification`,
      { transport: strategy, cause },
    );
  }
  return new H2labError(
    'H2LAB_ERR_TARGET_UNREACHABLE',
    `the target could not be reached (${cause}): check the URL's host and port and that the server is running`,
    { transport: strategy, cause },
  );
}

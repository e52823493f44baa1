/**
 * What a pool is made of: the connection contract every pooled connection meets (an HTTP/1.1 socket,
 * an HTTP/2 session, a QUIC connection), the base class that keeps its counters, the opener a strategy
 * hands the pool, and the pool's settings. The pool (pool.ts), its policies (policies/) and its
 * supervisor (supervisor.ts) read connections only through {@link PoolConn}.
 */
import type { H2labError } from '../core/index.ts';
import type { RequestSpec, Sample, StrategyName, WireProtocol } from '../model/index.ts';
import type { TcpLog } from '../net/index.ts';
import type { ConnectionFacts } from './pool-stats.ts';
import type { PoolPolicy } from './presets.ts';

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
   * waiting requests fail at once and the run ends (default RECONNECT_BACKOFF's giveUpMs, supervisor.ts).
   */
  giveUpMs?: number;
  now: () => number;
  /** The connections' TCP_INFO log (the same one the connection target records into). */
  tcp?: TcpLog;
}

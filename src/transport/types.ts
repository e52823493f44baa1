/**
 * The transport contract (architecture.md, "Extension points"). A transport owns connections and
 * turns one request into one {@link Sample}; it never schedules requests or keeps statistics.
 * The engine never branches on protocol: it asks the transport.
 */

import type { H2labError } from '../core/index.ts';
import type {
  ConnectionLifetime,
  FlowControlStats,
  QuicConnectionInfo,
  RequestSpec,
  RequestTiming,
  Sample,
  StrategyName,
  TcpConnectionInfo,
  WireProtocol,
} from '../model/index.ts';

/** What a transport reports about its connections at the end of a run (or at any time). */
export interface TransportStats {
  /** Connections (sessions) opened, including failed attempts that reached the socket stage. */
  opened: number;
  /** Requests in the transport now (waiting for a slot or on the wire). */
  inFlight: number;
  /** Highest number of requests in the transport at once. */
  peakInFlight: number;
  /** Highest number of concurrent requests (streams) on one connection. */
  peakStreamsPerConnection: number;
  /** HTTP/2: the lowest SETTINGS_MAX_CONCURRENT_STREAMS a server announced (undefined = none). */
  serverMaxConcurrentStreams?: number;
  /** TLS version of the first connection that negotiated one (`TLSv1.3`); undefined for cleartext. */
  tlsVersion?: string;
  /** Times a request had to wait because every connection was at its limit (h1: busy; h2: stream cap). */
  capHits: number;
  /** Completed requests per connection, over the `connections` that carried at least one. */
  requestsPerConnection: { mean: number; max: number; connections: number; requests: number };
  /**
   * TCP_INFO of each connection's socket (Linux with the native addon), read at its close or now;
   * `unread` counts connections that could not be read. Absent where it cannot be measured.
   */
  tcp?: { readings: TcpConnectionInfo[]; unread: number };
  /**
   * HTTP/2 on h2lab's own client: flow-control stalls summed over its sessions (`sessions` of them;
   * src/h2/flow-stalls.ts). Absent where not measured (HTTP/1.1, node:http2).
   */
  flowControl?: FlowControlStats;
  /**
   * How the closed connections ended and when (the first {@link LIFETIMES_KEPT}; `omitted` counts the
   * rest): the client's `--idle-timeout` / `--max-age` and the server's GOAWAY, with timestamps.
   */
  lifetimes?: { connections: ConnectionLifetime[]; omitted: number };
  /** HTTP/3: the binding's reading of each QUIC connection (at its close, or now). */
  quic?: QuicConnectionInfo[];
  /**
   * Periods in which every connection attempt failed (the first {@link OUTAGES_KEPT}; `omitted` counts
   * the rest): from the first failed attempt to the next connection that opened (`endMs` absent: still
   * failing at the end, or given up), with the requests that failed meanwhile. Absent: none.
   */
  outages?: { periods: Outage[]; omitted: number };
}

/** One outage of the target as the pool saw it (times on the run's clock, ms). */
export interface Outage {
  startMs: number;
  endMs?: number;
  failedRequests: number;
}

/** Outages a transport (and a run) keeps; the rest are only counted. */
export const OUTAGES_KEPT = 32;

/** Connection lifetimes a transport (and a run) keeps; the rest are only counted. */
export const LIFETIMES_KEPT = 64;

/**
 * The transport contract. `request()` never rejects for a failed request: it resolves a {@link Sample}
 * with `error` set. It rejects only with an H2labError that must end the run
 * (H2LAB_ERR_PROTOCOL_MISMATCH): a silent fallback would compare HTTP/1.1 with itself.
 */
export interface Transport {
  readonly name: StrategyName;
  /** The wire protocol this transport insists on. */
  readonly requested: WireProtocol;
  /**
   * Opens the first connection(s) and asserts the negotiated protocol. Rejects with
   * H2LAB_ERR_PROTOCOL_MISMATCH, H2LAB_ERR_TARGET_UNREACHABLE or H2LAB_ERR_TLS_HANDSHAKE.
   */
  open(): Promise<void>;
  request(spec: RequestSpec, timing: RequestTiming): Promise<Sample>;
  /**
   * {@link request} with a callback, where the transport's request path has no promise of its own
   * (the pools). `done` runs once, possibly before this returns.
   */
  requestCb?(spec: RequestSpec, timing: RequestTiming, done: (s: Sample) => void): void;
  /** The protocol seen on the wire so far (`none` before the first connection). */
  negotiated(): WireProtocol | 'none';
  /**
   * The H2LAB_ERR_PROTOCOL_MISMATCH a connection opened during the run was refused with (a burst
   * that times its handshakes opens them on demand), as the connect said it: the run ends with it.
   */
  mismatch?(): H2labError | undefined;
  stats(): TransportStats;
  /** Closes every connection; requests still in flight resolve with `error: 'aborted'`. */
  close(): Promise<void>;
  /**
   * The run's clock moved its origin by `deltaMs` after `open()` (the engine opens before the run
   * begins, then times the run from its start): times the transport kept of its open connections are
   * moved onto the new clock, so a session opened before the run reads as opened before it (< 0).
   */
  rebaseClock?(deltaMs: number): void;
}

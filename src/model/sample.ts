/**
 * The per-request vocabulary every folder shares: strategy names, wire protocols, failure classes, the
 * {@link Sample} each request yields, and the flow-control stall counters of an HTTP/2 session.
 */

/** Client strategies. The name is also the file name in src/transport/ (the registry key). */
export type TransportName = 'h1' | 'h2' | 'h2-pool';

/** A protocol as negotiated on the wire (ALPN ids; `h2c` for cleartext HTTP/2 with prior knowledge). */
export type WireProtocol = 'http/1.1' | 'h2' | 'h2c';

/**
 * Why a request failed. `http` is a response with status >= 400 (counted separately by status);
 * the rest are transport failures.
 */
export type FailureClass =
  | 'connect'
  | 'tls'
  | 'reset'
  | 'timeout'
  | 'goaway'
  | 'refused-stream'
  | 'protocol-mismatch'
  | 'aborted'
  | 'other';

/**
 * One record per request, with monotonic times in milliseconds since the run's origin
 * (`performance.now()` based, fractional).
 */
export interface Sample {
  /** Sequence number in issue order. */
  seq: number;
  /** Open loop: when the schedule wanted the request sent. Closed loop: equal to `queuedMs`. */
  intendedMs: number;
  /** When the engine handed the request to the transport. */
  queuedMs: number;
  /** When the transport started writing it (after waiting for a connection or stream slot). */
  sentMs: number;
  /** When response headers arrived (undefined on failure before headers). */
  headersMs?: number;
  /** When the response body ended or the request failed. */
  endMs: number;
  /** Transport-local connection id (unique within a run). */
  connectionId: number;
  /** True when this request opened its connection. */
  newConnection: boolean;
  /** TCP connect time of a new connection, ms. */
  connectMs?: number;
  /** TLS handshake time of a new connection, ms. */
  tlsMs?: number;
  /** HTTP status; undefined when the request failed before a response. */
  status?: number;
  /** Response body bytes received. */
  bytesIn: number;
  /** Request body bytes sent. */
  bytesOut: number;
  protocol: WireProtocol;
  /** HTTP/2 stream id. */
  streamId?: number;
  /** Set when the request failed at the transport level. */
  error?: FailureClass;
  /** Human detail of the failure (error code, message). */
  errorDetail?: string;
  /** True when the sample falls in the warm-up period (excluded from statistics). */
  warmup?: boolean;
  /**
   * Times it was sent again after the server refused it unprocessed (GOAWAY above its stream, or
   * REFUSED_STREAM: RFC 9113 §8.7), as browsers do. The other fields describe the last attempt;
   * `queuedMs`/`intendedMs` are the first's, so latency includes the retries.
   */
  retries?: number;
}

/** One request as the transport sends it. */
export interface RequestSpec {
  /** HTTP method, upper case. */
  method: string;
  /** Path and query, starting with `/`. */
  path: string;
  /** Extra request headers (lower-case names). */
  headers?: Record<string, string>;
  /** Request body; `content-length` is set from its size. */
  body?: Uint8Array;
}

/** Times the engine fixed before handing a request over (ms since the run's origin). */
export interface RequestTiming {
  seq: number;
  intendedMs: number;
  queuedMs: number;
}

/** Stall counters of one session (or a sum of sessions). Times in ms, sizes in bytes. */
export interface FlowStalls {
  /** Stall episodes of the connection's window. */
  connectionStalls: number;
  /** Stall episodes of streams' windows. */
  streamStalls: number;
  /** Wall time during which at least one window (the connection's or a stream's) was stalled, ms. */
  stalledMs: number;
  /** Time the connection's window was stalled, ms. */
  connectionStalledMs: number;
  /** Stall time of streams' windows, summed over streams (overlapping streams each count), ms. */
  streamStalledMs: number;
  /**
   * The data that waited: after each stall, the DATA bytes that arrived on the stalled stream or
   * connection up to the credit limit that ended it, each byte counted once.
   */
  bytesAfterStall: number;
  /** How long the session was open (the time stalls are a share of), ms. */
  sessionMs: number;
}

/** Flow-control stalls of several sessions, summed over `sessions` (times add up per session). */
export interface FlowControlStats extends FlowStalls {
  /** Sessions measured. */
  sessions: number;
}

/**
 * The transport contract (architecture.md, "Extension points"). A transport owns connections and
 * turns one request into one {@link Sample}; it never schedules requests or keeps statistics.
 * The engine never branches on protocol: it asks the transport.
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
}

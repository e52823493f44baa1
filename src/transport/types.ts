import type { FlowControlStats } from '../h2/flow-stalls.ts';

export type { FlowControlStats } from '../h2/flow-stalls.ts';

/**
 * The transport contract (architecture.md, "Extension points"). A transport owns connections and
 * turns one request into one {@link Sample}; it never schedules requests or keeps statistics.
 * The engine never branches on protocol: it asks the transport.
 */
import type { TcpConnectionInfo } from '../report/model.ts';

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
}

/**
 * The transport contract. `request()` never rejects for a failed request: it resolves a {@link Sample}
 * with `error` set. It rejects only with an H2labError that must end the run
 * (H2LAB_ERR_PROTOCOL_MISMATCH): a silent fallback would compare HTTP/1.1 with itself.
 */
export interface Transport {
  readonly name: TransportName;
  /** The wire protocol this transport insists on. */
  readonly requested: WireProtocol;
  /**
   * Opens the first connection(s) and asserts the negotiated protocol. Rejects with
   * H2LAB_ERR_PROTOCOL_MISMATCH, H2LAB_ERR_TARGET_UNREACHABLE or H2LAB_ERR_TLS_HANDSHAKE.
   */
  open(): Promise<void>;
  request(spec: RequestSpec, timing: RequestTiming): Promise<Sample>;
  /** The protocol seen on the wire so far (`none` before the first connection). */
  negotiated(): WireProtocol | 'none';
  stats(): TransportStats;
  /** Closes every connection; requests still in flight resolve with `error: 'aborted'`. */
  close(): Promise<void>;
}

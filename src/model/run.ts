/**
 * The result model: what one load run produced, as versioned data. Renderers only read it; the JSON
 * Schema in docs/ is generated from it. Every field carries its unit in its name or its TSDoc.
 *
 * Bump {@link RUN_RESULT_VERSION} on any incompatible change and say what changed in docs/design.md.
 */
import type { FailureClass, FlowControlStats, TransportName, WireProtocol } from './sample.ts';

export const RUN_RESULT_VERSION = 1;

/** Percentiles in milliseconds, read from an HdrHistogram recorded in integer microseconds. */
export interface LatencySummaryMs {
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  min: number;
  mean: number;
  count: number;
}

/** A serialized HdrHistogram (hdr-histogram-js `encodeIntoCompressedBase64`), values in microseconds. */
export interface EncodedHistogram {
  unit: 'us';
  /** Lowest and highest trackable values and significant digits used to create it. */
  lowestUs: number;
  highestUs: number;
  significantDigits: number;
  base64: string;
}

/** The link a run went through (filled by src/net when emulation is in use). */
export interface LinkInfo {
  profile: string;
  backend: 'none' | 'netem' | 'relay';
  rttMs: number;
  jitterMs?: number;
  loss?: number;
  rateBitsPerSec?: number;
  queueBytes?: number;
  congestionControl?: string;
  slowStartAfterIdle?: boolean;
  /** net.ipv4.tcp_no_metrics_save in the server namespace: true = no ssthresh/RTT carried from one connection to the next. */
  noMetricsSave?: boolean;
  initialCwnd?: number;
  /** Loss per direction when they differ from `loss` (up = client → server). */
  lossUp?: number;
  lossDown?: number;
  /** Mean loss burst length in packets (> 1 = Gilbert–Elliott bursty loss). */
  burstPackets?: number;
  /** Client → server rate when it differs from `rateBitsPerSec`. */
  rateUpBitsPerSec?: number;
  /** Whether jittered packets may overtake each other. */
  reorder?: boolean;
  mtuBytes?: number;
  /** tcp_rmem/tcp_wmem maximum in the server namespace, bytes. */
  socketBufferMaxBytes?: number;
  /** Seed of the loss and jitter draws. */
  seed?: number;
  /** Scheduling the relay process got: realtime (SCHED_FIFO), high (nice −10) or normal. */
  relayPriority?: 'realtime' | 'high' | 'normal';
  serverAddress?: string;
  clientAddress?: string;
}

/** The environment a run happened in. */
export interface RunEnvironment {
  h2labVersion: string;
  node: string;
  platform: string;
  cpus: number;
  /** The kernel's TCP congestion control where the client ran (Linux), e.g. "bbr". */
  congestionControl?: string;
  link?: LinkInfo;
  startedAt: string;
}

/** Flow-control windows the client advertised (HTTP/2 only). */
export interface WindowInfo {
  preset: 'node' | 'browser' | 'max' | 'custom';
  streamWindowBytes: number;
  connectionWindowBytes: number;
}

/** The server's own view, read from the fixture server's /metrics before and after the run. */
export interface ServerView {
  requests: number;
  bytesOut?: number;
  poolSize?: number;
  /** Mean and p50/p99 time spent queued for the backend pool during the run, ms. */
  poolQueueMs?: { mean: number; p50?: number; p99?: number };
  poolServiceMs?: { mean: number };
  peakInFlight?: number;
  cancellations?: number;
  [key: string]: unknown;
}

/** One burst of a run; times in ms from its t0 (the instant its N requests were handed over). */
export interface BurstRecordResult {
  /** t0, ms since the run's origin. */
  startMs: number;
  /** t0 → the end of the last response, failed requests included. */
  completionMs: number;
  /** t0 → the first response headers (absent when no response came). */
  firstResponseMs?: number;
  ok: number;
  failed: number;
  /** Connections opened inside the timed period (0 with handshakes excluded). */
  connectionsOpened: number;
}

/**
 * What a burst run measured: N requests handed to the transport at once, the time until the last one
 * ended (the page-load question). The latency histograms of the run hold every request of every
 * burst, each from t0 (so they include the wait in the client for a connection or stream slot).
 */
export interface BurstResult {
  /** N: requests per burst. */
  requests: number;
  /** Bursts measured. */
  bursts: number;
  /** `include`: connections were opened inside the timed period; `exclude`: before t0. */
  handshakes: 'include' | 'exclude';
  /** Median over the bursts of t0 → last response end, ms: the figure compared. */
  completionMs: number;
  /** Median over the bursts of t0 → first response headers, ms (absent when no response came). */
  firstResponseMs?: number;
  /** Requests that failed, over all bursts (their end still counts for the completion time). */
  failed: number;
  /** Connections opened inside the timed periods, over all bursts. */
  connectionsOpened: number;
  /** Every burst, in order. */
  perBurst: BurstRecordResult[];
}

/** The kernel's congestion-avoidance state of a connection (TCP_INFO tcpi_ca_state). */
export type TcpCaState = 'open' | 'disorder' | 'cwr' | 'recovery' | 'loss';

/**
 * One connection as the kernel saw it from one end (Linux TCP_INFO), read when the connection closed
 * or, for one still open, at the end of the run. Sending facts (congestion window, retransmissions,
 * delivery rate) describe what THIS end sent: on the client that is requests, on the server responses.
 */
export interface TcpConnectionInfo {
  /** The client's port: a connection's identity within a run (it matches server readings and link flows). */
  clientPort: number;
  serverPort: number;
  /** `close`: read as the connection closed; `open`: still open when read (the run's end, a scrape). */
  readAt: 'close' | 'open';
  /** The congestion control algorithm of this socket (TCP_CONGESTION), e.g. "cubic". */
  congestionControl?: string;
  /** Congestion window, segments (tcpi_snd_cwnd). */
  cwndSegments: number;
  /** Sender's maximum segment size, bytes (tcpi_snd_mss). */
  mssBytes: number;
  /** Slow-start threshold, segments; absent while still in the initial slow start (infinite). */
  ssthreshSegments?: number;
  /** Smoothed RTT and its variation, ms (tcpi_rtt, tcpi_rttvar). */
  rttMs: number;
  rttVarMs: number;
  /** Lowest RTT seen, ms (tcpi_min_rtt). */
  minRttMs?: number;
  /** Segments retransmitted over the connection's life (tcpi_total_retrans). */
  retransmittedSegments: number;
  /** Segments marked lost and not yet repaired when read (tcpi_lost; not cumulative). */
  lostSegments: number;
  /** Retransmission timeouts in a row when read (tcpi_retransmits). */
  consecutiveTimeouts: number;
  caState: TcpCaState;
  /** Bytes sent (payload, retransmissions included: tcpi_bytes_sent), acknowledged, retransmitted. */
  bytesSent?: number;
  bytesAcked?: number;
  bytesRetransmitted?: number;
  /** Payload bytes received (tcpi_bytes_received). */
  bytesReceived?: number;
  segmentsOut: number;
  segmentsIn: number;
  /** The kernel's estimate of the most recent delivery rate, bits/s (tcpi_delivery_rate × 8). */
  deliveryRateBitsPerSec?: number;
  /** Time busy sending, and of it limited by the peer's receive window or by the send buffer, ms. */
  busyMs?: number;
  rwndLimitedMs?: number;
  sndbufLimitedMs?: number;
}

/** The TCP facts of one end's connections in a run. */
export interface TcpSideSummary {
  /** Connections read (every one of the run's, up to the bound; see `unread`). */
  connections: number;
  /** Connections of the run that could not be read (closed before a reading, past the bound). */
  unread?: number;
  /** Congestion windows at each connection's reading, segments. */
  cwndSegments: { sum: number; median: number; max: number };
  /** Σ cwnd × MSS: how much the connections together could have in flight at the end, bytes. */
  cwndBytesSum: number;
  /** Σ segments retransmitted, and Σ segments sent (the retransmission rate's denominator). */
  retransmittedSegments: number;
  segmentsOut: number;
  /** Σ bytes retransmitted (kernels ≥ 4.19). */
  bytesRetransmitted?: number;
  /** Smoothed RTT at each reading, ms. */
  rttMs: { median: number; max: number };
  /** Delivery rate estimates at each reading, bits/s. */
  deliveryRateBitsPerSec?: { median: number; sum: number };
  /** The algorithm(s) the sockets used, e.g. ["cubic"]. */
  congestionControl?: string[];
  /** The readings, at most 64 (the summary covers all); `perConnectionOmitted` says how many more. */
  perConnection: TcpConnectionInfo[];
  perConnectionOmitted?: number;
}

/** The emulated link's drops on one connection of the run (matched by client port). */
export interface LinkDropsOfConnection {
  clientPort: number;
  /** Dropped by random loss, client → server (up) and server → client (down), packets. */
  lossUp: number;
  lossDown: number;
  /** Dropped at the full bottleneck queue, packets. */
  queueUp: number;
  queueDown: number;
}

/** Packets the emulated link dropped on the run's connections. */
export interface LinkDropsSummary {
  /** The run's connections looked up (all with a client-side reading). */
  connections: number;
  /** Σ packets dropped by random loss / at the full queue, both directions. */
  lossPackets: number;
  queuePackets: number;
  /** Σ packets dropped client → server / server → client. */
  upPackets: number;
  downPackets: number;
  /** Per connection, at most 64 (zeros included); `perConnectionOmitted` says how many more. */
  perConnection: LinkDropsOfConnection[];
  perConnectionOmitted?: number;
}

/**
 * Per-connection TCP facts from the kernel. Each end's view is kept apart: the congestion window
 * that decides a download is the server's (its sending direction), the client's carries requests.
 */
export interface TcpFacts {
  /** h2lab's own sockets (always read where the native addon loads, Linux). */
  client?: TcpSideSummary;
  /** The fixture server's sockets of this run's connections (its metrics, matched by client port). */
  server?: TcpSideSummary;
  /** The emulated link's drops on this run's connections (runs through a relay link). */
  linkDrops?: LinkDropsSummary;
}

/** Medians of one group of requests (new or warm connections), from their send (setup excluded). */
export interface ConnectionAgeMedians {
  /** Requests with a response. */
  count: number;
  /** Time to response headers, ms. */
  ttfbP50Ms: number;
  /** Time to the end of the response, ms (slow start on a new connection shows here). */
  responseP50Ms: number;
  /** Responses with a body of 1 to 4,096 bytes (stats.ts SMALL_BODY_BYTES). */
  smallBodyCount: number;
  /** For those: from the headers to the end of the body, ms (≈ 0 unless a segment was held back). */
  bodyAfterHeadersP50Ms: number;
}

/** One load run's result. */
export interface RunResult {
  kind: 'h2lab.run';
  version: typeof RUN_RESULT_VERSION;
  /** The resolved options, so the run can be reproduced. */
  options: Record<string, unknown>;
  environment: RunEnvironment;
  target: { url: string; embedded: boolean };
  transport: {
    name: TransportName;
    /** Connections (h1) or sessions (h2-pool) allowed. */
    connections: number;
    /** h2-pool session choice policy. */
    policy?: string;
    /** HTTP/2 only: whose client carried the sessions — h2lab's own, or node:http2. */
    client?: 'h2lab' | 'node';
    window?: WindowInfo;
    /** Nagle's algorithm off (TCP_NODELAY) on every socket the client opened: always true for h2lab's transports. */
    noDelay?: boolean;
  };
  protocol: { requested: WireProtocol; negotiated: WireProtocol | 'none' };
  schedule: {
    /** `burst`: N requests at one instant, `concurrency` = N (see {@link BurstResult}). */
    mode: 'closed' | 'open' | 'burst';
    concurrency?: number;
    rateRps?: number;
    arrivals?: 'even' | 'poisson';
    /** Burst: bursts in the run. */
    bursts?: number;
    /** Burst: pause between bursts, ms. */
    gapMs?: number;
    /** Burst: whether connection setup lies inside the timed period. */
    handshakes?: 'include' | 'exclude';
  };
  /** Burst schedule only: the page-load figures. */
  burst?: BurstResult;
  /** Measured period (after warm-up), ms. */
  durationMs: number;
  warmupMs: number;
  counts: {
    total: number;
    ok: number;
    failed: number;
    /** Responses by HTTP status, e.g. { "200": 990, "503": 10 }. */
    byStatus: Record<string, number>;
    /** Transport failures by class. */
    byFailure: Partial<Record<FailureClass, number>>;
    /** Open loop: requests that could not be sent at their intended time (sent late). */
    late?: number;
    /** Requests that fell in the warm-up (sent to the server, excluded from every other figure). */
    warmup?: number;
    /**
     * Requests sent again after the server refused them unprocessed (GOAWAY, REFUSED_STREAM), up to
     * twice; each is counted once in `total`, with the outcome of its last attempt.
     */
    retried?: number;
  };
  throughput: { rps: number; bytesPerSec: number; bytesIn: number; bytesOut: number };
  /**
   * Closed loop: from when the request was handed to the transport to the end of the response — what
   * the caller waited, including any wait for a connection or stream slot (see `clientQueueMs`).
   * Open loop: from the intended send time (corrected for coordinated omission). Responses of any
   * status are included; transport failures are not (they are in `counts.byFailure`).
   */
  latencyMs: LatencySummaryMs;
  /** Open loop only: latency from the actual send (`sentMs`), uncorrected for coordinated omission. */
  latencyUncorrectedMs?: LatencySummaryMs;
  /** From the actual send to the response headers. */
  ttfbMs: LatencySummaryMs;
  /** Time requests waited inside the client for a connection or a stream slot. */
  clientQueueMs: LatencySummaryMs;
  histograms: { latency: EncodedHistogram; ttfb: EncodedHistogram; latencyUncorrected?: EncodedHistogram };
  connections: {
    opened: number;
    /** Connect and TLS handshake times of new connections. */
    connectMs?: LatencySummaryMs;
    tlsMs?: LatencySummaryMs;
    peakInFlight: number;
    /** HTTP/2: highest number of concurrent streams on one connection. */
    peakStreamsPerConnection?: number;
    /** HTTP/2: SETTINGS_MAX_CONCURRENT_STREAMS the server announced (undefined = none announced). */
    serverMaxConcurrentStreams?: number;
    /** HTTP/2: how many times a request waited because the stream cap was reached. */
    streamCapHits?: number;
    /** TLS version the server chose (`TLSv1.3`); undefined over cleartext. */
    tlsVersion?: string;
    requestsPerConnection: { mean: number; max: number };
    /** Per-connection TCP facts (Linux, native addon); absent where they could not be measured. */
    tcp?: TcpFacts;
  };
  /** The load client's own saturation. */
  client: {
    eventLoopUtilization: number;
    /**
     * CPU seconds used by the load process / wall seconds (1.0 = one core). With the embedded fixture
     * server this includes the server's thread (it runs in the same process).
     */
    cpu: number;
    workers: number;
    /** Peak resident set size of the load process (all its threads) at the end of the run, bytes. */
    maxRssBytes?: number;
    /** True when the client was probably the bottleneck; `note` says why in words. */
    saturated: boolean;
    note?: string;
  };
  server?: ServerView;
  /**
   * HTTP/2 on h2lab's own client: how long its receive windows stopped the server (src/h2/flow-stalls.ts
   * defines a stall), summed over sessions and worker threads. Absent where not measured: HTTP/1.1,
   * and `--h2-client node` (node:http2 does not expose when its windows run out).
   */
  flowControl?: FlowControlStats;
  /**
   * First requests on new connections vs requests on warm ones (the Nagle / delayed-ACK signature,
   * src/report/confounders.ts). A request is "new" when it opened its connection or was the first on
   * one opened before the run.
   */
  connectionAge?: { newConnection: ConnectionAgeMedians; warmConnection: ConnectionAgeMedians };
  /** Warnings in words: anything that could distort the numbers. */
  warnings: string[];
  /** Set when the run failed or was interrupted; the rest is what was measured until then. */
  error?: { code: string; message: string; details?: Record<string, unknown> };
}

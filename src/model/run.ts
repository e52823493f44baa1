/**
 * The result model: what one load run produced, as versioned data. Renderers only read it. The zod
 * schemas below are the one source: the TypeScript types are inferred from them and
 * `docs/run-result.schema.json` is generated from {@link runResultSchema} (`npm run schema`; a test
 * fails when it is stale). Every field carries its unit in its name or its description.
 *
 * Bump {@link RUN_RESULT_VERSION} on any incompatible change and say what changed in docs/design.md.
 */
import { z } from 'zod';
import { count, ms, publishedJsonSchema, resultErrorSchema } from './fields.ts';
import {
  connectionLifetimeSchema,
  failureClassSchema,
  flowControlStatsSchema,
  strategyNameSchema,
  wireProtocolSchema,
} from './sample.ts';

export const RUN_RESULT_VERSION = 1;

/** Percentiles in milliseconds, read from an HdrHistogram recorded in integer microseconds. */
const latencySummaryMsSchema = z
  .strictObject({
    p50: ms('50th percentile'),
    p90: ms('90th percentile'),
    p99: ms('99th percentile'),
    p999: ms('99.9th percentile'),
    max: ms('maximum'),
    min: ms('minimum'),
    mean: ms('mean'),
    count: z.number().int().nonnegative().describe('number of values recorded'),
  })
  .describe('Percentiles read from an HdrHistogram recorded in integer microseconds.');
/** Percentiles in milliseconds (see {@link latencySummaryMsSchema}). */
export type LatencySummaryMs = z.infer<typeof latencySummaryMsSchema>;

/** A serialized HdrHistogram (hdr-histogram-js `encodeIntoCompressedBase64`), values in microseconds. */
export const encodedHistogramSchema = z
  .strictObject({
    unit: z.literal('us'),
    lowestUs: z.number().describe('lowest trackable value it was created with, microseconds'),
    highestUs: z.number().describe('highest trackable value it was created with, microseconds'),
    significantDigits: z.number().int().describe('significant value digits it was created with'),
    base64: z.string().describe('hdr-histogram-js encodeIntoCompressedBase64 (mergeable)'),
  })
  .describe('A serialized HdrHistogram, values in microseconds.');
/** A serialized HdrHistogram (see {@link encodedHistogramSchema}). */
export type EncodedHistogram = z.infer<typeof encodedHistogramSchema>;

/** The link a run went through (filled by src/net when emulation is in use). */
export const linkInfoSchema = z.strictObject({
  profile: z.string().describe('the link profile or condition name, e.g. "wan"'),
  backend: z.enum(['none', 'netem', 'relay']),
  rttMs: ms('round-trip time the link adds'),
  jitterMs: ms('one-way delay varies uniformly by ± this around rttMs/2').optional(),
  loss: z.number().optional().describe('packet loss probability per direction, 0..1'),
  rateBitsPerSec: z.number().optional().describe('bottleneck rate, bits per second'),
  queueBytes: z.number().optional().describe('bottleneck queue, bytes'),
  congestionControl: z
    .string()
    .optional()
    .describe('TCP congestion control pinned on both ends, e.g. "cubic"'),
  slowStartAfterIdle: z.boolean().optional().describe('net.ipv4.tcp_slow_start_after_idle on both ends'),
  noMetricsSave: z
    .boolean()
    .optional()
    .describe('tcp_no_metrics_save in the server namespace: no ssthresh or RTT carried between connections'),
  initialCwnd: z.number().optional().describe('initial congestion window on the route, segments'),
  lossUp: z.number().optional().describe('client → server loss when it differs from loss, 0..1'),
  lossDown: z.number().optional().describe('server → client loss when it differs from loss, 0..1'),
  burstPackets: z
    .number()
    .optional()
    .describe('mean loss burst length in packets (> 1 = Gilbert–Elliott bursty loss)'),
  rateUpBitsPerSec: z
    .number()
    .optional()
    .describe('client → server rate when it differs from rateBitsPerSec, bits per second'),
  reorder: z.boolean().optional().describe('whether jittered packets may overtake each other'),
  mtuBytes: z.number().optional().describe('link MTU, bytes'),
  socketBufferMaxBytes: z
    .number()
    .optional()
    .describe('tcp_rmem/tcp_wmem maximum in the server namespace, bytes'),
  seed: z.number().optional().describe('seed of the loss and jitter draws'),
  relayPriority: z
    .enum(['realtime', 'high', 'normal'])
    .optional()
    .describe('scheduling the relay process got: realtime (SCHED_FIFO), high (nice −10) or normal'),
  serverAddress: z.string().optional(),
  clientAddress: z.string().optional(),
  gateway: z
    .strictObject({
      target: z.string().describe("the target's IPv4 address the link leads to"),
      placement: z
        .enum(['loopback', 'host', 'remote'])
        .describe("where the target is: this host's loopback, one of its addresses, or another host"),
      serverPinned: z
        .boolean()
        .describe(
          "whether the server's side of TCP got the link's congestion control and initial window (a server on this host: by its route; a remote one keeps its own)",
        ),
      hostChanges: z.array(z.string()).describe('what was changed on the host for the link (and put back)'),
    })
    .optional()
    .describe(
      'set when the link leads to a server h2lab did not start: the namespace forwarded to it by NAT (src/net/gateway.ts)',
    ),
});
/** The link a run went through (see {@link linkInfoSchema}). */
export type LinkInfo = z.infer<typeof linkInfoSchema>;

/** The path to a target h2lab did not start, measured before any link was added. */
const pathInfoSchema = z
  .strictObject({
    target: z.string().describe('address:port measured'),
    placement: z.enum(['loopback', 'host', 'remote']).optional(),
    baseRttMs: ms('median round trip of TCP handshakes to the target, with no link'),
    baseRttMinMs: ms('the fastest of those handshakes'),
    samples: z.number().int().describe('handshakes timed'),
  })
  .describe(
    "The round trip to the target without any emulated link (TCP handshakes from the client's host): what a link's delay adds to.",
  );
/** See {@link pathInfoSchema}. */
export type PathInfo = z.infer<typeof pathInfoSchema>;

/** The environment a run happened in. */
const runEnvironmentSchema = z.strictObject({
  h2labVersion: z.string(),
  node: z.string().describe('Node.js version, e.g. v20.19.0'),
  platform: z.string(),
  cpus: z.number().int(),
  congestionControl: z
    .string()
    .optional()
    .describe('the kernel\'s TCP congestion control where the client ran (Linux), e.g. "bbr"'),
  link: linkInfoSchema.optional(),
  path: pathInfoSchema.optional(),
  startedAt: z.string().describe('ISO 8601 time the run started'),
});
/** The environment a run happened in (see {@link runEnvironmentSchema}). */
export type RunEnvironment = z.infer<typeof runEnvironmentSchema>;

/** Flow-control windows the client advertised (HTTP/2 only). */
const windowInfoSchema = z.strictObject({
  preset: z.enum(['node', 'browser', 'max', 'custom']),
  streamWindowBytes: z.number().int().describe('initial window of each stream, bytes'),
  connectionWindowBytes: z.number().int().describe("the connection's window, bytes"),
});
/** Flow-control windows the client advertised (see {@link windowInfoSchema}). */
export type WindowInfo = z.infer<typeof windowInfoSchema>;

/**
 * The server's own view, read from the fixture server's /metrics before and after the run. Other keys
 * may appear (the metrics contract can grow), hence the catch-all.
 */
const serverViewSchema = z
  .object({
    requests: z.number().describe('requests whose handler started during the run'),
    bytesOut: z.number().optional().describe('response body bytes written during the run'),
    poolSize: z.number().optional().describe('backend pool workers'),
    poolQueueMs: z
      .strictObject({ mean: z.number(), p50: z.number().optional(), p99: z.number().optional() })
      .optional()
      .describe('time spent queued for the backend pool during the run: mean, p50, p99, milliseconds'),
    poolServiceMs: z
      .strictObject({ mean: z.number() })
      .optional()
      .describe('time a job held a backend pool worker: mean, milliseconds'),
    peakInFlight: z.number().optional().describe('highest number of requests in handlers at once'),
    cancellations: z.number().optional().describe('clients that went away during the run'),
    cpuSeconds: z
      .number()
      .nonnegative()
      .optional()
      .describe(
        "CPU seconds (user + system) the fixture server's own thread (cpuScope 'thread') or process ('process') used between the metrics reads around the run, warm-up included; absent when it shares its client's thread",
      ),
    cpuScope: z
      .enum(['thread', 'process'])
      .optional()
      .describe("whose CPU cpuSeconds is: the server's worker thread, or its own process"),
    eventLoopUtilization: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .describe("share of the same period the server's event loop was busy, 0..1"),
  })
  .catchall(z.unknown())
  .describe("The fixture server's own view of the run (its /metrics before and after).");
/** The server's own view (see {@link serverViewSchema}). */
export type ServerView = z.infer<typeof serverViewSchema>;

/** One burst of a run; times in ms from its t0 (the instant its N requests were handed over). */
const burstRecordResultSchema = z.strictObject({
  startMs: ms("the burst's t0 since the run's origin"),
  completionMs: ms('t0 → the end of the last response, failed requests included'),
  firstResponseMs: ms('t0 → the first response headers (absent when no response came)').optional(),
  ok: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  connectionsOpened: z
    .number()
    .int()
    .nonnegative()
    .describe('connections opened inside the timed period (0 with handshakes excluded)'),
});
/** One burst of a run (see {@link burstRecordResultSchema}). */
export type BurstRecordResult = z.infer<typeof burstRecordResultSchema>;

/**
 * What a burst run measured: N requests handed to the transport at once, the time until the last one
 * ended (the page-load question). The latency histograms of the run hold every request of every
 * burst, each from t0 (so they include the wait in the client for a connection or stream slot).
 */
const burstResultSchema = z
  .strictObject({
    requests: z.number().int().describe('N: requests handed to the transport at once'),
    bursts: z.number().int().describe('bursts measured'),
    handshakes: z
      .enum(['include', 'exclude'])
      .describe('include: connections opened inside the timed period; exclude: before t0'),
    completionMs: ms('median over the bursts of t0 → last response end (the figure compared)'),
    firstResponseMs: ms('median over the bursts of t0 → first response headers').optional(),
    failed: z
      .number()
      .int()
      .describe('failed requests over all bursts (their end still counts for the completion time)'),
    connectionsOpened: z.number().int().describe('connections opened inside the timed periods'),
    perBurst: z.array(burstRecordResultSchema).describe('every burst, in order'),
  })
  .describe(
    'Burst schedule: N requests at once, the time until the last one ended (the page-load question).',
  );
/** What a burst run measured (see {@link burstResultSchema}). */
export type BurstResult = z.infer<typeof burstResultSchema>;

/** The kernel's congestion-avoidance state of a connection (TCP_INFO tcpi_ca_state). */
const tcpCaStateSchema = z.enum(['open', 'disorder', 'cwr', 'recovery', 'loss']);
/** The kernel's congestion-avoidance state of a connection (TCP_INFO tcpi_ca_state). */
export type TcpCaState = z.infer<typeof tcpCaStateSchema>;

/**
 * One connection as the kernel saw it from one end (Linux TCP_INFO), read when the connection closed
 * or, for one still open, at the end of the run. Sending facts (congestion window, retransmissions,
 * delivery rate) describe what THIS end sent: on the client that is requests, on the server responses.
 * Also the shape the fixture server's metrics carry per connection.
 */
export const tcpConnectionInfoSchema = z
  .strictObject({
    clientPort: z
      .number()
      .int()
      .describe(
        "the client's port: the connection's identity within a run (matches server readings and link flows)",
      ),
    serverPort: z.number().int(),
    readAt: z.enum(['close', 'open']).describe('read as it closed, or while still open (run end, scrape)'),
    congestionControl: z
      .string()
      .optional()
      .describe('the congestion control algorithm of this socket (TCP_CONGESTION), e.g. "cubic"'),
    cwndSegments: count('congestion window, segments (tcpi_snd_cwnd)'),
    mssBytes: count('sender MSS, bytes (tcpi_snd_mss)'),
    ssthreshSegments: count('slow-start threshold, segments (absent while infinite)').optional(),
    rttMs: ms('smoothed RTT (tcpi_rtt)'),
    rttVarMs: ms('RTT variation (tcpi_rttvar)'),
    minRttMs: ms('lowest RTT seen (tcpi_min_rtt)').optional(),
    retransmittedSegments: count('segments retransmitted over the connection (tcpi_total_retrans)'),
    lostSegments: count('segments marked lost when read (tcpi_lost, not cumulative)'),
    consecutiveTimeouts: count('retransmission timeouts in a row when read (tcpi_retransmits)'),
    caState: tcpCaStateSchema
      .optional()
      .describe(
        "the congestion-avoidance state when read (absent: read from the kernel's notice of a closed socket, which does not carry it)",
      ),
    bytesSent: z
      .number()
      .optional()
      .describe('payload bytes sent, retransmissions included (tcpi_bytes_sent)'),
    bytesAcked: z.number().optional().describe('payload bytes acknowledged (tcpi_bytes_acked)'),
    bytesRetransmitted: z.number().optional().describe('payload bytes retransmitted (tcpi_bytes_retrans)'),
    bytesReceived: z.number().optional().describe('payload bytes received (tcpi_bytes_received)'),
    segmentsOut: z.number().int(),
    segmentsIn: z.number().int(),
    deliveryRateBitsPerSec: z
      .number()
      .optional()
      .describe("the kernel's estimate of the most recent delivery rate, bits per second"),
    busyMs: ms('time busy sending').optional(),
    rwndLimitedMs: ms('time limited by the peer receive window').optional(),
    sndbufLimitedMs: ms('time limited by the send buffer').optional(),
  })
  .describe(
    "One connection as the kernel saw it from one end (Linux TCP_INFO); sending facts are this end's.",
  );
/** One connection as the kernel saw it from one end (see {@link tcpConnectionInfoSchema}). */
export type TcpConnectionInfo = z.infer<typeof tcpConnectionInfoSchema>;

/** The TCP facts of one end's connections in a run. */
const tcpSideSummarySchema = z
  .strictObject({
    connections: count("connections read (every one of the run's, up to the bound; see unread)"),
    unread: count(
      'connections of the run that could not be read (closed before a reading, past the bound)',
    ).optional(),
    cwndSegments: z
      .strictObject({ sum: z.number(), median: z.number(), max: z.number() })
      .describe("congestion windows at each connection's reading, segments"),
    cwndBytesSum: z
      .number()
      .describe('Σ cwnd × MSS: how much the connections together could have in flight at the end, bytes'),
    retransmittedSegments: z.number().int().describe('Σ segments retransmitted'),
    segmentsOut: z.number().int().describe('Σ segments sent (the retransmission rate’s denominator)'),
    bytesRetransmitted: z.number().optional().describe('Σ bytes retransmitted (kernels ≥ 4.19)'),
    rttMs: z
      .strictObject({ median: z.number(), max: z.number() })
      .describe('smoothed RTT at each reading, milliseconds'),
    deliveryRateBitsPerSec: z
      .strictObject({ median: z.number(), sum: z.number() })
      .optional()
      .describe('delivery rate estimates at each reading, bits per second'),
    congestionControl: z
      .array(z.string())
      .optional()
      .describe('the algorithm(s) the sockets used, e.g. ["cubic"]'),
    perConnection: z.array(tcpConnectionInfoSchema).describe('at most 64 readings (the summary covers all)'),
    perConnectionOmitted: z.number().int().optional().describe('readings left out of perConnection'),
  })
  .describe("The TCP facts of one end's connections in the run.");
/** The TCP facts of one end's connections (see {@link tcpSideSummarySchema}). */
export type TcpSideSummary = z.infer<typeof tcpSideSummarySchema>;

/** The emulated link's drops on one connection of the run (matched by client port). */
const linkDropsOfConnectionSchema = z.strictObject({
  clientPort: z.number().int(),
  lossUp: z.number().int().describe('packets dropped by random loss, client → server'),
  lossDown: z.number().int().describe('packets dropped by random loss, server → client'),
  queueUp: z.number().int().describe('packets dropped at the full bottleneck queue, client → server'),
  queueDown: z.number().int().describe('packets dropped at the full bottleneck queue, server → client'),
});
/** The emulated link's drops on one connection (see {@link linkDropsOfConnectionSchema}). */
export type LinkDropsOfConnection = z.infer<typeof linkDropsOfConnectionSchema>;

/** Packets the emulated link dropped on the run's connections. */
const linkDropsSummarySchema = z
  .strictObject({
    connections: count('connections looked up (all with a client-side reading)'),
    lossPackets: z.number().int().describe('Σ packets dropped by random loss, both directions'),
    queuePackets: z.number().int().describe('Σ packets dropped at the full queue, both directions'),
    upPackets: z.number().int().describe('Σ packets dropped client → server'),
    downPackets: z.number().int().describe('Σ packets dropped server → client'),
    perConnection: z.array(linkDropsOfConnectionSchema).describe('at most 64 (zeros included)'),
    perConnectionOmitted: z.number().int().optional().describe('connections left out of perConnection'),
  })
  .describe("Packets the emulated link dropped on the run's connections, by direction and cause.");
/** Packets the emulated link dropped (see {@link linkDropsSummarySchema}). */
export type LinkDropsSummary = z.infer<typeof linkDropsSummarySchema>;

/**
 * One QUIC connection as one end's stack measured it (the client's in `perConnection`, the server's
 * in `server.perConnection`), read at its close or at the run's end. QUIC's loss recovery and
 * congestion control run in user space (RFC 9002), so these come from the binding, not TCP_INFO: its
 * metrics give packets and bytes, smoothed RTT and congestion window; the rest only that end's qlog
 * does, so they are present where the end wrote one (the fixture's server with `--qlog`).
 */
export const quicConnectionInfoSchema = z.strictObject({
  handshakeMs: ms('QUIC + TLS handshake, as the binding timed it'),
  rttMs: ms('smoothed RTT (RFC 9002 §5.3)'),
  cwndBytes: count("this end's congestion window at the reading, bytes (what limits what it sends)"),
  packetsSent: count('QUIC packets this end sent'),
  packetsReceived: count('QUIC packets this end received'),
  packetsLost: count('packets this end declared lost (RFC 9002 §6)')
    .optional()
    .describe('packets this end declared lost (RFC 9002 §6), from its qlog; absent: it wrote none'),
  packetsRetransmitted: count('packets this end sent that carried data it had sent before (STREAM or CRYPTO)')
    .optional()
    .describe(
      'packets this end sent that carried data it had sent before (STREAM or CRYPTO frames), from its qlog; absent: it wrote none',
    ),
  bytesInFlightMax: count(
    'the most bytes this end had in flight, from its qlog; absent: it wrote none',
  ).optional(),
  initialCwndBytes: count(
    "this end's congestion window when its first packet left, from its qlog (TCP's is 10 segments); absent: it wrote none",
  ).optional(),
  bytesSent: count('UDP payload bytes this end sent'),
  bytesReceived: count('UDP payload bytes this end received'),
  pmtuBytes: count(
    "the largest UDP payload this end sends on the path, bytes (quiche's path MTU discovery, RFC 9000 §14.3)",
  ).optional(),
  clientPort: z.number().int().optional().describe("the client's UDP port, when the binding tells it"),
});
/** One QUIC connection's facts (see {@link quicConnectionInfoSchema}). */
export type QuicConnectionInfo = z.infer<typeof quicConnectionInfoSchema>;

/** The QUIC facts of a run's HTTP/3 connections (the client's view). */
const quicFactsSchema = z
  .strictObject({
    connections: count('QUIC connections read'),
    handshakeMs: z.strictObject({ median: z.number(), max: z.number() }).describe('handshake times, ms'),
    rttMs: z
      .strictObject({ median: z.number(), max: z.number() })
      .describe('smoothed RTT at each reading, ms'),
    cwndBytes: z.strictObject({ median: z.number(), max: z.number() }).describe('congestion windows, bytes'),
    packetsSent: count('Σ packets sent'),
    packetsReceived: count('Σ packets received'),
    packetsLost: count('Σ packets declared lost').optional(),
    linkDrops: z
      .strictObject({
        flows: count('UDP flows of the run through the link'),
        lossPackets: count('Σ packets dropped by random loss, both directions'),
        queuePackets: count('Σ packets dropped at the full queue, both directions'),
        upPackets: count('Σ packets dropped client → server'),
        downPackets: count('Σ packets dropped server → client'),
      })
      .optional()
      .describe("what the emulated link dropped of the run's UDP (QUIC) packets"),
    perConnection: z.array(quicConnectionInfoSchema).describe('at most 64 readings (the summary covers all)'),
    server: z
      .strictObject({
        binding: z.string().describe("the server's HTTP/3 implementation: package@version"),
        retry: z
          .boolean()
          .describe(
            'whether the server sent a Retry before every handshake (RFC 9000 §8.1.2): one more round trip',
          ),
        maxStreams: count('initial_max_streams_bidi the server granted'),
        congestionControl: z
          .string()
          .describe("the server's QUIC congestion controller (the sender's of a download)"),
        congestionControlSource: z
          .string()
          .describe('how that is known: read from the stack, or whose documented default it is'),
        connections: count("the run's connections the server's readings matched (by the client's UDP port)"),
        cwndBytes: z
          .strictObject({ median: z.number(), max: z.number() })
          .optional()
          .describe("the server's congestion windows at each reading, bytes"),
        rttMs: z
          .strictObject({ median: z.number(), max: z.number() })
          .optional()
          .describe("the server's smoothed RTT at each reading, ms"),
        packetsSent: count('Σ packets the server sent'),
        packetsReceived: count('Σ packets the server received'),
        bytesSent: count('Σ UDP payload bytes the server sent'),
        packetsLost: count('Σ packets the server declared lost (from its qlog)').optional(),
        packetsRetransmitted: count(
          'Σ packets the server sent with data it had sent before (from its qlog)',
        ).optional(),
        perConnection: z.array(quicConnectionInfoSchema).describe('at most 64 readings'),
      })
      .optional()
      .describe(
        "h2lab's own QUIC server (the fixture): its settings, read from it, and its stack's reading of each of the run's connections — the sender's side of a download",
      ),
  })
  .describe("The QUIC facts of the run's HTTP/3 connections, from the binding.");
/** A run's QUIC facts (see {@link quicFactsSchema}). */
export type QuicFacts = z.infer<typeof quicFactsSchema>;

/**
 * Per-connection TCP facts from the kernel. Each end's view is kept apart: the congestion window
 * that decides a download is the server's (its sending direction), the client's carries requests.
 */
const tcpFactsSchema = z
  .strictObject({
    client: tcpSideSummarySchema
      .optional()
      .describe("h2lab's own sockets (the request direction; read where the native addon loads, Linux)"),
    server: tcpSideSummarySchema
      .optional()
      .describe(
        "the fixture server's sockets of this run's connections (the response direction; by client port)",
      ),
    linkDrops: linkDropsSummarySchema.optional(),
  })
  .describe('Per-connection TCP facts from the kernel (Linux TCP_INFO) and the emulated link.');
/** Per-connection TCP facts (see {@link tcpFactsSchema}). */
export type TcpFacts = z.infer<typeof tcpFactsSchema>;

/** Medians of one group of requests (new or warm connections), from their send (setup excluded). */
const connectionAgeMediansSchema = z.strictObject({
  count: z.number().int().describe('requests with a response'),
  ttfbP50Ms: ms('median time from the send to the response headers'),
  responseP50Ms: ms('median time from the send to the end of the response (slow start shows here)'),
  smallBodyCount: z.number().int().describe('responses with a body of 1 to 4096 bytes'),
  bodyAfterHeadersP50Ms: ms(
    'for those, median time from the headers to the end of the body (≈ 0 unless a segment was held back)',
  ),
});
/** Medians of one group of requests (see {@link connectionAgeMediansSchema}). */
export type ConnectionAgeMedians = z.infer<typeof connectionAgeMediansSchema>;

/** Points of one series of a time-sequence graph: times (ms since the capture's first packet) and values. */
const seriesSchema = z
  .strictObject({ t: z.array(z.number()), y: z.array(z.number()) })
  .describe('times, ms since the capture began, and values (bytes from the start of the stream)');

/** One round trip of the server's data, as the capture shows it. */
const sendRoundSchema = z.strictObject({
  startMs: z.number().describe("the round's first data segment, ms since the capture began"),
  segments: z
    .number()
    .int()
    .describe('data segments the server sent in the round (retransmissions included)'),
  bytes: z.number().int().describe('payload bytes the server sent in the round'),
  retransmitted: z.number().int().describe('of them, segments sent again'),
  dropped: z.number().int().describe('of them, segments the link dropped'),
});

/** One connection's time-sequence graph: what the server sent and the client acknowledged over time. */
const connectionSequenceSchema = z.strictObject({
  transport: z.enum(['tcp', 'udp']),
  client: z.string().describe('address:port'),
  server: z.string().describe('address:port'),
  sent: seriesSchema.describe(
    "the server's payload bytes sent (TCP: the end of each segment's sequence range)",
  ),
  acked: seriesSchema.optional().describe("the client's cumulative ACKs, bytes (TCP only)"),
  clientSent: seriesSchema
    .optional()
    .describe("the client's payload bytes sent (UDP only: QUIC's ACKs are encrypted)"),
  retransmitted: seriesSchema.describe(
    'segments the server sent again (their sequence end ≤ the highest before)',
  ),
  dropped: seriesSchema.describe("the server's segments the link dropped (loss or a full queue)"),
  pointsCut: z.number().int().describe('points left out to keep each series within the drawing cap'),
  rounds: z
    .array(sendRoundSchema)
    .describe(
      "the server's round trips of data after the handshake (TCP: from its ACKs; UDP, i.e. QUIC: from the link's one-way delays, with datagrams for segments, see src/net/time-sequence.ts)",
    ),
  roundCount: z.number().int().describe('rounds in all (`rounds` keeps the first 100)'),
  slowStartRounds: z
    .number()
    .int()
    .describe(
      'of those rounds, the ones before the first that did not grow to 1.5× the one before while more data followed (after a loss or not), or all when the data ran out',
    ),
  slowStartEnd: z
    .enum(['transfer-end', 'loss', 'no-growth', 'none'])
    .describe(
      'what ended the slow-start rounds: the data ran out, a loss, a round that did not grow, or no data',
    ),
  mssBytes: z.number().int().describe("the server's largest segment payload seen"),
  handshakeSegments: z
    .number()
    .int()
    .describe("the server's TLS (QUIC: handshake flight's) segments or datagrams, before the rounds"),
});
/** One connection's time-sequence graph (see {@link connectionSequenceSchema}). */
export type ConnectionSequence = z.infer<typeof connectionSequenceSchema>;

const timeSequenceSchema = z
  .strictObject({
    connections: z.array(connectionSequenceSchema),
    connectionsNotDrawn: z.number().int().describe('connections beyond the cap, not kept'),
    startEpochMs: z.number().describe("the capture's first packet, ms since the epoch"),
  })
  .describe(
    "Per-connection time-sequence graphs read from the run's capture, computed when the capture was written.",
  );
/** The time-sequence graphs of a capture (see {@link timeSequenceSchema}). */
export type TimeSequence = z.infer<typeof timeSequenceSchema>;

/** The zod schema of one run's result: the source of the {@link RunResult} type and its JSON Schema. */
export const captureInfoSchema = z
  .strictObject({
    file: z.string().describe('the pcapng file: the link as its relay saw it'),
    packets: z
      .strictObject({ up: z.number().int(), down: z.number().int() })
      .describe('packets recorded: client → server (up), server → client (down)'),
    dropped: z
      .strictObject({ loss: z.number().int(), queue: z.number().int() })
      .describe('recorded packets marked dropped, by random loss or by the full bottleneck queue'),
    truncatedPackets: z.number().int().describe('packets cut to the snap length'),
    packetsNotRecorded: z.number().int().describe('packets seen after the size cap was reached'),
    bytes: z.number().int().describe('file size, bytes'),
    snapBytes: z.number().int(),
    maxBytes: z.number().int(),
    timeSequence: timeSequenceSchema.optional(),
  })
  .describe('A packet capture of the link (--capture): its file and what it holds and cut.');

/** Files a run wrote for a user to open in Wireshark / tshark (see docs/usage.md, "Evidence"). */
const evidenceSchema = z
  .strictObject({
    capture: captureInfoSchema.optional().describe('the packet capture of this run'),
    noCapture: z.string().optional().describe('why this run has no capture although one was asked for'),
    keyLog: z
      .strictObject({ file: z.string(), unlocks: z.string() })
      .optional()
      .describe('the NSS key log (SSLKEYLOGFILE format) the run appended its TLS secrets to'),
    frames: z
      .strictObject({ file: z.string() })
      .optional()
      .describe("the HTTP/2 frame log of h2lab's own client (one JSON line per frame)"),
    qlog: z
      .strictObject({ dir: z.string() })
      .optional()
      .describe('where the HTTP/3 client wrote one qlog (JSON-SEQ) per QUIC connection'),
  })
  .describe('Evidence behind the numbers, written on request (--capture, --keylog, --frames, --qlog)');
export type EvidenceFiles = z.infer<typeof evidenceSchema>;

export const runResultSchema = z
  .strictObject({
    kind: z.literal('h2lab.run'),
    version: z.literal(RUN_RESULT_VERSION),
    options: z.record(z.string(), z.unknown()).describe('The resolved options: enough to reproduce the run.'),
    environment: runEnvironmentSchema,
    target: z.strictObject({
      url: z.string(),
      embedded: z.boolean().describe('true when h2lab started the fixture server in its own process'),
    }),
    transport: z.strictObject({
      name: strategyNameSchema,
      connections: z.number().int().describe('connections (h1) or sessions (h2-pool) allowed'),
      policy: z.string().optional().describe('h2-pool session choice policy'),
      client: z
        .enum(['h2lab', 'node'])
        .optional()
        .describe("HTTP/2 only: whose client carried the sessions — h2lab's own, or node:http2"),
      noDelay: z.boolean().optional().describe("Nagle off (TCP_NODELAY) on the client's sockets"),
      window: windowInfoSchema.optional(),
      reconnect: z
        .strictObject({
          baseMs: ms('first delay after a failed connection attempt'),
          maxMs: ms('the delay doubles per failed round up to this'),
          jitter: z.literal('equal').describe('half the delay fixed, half uniformly random'),
          giveUpMs: ms(
            'attempts failing this long without a success: requests fail at once as connect (attempts go on)',
          ),
        })
        .optional()
        .describe(
          'backoff after a failed connection attempt: no attempt until it passes, requests wait for the next one',
        ),
      quic: z
        .strictObject({
          binding: z.string().describe('the HTTP/3 implementation: package@version, or node:quic'),
          congestionControl: z
            .string()
            .describe(
              "the QUIC congestion controller of h2lab's client, e.g. cubic (user space: --cc pins TCP only)",
            ),
          congestionControlSource: z
            .string()
            .optional()
            .describe('how the controller is known: read from the stack, or whose documented default it is'),
          window: windowInfoSchema
            .optional()
            .describe(
              'the receive limits the client advertised, from --window: initial_max_stream_data_bidi_local (stream) and initial_max_data (connection), RFC 9000 §18.2',
            ),
        })
        .optional()
        .describe('HTTP/3 strategies: what carried QUIC'),
      retries: z
        .strictObject({
          refusedStream: z.number().int().describe('retries after REFUSED_STREAM'),
          goaway: z.number().int().describe('retries after GOAWAY named the stream unprocessed'),
        })
        .optional()
        .describe('retry budgets of a request the server refused unprocessed (RFC 9113 §8.7)'),
    }),
    protocol: z.strictObject({
      requested: wireProtocolSchema,
      negotiated: z.union([wireProtocolSchema, z.literal('none')]),
    }),
    schedule: z.strictObject({
      mode: z.enum(['closed', 'open', 'burst']),
      concurrency: z.number().int().optional().describe('closed loop: requests in flight; burst: N'),
      rateRps: z.number().optional().describe('open loop: requests per second'),
      arrivals: z.enum(['even', 'poisson']).optional(),
      bursts: z.number().int().optional().describe('burst: bursts in the run'),
      gapMs: ms('burst: pause between bursts').optional(),
      handshakes: z
        .enum(['include', 'exclude'])
        .optional()
        .describe('burst: whether connection setup lies inside the timed period'),
      firstSendMs: ms(
        "when the first request (warm-up included) was handed to the transport, after the run's origin",
      ).optional(),
    }),
    burst: burstResultSchema.optional(),
    durationMs: ms('measured period after warm-up'),
    warmupMs: ms('warm-up period'),
    counts: z.strictObject({
      total: z.number().int().nonnegative(),
      ok: z.number().int().nonnegative(),
      failed: z.number().int().nonnegative(),
      byStatus: z
        .record(z.string(), z.number().int().nonnegative())
        .describe('responses by HTTP status, e.g. { "200": 990, "503": 10 }'),
      byFailure: z
        .partialRecord(failureClassSchema, z.number().int().nonnegative())
        .describe('transport failures by class'),
      late: z
        .number()
        .int()
        .nonnegative()
        .optional()
        .describe('open loop: requests that could not be sent at their intended time (sent late)'),
      warmup: z
        .number()
        .int()
        .nonnegative()
        .optional()
        .describe('requests that fell in the warm-up (sent to the server, excluded from every other figure)'),
      retried: z
        .number()
        .int()
        .nonnegative()
        .optional()
        .describe(
          'requests sent again after the server refused them unprocessed (GOAWAY, REFUSED_STREAM), up to twice after REFUSED_STREAM and ten times after GOAWAY; each counted once in total, with its last outcome',
        ),
      attempts: z
        .number()
        .int()
        .nonnegative()
        .optional()
        .describe(
          'attempts handed to a connection: total plus every retry. attempts - unprocessed is what a server that runs a handler for every stream it takes should count (its own /metrics)',
        ),
      unprocessed: z
        .number()
        .int()
        .nonnegative()
        .optional()
        .describe('attempts that ended as goaway: the server said it never processed them (RFC 9113 §6.8)'),
    }),
    throughput: z.strictObject({
      rps: z
        .number()
        .nonnegative()
        .describe('requests per second over the measured period (counts.total, every outcome)'),
      bytesPerSec: z.number().nonnegative().describe('response body bytes per second'),
      bytesIn: z.number().nonnegative().describe('response body bytes received'),
      bytesOut: z.number().nonnegative().describe('request body bytes sent'),
    }),
    responseHeaders: z
      .strictObject({
        responses: z
          .number()
          .int()
          .nonnegative()
          .describe('responses whose header block the client measured'),
        bytes: z
          .number()
          .int()
          .nonnegative()
          .describe(
            'their header blocks’ bytes as received: HTTP/1.1 text, HTTP/2 HPACK-encoded (what header compression saved shows here)',
          ),
      })
      .optional()
      .describe(
        'response header bytes received in the measured period; absent where the client cannot see them',
      ),
    /**
     * Closed loop: from when the request was handed to the transport to the end of the response — what
     * the caller waited, including any wait for a connection or stream slot (see `clientQueueMs`).
     * Open loop: from the intended send time (corrected for coordinated omission). Responses of any
     * status are included; transport failures are not (they are in `counts.byFailure`).
     */
    latencyMs: latencySummaryMsSchema,
    /** Open loop only: latency from the actual send (`sentMs`), uncorrected for coordinated omission. */
    latencyUncorrectedMs: latencySummaryMsSchema.optional(),
    /** From the actual send to the response headers. */
    ttfbMs: latencySummaryMsSchema,
    /** Time requests waited inside the client for a connection or a stream slot. */
    clientQueueMs: latencySummaryMsSchema,
    histograms: z.strictObject({
      latency: encodedHistogramSchema,
      ttfb: encodedHistogramSchema,
      latencyUncorrected: encodedHistogramSchema.optional(),
    }),
    connections: z.strictObject({
      opened: z.number().int(),
      /** Connect time of new connections. */
      connectMs: latencySummaryMsSchema.optional(),
      /** TLS handshake time of new connections. */
      tlsMs: latencySummaryMsSchema.optional(),
      peakInFlight: z.number().int(),
      peakStreamsPerConnection: z
        .number()
        .int()
        .optional()
        .describe('HTTP/2: highest number of concurrent streams on one connection'),
      serverMaxConcurrentStreams: z
        .number()
        .optional()
        .describe('HTTP/2: SETTINGS_MAX_CONCURRENT_STREAMS the server announced (absent: none announced)'),
      streamCapHits: z
        .number()
        .int()
        .optional()
        .describe('HTTP/2: how many times a request waited because the stream cap was reached'),
      tlsVersion: z
        .string()
        .optional()
        .describe('TLS version the server chose (e.g. TLSv1.3); absent over cleartext'),
      requestsPerConnection: z.strictObject({ mean: z.number(), max: z.number() }),
      tcp: tcpFactsSchema.optional(),
      lifetimes: z
        .strictObject({
          connections: z.array(connectionLifetimeSchema).describe('the first 64 connections that closed'),
          omitted: z.number().int().describe('connections that closed beyond those'),
        })
        .optional()
        .describe(
          'How and when the connections ended: the client retiring them (--idle-timeout, --max-age), the server’s GOAWAY, a close under the client, or the end of the run',
        ),
      quic: quicFactsSchema.optional(),
      outages: z
        .strictObject({
          periods: z
            .array(
              z.strictObject({
                startMs: ms('the first failed connection attempt, on the run clock'),
                endMs: ms(
                  'the next connection that opened; absent: still failing at the end (or given up)',
                ).optional(),
                failedRequests: z.number().int().nonnegative().describe('requests that failed meanwhile'),
              }),
            )
            .describe('the first 32'),
          omitted: z.number().int().nonnegative().describe('outages beyond those'),
        })
        .optional()
        .describe(
          'Periods in which every connection attempt failed (the target down or refusing): from the first failed attempt to the next connection that opened. Absent: none. One lasting --give-up ends the run.',
        ),
    }),
    /** The load client's own saturation. */
    client: z.strictObject({
      eventLoopUtilization: z.number().describe('event-loop utilisation of the load thread(s), 0..1'),
      cpu: z
        .number()
        .describe(
          'CPU seconds used by the load process / wall seconds over the measured period, after the warm-up (1.0 = one core); includes the embedded fixture server',
        ),
      cpuSeconds: z
        .number()
        .optional()
        .describe(
          'CPU seconds the load process used from opening its connections to the end of the run, warm-up and worker start-up included (module loading before that excluded); includes the embedded fixture server',
        ),
      workers: z.number().int(),
      maxRssBytes: z
        .number()
        .optional()
        .describe(
          'peak resident set size of the load process (all its threads) at the end of the run, bytes',
        ),
      saturated: z.boolean().describe('true when the client was probably the bottleneck; note says why'),
      note: z.string().optional(),
    }),
    server: serverViewSchema.optional(),
    /**
     * HTTP/2 on h2lab's own client: how long its receive windows stopped the server, summed over
     * sessions and worker threads. Absent where not measured: HTTP/1.1, and `--h2-client node`
     * (node:http2 does not expose when its windows run out).
     */
    flowControl: flowControlStatsSchema.optional(),
    evidence: evidenceSchema.optional(),
    /**
     * A request is "new" when it opened its connection or was the first on one opened before the run
     * (src/report/confounders.ts reads the Nagle / delayed-ACK signature from the difference).
     */
    connectionAge: z
      .strictObject({ newConnection: connectionAgeMediansSchema, warmConnection: connectionAgeMediansSchema })
      .optional()
      .describe('first requests on new connections vs requests on warm ones (the Nagle signature)'),
    warnings: z.array(z.string()).describe('anything that could distort the numbers, in words'),
    error: resultErrorSchema
      .optional()
      .describe('set when the run failed or was interrupted; the rest is what was measured until then'),
  })
  .describe('The result of one h2lab load run (h2lab bench --json, and every run inside compare results).');
/** One load run's result (see {@link runResultSchema}). */
export type RunResult = z.infer<typeof runResultSchema>;

/** A run's CPU told apart: the fixture server's own, and the load client's without it. */
export interface CpuApart {
  /** Requests the server saw between its metrics reads (warm-up included): the per-request divisor. */
  requests: number;
  /** CPU seconds of the server's thread or process over that period. */
  serverSeconds: number;
  serverMsPerRequest: number;
  scope: 'thread' | 'process';
  /** Share of the period the server's event loop was busy, 0..1. */
  serverEventLoopUtilization?: number;
  /**
   * The load process's CPU seconds less the server's, when the server ran as a worker thread inside
   * the load process (whose `client.cpuSeconds` counts it); absent otherwise.
   */
  clientSeconds?: number;
  clientMsPerRequest?: number;
}

/**
 * The server's CPU per request and the client's without it, from what `r` recorded; undefined when
 * the server recorded no CPU of its own (another server, the in-process placement) or saw no request.
 * Both are over the same period: from the metrics read before the run to the one after, warm-up
 * included, which the load process's `cpuSeconds` also covers.
 * @example const apart = cpuApart(run); // { serverMsPerRequest: 0.09, clientMsPerRequest: 0.21, … }
 */
export function cpuApart(r: RunResult): CpuApart | undefined {
  const s = r.server;
  if (s?.cpuSeconds === undefined || s.cpuScope === undefined || s.requests <= 0) return undefined;
  const apart: CpuApart = {
    requests: s.requests,
    serverSeconds: s.cpuSeconds,
    serverMsPerRequest: (s.cpuSeconds / s.requests) * 1000,
    scope: s.cpuScope,
    ...(s.eventLoopUtilization !== undefined ? { serverEventLoopUtilization: s.eventLoopUtilization } : {}),
  };
  const inClient = r.target.embedded || r.options.serverInProcess === true;
  const total = r.client.cpuSeconds;
  if (s.cpuScope === 'thread' && inClient && total !== undefined && total >= s.cpuSeconds) {
    apart.clientSeconds = total - s.cpuSeconds;
    apart.clientMsPerRequest = (apart.clientSeconds / s.requests) * 1000;
  }
  return apart;
}

/** The published JSON Schema (draft 2020-12) of a RunResult. */
export function runResultJsonSchema(): Record<string, unknown> {
  return publishedJsonSchema('h2lab RunResult', runResultSchema);
}

/** Checks that a value read from JSON is a {@link RunResult} of this version; throws a ZodError if not. */
export function parseRunResult(value: unknown): RunResult {
  return runResultSchema.parse(value);
}

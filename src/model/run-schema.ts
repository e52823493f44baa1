/**
 * The JSON Schema of a {@link RunResult}, from a zod mirror of the TypeScript model. The two are held
 * together at compile time (each must be assignable to the other), and `docs/run-result.schema.json`
 * is generated from this file by `npm run schema` (a test fails when it is stale).
 */
import { z } from 'zod';
import type { RunResult } from './run.ts';
import { RUN_RESULT_VERSION } from './run.ts';
import type { Sample } from './sample.ts';

const ms = (what: string) => z.number().describe(`${what}, milliseconds`);

const latencySummary = z
  .strictObject({
    p50: ms('50th percentile'),
    p90: ms('90th percentile'),
    p99: ms('99th percentile'),
    p999: ms('99.9th percentile'),
    max: ms('maximum'),
    min: ms('minimum'),
    mean: ms('mean'),
    count: z.number().int().describe('number of values recorded'),
  })
  .describe('Percentiles read from an HdrHistogram recorded in integer microseconds.');

const encodedHistogram = z
  .strictObject({
    unit: z.literal('us'),
    lowestUs: z.number(),
    highestUs: z.number(),
    significantDigits: z.number().int(),
    base64: z.string().describe('hdr-histogram-js encodeIntoCompressedBase64 (mergeable)'),
  })
  .describe('A serialized HdrHistogram, values in microseconds.');

const wire = z.enum(['http/1.1', 'h2', 'h2c']);
const failureClass = z.enum([
  'connect',
  'tls',
  'reset',
  'timeout',
  'goaway',
  'refused-stream',
  'protocol-mismatch',
  'aborted',
  'other',
]);

const linkInfo = z.strictObject({
  profile: z.string(),
  backend: z.enum(['none', 'netem', 'relay']),
  rttMs: z.number(),
  jitterMs: z.number().optional(),
  loss: z.number().optional(),
  rateBitsPerSec: z.number().optional(),
  queueBytes: z.number().optional(),
  congestionControl: z.string().optional(),
  slowStartAfterIdle: z.boolean().optional(),
  noMetricsSave: z
    .boolean()
    .optional()
    .describe('tcp_no_metrics_save in the server namespace: no ssthresh or RTT carried between connections'),
  initialCwnd: z.number().optional(),
  lossUp: z.number().optional(),
  lossDown: z.number().optional(),
  burstPackets: z.number().optional(),
  rateUpBitsPerSec: z.number().optional(),
  reorder: z.boolean().optional(),
  mtuBytes: z.number().optional(),
  socketBufferMaxBytes: z.number().optional(),
  seed: z.number().optional(),
  relayPriority: z.enum(['realtime', 'high', 'normal']).optional(),
  serverAddress: z.string().optional(),
  clientAddress: z.string().optional(),
});

const serverView = z
  .object({
    requests: z.number(),
    bytesOut: z.number().optional(),
    poolSize: z.number().optional(),
    poolQueueMs: z
      .strictObject({ mean: z.number(), p50: z.number().optional(), p99: z.number().optional() })
      .optional(),
    poolServiceMs: z.strictObject({ mean: z.number() }).optional(),
    peakInFlight: z.number().optional(),
    cancellations: z.number().optional(),
  })
  .catchall(z.unknown())
  .describe("The fixture server's own view of the run (its /metrics before and after).");

const burstRecord = z.strictObject({
  startMs: ms("the burst's t0 since the run's origin"),
  completionMs: ms('t0 → the end of the last response, failed requests included'),
  firstResponseMs: ms('t0 → the first response headers').optional(),
  ok: z.number().int(),
  failed: z.number().int(),
  connectionsOpened: z.number().int().describe('connections opened inside the timed period'),
});

const burstResult = z
  .strictObject({
    requests: z.number().int().describe('N: requests handed to the transport at once'),
    bursts: z.number().int().describe('bursts measured'),
    handshakes: z
      .enum(['include', 'exclude'])
      .describe('include: connections opened inside the timed period; exclude: before t0'),
    completionMs: ms('median over the bursts of t0 → last response end'),
    firstResponseMs: ms('median over the bursts of t0 → first response headers').optional(),
    failed: z.number().int().describe('failed requests over all bursts'),
    connectionsOpened: z.number().int().describe('connections opened inside the timed periods'),
    perBurst: z.array(burstRecord),
  })
  .describe(
    'Burst schedule: N requests at once, the time until the last one ended (the page-load question).',
  );

const count = (what: string) => z.number().int().describe(what);

/** One connection's TCP_INFO reading (also the shape the fixture server's metrics carry). */
export const tcpConnectionInfoSchema = z
  .strictObject({
    clientPort: z.number().int(),
    serverPort: z.number().int(),
    readAt: z.enum(['close', 'open']).describe('read as it closed, or while still open (run end, scrape)'),
    congestionControl: z.string().optional(),
    cwndSegments: count('congestion window, segments (tcpi_snd_cwnd)'),
    mssBytes: count('sender MSS, bytes'),
    ssthreshSegments: count('slow-start threshold, segments (absent while infinite)').optional(),
    rttMs: ms('smoothed RTT'),
    rttVarMs: ms('RTT variation'),
    minRttMs: ms('lowest RTT seen').optional(),
    retransmittedSegments: count('segments retransmitted over the connection (tcpi_total_retrans)'),
    lostSegments: count('segments marked lost when read (tcpi_lost, not cumulative)'),
    consecutiveTimeouts: count('retransmission timeouts in a row when read'),
    caState: z.enum(['open', 'disorder', 'cwr', 'recovery', 'loss']),
    bytesSent: z.number().optional(),
    bytesAcked: z.number().optional(),
    bytesRetransmitted: z.number().optional(),
    bytesReceived: z.number().optional(),
    segmentsOut: z.number().int(),
    segmentsIn: z.number().int(),
    deliveryRateBitsPerSec: z.number().optional(),
    busyMs: ms('time busy sending').optional(),
    rwndLimitedMs: ms('time limited by the peer receive window').optional(),
    sndbufLimitedMs: ms('time limited by the send buffer').optional(),
  })
  .describe(
    "One connection as the kernel saw it from one end (Linux TCP_INFO); sending facts are this end's.",
  );

const tcpSideSummary = z
  .strictObject({
    connections: count('connections read'),
    unread: count('connections of the run that could not be read').optional(),
    cwndSegments: z.strictObject({ sum: z.number(), median: z.number(), max: z.number() }),
    cwndBytesSum: z.number().describe('Σ cwnd × MSS, bytes'),
    retransmittedSegments: z.number().int(),
    segmentsOut: z.number().int(),
    bytesRetransmitted: z.number().optional(),
    rttMs: z.strictObject({ median: z.number(), max: z.number() }),
    deliveryRateBitsPerSec: z.strictObject({ median: z.number(), sum: z.number() }).optional(),
    congestionControl: z.array(z.string()).optional(),
    perConnection: z.array(tcpConnectionInfoSchema).describe('at most 64 readings'),
    perConnectionOmitted: z.number().int().optional(),
  })
  .describe("The TCP facts of one end's connections in the run.");

const linkDropsSummary = z
  .strictObject({
    connections: count('connections looked up'),
    lossPackets: z.number().int(),
    queuePackets: z.number().int(),
    upPackets: z.number().int(),
    downPackets: z.number().int(),
    perConnection: z.array(
      z.strictObject({
        clientPort: z.number().int(),
        lossUp: z.number().int(),
        lossDown: z.number().int(),
        queueUp: z.number().int(),
        queueDown: z.number().int(),
      }),
    ),
    perConnectionOmitted: z.number().int().optional(),
  })
  .describe("Packets the emulated link dropped on the run's connections, by direction and cause.");

const tcpFacts = z
  .strictObject({
    client: tcpSideSummary.optional().describe("h2lab's own sockets (the request direction)"),
    server: tcpSideSummary.optional().describe("the fixture server's sockets (the response direction)"),
    linkDrops: linkDropsSummary.optional(),
  })
  .describe('Per-connection TCP facts from the kernel (Linux TCP_INFO) and the emulated link.');

const connectionAgeMedians = z.strictObject({
  count: z.number().int().describe('requests with a response'),
  ttfbP50Ms: ms('median time from the send to the response headers'),
  responseP50Ms: ms('median time from the send to the end of the response'),
  smallBodyCount: z.number().int().describe('responses with a body of 1 to 4096 bytes'),
  bodyAfterHeadersP50Ms: ms('for those, median time from the headers to the end of the body'),
});

const flowControl = z
  .strictObject({
    sessions: z.number().int().describe('HTTP/2 sessions measured'),
    connectionStalls: z.number().int().describe("stall episodes of the connection's receive window"),
    streamStalls: z.number().int().describe("stall episodes of streams' receive windows"),
    stalledMs: ms('time at least one window of a session was stalled, summed over sessions'),
    connectionStalledMs: ms("time the connection's window was stalled, summed over sessions"),
    streamStalledMs: ms("stall time of streams' windows, summed over streams"),
    bytesAfterStall: z
      .number()
      .describe(
        'bytes that arrived after a stall up to the credit limit that ended it (the data that waited)',
      ),
    sessionMs: ms('how long the sessions were open, summed (the time stalls are a share of)'),
  })
  .describe("HTTP/2 flow-control stalls of h2lab's own client (absent for HTTP/1.1 and --h2-client node).");

/** The zod schema of one run's result. */
export const runResultSchema = z
  .strictObject({
    kind: z.literal('h2lab.run'),
    version: z.literal(RUN_RESULT_VERSION),
    options: z.record(z.string(), z.unknown()).describe('The resolved options: enough to reproduce the run.'),
    environment: z.strictObject({
      h2labVersion: z.string(),
      node: z.string(),
      platform: z.string(),
      cpus: z.number().int(),
      congestionControl: z.string().optional(),
      link: linkInfo.optional(),
      startedAt: z.string(),
    }),
    target: z.strictObject({ url: z.string(), embedded: z.boolean() }),
    transport: z.strictObject({
      name: z.enum(['h1', 'h2', 'h2-pool']),
      connections: z.number().int(),
      policy: z.string().optional(),
      client: z.enum(['h2lab', 'node']).optional(),
      noDelay: z.boolean().optional().describe("Nagle off (TCP_NODELAY) on the client's sockets"),
      window: z
        .strictObject({
          preset: z.enum(['node', 'browser', 'max', 'custom']),
          streamWindowBytes: z.number().int(),
          connectionWindowBytes: z.number().int(),
        })
        .optional(),
    }),
    protocol: z.strictObject({ requested: wire, negotiated: z.union([wire, z.literal('none')]) }),
    schedule: z.strictObject({
      mode: z.enum(['closed', 'open', 'burst']),
      concurrency: z.number().int().optional().describe('closed loop: requests in flight; burst: N'),
      rateRps: z.number().optional(),
      arrivals: z.enum(['even', 'poisson']).optional(),
      bursts: z.number().int().optional().describe('burst: bursts in the run'),
      gapMs: ms('burst: pause between bursts').optional(),
      handshakes: z
        .enum(['include', 'exclude'])
        .optional()
        .describe('burst: whether connection setup lies inside the timed period'),
    }),
    burst: burstResult.optional(),
    durationMs: ms('measured period after warm-up'),
    warmupMs: ms('warm-up period'),
    counts: z.strictObject({
      total: z.number().int(),
      ok: z.number().int(),
      failed: z.number().int(),
      byStatus: z.record(z.string(), z.number().int()),
      byFailure: z.partialRecord(failureClass, z.number().int()),
      late: z.number().int().optional(),
      warmup: z.number().int().optional(),
      retried: z
        .number()
        .int()
        .optional()
        .describe('requests sent again after the server refused them unprocessed (GOAWAY, REFUSED_STREAM)'),
    }),
    throughput: z.strictObject({
      rps: z.number(),
      bytesPerSec: z.number(),
      bytesIn: z.number(),
      bytesOut: z.number(),
    }),
    latencyMs: latencySummary,
    latencyUncorrectedMs: latencySummary.optional(),
    ttfbMs: latencySummary,
    clientQueueMs: latencySummary,
    histograms: z.strictObject({
      latency: encodedHistogram,
      ttfb: encodedHistogram,
      latencyUncorrected: encodedHistogram.optional(),
    }),
    connections: z.strictObject({
      opened: z.number().int(),
      connectMs: latencySummary.optional(),
      tlsMs: latencySummary.optional(),
      peakInFlight: z.number().int(),
      peakStreamsPerConnection: z.number().int().optional(),
      serverMaxConcurrentStreams: z.number().optional(),
      streamCapHits: z.number().int().optional(),
      tlsVersion: z
        .string()
        .optional()
        .describe('TLS version the server chose (e.g. TLSv1.3); absent over cleartext'),
      requestsPerConnection: z.strictObject({ mean: z.number(), max: z.number() }),
      tcp: tcpFacts.optional(),
    }),
    client: z.strictObject({
      eventLoopUtilization: z.number(),
      cpu: z.number(),
      workers: z.number().int(),
      maxRssBytes: z.number().optional(),
      saturated: z.boolean(),
      note: z.string().optional(),
    }),
    server: serverView.optional(),
    flowControl: flowControl.optional(),
    connectionAge: z
      .strictObject({ newConnection: connectionAgeMedians, warmConnection: connectionAgeMedians })
      .optional()
      .describe('first requests on new connections vs requests on warm ones (the Nagle signature)'),
    warnings: z.array(z.string()),
    error: z
      .strictObject({
        code: z.string(),
        message: z.string(),
        details: z.record(z.string(), z.unknown()).optional(),
      })
      .optional(),
  })
  .describe('The result of one h2lab load run (h2lab bench --json, and every run inside compare results).');

// The mirror and the model must not drift: each is assignable to the other.
type Mirror = z.infer<typeof runResultSchema>;
const _modelFitsMirror = (r: RunResult): Mirror => r;
const _mirrorFitsModel = (r: Mirror): RunResult => r;
void _modelFitsMirror;
void _mirrorFitsModel;

/** The published JSON Schema (draft 2020-12) of a RunResult. */
export function runResultJsonSchema(): Record<string, unknown> {
  return {
    title: 'h2lab RunResult',
    ...z.toJSONSchema(runResultSchema),
  } as Record<string, unknown>;
}

/**
 * One line of `--samples FILE` (NDJSON): one {@link Sample} per request, times in milliseconds since
 * the run's origin (`performance.now()` based).
 */
export const sampleSchema = z
  .strictObject({
    seq: z.number().int().describe('sequence number in issue order'),
    intendedMs: ms('open loop: when the schedule wanted it sent; closed loop: equal to queuedMs'),
    queuedMs: ms('when the engine handed it to the transport'),
    sentMs: ms('when the transport started writing it (after any wait for a connection or stream slot)'),
    headersMs: ms('when the response headers arrived (absent on failure before headers)').optional(),
    endMs: ms('when the response ended or the request failed'),
    connectionId: z.number().int().describe('connection id, unique within the run (and worker thread)'),
    newConnection: z.boolean().describe('true when this request opened its connection'),
    connectMs: ms('TCP connect time of a new connection').optional(),
    tlsMs: ms('TLS handshake time of a new connection').optional(),
    status: z
      .number()
      .int()
      .optional()
      .describe('HTTP status; absent when the request failed before a response'),
    bytesIn: z.number().int().describe('response body bytes received'),
    bytesOut: z.number().int().describe('request body bytes sent'),
    protocol: wire,
    streamId: z.number().int().optional().describe('HTTP/2 stream id'),
    error: failureClass.optional().describe('set when the request failed at the transport level'),
    errorDetail: z.string().optional(),
    warmup: z.boolean().optional().describe('true when it fell in the warm-up (excluded from statistics)'),
    retries: z
      .number()
      .int()
      .optional()
      .describe('times it was sent again after the server refused it unprocessed (GOAWAY, REFUSED_STREAM)'),
  })
  .describe('One request of an h2lab load run: one line of the --samples NDJSON file.');

type SampleMirror = z.infer<typeof sampleSchema>;
const _sampleFitsMirror = (s: Sample): SampleMirror => s;
const _mirrorFitsSample = (s: SampleMirror): Sample => s;
void _sampleFitsMirror;
void _mirrorFitsSample;

/** The published JSON Schema (draft 2020-12) of one `--samples` line. */
export function sampleJsonSchema(): Record<string, unknown> {
  return { title: 'h2lab Sample (one --samples NDJSON line)', ...z.toJSONSchema(sampleSchema) } as Record<
    string,
    unknown
  >;
}

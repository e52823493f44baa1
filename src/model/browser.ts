/**
 * The result of `measureBrowser`: versioned data that renderers only read. Times are milliseconds
 * (fractional); times inside a run are relative to that run's first `requestWillBeSent`.
 *
 * The zod schemas below are the one source: the TypeScript types are inferred from them and
 * `docs/browser-result.schema.json` is generated from {@link browserResultSchema} (`npm run schema`).
 * Objects are strict, so a field a producer adds without adding it here fails the tests that validate
 * real results. Bump {@link BROWSER_RESULT_VERSION} on any incompatible change and say what changed in
 * docs/design.md.
 */
import { z } from 'zod';
import { BrowserOptionsSchema } from './browser-options.ts';
import { ms, nanAsNull, publishedJsonSchema, resultErrorSchema } from './fields.ts';

export const BROWSER_RESULT_VERSION = 1;

/** Counts by a name (protocol, error text, stage, code). */
const counts = z.record(z.string(), z.number());

/** Low and high quantiles of one quantity, ms. */
export const spreadSchema = z.strictObject({
  p50: ms('median'),
  p90: ms('90th percentile'),
  min: ms('minimum'),
  max: ms('maximum'),
  count: z.number().int().describe('values'),
});
/** Low and high quantiles of one quantity, ms (see {@link spreadSchema}). */
export type Spread = z.infer<typeof spreadSchema>;

const medianMinMax = z.strictObject({ median: z.number(), min: z.number(), max: z.number() });

/** One thing measured: an origin as one Chromium reaches it. */
const browserTargetSchema = z.strictObject({
  id: z
    .string()
    .describe('short stable id used in tables and JSON: http, https, https-h1 (… -2 when repeated)'),
  label: z.string().describe('human label, e.g. "https:// h2"'),
  origin: z.string(),
  h2Disabled: z
    .boolean()
    .describe('true for the HTTP/1.1-over-TLS control: a second Chromium started with --disable-http2'),
  quic: z
    .string()
    .optional()
    .describe(
      'the HTTP/3 target: the HOST:PORT its Chromium was started with --origin-to-force-quic-on for (a Chromium of its own, QUIC on)',
    ),
  expectedProtocol: z
    .enum(['http/1.1', 'h2', 'h3'])
    .optional()
    .describe('what the target should negotiate (checked per request; a mismatch is a warning)'),
});
/** One thing measured (see {@link browserTargetSchema}). */
export type BrowserTarget = z.infer<typeof browserTargetSchema>;

/** One request as CDP saw it (and, when found, as the page's Resource Timing saw it). */
const browserRequestSchema = z.strictObject({
  index: z.number().int().describe('index in issue order'),
  url: z.string(),
  startMs: ms('Network.requestWillBeSent: the page asked for it'),
  sendMs: ms(
    'request headers sent (timing.requestTime + sendStart); absent when it never got a response',
  ).optional(),
  headersMs: ms('response headers received (timing.requestTime + receiveHeadersEnd)').optional(),
  endMs: ms('loadingFinished or loadingFailed'),
  /**
   * `loadingFinished` can trail the last `dataReceived` by a few ms, in which time an h2 stream slot is
   * already free again (so peaks use this end when present).
   */
  lastDataMs: ms('last dataReceived: the last body bytes arrived').optional(),
  stalledMs: ms(
    'waiting inside the browser: for a connection (HTTP/1.1’s 6 per host), a stream, or a handshake',
  ).optional(),
  wireMs: ms(
    "from the request's send to its last byte: the network and the server (its queue included)",
  ).optional(),
  totalMs: ms('from startMs to the end'),
  protocol: z.string().optional().describe('negotiated protocol as CDP reports it: http/1.1, h2, …'),
  connectionId: z.string().optional(),
  connectionReused: z.boolean().optional(),
  status: z.number().int().optional(),
  encodedBytes: z.number().optional().describe('bytes received on the wire, encoded'),
  failed: z.string().optional().describe('loadingFailed.errorText, e.g. net::ERR_ABORTED'),
  canceled: z.boolean().optional(),
  resourceTiming: z
    .strictObject({ stalledMs: z.number(), wireMs: z.number(), totalMs: z.number() })
    .optional()
    .describe("the page's own Resource Timing of it, for the cross-check, milliseconds"),
});
/** One request as CDP saw it (see {@link browserRequestSchema}). */
export type BrowserRequest = z.infer<typeof browserRequestSchema>;

/** Statistics of one burst run. */
const burstRunStatsSchema = z.strictObject({
  peakInFlight: z.number().int().describe('highest number of requests between send and end at the same time'),
  connections: z.number().int().describe('distinct CDP connection ids that carried responses'),
  protocols: counts.describe('requests per negotiated protocol'),
  stalledMs: spreadSchema,
  wireMs: spreadSchema,
  totalMs: spreadSchema,
  wallMs: ms("from the first request's start to the last one's end"),
  issueLoopMs: ms("how long the page's loop of fetch() calls took (the page's own clock)"),
  ok: z.number().int(),
  failed: z.number().int(),
  /** A run with any is left out of the summary: its peak and connections would be undercounted. */
  cdpMissing: z
    .number()
    .int()
    .describe(
      'requests the page completed but CDP gave no response or end event for (within the settle bound)',
    ),
  /**
   * The largest |CDP − Resource Timing| of the on-the-wire time (send → last byte) and of the start
   * (the moment the request was asked for, which moves stalled and total together).
   */
  resourceTiming: z
    .strictObject({
      matched: z.number().int(),
      wireMaxDiffMs: z.number(),
      startMaxDiffMs: z.number(),
    })
    .optional()
    .describe(
      "the cross-check against the page's Resource Timing: requests matched, largest differences, milliseconds",
    ),
});
/** Statistics of one burst run (see {@link burstRunStatsSchema}). */
export type BurstRunStats = z.infer<typeof burstRunStatsSchema>;

/** The server's view of one run (the metrics contract), when a metrics URL is known. */
const serverRunViewSchema = z.strictObject({
  requestsByProtocol: counts.describe('requests whose handler started, by protocol'),
  requests: z.number(),
  poolQueueMs: z
    .strictObject({ p50: z.number(), p90: z.number() })
    .optional()
    .describe("time tiles waited for a backend worker, from the pool's histogram: p50/p90, milliseconds"),
  inFlightPeak: z
    .number()
    .optional()
    .describe('highest number of requests in handlers at once (only when h2lab could reset the gauge)'),
  connectionsOpened: z.number(),
});
/** The server's view of one run (see {@link serverRunViewSchema}). */
export type ServerRunView = z.infer<typeof serverRunViewSchema>;

/** One burst run. */
const burstRunSchema = z.strictObject({
  target: z.string(),
  index: z.number().int().describe('0-based repetition; run 0 is the warm-up and discarded from the summary'),
  discarded: z.boolean(),
  stats: burstRunStatsSchema,
  server: serverRunViewSchema.optional(),
  requests: z.array(browserRequestSchema),
});
/** One burst run (see {@link burstRunSchema}). */
export type BurstRun = z.infer<typeof burstRunSchema>;

/** Medians over the kept runs of one target. */
const burstSummarySchema = z.strictObject({
  target: z.string(),
  runs: z.number().int().describe('runs the medians are over'),
  incompleteRuns: z.number().int().describe('kept runs left out because CDP lost events (see cdpMissing)'),
  peakInFlight: medianMinMax,
  connections: medianMinMax,
  stalledP50Ms: z.number(),
  stalledP90Ms: z.number(),
  wireP50Ms: z.number(),
  wireP90Ms: z.number(),
  totalP50Ms: z.number(),
  wallMs: z.number(),
  issueLoopMs: ms(
    'median time the page took to issue its fetch() calls (a lower bound on how late starts can be)',
  ),
  failures: counts.describe(
    'requests that failed over the kept runs, by CDP error text (e.g. net::ERR_ABORTED)',
  ),
  protocols: counts.describe('negotiated protocols over all kept requests'),
  /**
   * The authority on "bounded by SETTINGS_MAX_CONCURRENT_STREAMS": the browser's own peak is measured
   * from CDP events, which trail the stream's close by a few ms.
   */
  serverInFlightPeak: z
    .number()
    .optional()
    .describe(
      "highest number of requests in the server's handlers at once over the kept runs (when h2lab owns the server)",
    ),
  serverPoolQueueP50Ms: ms("median over kept runs of the server's pool queue p50").optional(),
  resourceTimingWireMaxDiffMs: ms(
    'worst Resource Timing disagreement of the wire time over the kept runs',
  ).optional(),
  resourceTimingStartMaxDiffMs: ms(
    'worst Resource Timing disagreement of the start over the kept runs',
  ).optional(),
});
/** Medians over the kept runs of one target (see {@link burstSummarySchema}). */
export type BurstSummary = z.infer<typeof burstSummarySchema>;

/** What the server saw of one cancellation run. */
const cancelServerViewSchema = z.strictObject({
  reachedHandler: z.number().describe('abandoned requests whose handler started (the wanted tile excluded)'),
  cancellations: counts.describe(
    'cancellations by stage: queued (dropped before work), running (aborted), after (finished)',
  ),
  jobs: counts.describe('pool jobs by outcome; unwanted = rendered to completion for a client that had gone'),
  rstStreamByCode: counts.describe(
    'RST_STREAM frames from the client by error code; code 8 is CANCEL (RFC 9113 §7)',
  ),
  drained: z.boolean().describe('true when the pool was idle again before the numbers were read'),
});
/** What the server saw of one cancellation run (see {@link cancelServerViewSchema}). */
export type CancelServerView = z.infer<typeof cancelServerViewSchema>;

/** The fields a cancellation run and a leg's summary share. */
const cancelFields = {
  target: z.string(),
  serverMode: z
    .enum(['honour', 'ignore', 'unknown'])
    .describe('whether the server honoured cancellation (ignore = the fixture ran with ignoreCancel)'),
  count: z.number().int(),
  requestedAbortMs: z.number(),
  actualAbortMs: nanAsNull.describe(
    'when the abort actually ran after the first fetch was issued (timers are late on busy machines), milliseconds; null when it never ran',
  ),
  issueLoopMs: z.number(),
  browserCanceled: z.number().int().describe('requests CDP reported as failed with canceled'),
  browserFailures: counts.describe(
    'failed requests by CDP error text (net::ERR_ABORTED for the aborted ones)',
  ),
  completedBeforeAbort: z.number().int().describe('requests that completed before the abort'),
  abortWhenReached: z
    .number()
    .int()
    .optional()
    .describe(
      'set when the abort was triggered by the server, not a timer: it ran once this many of the abandoned requests had reached its handlers (read from its metrics), so two legs abandon comparable work',
    ),
  baselineMs: ms('the wanted tile fetched alone on an idle server (median of 3)'),
  wantedMs: ms('the wanted tile fetched right after the abort'),
  server: cancelServerViewSchema.optional(),
};

/** One cancellation run: fire `count`, abort them all, then fetch one wanted tile. */
export const cancelRunSchema = z.strictObject({
  ...cancelFields,
  index: z.number().int().describe('0-based repetition of this leg'),
});
/** One cancellation run (see {@link cancelRunSchema}). */
export type CancelRun = z.infer<typeof cancelRunSchema>;

/**
 * One leg (target × server mode) over its `runs` repetitions: times (`actualAbortMs`, `issueLoopMs`,
 * `baselineMs`, `wantedMs`) are medians; counts (`browserCanceled`, `browserFailures`,
 * `completedBeforeAbort`, every server count) are totals over the runs.
 */
const cancelSummarySchema = z.strictObject({ ...cancelFields, runs: z.number().int() });
/** One cancellation leg over its repetitions (see {@link cancelSummarySchema}). */
export type CancelSummary = z.infer<typeof cancelSummarySchema>;

/** How the browser was told to trust the servers' certificates. */
const trustInfoSchema = z.strictObject({
  method: z.enum(['spki-pin', 'system']),
  spki: z
    .array(z.string())
    .describe('pinned SPKI hashes (base64 SHA-256), passed as --ignore-certificate-errors-spki-list'),
  secureContext: z
    .boolean()
    .optional()
    .describe('whether pages on https:// targets were secure contexts (a real pin, not a blanket bypass)'),
});
/** How the browser was told to trust the servers' certificates (see {@link trustInfoSchema}). */
export type TrustInfo = z.infer<typeof trustInfoSchema>;

/** The Chromium a result ran: which, with what flags, and in which network namespace. */
export const chromiumInfoSchema = z.strictObject({
  path: z.string(),
  version: z.string(),
  flags: z.array(z.string()),
  netns: z
    .string()
    .optional()
    .describe(
      "the network namespace Chromium ran in, with the servers h2lab started for it (absent: the host's, where other links' interfaces come and go)",
    ),
  hostNetwork: z
    .string()
    .optional()
    .describe("why Chromium ran in the host's network namespace, when it did"),
});

/** The schema of a browser result as written to JSON: the source of {@link BrowserResult}. */
export const browserResultSchema = z.strictObject({
  kind: z.literal('h2lab.browser'),
  version: z.literal(BROWSER_RESULT_VERSION),
  options: BrowserOptionsSchema,
  environment: z.strictObject({
    h2labVersion: z.string(),
    node: z.string(),
    platform: z.string(),
    cpus: z.number().int(),
    chromium: chromiumInfoSchema,
    startedAt: z.string(),
  }),
  trust: trustInfoSchema,
  fixture: z
    .strictObject({
      plainUrl: z.string(),
      tlsUrl: z.string(),
      poolSize: z.number().int(),
      tileMs: ms('time one tile holds a pool worker'),
      maxConcurrentStreams: z.number().int(),
    })
    .optional()
    .describe('set when h2lab started the fixture server itself'),
  targets: z.array(browserTargetSchema),
  burst: z.strictObject({
    runs: z.array(burstRunSchema),
    summaries: z.array(burstSummarySchema),
    repeated: z
      .array(burstRunSchema)
      .optional()
      .describe(
        'attempts that were repeated (a host network change, or for a caller that asks, any failed request): in no summary, kept so they can be counted',
      ),
  }),
  cancel: z.array(cancelRunSchema).describe('every cancellation run'),
  cancelSummaries: z
    .array(cancelSummarySchema)
    .describe('per target and server mode: median times, total counts (what tables and findings show)'),
  findings: z.array(z.string()).describe('conclusions in words (e.g. "the queue moved")'),
  warnings: z.array(z.string()).describe('anything that could distort the numbers'),
  error: resultErrorSchema.optional(),
});
/** The result of one `measureBrowser` call (see {@link browserResultSchema}). */
export type BrowserResult = z.output<typeof browserResultSchema>;

/** The JSON Schema of a browser result (published as docs/browser-result.schema.json). */
export function browserResultJsonSchema(): Record<string, unknown> {
  return publishedJsonSchema('h2lab browser result', browserResultSchema);
}

/**
 * Checks that a value read from JSON is a browser result this version understands (an abort that
 * never ran, written as null, comes back as NaN); throws a ZodError if not.
 */
export function parseBrowserResult(value: unknown): BrowserResult {
  return browserResultSchema.parse(value);
}

/**
 * `h2lab page`: its options and its result as data. A page replay loads one recorded page (a HAR)
 * under several protocol settings through the same link, many times, alternating; the result keeps
 * every load with its requests, the summaries across loads and the verdict's sentences.
 */
import { z } from 'zod';
import { chromiumInfoSchema } from './browser.ts';
import { count, ms, nanAsNull, publishedJsonSchema, resultErrorSchema } from './fields.ts';
import { captureInfoSchema, linkInfoSchema } from './run.ts';
import { wireProtocolSchema } from './sample.ts';

/**
 * 2: a protocol setting is named by the wire protocol Chromium speaks to the replay's origins
 * (`http/1.1`, `h2`, `h3`: ALPN ids) rather than `h1`, a name shared with the load strategies.
 * 3: `replayServer.placement` is a placement (docs/design.md's glossary): `'in-process'`,
 * `{ link }` or `{ namespace }`, where 2 said `loopback` also of a private namespace.
 */
export const PAGE_RESULT_VERSION = 3;

/**
 * What Chromium speaks to a replay origin: a wire protocol (its ALPN id; {@link wireProtocolSchema}
 * without h2c, which no browser speaks). A page replay's protocol settings are named by it — not by
 * the load strategies' names (`h1`, `h2-pool`, …), which are another concept (docs/design.md, "Names").
 */
export const replayProtocolSchema = wireProtocolSchema.exclude(['h2c']);
export type ReplayProtocol = z.infer<typeof replayProtocolSchema>;
/** The baseline every other setting is compared with: every origin on HTTP/1.1. */
export const REPLAY_BASELINE = 'http/1.1' satisfies ReplayProtocol;
/** A setting in the reports' words: `HTTP/1.1`, `h2`, `h3`. */
export const replayProtocolLabel = (wire: ReplayProtocol): string =>
  wire === REPLAY_BASELINE ? 'HTTP/1.1' : wire;

/**
 * Default caps on a replayed HAR's bodies, bytes: the largest one entry's (recorded or claimed) and
 * all of them together. Far above a real page (the heaviest weigh tens of MB) and far below what
 * would exhaust the host.
 */
export const HAR_MAX_BODY_BYTES = 64 * 1024 ** 2;
export const HAR_MAX_TOTAL_BYTES = 256 * 1024 ** 2;

/** Options of one replay. Times in ms. */
export const PageReplayOptionsSchema = z.strictObject({
  /** The HAR file replayed. */
  har: z.string().min(1),
  /** Protocol settings loaded, alternating. Default HTTP/1.1 and h2 (h3 when asked). */
  protocols: z.array(replayProtocolSchema).min(1).default([REPLAY_BASELINE, 'h2']),
  /**
   * Origins (hostnames) that get the candidate protocol (h2 or h3) in its setting; the others stay on
   * HTTP/1.1 in every setting: "what if only my origin turns HTTP/2 on". Default: every origin.
   */
  h2Origins: z.array(z.string()).optional(),
  /** Loads kept per protocol setting (a first round of loads is made and discarded). Default 5. */
  runs: z.number().int().min(1).max(100).default(5),
  /** The Chromium executable. */
  chromiumPath: z.string().min(1).default('/usr/bin/chromium'),
  /** Chromium's NSS key log (its `SSLKEYLOGFILE`): the secrets of every connection it makes. */
  keyLogFile: z.string().optional(),
  /** Bound on one page load (navigation to the last request settled), ms. Default 60 000. */
  loadTimeoutMs: z.number().int().min(1000).max(600_000).default(60_000),
  /** SETTINGS_MAX_CONCURRENT_STREAMS / initial_max_streams_bidi of the replay origins. Default 128 (nginx). */
  maxConcurrentStreams: z.number().int().min(1).max(10_000).default(128),
  /** The largest body one HAR entry may have, recorded or claimed, bytes. Default 64 MiB. */
  harMaxBodyBytes: z
    .number()
    .int()
    .min(1)
    .max(2 ** 40)
    .default(HAR_MAX_BODY_BYTES),
  /** The largest sum of the HAR's bodies, bytes. Default 256 MiB. */
  harMaxTotalBytes: z
    .number()
    .int()
    .min(1)
    .max(2 ** 40)
    .default(HAR_MAX_TOTAL_BYTES),
  /** The link flags as given (a description; the link actually used is `link`). */
  linkLabel: z.string().default('loopback'),
});
export type PageReplayOptionsInput = z.input<typeof PageReplayOptionsSchema>;
export type PageReplayOptions = z.output<typeof PageReplayOptionsSchema>;

/** One request of one load, as Chromium reported it over CDP (times from navigation start). */
const pageRequestSchema = z.strictObject({
  url: z.string(),
  host: z.string(),
  status: z.number().int().describe('HTTP status; 0 when it failed'),
  protocol: z.string().describe('what Chromium negotiated: http/1.1, h2, h3'),
  connectionId: z.string().optional(),
  startMs: ms('requestWillBeSent (discovered and queued)'),
  sendMs: ms('request sent on a connection').optional(),
  stalledMs: ms(
    'queued: from discovered to sent (waiting for a connection, a stream, a handshake)',
  ).optional(),
  connectMs: ms('connection setup this request paid for (TCP or QUIC, TLS included)').optional(),
  tlsMs: ms('TLS part of connectMs').optional(),
  waitMs: ms('sent to the first byte of the response').optional(),
  wireMs: ms('on the wire: sent to the last byte').optional(),
  endMs: ms('last byte (loadingFinished)'),
  bytes: count('encoded bytes received (headers and body)'),
  waitedBehindMs: ms(
    'time this request waited after it was discovered while another request held the same connection (HTTP/1.1 head-of-line)',
  ).optional(),
  /** The URL whose parsing or script caused this request (CDP's initiator), when there is one. */
  initiator: z.string().optional(),
  failed: z.string().optional(),
});
export type PageRequest = z.infer<typeof pageRequestSchema>;

/** The page's own timings of one load (Navigation Timing, Paint Timing, LCP). */
const pageMetricsSchema = z.strictObject({
  ttfbMs: nanAsNull.describe('responseStart of the document, milliseconds'),
  dclMs: nanAsNull.describe('DOMContentLoaded event end, milliseconds'),
  loadMs: nanAsNull.describe('load event end, milliseconds'),
  fcpMs: ms('First Contentful Paint').optional(),
  lcpMs: ms('Largest Contentful Paint (the last candidate before load)').optional(),
  lastByteMs: ms('the last byte of any request of the page'),
});
export type PageMetrics = z.infer<typeof pageMetricsSchema>;

/** One page load. */
const pageLoadSchema = z.strictObject({
  protocol: replayProtocolSchema,
  round: z.number().int().describe('0 = the discarded first round'),
  discarded: z.boolean(),
  metrics: pageMetricsSchema.optional(),
  requests: z.array(pageRequestSchema),
  /** Packets the link dropped on this load's connections (relay backend), and how many connections lost any. */
  linkDrops: z
    .strictObject({
      loss: count('packets dropped by random loss, both directions'),
      queue: count('packets dropped by a full bottleneck queue, both directions'),
      connections: count('connections (flows) that lost at least one packet'),
    })
    .optional(),
  capture: captureInfoSchema.optional().describe("this load's packet capture (--capture)"),
  error: z.string().optional(),
});
export type PageLoad = z.infer<typeof pageLoadSchema>;

/** Median with the extremes across the kept loads. */
const pageSpreadSchema = z.strictObject({
  median: nanAsNull,
  min: nanAsNull,
  max: nanAsNull,
  n: z.number().int(),
});

/** One protocol setting across its kept loads. */
const pageSummarySchema = z.strictObject({
  protocol: replayProtocolSchema,
  /** What each origin was served with in this setting. */
  originProtocols: z.record(z.string(), replayProtocolSchema),
  loads: z.number().int(),
  loadMs: pageSpreadSchema,
  dclMs: pageSpreadSchema,
  ttfbMs: pageSpreadSchema,
  fcpMs: pageSpreadSchema,
  lcpMs: pageSpreadSchema,
  lastByteMs: pageSpreadSchema,
  /** Median over loads of the median time a request was queued in the browser before being sent, ms. */
  stalledMs: nanAsNull,
  /** Median over loads of the requests that waited behind another on their connection. */
  waitedBehindRequests: nanAsNull,
  /** Median over loads of the median time those requests waited, ms. */
  waitedBehindMs: nanAsNull,
  /** Median over loads of the packets the link dropped (loss and queue), when the link counted them. */
  droppedPackets: nanAsNull,
  /** Median over loads of the connections opened in all (a coalesced connection counts once). */
  connections: nanAsNull,
  /** Median over loads of the connections opened, per origin host. */
  connectionsPerOrigin: z.record(z.string(), nanAsNull),
  /** Median over loads of the longest connection setup per origin (TCP+TLS or QUIC), ms. */
  handshakeMsPerOrigin: z.record(z.string(), nanAsNull),
});
export type PageSummary = z.infer<typeof pageSummarySchema>;

/** A candidate setting against the HTTP/1.1 baseline on the load event. */
const pageComparisonSchema = z.strictObject({
  /** A candidate setting against a baseline (HTTP/1.1; h3 is also compared with h2). */
  candidate: replayProtocolSchema,
  baseline: replayProtocolSchema,
  metric: z.enum(['loadMs', 'lcpMs']),
  /** median(candidate) − median(baseline), ms (negative = faster). */
  deltaMs: nanAsNull,
  ratio: nanAsNull,
  lo: nanAsNull,
  hi: nanAsNull,
  confidence: z.number(),
  outcome: z.enum(['faster', 'slower', 'no-clear-difference', 'undecided']),
});
export type PageComparison = z.infer<typeof pageComparisonSchema>;

/** What was inferred about the HAR. */
const pageHarInfoSchema = z.strictObject({
  file: z.string(),
  creator: z.string(),
  /** `h2lab` (recorded by `page record`), `devtools`, `playwright` or `other`. */
  source: z.enum(['h2lab', 'devtools', 'playwright', 'other']),
  url: z.string().describe('the document replayed'),
  entries: z.number().int(),
  origins: z.array(z.string()),
  bytes: z.number().int().describe('body bytes served per load'),
  shared: z
    .array(z.array(z.string()))
    .describe(
      'hosts that shared a connection when recorded (coalescing), replayed from one listener each group',
    ),
  /** Fields the HAR lacked and h2lab filled in, each with how. */
  inferred: z.array(z.string()),
});

/** The result of `h2lab page replay`. */
export const pageResultSchema = z.strictObject({
  kind: z.literal('h2lab.page'),
  version: z.literal(PAGE_RESULT_VERSION),
  options: PageReplayOptionsSchema,
  environment: z.strictObject({
    h2labVersion: z.string(),
    node: z.string(),
    platform: z.string(),
    cpus: z.number().int(),
    loadAverage: z.array(z.number()).describe('1, 5 and 15 minute load average at the start'),
    chromium: chromiumInfoSchema,
    h3Binding: z.string().optional(),
    startedAt: z.string(),
  }),
  har: pageHarInfoSchema,
  link: linkInfoSchema.optional(),
  /** How the recorded origins were served: the settings that can decide an outcome. */
  replayServer: z.strictObject({
    placement: z
      .union([
        z.literal('in-process'),
        z.strictObject({ link: z.string().describe("the link's profile") }),
        z.strictObject({ namespace: z.string().describe("the namespace's `ip netns` name") }),
      ])
      .describe(
        "where the replay's origins ran: 'in-process' (this process, on this host's loopback), { link } (the link's server namespace) or { namespace } (a private namespace holding only lo, shared with Chromium, on its 127.0.0.1)",
      ),
    maxConcurrentStreams: count('SETTINGS_MAX_CONCURRENT_STREAMS (h2) and initial_max_streams_bidi (h3)'),
    quicRetry: z
      .boolean()
      .describe('whether h3 listeners validate every client with a Retry (one more round trip)'),
  }),
  loads: z.array(pageLoadSchema),
  summaries: z.array(pageSummarySchema),
  comparisons: z.array(pageComparisonSchema),
  /** The verdict: sentences naming the mechanism with this run's numbers, most important first. */
  verdict: z.array(z.string()),
  /** Requests the replay server could not match to a recorded entry (answered 404). */
  misses: z.array(z.string()),
  warnings: z.array(z.string()),
  error: resultErrorSchema.optional(),
});
export type PageResult = z.output<typeof pageResultSchema>;

/** The JSON Schema of a page result (published as docs/page-result.schema.json). */
export function pageResultJsonSchema(): Record<string, unknown> {
  return publishedJsonSchema('h2lab page result', pageResultSchema);
}

/**
 * Checks that a value read from JSON is a page result of this version, or of version 2 upgraded
 * (its `placement` `loopback` read as `'in-process'`, `namespace` as `{ link }`, what version 2
 * wrote for each); throws a ZodError if not.
 */
export function parsePageResult(value: unknown): PageResult {
  return pageResultSchema.parse(upgradeFromVersion2(value));
}

function upgradeFromVersion2(value: unknown): unknown {
  const v = value as {
    version?: unknown;
    link?: { profile?: unknown };
    replayServer?: { placement?: unknown };
  };
  if (typeof value !== 'object' || value === null || v.version !== 2 || !v.replayServer) return value;
  const old = v.replayServer.placement;
  const profile = typeof v.link?.profile === 'string' ? v.link.profile : 'link';
  const placement = old === 'loopback' ? 'in-process' : old === 'namespace' ? { link: profile } : old;
  return { ...v, version: PAGE_RESULT_VERSION, replayServer: { ...v.replayServer, placement } };
}

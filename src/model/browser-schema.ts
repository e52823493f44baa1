/**
 * The zod schema of a {@link BrowserResult}, from which docs/browser-result.schema.json is generated
 * (`node --import tsx scripts/gen-browser-schema.ts`). Objects are strict, so a field added to the
 * TypeScript types but not here fails the test that validates a real result against this schema.
 */
import { z } from 'zod';
import { BROWSER_RESULT_VERSION, type BrowserResult } from './browser.ts';
import { BrowserOptionsSchema } from './browser-options.ts';

const ms = z.number();
const counts = z.record(z.string(), z.number());
const spread = z.strictObject({ p50: ms, p90: ms, min: ms, max: ms, count: z.number().int() });
const mmm = z.strictObject({ median: z.number(), min: z.number(), max: z.number() });

const target = z.strictObject({
  id: z.string(),
  label: z.string(),
  origin: z.string(),
  h2Disabled: z.boolean(),
  expectedProtocol: z.enum(['http/1.1', 'h2']).optional(),
});

const request = z.strictObject({
  index: z.number().int(),
  url: z.string(),
  startMs: ms,
  sendMs: ms.optional(),
  headersMs: ms.optional(),
  endMs: ms,
  lastDataMs: ms.optional(),
  stalledMs: ms.optional(),
  wireMs: ms.optional(),
  totalMs: ms,
  protocol: z.string().optional(),
  connectionId: z.string().optional(),
  connectionReused: z.boolean().optional(),
  status: z.number().int().optional(),
  encodedBytes: z.number().optional(),
  failed: z.string().optional(),
  canceled: z.boolean().optional(),
  resourceTiming: z.strictObject({ stalledMs: ms, wireMs: ms, totalMs: ms }).optional(),
});

const runStats = z.strictObject({
  peakInFlight: z.number().int(),
  connections: z.number().int(),
  protocols: counts,
  stalledMs: spread,
  wireMs: spread,
  totalMs: spread,
  wallMs: ms,
  issueLoopMs: ms,
  ok: z.number().int(),
  failed: z.number().int(),
  cdpMissing: z.number().int(),
  resourceTiming: z
    .strictObject({ matched: z.number().int(), wireMaxDiffMs: ms, startMaxDiffMs: ms })
    .optional(),
});

const serverRunView = z.strictObject({
  requestsByProtocol: counts,
  requests: z.number(),
  poolQueueMs: z.strictObject({ p50: ms, p90: ms }).optional(),
  inFlightPeak: z.number().optional(),
  connectionsOpened: z.number(),
});

const burstRun = z.strictObject({
  target: z.string(),
  index: z.number().int(),
  discarded: z.boolean(),
  stats: runStats,
  server: serverRunView.optional(),
  requests: z.array(request),
});

const burstSummary = z.strictObject({
  target: z.string(),
  runs: z.number().int(),
  incompleteRuns: z.number().int(),
  peakInFlight: mmm,
  connections: mmm,
  stalledP50Ms: ms,
  stalledP90Ms: ms,
  wireP50Ms: ms,
  wireP90Ms: ms,
  totalP50Ms: ms,
  wallMs: ms,
  issueLoopMs: ms,
  failures: counts,
  protocols: counts,
  serverInFlightPeak: z.number().optional(),
  serverPoolQueueP50Ms: ms.optional(),
  resourceTimingWireMaxDiffMs: ms.optional(),
  resourceTimingStartMaxDiffMs: ms.optional(),
});

const cancelServer = z.strictObject({
  reachedHandler: z.number(),
  cancellations: counts,
  jobs: counts,
  rstStreamByCode: counts,
  drained: z.boolean(),
});

// JSON has no NaN: JSON.stringify writes an abort that never ran as null.
const cancelFields = {
  target: z.string(),
  serverMode: z.enum(['honour', 'ignore', 'unknown']),
  count: z.number().int(),
  requestedAbortMs: ms,
  actualAbortMs: ms.nullable(),
  issueLoopMs: ms,
  browserCanceled: z.number().int(),
  browserFailures: counts,
  completedBeforeAbort: z.number().int(),
  baselineMs: ms,
  wantedMs: ms,
  server: cancelServer.optional(),
};

const error = z.strictObject({
  code: z.string(),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});

/** The schema of a browser result as written to JSON. */
export const browserResultSchema = z.strictObject({
  kind: z.literal('h2lab.browser'),
  version: z.literal(BROWSER_RESULT_VERSION),
  options: BrowserOptionsSchema,
  environment: z.strictObject({
    h2labVersion: z.string(),
    node: z.string(),
    platform: z.string(),
    cpus: z.number().int(),
    chromium: z.strictObject({ path: z.string(), version: z.string(), flags: z.array(z.string()) }),
    startedAt: z.string(),
  }),
  trust: z.strictObject({
    method: z.enum(['spki-pin', 'system']),
    spki: z.array(z.string()),
    secureContext: z.boolean().optional(),
  }),
  fixture: z
    .strictObject({
      plainUrl: z.string(),
      tlsUrl: z.string(),
      poolSize: z.number().int(),
      tileMs: ms,
      maxConcurrentStreams: z.number().int(),
    })
    .optional(),
  targets: z.array(target),
  burst: z.strictObject({ runs: z.array(burstRun), summaries: z.array(burstSummary) }),
  cancel: z.array(z.strictObject({ ...cancelFields, index: z.number().int() })),
  cancelSummaries: z.array(z.strictObject({ ...cancelFields, runs: z.number().int() })),
  findings: z.array(z.string()),
  warnings: z.array(z.string()),
  error: error.optional(),
});

/** The JSON Schema of a browser result (published as docs/browser-result.schema.json). */
export function browserResultJsonSchema(): Record<string, unknown> {
  return {
    title: 'h2lab browser result',
    ...(z.toJSONSchema(browserResultSchema, { unrepresentable: 'any', io: 'output' }) as Record<
      string,
      unknown
    >),
  };
}

/** Checks that a value read from JSON is a browser result this version understands. */
export function parseBrowserResult(value: unknown): BrowserResult {
  return browserResultSchema.parse(value) as unknown as BrowserResult;
}

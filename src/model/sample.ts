/**
 * The per-request vocabulary every folder shares: strategy names, wire protocols, failure classes, the
 * {@link Sample} each request yields, and the flow-control stall counters of an HTTP/2 session. Each is
 * a zod schema with its TypeScript type inferred from it; `docs/sample.schema.json` is generated from
 * {@link sampleSchema} (`npm run schema`).
 */
import { z } from 'zod';
import { ms, publishedJsonSchema } from './fields.ts';
import { STRATEGY_NAME_PATTERN } from './meta.ts';

/**
 * A client strategy's name: its key in the strategy registry (src/transport/registry.ts), which checks
 * it where options are parsed. A plain lower-case id here, not an enum, so that adding a strategy
 * touches only src/transport and a result file may name whatever strategy measured it.
 */
export const strategyNameSchema = z
  .string()
  .regex(STRATEGY_NAME_PATTERN)
  .describe('A client strategy: its name in the strategy registry (src/transport/registry.ts).');
/** A client strategy's name (see {@link strategyNameSchema}; the strategy itself is src/transport's `Strategy`). */
export type StrategyName = z.infer<typeof strategyNameSchema>;

/** An HTTP method as a request carries it: upper case (`-m` upper-cases what it is given). */
export const httpMethodSchema = z
  .string()
  .regex(/^[A-Z]+$/, 'an upper-case HTTP method such as GET or POST')
  .describe('HTTP method, upper case, e.g. GET, POST, PUT.');

/** A protocol as negotiated on the wire (ALPN ids; `h2c` for cleartext HTTP/2 with prior knowledge; `h3` is HTTP/3 over QUIC, RFC 9114). */
export const wireProtocolSchema = z.enum(['http/1.1', 'h2', 'h2c', 'h3']);
/** A protocol as negotiated on the wire (ALPN ids; `h2c` for cleartext HTTP/2 with prior knowledge; `h3` is HTTP/3 over QUIC, RFC 9114). */
export type WireProtocol = z.infer<typeof wireProtocolSchema>;

/**
 * Why a request failed at the transport level. (A response with status >= 400 is not a failure
 * class: it is counted by status.) `protocol`: the response broke HTTP framing although the stream
 * ended normally — an HTTP/2 body shorter or longer than its content-length (RFC 9113 §8.1.1) — or
 * an HTTP/2 response header block larger than 64 KiB (`MAX_HEADER_BLOCK_BYTES`), or an HTTP/1.1
 * status line that is not one or a head larger than 64 KiB (RFC 9112 §4).
 */
export const failureClassSchema = z.enum([
  'connect',
  'tls',
  'reset',
  'timeout',
  'goaway',
  'refused-stream',
  'protocol-mismatch',
  'protocol',
  'aborted',
  'other',
]);
/** Why a request failed at the transport level (HTTP errors are counted by status instead). */
export type FailureClass = z.infer<typeof failureClassSchema>;

/**
 * One record per request, with monotonic times in milliseconds since the run's origin
 * (`performance.now()` based, fractional). One line of `--samples FILE` (NDJSON).
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
    headerBytesIn: z
      .number()
      .int()
      .optional()
      .describe(
        'bytes of the final response header block as received: HTTP/1.1 the status line and fields up to the empty line; HTTP/2 the HPACK-encoded block (HEADERS and CONTINUATION payloads); absent where the client does not see them (node:http2, HTTP/3)',
      ),
    bytesOut: z.number().int().describe('request body bytes sent'),
    protocol: wireProtocolSchema,
    streamId: z.number().int().optional().describe('HTTP/2 stream id'),
    error: failureClassSchema.optional().describe('set when the request failed at the transport level'),
    errorDetail: z.string().optional().describe('human detail of the failure (error code, message)'),
    warmup: z.boolean().optional().describe('true when it fell in the warm-up (excluded from statistics)'),
    /**
     * GOAWAY above its stream or REFUSED_STREAM (RFC 9113 §8.7): retried as browsers do. The other
     * fields describe the last attempt; `queuedMs`/`intendedMs` are the first's, so latency includes
     * the retries.
     */
    retries: z
      .number()
      .int()
      .optional()
      .describe(
        'times it was sent again after the server refused it unprocessed (GOAWAY, REFUSED_STREAM); the other fields describe the last attempt, queuedMs and intendedMs the first',
      ),
    unprocessed: z
      .number()
      .int()
      .optional()
      .describe(
        'attempts that ended as goaway: streams above a GOAWAY last-stream-id, which the server says it never processed (RFC 9113 §6.8), or requests the going-away session no longer took',
      ),
  })
  .describe('One request of an h2lab load run: one line of the --samples NDJSON file.');
/** One record per request (see {@link sampleSchema}). */
export type Sample = z.infer<typeof sampleSchema>;

/**
 * The fields of a {@link Sample} that describe one attempt of its request, with the value each takes
 * back when the request is sent again (GOAWAY, REFUSED_STREAM): `undefined` removes the field. A
 * field measured per attempt goes here, or a retried request keeps the refused attempt's value; the
 * pool's retry (src/transport/attempt.ts) reads this list and nothing else.
 */
export const SAMPLE_ATTEMPT_FIELDS: { [K in keyof Sample]?: Sample[K] | undefined } = {
  error: undefined,
  errorDetail: undefined,
  streamId: undefined,
  headersMs: undefined,
  status: undefined,
  headerBytesIn: undefined,
  connectMs: undefined,
  tlsMs: undefined,
  bytesIn: 0,
  bytesOut: 0,
  newConnection: false,
};

/**
 * The other fields: the request's own, kept across attempts (its sequence, schedule and retry
 * counts), or written by every attempt before it ends (when it was sent and ended, on which
 * connection, in which protocol). A test checks that every field of {@link sampleSchema} is in exactly
 * one of the two lists.
 */
export const SAMPLE_REQUEST_FIELDS: readonly (keyof Sample)[] = [
  'seq',
  'intendedMs',
  'queuedMs',
  'warmup',
  'retries',
  'unprocessed',
  'sentMs',
  'endMs',
  'connectionId',
  'protocol',
];

/** One request as the transport sends it (in memory only: never serialized, so no schema). */
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
export type RequestTiming = Pick<Sample, 'seq' | 'intendedMs' | 'queuedMs'>;

const flowStallsShape = {
  connectionStalls: z.number().int().describe("stall episodes of the connection's receive window"),
  streamStalls: z.number().int().describe("stall episodes of streams' receive windows"),
  stalledMs: ms(
    'wall time during which at least one window of a session (the connection or a stream) was stalled, summed over sessions',
  ),
  connectionStalledMs: ms("time the connection's window was stalled, summed over sessions"),
  streamStalledMs: ms("stall time of streams' windows, summed over streams (overlapping streams each count)"),
  bytesAfterStall: z
    .number()
    .describe(
      'bytes that arrived after a stall up to the credit limit that ended it (the data that waited), each counted once',
    ),
  sessionMs: ms('how long the sessions were open, summed (the time stalls are a share of)'),
};

/**
 * Stall counters of one HTTP/2 session, or a sum of sessions (src/h2/flow-stalls.ts defines a stall).
 * Times in ms, sizes in bytes.
 */
const flowStallsSchema = z.strictObject(flowStallsShape);
/** Stall counters of one session (or a sum of sessions); see {@link flowStallsSchema}. */
export type FlowStalls = z.infer<typeof flowStallsSchema>;

/** Flow-control stalls of several sessions, summed over `sessions` (times add up per session). */
export const flowControlStatsSchema = z
  .strictObject({ sessions: z.number().int().describe('HTTP/2 sessions measured'), ...flowStallsShape })
  .describe("HTTP/2 flow-control stalls of h2lab's own client (absent for HTTP/1.1 and --h2-client node).");
/** Flow-control stalls of several sessions (see {@link flowControlStatsSchema}). */
export type FlowControlStats = z.infer<typeof flowControlStatsSchema>;

/**
 * Why a pooled connection ended. `idle-timeout` and `max-age`: the client retired it (`--idle-timeout`,
 * `--max-age`); `goaway`: the server sent GOAWAY (RFC 9113 §6.8) and the session drained; `ended`: the
 * socket closed or failed under the client (a server's close or reset, an HTTP/1.1 `Connection:
 * close` or request timeout); `run-end`: still open when the run closed its transport.
 */
const connectionEndSchema = z.enum(['idle-timeout', 'max-age', 'goaway', 'ended', 'run-end']);
export type ConnectionEnd = z.infer<typeof connectionEndSchema>;

/** The life of one pooled connection, on the run's clock (ms since the run's origin). */
export const connectionLifetimeSchema = z.strictObject({
  id: z.number().int().describe('the connection id samples carry (per worker thread)'),
  openedMs: ms('when it was ready (connected, handshaken)'),
  lastActiveMs: ms('when its last request ended (openedMs when it carried none)'),
  goawayMs: ms('when the server’s GOAWAY arrived (HTTP/2)').optional(),
  goawayCode: z.number().int().optional().describe('the GOAWAY’s error code (0 = NO_ERROR)'),
  closedMs: ms('when it was closed'),
  requests: z.number().int().describe('requests it completed'),
  closedBy: connectionEndSchema,
});
export type ConnectionLifetime = z.infer<typeof connectionLifetimeSchema>;

/** The published JSON Schema (draft 2020-12) of one `--samples` line. */
export function sampleJsonSchema(): Record<string, unknown> {
  return publishedJsonSchema('h2lab Sample (one --samples NDJSON line)', sampleSchema);
}

/** Checks that a value read from JSON (one `--samples` line) is a {@link Sample}; throws a ZodError if not. */
export function parseSample(value: unknown): Sample {
  return sampleSchema.parse(value);
}

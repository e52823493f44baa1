/**
 * The result of `probe(url)`: versioned data, rendered as text or written as JSON. Every field carries
 * its unit in its name. A `null` means "could not be told" (with the reason in a nearby `detail`); an
 * absent optional section means "not probed".
 *
 * The zod schemas below are the one source: the TypeScript types are inferred from them and
 * `docs/probe-result.schema.json` is generated from {@link probeResultSchema} (`npm run schema`).
 * Bump {@link PROBE_RESULT_VERSION} on any incompatible change and say what changed in docs/design.md.
 */
import { z } from 'zod';
import { ms, nanAsNull, publishedJsonSchema } from './fields.ts';

export const PROBE_RESULT_VERSION = 1;

/** One SETTINGS parameter as sent: the identifier, its name when known, and the value. */
const settingEntrySchema = z.strictObject({
  id: z.number().int().describe('SETTINGS identifier (RFC 9113 §6.5.2)'),
  name: z.string().describe('its name when known, else UNKNOWN_0x<identifier in hex>'),
  value: z.number(),
});
/** One SETTINGS parameter as sent (see {@link settingEntrySchema}). */
export type SettingEntry = z.infer<typeof settingEntrySchema>;

/**
 * Why a connection attempt or an exchange did not complete: `unreachable` (no TCP connection:
 * refused, no route, name not found), `timeout` (no answer before the deadline), `reset` (the peer
 * reset or closed the connection unexpectedly), `not-tls` (a ClientHello was answered with something
 * that is not TLS), `tls-version` (the TLS version offered was refused), `tls-alpn` (every ALPN
 * protocol offered was refused: no_application_protocol), `client-cert-required` (the peer requires a
 * client certificate and none, or a rejected one, was given), `tls-handshake` (any other TLS handshake
 * failure), `protocol` (the peer broke the protocol being probed).
 */
const failureKindSchema = z
  .enum([
    'unreachable',
    'timeout',
    'reset',
    'not-tls',
    'tls-version',
    'tls-alpn',
    'client-cert-required',
    'tls-handshake',
    'protocol',
  ])
  .describe('why a connection attempt or an exchange did not complete');
/** Why a connection attempt or an exchange did not complete (see {@link failureKindSchema}). */
export type FailureKind = z.infer<typeof failureKindSchema>;

/** A failure with the kind, the system/TLS error code when there is one, and a human detail. */
const failureSchema = z.strictObject({
  kind: failureKindSchema,
  code: z
    .string()
    .optional()
    .describe('system or TLS error code, e.g. ECONNREFUSED, ERR_SSL_WRONG_VERSION_NUMBER'),
  detail: z.string(),
});
/** A failure (see {@link failureSchema}). */
export type Failure = z.infer<typeof failureSchema>;

/** Whether a protocol or feature works, and in words how that was established. */
const availabilitySchema = z.strictObject({
  supported: z
    .boolean()
    .nullable()
    .describe('true works, false does not, null could not be told (see detail)'),
  detail: z.string(),
});
/** Whether a protocol or feature works (see {@link availabilitySchema}). */
export type Availability = z.infer<typeof availabilitySchema>;

/** The TLS versions the probe offers one at a time. */
const tlsVersionSchema = z.enum(['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3']);
/** The TLS versions the probe offers one at a time, oldest first. */
export const TLS_VERSIONS = tlsVersionSchema.options;
export type TlsVersionName = z.infer<typeof tlsVersionSchema>;

/** One certificate of the chain the server sent, summarised. */
const certificateSummarySchema = z.strictObject({
  subject: z.string(),
  issuer: z.string(),
  subjectAltNames: z.array(z.string()).describe('DNS names and IP addresses from subjectAltName'),
  validFrom: z.string(),
  validTo: z.string(),
  daysLeft: z.number().int().describe('whole days until validTo (negative once expired)'),
  selfSigned: z.boolean(),
  fingerprint256: z.string(),
  ocspResponder: z
    .string()
    .nullable()
    .describe('the OCSP responder named in Authority Information Access, if any'),
});
/** One certificate of the chain, summarised (see {@link certificateSummarySchema}). */
export type CertificateSummary = z.infer<typeof certificateSummarySchema>;

/** What TLS the server speaks: the full handshake, each version and ALPN id alone, the certificates. */
const tlsReportSchema = z.strictObject({
  negotiated: z
    .strictObject({
      version: z.string().nullable(),
      cipher: z.string().nullable(),
      cipherStandardName: z.string().nullable().describe('the IANA name of the cipher suite'),
      alpn: z.string().nullable(),
      handshakeMs: nanAsNull.describe('the handshake, milliseconds; null when none completed'),
    })
    .describe('the handshake with everything offered (ALPN h2 + http/1.1, every version Node allows)'),
  /**
   * TLS 1.0 and 1.1 are offered with OpenSSL's security level 0 (their SHA-1 era cipher suites are
   * refused by default); they are deprecated (RFC 8996).
   */
  versions: z.record(tlsVersionSchema, availabilitySchema).describe('each version offered alone'),
  alpn: z.record(z.enum(['h2', 'http/1.1']), availabilitySchema).describe('each ALPN protocol offered alone'),
  certificate: z.strictObject({
    trusted: z
      .boolean()
      .nullable()
      .describe(
        'chain verified against the system CAs or --ca, and the name matched; null when no handshake completed to check it on (a TLS 1.2 server that requires a client certificate, probed without --cert)',
      ),
    verifyError: z
      .string()
      .nullable()
      .describe('OpenSSL/Node verification error code when not trusted, e.g. DEPTH_ZERO_SELF_SIGNED_CERT'),
    chain: z.array(certificateSummarySchema),
  }),
  clientCertificate: z.strictObject({
    requested: z.boolean().describe('the server sent a CertificateRequest'),
    required: z
      .boolean()
      .nullable()
      .describe('the server refused to go on without one; null when not requested or not told'),
    presented: z.boolean().describe('a client certificate (--cert) was presented for the rest of the probe'),
    detail: z.string(),
  }),
  ocspStapled: z
    .boolean()
    .describe('a stapled OCSP response came back when asked for (status_request, RFC 6066 §8)'),
});
/** What TLS the server speaks (see {@link tlsReportSchema}). */
export type TlsReport = z.infer<typeof tlsReportSchema>;

/** The HTTP/2 parameters the server announced at the start of a connection. */
const h2ReportSchema = z.strictObject({
  via: z
    .enum(['h2', 'h2c'])
    .describe('how the connection was made: h2 (TLS + ALPN) or h2c (cleartext, prior knowledge)'),
  settingsSent: z.array(settingEntrySchema).describe("the server's first SETTINGS frame as sent"),
  effective: z
    .record(z.string(), z.number().nullable())
    .describe('each known setting: the value sent, else the RFC 9113 §6.5.2 initial value (null: unlimited)'),
  notSent: z.array(z.string()).describe('known settings the server did not send'),
  connectionWindowUpdateBytes: z
    .number()
    .nullable()
    .describe(
      'the connection-level WINDOW_UPDATE increment sent right after SETTINGS, bytes; null when none (the window stays 65,535 bytes, RFC 9113 §6.9.2)',
    ),
  pingRttMs: nanAsNull.describe('round trip of a PING, milliseconds; null when no PING answer came'),
  goaway: z.strictObject({ errorName: z.string(), debug: z.string() }).optional(),
});
/** The HTTP/2 parameters the server announced (see {@link h2ReportSchema}). */
export type H2Report = z.infer<typeof h2ReportSchema>;

/** HTTP/1.1 keep-alive: several requests in a row, on how many connections. */
const keepAliveReportSchema = z.strictObject({
  requests: z.number().int(),
  connections: z.number().int().describe('connections the requests needed (1 when keep-alive is honoured)'),
  honoured: z.boolean(),
  connectionHeaders: z.array(z.string()).describe('Connection response header values seen, e.g. ["close"]'),
  keepAliveHeader: z.string().nullable().describe('the Keep-Alive response header, e.g. timeout=5'),
  /**
   * A proxy in front of an h2lab fixture server: the client's keep-alive says nothing about the hop
   * behind it (nginx keeps the client's connection and may still open one upstream per request).
   * When `/metrics?format=json` answers with h2lab's metrics through the target, the probe reads it
   * before and after its keep-alive requests, on the same connection.
   */
  upstream: z
    .strictObject({
      requests: z
        .number()
        .int()
        .describe(
          'requests the h2lab origin counted between the two reads (the probe’s and the second read)',
        ),
      connections: z.number().int().describe('connections the h2lab origin accepted in that time'),
      reused: z
        .boolean()
        .describe(
          'fewer connections than keep-alive requests: the hop in front reuses its upstream connections',
        ),
    })
    .optional()
    .describe(
      'the origin’s own count of connections, when it is an h2lab fixture server (its /metrics answers)',
    ),
});
/** HTTP/1.1 keep-alive (see {@link keepAliveReportSchema}). */
export type KeepAliveReport = z.infer<typeof keepAliveReportSchema>;

const probedProtocol = z.enum(['http/1.1', 'h2', 'h2c']);

/** One response, as a client saw it. Times are ms from writing the request. */
const responseReportSchema = z.strictObject({
  protocol: probedProtocol,
  path: z.string(),
  status: z.number().int(),
  ttfbMs: ms('response headers arrived, from writing the request'),
  totalMs: ms('the response ended, from writing the request'),
  bodyBytes: z.number().int(),
  server: z.string().nullable(),
  contentType: z.string().nullable(),
  contentEncoding: z
    .string()
    .nullable()
    .describe('Content-Encoding of a response to Accept-Encoding: gzip, deflate, br, zstd; null when none'),
  altSvc: z.string().nullable(),
});
/** One response, as a client saw it (see {@link responseReportSchema}). */
export type ResponseReport = z.infer<typeof responseReportSchema>;

/** How a large response arrived: streamed from the start, or late as if spooled by a proxy. */
const largeReportSchema = z.strictObject({
  ...responseReportSchema.shape,
  firstBodyByteMs: ms('first body byte, from the request'),
  halfBodyMs: ms('half the body had arrived, from the request'),
  verdict: z.enum(['streamed', 'late', 'too-fast-to-tell']),
  detail: z.string(),
});
/** How a large response arrived (see {@link largeReportSchema}). */
export type LargeReport = z.infer<typeof largeReportSchema>;

/** How long the server keeps an idle connection open (`--wait-idle`). */
const idleReportSchema = z.strictObject({
  protocol: probedProtocol,
  waitedMs: ms('how long the probe waited'),
  closedAfterMs: ms(
    'when the server closed it after it went idle; null when still open after waitedMs',
  ).nullable(),
  how: z
    .enum(['goaway', 'close', 'reset'])
    .nullable()
    .describe('how: goaway (HTTP/2 GOAWAY), close (TCP FIN), reset; null when still open'),
});
/** How long the server keeps an idle connection open (see {@link idleReportSchema}). */
export type IdleReport = z.infer<typeof idleReportSchema>;

const findingLevelSchema = z.enum(['info', 'warn']);
export type FindingLevel = z.infer<typeof findingLevelSchema>;

/** One thing worth knowing, in words, with a stable id to match on. */
const findingSchema = z.strictObject({
  id: z.string().describe('stable id to match on'),
  level: findingLevelSchema,
  text: z.string(),
});
/** One thing worth knowing (see {@link findingSchema}). */
export type Finding = z.infer<typeof findingSchema>;

/** The `--expect` gate. */
const expectationReportSchema = z.strictObject({
  asked: z.array(z.string()),
  met: z.array(z.string()),
  unmet: z.array(z.strictObject({ expectation: z.string(), reason: z.string() })),
});
/** The `--expect` gate (see {@link expectationReportSchema}). */
export type ExpectationReport = z.infer<typeof expectationReportSchema>;

/** The zod schema of one probe's result: the source of {@link ProbeResult} and its JSON Schema. */
export const probeResultSchema = z
  .strictObject({
    kind: z.literal('h2lab.probe'),
    version: z.literal(PROBE_RESULT_VERSION),
    h2labVersion: z.string(),
    url: z.string(),
    target: z.strictObject({
      scheme: z.enum(['http', 'https']),
      host: z.string(),
      port: z.number().int(),
      address: z.string().nullable().describe('the IP address the host name resolved to'),
    }),
    startedAt: z.string().describe('ISO 8601 time the probe started'),
    durationMs: ms('the whole probe'),
    options: z
      .record(z.string(), z.unknown())
      .describe('the resolved options (file paths, not their contents)'),
    protocols: z.strictObject({
      'http/1.1': availabilitySchema,
      h2: availabilitySchema.describe('HTTP/2 over TLS, by ALPN'),
      h2c: availabilitySchema.describe('cleartext HTTP/2 with prior knowledge (RFC 9113 §3.3)'),
      h2cUpgrade: availabilitySchema.describe('cleartext HTTP/2 by Upgrade: h2c (RFC 7540 §3.2)'),
      altSvc: z
        .strictObject({ header: z.string(), protocols: z.array(z.string()) })
        .nullable()
        .describe('Alt-Svc as advertised; protocol ids such as h3'),
      h3: availabilitySchema
        .optional()
        .describe(
          "HTTP/3: a QUIC handshake with ALPN h3 to Alt-Svc's h3 port (else the URL's port); absent for http:// (null: h2lab's HTTP/3 binding is not installed)",
        ),
    }),
    quic: z
      .strictObject({
        transportParameters: z
          .record(z.string(), z.union([z.number(), z.string()]))
          .nullable()
          .describe(
            "the server's QUIC transport parameters (RFC 9000 §18.2) by their RFC names; null when they could not be read (see via)",
          ),
        via: z.string().describe('what read them (ngtcp2’s client and its version), or why they are missing'),
      })
      .optional()
      .describe('QUIC facts of the h3 endpoint; present when the h3 handshake succeeded'),
    tls: tlsReportSchema.optional(),
    h2: h2ReportSchema.optional(),
    keepAlive: keepAliveReportSchema.optional(),
    responses: z.array(responseReportSchema),
    large: largeReportSchema.optional(),
    idle: z.array(idleReportSchema).optional(),
    problems: z
      .array(z.strictObject({ step: z.string(), ...failureSchema.shape }))
      .describe('steps that failed without ending the probe, with why'),
    findings: z.array(findingSchema),
    expectations: expectationReportSchema.optional(),
  })
  .describe('What an h2lab probe found a server to speak (h2lab probe --json).');
/** The result of one `probe(url)` (see {@link probeResultSchema}). */
export type ProbeResult = z.infer<typeof probeResultSchema>;

/** The JSON Schema of a probe result (published as docs/probe-result.schema.json). */
export function probeResultJsonSchema(): Record<string, unknown> {
  return publishedJsonSchema('h2lab probe result', probeResultSchema);
}

/** Checks that a value read from JSON is a probe result this version understands; throws a ZodError if not. */
export function parseProbeResult(value: unknown): ProbeResult {
  return probeResultSchema.parse(value);
}

/**
 * The fixture server's options: one zod schema gives the types, the defaults, the validation, the
 * CLI flags (`meta.flag`) and the `--config` keys (the same long flag names).
 */
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import {
  CA_FLAG,
  CERT_FLAG,
  type DescribedOption,
  describeOptions,
  flagMeta,
  KEY_FLAG,
  KEYLOG_FLAG,
  optionMeta,
  QLOG_FLAG,
  QUIC_RETRY_FLAG,
} from '../core/index.ts';

export { METRICS_URL_FLAG } from './flags.ts';

const m = optionMeta;

const ms = (d: number) => z.number().min(0).max(86_400_000).default(d);
const port = (d: number) => z.number().int().min(0).max(65535).default(d);

/** The fields of {@link ServerOptionsSchema}, one declaration each. */
const ServerOptionFields = z.strictObject({
  host: z
    .string()
    .min(1)
    .default('127.0.0.1')
    .meta(m('host', 'string', 'address to listen on')),
  port: port(8080).meta(m('port', 'int', 'plain port: HTTP/1.1 and h2c prior knowledge (0 = a free port)')),
  tlsPort: port(8443).meta(m('tls-port', 'int', 'TLS port: h2 and http/1.1 by ALPN (0 = a free port)')),
  h3: z
    .boolean()
    .default(false)
    .meta(
      m(
        'h3',
        'bool',
        'serve HTTP/3 over QUIC (UDP) too, on the TLS port number unless --h3-port says otherwise, advertised by Alt-Svc on the TLS port; needs the optional @currentspace/http3',
      ),
    ),
  h3Port: z
    .number()
    .int()
    .min(0)
    .max(65535)
    .optional()
    .meta(
      m('h3-port', 'int', 'UDP port of HTTP/3 (implies --h3; 0 = a free port; default: the TLS port number)'),
    ),
  h3Host: z
    .string()
    .min(1)
    .optional()
    .meta(
      m(
        'h3-host',
        'string',
        "address HTTP/3's UDP listener binds (default: --host); 0.0.0.0 or :: keeps QUIC's path-MTU probes at 1,472 bytes, where one address lets them grow to loopback's (docs/net.md)",
      ),
    ),
  quicRetry: z
    .boolean()
    .default(false)
    .meta(
      flagMeta(
        QUIC_RETRY_FLAG,
        'validate every QUIC client address with a Retry packet first (RFC 9000 §8.1.2): one more round trip per HTTP/3 handshake, as a server under attack does',
      ),
    ),
  plain: z
    .boolean()
    .default(true)
    .meta(m('plain', 'bool', 'serve the plain port', true)),
  unixSocket: z
    .string()
    .min(1)
    .optional()
    .meta(
      m(
        'unix-socket',
        'string',
        "also serve the plain listener's protocols (HTTP/1.1, h2c) on this Unix domain socket path, e.g. behind a reverse proxy on the same host",
      ),
    ),
  tls: z
    .boolean()
    .default(true)
    .meta(m('tls', 'bool', 'serve the TLS port', true)),
  cert: z
    .string()
    .optional()
    .meta(flagMeta(CERT_FLAG, 'server certificate PEM (with --key; default: the development CA)')),
  key: z.string().optional().meta(flagMeta(KEY_FLAG, 'private key PEM of --cert')),
  ca: z.string().optional().meta(flagMeta(CA_FLAG, 'CA PEM that verifies client certificates (mTLS)')),
  clientAuth: z
    .enum(['none', 'request', 'require'])
    .default('none')
    .meta(
      m('client-auth', 'enum', 'mTLS: none, request (verify when sent) or require (refuse in the handshake)'),
    ),
  qlogDir: z
    .string()
    .optional()
    .meta(
      flagMeta(
        QLOG_FLAG,
        "write one qlog (JSON-SEQ, for qvis) per QUIC connection of the HTTP/3 listener into this directory; /metrics then adds each connection's packets lost and retransmitted, bytes in flight and initial window",
      ),
    ),
  keyLogFile: z
    .string()
    .optional()
    .meta(
      flagMeta(
        KEYLOG_FLAG,
        'append the TLS secrets of every connection the TLS port accepts to this NSS key log (SSLKEYLOGFILE format), to decrypt a capture',
      ),
    ),

  poolSize: z
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(availableParallelism())
    .meta(m('pool', 'int', 'backend pool workers behind /tiles', false, 'the number of cores')),
  tileMs: ms(60).meta(m('tile-ms', 'duration', 'service time of one tile in the backend pool')),
  tileHeavyFraction: z
    .number()
    .min(0)
    .max(1)
    .default(0)
    .meta(m('tile-heavy-fraction', 'fraction', 'share of tiles that are heavy (chosen per tile by --seed)')),
  tileHeavyMs: ms(600).meta(m('tile-heavy-ms', 'duration', 'service time of a heavy tile')),
  tileRender: z
    .enum(['sleep', 'cpu'])
    .default('sleep')
    .meta(
      m(
        'tile-render',
        'enum',
        'how a pool worker spends a tile: sleep (waits --tile-ms, as on a database or an upstream) or cpu (burns --tile-ms of CPU time on a thread pinned to --render-cores; needs Linux and taskset)',
      ),
    ),
  renderCores: z
    .number()
    .int()
    .min(1)
    .max(1024)
    .optional()
    .meta(
      m(
        'render-cores',
        'int',
        'with --tile-render cpu: the CPUs the render threads share (the last N of the machine)',
        false,
        'every CPU',
      ),
    ),
  tileSizeBytes: z
    .number()
    .int()
    .min(0)
    .max(64 * 1024 * 1024)
    .default(8 * 1024)
    .meta(m('tile-size', 'bytes', 'body size of a tile response')),
  ignoreCancel: z
    .boolean()
    .default(false)
    .meta(
      m(
        'ignore-cancel',
        'bool',
        'render tiles to completion even when the client went away (a server that ignores cancellation)',
      ),
    ),
  seed: z
    .number()
    .int()
    .min(0)
    .max(0xffffffff)
    .default(1)
    .meta(m('seed', 'int', 'seed of heavy tiles and chunk sizes')),
  chunkCount: z
    .number()
    .int()
    .min(1)
    .max(10_000_000)
    .default(1000)
    .meta(m('chunks', 'int', 'number of chunks in /chunks/:i')),
  chunkMinBytes: z
    .number()
    .int()
    .min(1)
    .max(16 * 1024 * 1024)
    .default(20 * 1024)
    .meta(m('chunk-min', 'bytes', 'smallest chunk size')),
  chunkMaxBytes: z
    .number()
    .int()
    .min(1)
    .max(16 * 1024 * 1024)
    .default(50 * 1024)
    .meta(m('chunk-max', 'bytes', 'largest chunk size')),
  maxBytes: z
    .number()
    .int()
    .min(0)
    .default(1024 ** 3)
    .meta(m('max-bytes', 'bytes', 'largest n accepted by /bytes/:n')),

  maxConcurrentStreams: z
    .number()
    .int()
    .min(1)
    .max(2 ** 31 - 1)
    .default(250)
    .meta(m('max-concurrent-streams', 'int', 'HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS advertised to clients')),
  initialWindowSizeBytes: z
    .number()
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .default(65_535)
    .meta(
      m('initial-window-size', 'bytes', 'HTTP/2 SETTINGS_INITIAL_WINDOW_SIZE (per-stream receive window)'),
    ),
  connectionWindowSizeBytes: z
    .number()
    .int()
    .min(65_535)
    .max(2 ** 31 - 1)
    .default(65_535)
    .meta(
      m(
        'connection-window-size',
        'bytes',
        "HTTP/2: the connection's receive window (uploads on one session share it); 65535 = RFC 9113's initial value, Node's default",
      ),
    ),
  maxHeaderListSizeBytes: z
    .number()
    .int()
    .min(1024)
    .max(2 ** 31 - 1)
    .default(32 * 1024)
    .meta(
      m(
        'max-header-list-size',
        'bytes',
        'HTTP/2 SETTINGS_MAX_HEADER_LIST_SIZE; larger header lists are refused',
      ),
    ),
  keepAliveTimeoutMs: ms(5000).meta(
    m('keep-alive-timeout', 'duration', 'close an idle HTTP/1.1 keep-alive connection after this long'),
  ),
  h2IdleTimeoutMs: ms(60_000).meta(
    m(
      'h2-idle-timeout',
      'duration',
      'close an HTTP/2 session (GOAWAY) after this long without frames, once it has opened a stream; 0 = never',
    ),
  ),
  prefaceTimeoutMs: ms(10_000).meta(
    m(
      'preface-timeout',
      'duration',
      'close a connection that has not finished its TLS handshake, sent its first request bytes or (HTTP/2) opened its first stream within this; 0 = never',
    ),
  ),
  headersTimeoutMs: ms(20_000).meta(
    m('headers-timeout', 'duration', 'HTTP/1.1: time allowed to receive a request head'),
  ),
  requestTimeoutMs: ms(60_000).meta(
    m(
      'request-timeout',
      'duration',
      'HTTP/1.1: time allowed to receive a whole request, head and body (a dripped body ends); 0 = never',
    ),
  ),
  h2MaxResets: z
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .default(500)
    .meta(
      m(
        'h2-max-resets',
        'int',
        'HTTP/2: client RST_STREAMs one connection may send at once, refilled over 10 s (a token bucket); beyond it GOAWAY(ENHANCE_YOUR_CALM); 0 = no limit',
      ),
    ),
  h2MaxPriority: z
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .default(1000)
    .meta(
      m(
        'h2-max-priority',
        'int',
        'HTTP/2: PRIORITY frames one connection may send at once, refilled over 10 s (a token bucket); beyond it GOAWAY(ENHANCE_YOUR_CALM); 0 = no limit',
      ),
    ),
  h2MaxRefusedStreams: z
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .default(100)
    .meta(
      m(
        'h2-max-refused-streams',
        'int',
        'HTTP/2: streams refused for their header list on one connection before GOAWAY(ENHANCE_YOUR_CALM); 0 = no limit',
      ),
    ),
  h2MaxFloodBytes: z
    .number()
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .default(1024 * 1024)
    .meta(
      m(
        'h2-max-flood-bytes',
        'bytes',
        'HTTP/2: bytes one connection may send beyond its requests (header lists, bodies) and 1/16 of what the server wrote — WINDOW_UPDATE, PING, unknown frame types — a bucket refilled over 10 s; beyond it GOAWAY(ENHANCE_YOUR_CALM); 0 = no limit',
      ),
    ),
  h2GoawayGraceMs: ms(1000).meta(
    m(
      'h2-goaway-grace',
      'duration',
      "HTTP/2: after a GOAWAY (the server's or nghttp2's), time left to streams before the socket is destroyed",
    ),
  ),
  graceMs: ms(5000).meta(
    m('grace', 'duration', 'on shutdown, time given to in-flight requests before sockets are closed'),
  ),
});

/**
 * What one option cannot say alone, checked with the rest before anything starts. Each rule is an
 * issue on the option to change; its `params` carry what `resolveServerOptions` throws: `code` when
 * it is not H2LAB_ERR_INVALID_OPTION, else the `value` named (the resolved one, default included) with
 * the message as the fix.
 */
function crossFieldRules(o: z.output<typeof ServerOptionFields>, ctx: z.RefinementCtx): void {
  const fail = (key: keyof typeof o, message: string, params: Record<string, unknown>): void =>
    ctx.addIssue({ code: 'custom', path: [key], message, params });
  if (!o.plain && !o.tls) {
    fail('plain', '--no-plain and --no-tls together leave nothing to serve: keep at least one listener', {
      code: 'H2LAB_ERR_NO_LISTENER',
    });
  }
  if (o.clientAuth !== 'none' && !o.ca) {
    fail('clientAuth', 'mTLS needs --ca FILE, the CA that signs the client certificates', {
      value: o.clientAuth,
    });
  }
  if (o.requestTimeoutMs > 0 && o.headersTimeoutMs > o.requestTimeoutMs) {
    fail(
      'headersTimeoutMs',
      `must not exceed --request-timeout (${o.requestTimeoutMs}); raise --request-timeout or set it to 0`,
      { value: o.headersTimeoutMs },
    );
  }
  if (o.chunkMinBytes > o.chunkMaxBytes) {
    fail('chunkMinBytes', `must not exceed --chunk-max (${o.chunkMaxBytes})`, { value: o.chunkMinBytes });
  }
  if (o.tileRender === 'cpu' && o.poolSize > 1024) {
    fail('poolSize', 'with --tile-render cpu give at most 1024 workers (one thread each)', {
      value: o.poolSize,
    });
  }
}

/**
 * Options of {@link startServer}: the fields above and their cross-field rules. Every HTTP/2 limit is
 * an option so hostile-peer tests can use small values (docs/performance.md,
 * "Fixture server (src/server) and certificates (src/tls)").
 */
export const ServerOptionsSchema = ServerOptionFields.superRefine(crossFieldRules);

/** Resolved options of the fixture server (all defaults applied). */
export type ServerOptions = z.infer<typeof ServerOptionsSchema>;
/** Options as a caller passes them: every key optional. */
export type ServerOptionsInput = z.input<typeof ServerOptionsSchema>;

/** The options of `h2lab serve` with their flags, kinds, help and defaults, in schema order. */
export function serverOptionMeta(): DescribedOption[] {
  return describeOptions(ServerOptionsSchema);
}

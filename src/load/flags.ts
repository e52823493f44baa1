/**
 * The flags of a load run (`bench`, `plan`; swept by `compare` and the studies) and the defaults they
 * print: what a command's help needs, and nothing more — no zod, no schemas, no transport (docs/design.md,
 * "Start-up: what a command's help loads"). The options' schema and validation are options.ts, which
 * takes its enums and ranges from here; the folder's light face, src/load/meta.ts, exports this file.
 */
import {
  CA_FLAG,
  CERT_FLAG,
  declareFlag,
  FRAMES_FLAG,
  H2labError,
  INPUT_FILE_CAPS,
  INSECURE_FLAG,
  invalidOption,
  KEY_FLAG,
  KEYLOG_FLAG,
  parseDurationMs,
  parseList,
  QLOG_FLAG,
  QUIC_RETRY_FLAG,
  readOptionText,
  TIMEOUT_FLAG,
} from '../core/index.ts';
import {
  DEFAULT_STRATEGY,
  H2_CLIENTS,
  listStrategies,
  POOL_POLICIES,
  strategyNames,
  WINDOW_PRESETS,
} from '../transport/meta.ts';

/** Defaults in one frozen object, each with its unit and, where not obvious, why. */
export const LOAD_DEFAULTS = Object.freeze({
  /**
   * Requests in flight (closed loop) when --concurrency is not given and the strategy multiplexes
   * (one request per connection: as many as it has connections). Connections per strategy are the
   * strategy's own default (src/transport/strategies/).
   */
  concurrency: 6,
  /** Run length when neither --duration nor --requests is given, ms. */
  durationMs: 10_000,
  /** Per-request timeout, ms. */
  timeoutMs: 30_000,
  /** TCP + TLS + first SETTINGS, ms. */
  connectTimeoutMs: 10_000,
  /** Every connection attempt failing this long ends the run, ms (a restart of a server takes less). */
  reconnectGiveUpMs: 5_000,
  /** Open loop: bound on requests outstanding inside h2lab, so a stalled server cannot eat memory. */
  maxInFlight: 10_000,
  /** Open loop: a request handed over more than this after its intended time is counted late, ms. */
  lateToleranceMs: 5,
  /** Progress events, ms. */
  progressIntervalMs: 1000,
  /** Bursts per run when --burst is given. */
  bursts: 1,
  /**
   * Pause between two bursts, ms: the previous burst's connections are closed by then, so their
   * teardown (FIN exchange, the server's cleanup) does not land inside the next burst's timed period.
   */
  burstGapMs: 100,
  /**
   * Whether a burst's timed period contains opening its connections: `include`, because that is what a
   * browser loading a page from a site it has no connection to pays (TCP, TLS and only then requests).
   */
  burstHandshakes: 'include' as 'include' | 'exclude',
});

export const BURST_HANDSHAKES = ['include', 'exclude'] as const;
export const ARRIVALS = ['even', 'poisson'] as const;
export const PICKS = ['sequential', 'random'] as const;

/**
 * The flags of a load run, declared once (docs/design.md, "Options"): `bench` and `plan` use them as
 * they are, `compare` and the studies sweep the ones marked `sweep` (one cell per value). The schema
 * below takes its enums and ranges from them.
 */
export const METHOD_FLAG = declareFlag({
  flag: 'method',
  short: 'm',
  grammar: 'string',
  arg: 'method',
  description: 'HTTP method',
  parse: (t) => t.toUpperCase(),
});
/**
 * `-H name:value` lines → a header record (names lower-cased, values trimmed). The field check (token
 * names, no CR/LF/NUL) is {@link checkHeaderFields}, applied where the options are resolved.
 */
function parseHeaders(lines: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const h of lines) {
    const i = h.indexOf(':');
    if (i <= 0) {
      throw new H2labError(
        'H2LAB_ERR_INVALID_OPTION',
        `--header ${JSON.stringify(h)} is not valid: use name:value, e.g. -H 'accept: */*'`,
        { option: '--header', value: h },
      );
    }
    headers[h.slice(0, i).trim().toLowerCase()] = h.slice(i + 1).trim();
  }
  return headers;
}
export const HEADER_FLAG = declareFlag({
  flag: 'header',
  short: 'H',
  grammar: 'string',
  arg: 'name:value',
  description: 'request header (repeatable)',
  repeatable: true,
  gather: parseHeaders,
});
export const BODY_FLAG = declareFlag({
  flag: 'body',
  grammar: 'string',
  arg: 'file',
  description: 'request body from a file',
});
export const CONNECT_TIMEOUT_FLAG = declareFlag({
  flag: 'connect-timeout',
  grammar: 'seconds',
  arg: 'time',
  description: 'connection setup timeout',
  defaultText: '10s',
});
const PROTOCOL_FLAG = declareFlag({
  flag: 'protocol',
  short: 'p',
  grammar: 'enum',
  arg: 'name',
  description: 'client strategy',
  choices: strategyNames(),
  defaultValue: DEFAULT_STRATEGY,
});
export const CONCURRENCY_FLAG = declareFlag({
  flag: 'concurrency',
  short: 'c',
  grammar: 'int',
  arg: 'n',
  min: 1,
  max: 1_000_000,
  description: 'closed loop: requests in flight',
  defaultText: `${listStrategies()
    .flatMap((s) => (s.multiplexed ? [] : [s.name]))
    .join('/')} → --connections, else ${LOAD_DEFAULTS.concurrency}`,
  sweep: 'one cell per value',
});
const CONNECTIONS_FLAG = declareFlag({
  flag: 'connections',
  grammar: 'int',
  arg: 'n',
  min: 1,
  max: 100_000,
  description: listStrategies()
    .flatMap((s) =>
      s.connections.fixed === undefined
        ? [`${s.name}: ${s.connections.unit}s (default ${s.connections.default})`]
        : [],
    )
    .join('; '),
});
const POLICY_FLAG = declareFlag({
  flag: 'policy',
  grammar: 'enum',
  arg: 'name',
  description: 'h2-pool session choice',
  choices: POOL_POLICIES,
});

/**
 * One `--rate` value: requests per second above 0; in a list (compare's cells, whose level is a whole
 * number) whole requests per second.
 */
function parseRate(text: string, flag: string, whole: boolean): number {
  const r = Number(text);
  if (!(r > 0) || !Number.isFinite(r) || (whole && !Number.isInteger(r)))
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `${flag} ${JSON.stringify(text)} is not valid: use ${whole ? 'whole ' : ''}requests per second above 0, e.g. 500${whole ? ' (a list: 200,500)' : ''}`,
      { option: flag, value: text },
    );
  return r;
}
export const RATE_FLAG = declareFlag({
  flag: 'rate',
  short: 'r',
  grammar: 'number',
  arg: 'rps',
  max: 1_000_000,
  description: 'open loop: requests per second (latency from the intended send time)',
  sweep: 'one cell per value, instead of --concurrency (whole requests per second)',
  parse: parseRate,
});
const ARRIVALS_FLAG = declareFlag({
  flag: 'arrivals',
  grammar: 'enum',
  arg: 'kind',
  description: 'open loop spacing',
  choices: ARRIVALS,
});
export const DURATION_FLAG = declareFlag({
  flag: 'duration',
  short: 'd',
  grammar: 'seconds',
  arg: 'time',
  description: 'measured period, e.g. 10s (a bare number is seconds)',
  defaultText: '10s unless --requests',
});
export const REQUESTS_FLAG = declareFlag({
  flag: 'requests',
  short: 'n',
  grammar: 'int',
  arg: 'n',
  min: 1,
  description: 'stop after this many measured requests',
});
const WARMUP_FLAG = declareFlag({
  flag: 'warmup',
  grammar: 'seconds',
  arg: 'time',
  description: 'warm-up excluded from statistics, e.g. 2s',
});
export const BURST_FLAG = declareFlag({
  flag: 'burst',
  grammar: 'int',
  arg: 'n',
  min: 1,
  max: 100_000,
  description: 'burst: n requests at once; reports the time until the last one ends',
  sweep: 'one cell per N (replaces --concurrency for it)',
});
export const BURSTS_FLAG = declareFlag({
  flag: 'bursts',
  grammar: 'int',
  arg: 'n',
  min: 1,
  max: 1000,
  description: 'burst: repeat it n times, each on fresh connections',
  defaultText: '1',
});
const BURST_GAP_FLAG = declareFlag({
  flag: 'burst-gap',
  grammar: 'seconds',
  arg: 'time',
  description: 'burst: pause between bursts',
  defaultText: '100ms',
});
export const BURST_HANDSHAKES_FLAG = declareFlag({
  flag: 'burst-handshakes',
  grammar: 'enum',
  arg: 'when',
  description: 'burst: open connections inside the timed period (include, default) or before it',
  choices: BURST_HANDSHAKES,
});
export const SEED_FLAG = declareFlag({
  flag: 'seed',
  grammar: 'int',
  arg: 'n',
  description: 'seed of every random choice',
  defaultText: '1',
});

/**
 * `--urls`: a comma list of URLs or paths, or a file of them, one a line (`#` comments): one value
 * that is not an http(s) URL is a file.
 */
function parseUrls(text: string, flag: string): string[] {
  let list = parseList(text);
  if (list.length === 1 && !/^https?:/.test(list[0]!)) {
    list = readOptionText(list[0]!, flag, { kind: 'urls' })
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.length > 0 && !l.startsWith('#'));
  }
  // An empty file is the engine's to refuse, naming the file (`--urls names a file without a path`).
  return list;
}
export const URLS_FLAG = declareFlag({
  flag: 'urls',
  grammar: 'string',
  arg: 'list|file',
  description: 'URLs or paths (comma-separated, or a file of them, one a line; templates allowed)',
  parse: parseUrls,
});
const PICK_FLAG = declareFlag({
  flag: 'pick',
  grammar: 'enum',
  arg: 'how',
  description: 'path choice among several',
  choices: PICKS,
});
export const BODY_SIZE_FLAG = declareFlag({
  flag: 'body-size',
  grammar: 'bytes',
  arg: 'size',
  min: 0,
  max: INPUT_FILE_CAPS.body,
  description: 'generated request body, e.g. 1KiB',
});
export const WINDOW_FLAG = declareFlag({
  flag: 'window',
  grammar: 'enum',
  arg: 'preset',
  description: `HTTP/2 flow-control windows: browser (Chromium: 6 MiB stream, 15 MiB connection; default), node (64 KiB), max (2^31-1)`,
  choices: WINDOW_PRESETS.filter((p) => p !== 'custom'),
  sweep: 'one comparison each',
});
const H2_CLIENT_FLAG = declareFlag({
  flag: 'h2-client',
  grammar: 'enum',
  arg: 'impl',
  description: "HTTP/2 client: h2lab's own or node:http2 (a second opinion)",
  choices: H2_CLIENTS,
});
const STREAM_WINDOW_FLAG = declareFlag({
  flag: 'stream-window',
  grammar: 'bytes',
  arg: 'size',
  min: 1,
  description: 'HTTP/2 stream window (makes --window custom)',
});
const CONNECTION_WINDOW_FLAG = declareFlag({
  flag: 'connection-window',
  grammar: 'bytes',
  arg: 'size',
  min: 1,
  description: 'HTTP/2 connection window (makes --window custom)',
});
export const IDLE_TIMEOUT_FLAG = declareFlag({
  flag: 'idle-timeout',
  grammar: 'seconds',
  arg: 'time',
  description: 'close pooled connections idle this long',
  defaultText: 'never',
});
export const GIVE_UP_FLAG = declareFlag({
  flag: 'give-up',
  grammar: 'seconds',
  arg: 'time',
  min: 100,
  max: 3_600_000,
  description:
    'end the run once every connection attempt has failed this long; shorter outages are recorded and the run goes on',
  defaultText: '5s',
  parse: (text, flag) => {
    const ms = parseDurationMs(text, flag, 's');
    if (ms < 100 || ms > 3_600_000)
      throw invalidOption(flag, text, 'use a duration from 100ms to 1h, e.g. 30s');
    return ms;
  },
});
export const MAX_AGE_FLAG = declareFlag({
  flag: 'max-age',
  grammar: 'seconds',
  arg: 'time',
  description: 'retire pooled connections this old',
  defaultText: 'never',
});
const MAX_ERROR_RATE_FLAG = declareFlag({
  flag: 'max-error-rate',
  grammar: 'fraction',
  arg: 'fraction',
  description: 'exit 1 when more requests fail, e.g. 1%',
});
export const WORKERS_FLAG = declareFlag({
  flag: 'workers',
  grammar: 'int',
  arg: 'n',
  min: 1,
  max: 256,
  description: 'worker threads generating load',
  defaultText: '1',
});

/** The flags of one load run (bench, plan) and the LoadOptions key each fills. */
export const LOAD_FLAGS = [
  { of: METHOD_FLAG, key: 'method' },
  { of: HEADER_FLAG, key: 'headers' },
  { of: BODY_FLAG, key: 'bodyFile' },
  { of: TIMEOUT_FLAG, key: 'timeoutMs' },
  { of: CONNECT_TIMEOUT_FLAG, key: 'connectTimeoutMs' },
  { of: PROTOCOL_FLAG, key: 'protocol' },
  { of: CONCURRENCY_FLAG, key: 'concurrency' },
  { of: CONNECTIONS_FLAG, key: 'connections' },
  { of: POLICY_FLAG, key: 'policy' },
  { of: RATE_FLAG, key: 'rateRps' },
  { of: ARRIVALS_FLAG, key: 'arrivals' },
  { of: DURATION_FLAG, key: 'durationMs' },
  { of: REQUESTS_FLAG, key: 'requests' },
  { of: WARMUP_FLAG, key: 'warmupMs' },
  { of: BURST_FLAG, key: 'burst' },
  { of: BURSTS_FLAG, key: 'bursts' },
  { of: BURST_GAP_FLAG, key: 'burstGapMs' },
  { of: BURST_HANDSHAKES_FLAG, key: 'burstHandshakes' },
  { of: SEED_FLAG, key: 'seed' },
  { of: URLS_FLAG, key: 'paths' },
  { of: PICK_FLAG, key: 'pick' },
  { of: BODY_SIZE_FLAG, key: 'bodySizeBytes' },
  { of: WINDOW_FLAG, key: 'window' },
  { of: H2_CLIENT_FLAG, key: 'h2Client' },
  { of: STREAM_WINDOW_FLAG, key: 'streamWindowBytes' },
  { of: CONNECTION_WINDOW_FLAG, key: 'connectionWindowBytes' },
  { of: CA_FLAG, key: 'ca' },
  { of: CERT_FLAG, key: 'cert' },
  { of: KEY_FLAG, key: 'key' },
  { of: INSECURE_FLAG, key: 'insecure' },
  { of: QUIC_RETRY_FLAG, key: 'quicRetry' },
  { of: KEYLOG_FLAG, key: 'keyLogFile' },
  { of: FRAMES_FLAG, key: 'framesFile' },
  { of: QLOG_FLAG, key: 'qlogDir' },
  { of: IDLE_TIMEOUT_FLAG, key: 'idleTimeoutMs' },
  { of: GIVE_UP_FLAG, key: 'reconnectGiveUpMs' },
  { of: MAX_AGE_FLAG, key: 'maxAgeMs' },
  { of: MAX_ERROR_RATE_FLAG, key: 'maxErrorRate' },
  { of: WORKERS_FLAG, key: 'workers' },
] as const;

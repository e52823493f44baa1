/**
 * `h2lab bench [URL]`: one load run. Flags map onto LoadOptions (src/load/options.ts, the source of
 * truth for defaults and validation); this file parses, shows progress and writes.
 */
import { type Command, Option } from 'commander';
import {
  checkOutputPath,
  ERROR_CODES,
  type ErrorCode,
  H2labError,
  INPUT_FILE_CAPS,
  parseBytes,
  parseDurationMs,
  parseFraction,
  parseInteger,
  readOptionText,
  writeWithFallback,
} from '../core/index.ts';
import {
  LOAD_DEFAULTS,
  type LoadOptionsInput,
  type LoadProgress,
  type LoadRun,
  runLoad,
  runLoadThroughLink,
} from '../load/index.ts';
import { renderRunText } from '../report/index.ts';
import {
  DEFAULT_STRATEGY,
  H2_CLIENTS,
  listStrategies,
  POOL_POLICIES,
  type Strategy,
  strategyNames,
  WINDOW_PRESETS,
} from '../transport/index.ts';
import { describeLink } from './net.ts';
import { addLinkOptions, type LinkFlags, linkOptionsFromFlags, wantsLink } from './net-options.ts';
import { exitWithError, outputWidth } from './output.ts';

export interface BenchFlags {
  protocol?: string;
  concurrency?: string;
  connections?: string;
  policy?: string;
  rate?: string;
  arrivals?: string;
  duration?: string;
  requests?: string;
  warmup?: string;
  burst?: string;
  bursts?: string;
  burstGap?: string;
  burstHandshakes?: string;
  seed?: string;
  method?: string;
  header: string[];
  urls?: string;
  pick?: string;
  body?: string;
  bodySize?: string;
  window?: string;
  h2Client?: string;
  streamWindow?: string;
  connectionWindow?: string;
  ca?: string;
  cert?: string;
  key?: string;
  insecure?: boolean;
  timeout?: string;
  connectTimeout?: string;
  idleTimeout?: string;
  maxAge?: string;
  maxErrorRate?: string;
  workers?: string;
  samples?: string;
  json?: string;
  quiet?: boolean;
  plain?: boolean;
  serverMetrics?: boolean;
}

const collect = (v: string, acc: string[]): string[] => [...acc, v];

export function register(program: Command): void {
  const cmd = addLoadFlags(
    program
      .command('bench')
      .argument(
        '[url]',
        'target URL; ranges expand: /chunks/{0..63}. Omitted: start the embedded fixture server',
      ),
  )
    .option('--samples <file>', 'write one NDJSON line per request')
    .option(
      '--json <file>',
      'write the result (versioned JSON) to this file; - for stdout (the table goes to stderr)',
    )
    .option('-q, --quiet', 'print nothing but errors')
    .option('--plain', 'embedded target: use the cleartext listener (h1 / h2c) instead of TLS')
    .option(
      '--server-metrics',
      "read the target's /metrics?format=json before and after (default: embedded only)",
    )
    .option('--no-server-metrics', 'do not read the server metrics');
  addLinkOptions(cmd).action(async (url: string | undefined, flags: BenchFlags & LinkFlags) => {
    const input = toLoadOptions(url, flags);
    // Before any load: a result that cannot be written must not cost a whole run.
    if (flags.json && flags.json !== '-') checkOutputPath(flags.json, '--json', 'file');
    // bench's --rate is requests per second; the link's bit rate is --bandwidth here.
    // `--net`/`--rtt` …: the fixture server runs behind an emulated link (src/load/linked.ts).
    const link = wantsLink({ ...flags, rate: flags.bandwidth }) ? linkOptionsFromFlags(flags) : undefined;
    const run = link
      ? runLoadThroughLink(input, link, {
          onLink: (l) => {
            if (!flags.quiet) process.stderr.write(`h2lab bench: link ${describeLink(l)}\n`);
          },
        })
      : runLoad(input);
    await bench(run, flags);
  });
}

/** The flags of one load run (LoadOptions), shared by `bench` and `plan`. */
export function addLoadFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option('-p, --protocol <name>', 'client strategy')
        .choices(strategyNames())
        .default(DEFAULT_STRATEGY),
    )
    .option(
      '-c, --concurrency <n>',
      `closed loop: requests in flight (default: ${strategyHelp((s) => (s.multiplexed ? [] : [s.name])).join('/')} → --connections, else ${LOAD_DEFAULTS.concurrency})`,
    )
    .option(
      '--connections <n>',
      strategyHelp((s) =>
        s.connections.fixed === undefined
          ? [`${s.name}: ${s.connections.unit}s (default ${s.connections.default})`]
          : [],
      ).join('; '),
    )
    .addOption(new Option('--policy <name>', 'h2-pool session choice').choices(POOL_POLICIES))
    .option('-r, --rate <rps>', 'open loop: requests per second (latency from the intended send time)')
    .addOption(new Option('--arrivals <kind>', 'open loop spacing').choices(['even', 'poisson']))
    .option('-d, --duration <time>', 'measured period, e.g. 10s (default 10s unless --requests)')
    .option('-n, --requests <n>', 'stop after this many measured requests')
    .option('--warmup <time>', 'warm-up excluded from statistics, e.g. 2s')
    .option('--burst <n>', 'burst: n requests at once; reports the time until the last one ends')
    .option('--bursts <n>', 'burst: repeat it n times, each on fresh connections (default 1)')
    .option('--burst-gap <time>', 'burst: pause between bursts (default 100ms)')
    .addOption(
      new Option(
        '--burst-handshakes <when>',
        'burst: open connections inside the timed period (include, default) or before it',
      ).choices(['include', 'exclude']),
    )
    .option('--seed <n>', 'seed for every random choice')
    .option('-m, --method <method>', 'HTTP method')
    .option('-H, --header <name:value>', 'request header (repeatable)', collect, [])
    .option('--urls <file>', 'paths or same-origin URLs, one a line (templates allowed)')
    .addOption(new Option('--pick <how>', 'path choice among several').choices(['sequential', 'random']))
    .option('--body <file>', 'request body from a file')
    .option('--body-size <size>', 'generated request body, e.g. 1KiB')
    .addOption(
      new Option(
        '--window <preset>',
        'HTTP/2 flow-control windows: browser (Chromium: 6 MiB stream, 15 MiB connection; default), node (64 KiB), max (2^31-1)',
      ).choices(WINDOW_PRESETS),
    )
    .addOption(
      new Option('--h2-client <impl>', "HTTP/2 client: h2lab's own or node:http2 (a second opinion)").choices(
        H2_CLIENTS,
      ),
    )
    .option('--stream-window <size>', 'HTTP/2 stream window (makes --window custom)')
    .option('--connection-window <size>', 'HTTP/2 connection window (makes --window custom)')
    .option('--ca <file>', 'extra CA certificate (PEM) to trust')
    .option('--cert <file>', 'client certificate (PEM) for mutual TLS')
    .option('--key <file>', 'client key (PEM) for mutual TLS')
    .option('-k, --insecure', 'accept any server certificate')
    .option('--timeout <time>', 'per-request timeout (default 30s)')
    .option('--connect-timeout <time>', 'connection setup timeout (default 10s)')
    .option('--idle-timeout <time>', 'close pooled connections idle this long (default never)')
    .option('--max-age <time>', 'retire pooled connections this old (default never)')
    .option('--max-error-rate <fraction>', 'exit 1 when more requests fail, e.g. 1%')
    .option('--workers <n>', 'worker threads generating load (default 1)');
}

/** Help words from the registered strategies, in their order. */
function strategyHelp(f: (s: Strategy) => string[]): string[] {
  return listStrategies().flatMap(f);
}

/** Maps flags to LoadOptions (human units parsed here; validation in the schema). */
export function toLoadOptions(url: string | undefined, f: BenchFlags): LoadOptionsInput {
  const o: LoadOptionsInput = {};
  if (url !== undefined) o.url = url;
  if (f.protocol) o.protocol = f.protocol as LoadOptionsInput['protocol'];
  if (f.concurrency) o.concurrency = parseInteger(f.concurrency, '--concurrency', 1);
  if (f.connections) o.connections = parseInteger(f.connections, '--connections', 1);
  if (f.policy) o.policy = f.policy as LoadOptionsInput['policy'];
  if (f.rate) {
    const r = Number(f.rate);
    if (!(r > 0) || !Number.isFinite(r))
      throw new H2labError(
        'H2LAB_ERR_INVALID_OPTION',
        `--rate ${JSON.stringify(f.rate)} is not valid: use requests per second above 0, e.g. 500`,
        { option: '--rate', value: f.rate },
      );
    o.rateRps = r;
  }
  if (f.arrivals) o.arrivals = f.arrivals as 'even' | 'poisson';
  if (f.duration) o.durationMs = parseDurationMs(f.duration, '--duration', 's');
  if (f.requests) o.requests = parseInteger(f.requests, '--requests', 1);
  if (f.warmup) o.warmupMs = parseDurationMs(f.warmup, '--warmup', 's');
  if (f.burst) o.burst = parseInteger(f.burst, '--burst', 1, 100_000);
  if (f.bursts) o.bursts = parseInteger(f.bursts, '--bursts', 1, 1000);
  if (f.burstGap) o.burstGapMs = parseDurationMs(f.burstGap, '--burst-gap', 's');
  if (f.burstHandshakes) o.burstHandshakes = f.burstHandshakes as 'include' | 'exclude';
  if (f.seed) o.seed = parseInteger(f.seed, '--seed');
  if (f.method) o.method = f.method.toUpperCase();
  if (f.header.length > 0) {
    const headers: Record<string, string> = {};
    for (const h of f.header) {
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
    o.headers = headers;
  }
  if (f.urls) {
    o.paths = readOptionText(f.urls, '--urls', { kind: 'urls' })
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.length > 0 && !l.startsWith('#'));
  }
  if (f.pick) o.pick = f.pick as 'sequential' | 'random';
  if (f.body) o.bodyFile = f.body;
  if (f.bodySize) o.bodySizeBytes = parseBytes(f.bodySize, '--body-size', INPUT_FILE_CAPS.body);
  if (f.window) o.window = f.window as LoadOptionsInput['window'];
  if (f.h2Client) o.h2Client = f.h2Client as LoadOptionsInput['h2Client'];
  if (f.streamWindow) o.streamWindowBytes = parseBytes(f.streamWindow, '--stream-window');
  if (f.connectionWindow) o.connectionWindowBytes = parseBytes(f.connectionWindow, '--connection-window');
  if (f.ca) o.caFile = f.ca;
  if (f.cert) o.certFile = f.cert;
  if (f.key) o.keyFile = f.key;
  if (f.insecure) o.insecure = true;
  if (f.timeout) o.timeoutMs = parseDurationMs(f.timeout, '--timeout', 's');
  if (f.connectTimeout) o.connectTimeoutMs = parseDurationMs(f.connectTimeout, '--connect-timeout', 's');
  if (f.idleTimeout) o.idleTimeoutMs = parseDurationMs(f.idleTimeout, '--idle-timeout', 's');
  if (f.maxAge) o.maxAgeMs = parseDurationMs(f.maxAge, '--max-age', 's');
  if (f.maxErrorRate) o.maxErrorRate = parseFraction(f.maxErrorRate, '--max-error-rate');
  if (f.workers) o.workers = parseInteger(f.workers, '--workers', 1, 256);
  if (f.samples) o.samplesFile = f.samples;
  if (f.plain) o.embeddedListener = 'plain';
  if (f.serverMetrics !== undefined) o.serverMetrics = f.serverMetrics;
  return o;
}

async function bench(run: LoadRun, f: BenchFlags): Promise<void> {
  const tty = process.stderr.isTTY === true;
  if (!f.quiet) {
    run.events.on('progress', (p: LoadProgress) => {
      const line = `${(p.elapsedMs / 1000).toFixed(1)}s  ${p.completed} done  ${p.inFlight} in flight  ${p.rps.toFixed(0)} req/s`;
      process.stderr.write(tty ? `\r\x1b[K${line}` : `${line}\n`);
    });
  }
  const onSignal = (): void => run.stop();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const result = await run.done;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  if (!f.quiet && tty) process.stderr.write('\r\x1b[K');
  const json = `${JSON.stringify(result, null, 2)}\n`;
  const toStdout = f.json === '-';
  // The table first, so that it is on the screen whatever happens to the file.
  if (!f.quiet) {
    const out = toStdout ? process.stderr : process.stdout;
    out.write(`${renderRunText(result, { width: outputWidth(out) })}\n`);
  }
  if (toStdout) process.stdout.write(json);
  else if (f.json) {
    const w = writeWithFallback(f.json, json, 'h2lab-result');
    if (w.fallback) {
      exitWithError(
        new H2labError(
          'H2LAB_ERR_OUTPUT',
          `--json ${f.json}: writing the result failed (${w.reason}); it was written to ${w.path} instead`,
          { option: '--json', path: f.json, fallback: w.path, reason: w.reason },
        ),
      );
    }
  }
  if (result.error) {
    const code = result.error.code as ErrorCode;
    const err = new H2labError(
      code in ERROR_CODES ? code : 'H2LAB_ERR_INTERNAL',
      result.error.message,
      result.error.details ?? {},
    );
    exitWithError(err);
  }
}

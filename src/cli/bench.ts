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
  invalidOption,
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
import {
  DEFAULT_STRATEGY,
  H2_CLIENTS,
  listStrategies,
  POOL_POLICIES,
  type Strategy,
  strategyNames,
  WINDOW_PRESETS,
} from '../transport/index.ts';
import {
  addRequestFlags,
  parseRate,
  type RequestFlags,
  rateOption,
  requestOptionsFromFlags,
} from './load-flags.ts';
import { describeLink } from './net.ts';
import { addLinkOptions, type LinkFlags, linkOptionsFromFlags, wantsLink } from './net-options.ts';
import { exitWithError, outputWidth } from './output.ts';
import { addConfigFlag, flagsWithConfig } from './schema-flags.ts';

export interface BenchFlags extends RequestFlags {
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
  urls?: string;
  pick?: string;
  bodySize?: string;
  window?: string;
  h2Client?: string;
  streamWindow?: string;
  connectionWindow?: string;
  ca?: string;
  cert?: string;
  key?: string;
  insecure?: boolean;
  idleTimeout?: string;
  giveUp?: string;
  maxAge?: string;
  maxErrorRate?: string;
  workers?: string;
  samples?: string;
  json?: string;
  csv?: string;
  quiet?: boolean;
  plain?: boolean;
  serverMetrics?: boolean;
}

export function register(program: Command): void {
  const cmd = addLoadFlags(
    program
      .command('bench')
      .argument(
        '[url]',
        'target URL; ranges expand: /chunks/{0..63}. Omitted: start the embedded fixture server',
      ),
  )
    .option('--samples <file>', 'write one record per request: NDJSON, or CSV when the name ends in .csv')
    .option(
      '--json <file>',
      'write the result (versioned JSON) to this file; - for stdout (the table goes to stderr)',
    )
    .option('--csv <file>', 'write the run as one CSV summary row (per request: --samples); - for stdout')
    .option('-q, --quiet', 'print nothing but errors')
    .option('--plain', 'embedded target: use the cleartext listener (h1 / h2c) instead of TLS')
    .option(
      '--server-metrics',
      "read the target's /metrics?format=json before and after (default: embedded only)",
    )
    .option('--no-server-metrics', 'do not read the server metrics');
  addConfigFlag(addLinkOptions(cmd)).action(async (url: string | undefined, _f: unknown, self: Command) => {
    const flags = flagsWithConfig<BenchFlags & LinkFlags>(self);
    const input = toLoadOptions(url, flags);
    // Before any load: a result that cannot be written must not cost a whole run.
    if (flags.json === '-' && flags.csv === '-')
      throw invalidOption('--csv', '-', '--json - already writes to stdout: give --csv a file');
    if (flags.json && flags.json !== '-') checkOutputPath(flags.json, '--json', 'file');
    if (flags.csv && flags.csv !== '-') checkOutputPath(flags.csv, '--csv', 'file');
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
  return addRequestFlags(cmd)
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
    .addOption(rateOption(false))
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
    .option('--urls <file>', 'paths or same-origin URLs, one a line (templates allowed)')
    .addOption(new Option('--pick <how>', 'path choice among several').choices(['sequential', 'random']))
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
    .option('--idle-timeout <time>', 'close pooled connections idle this long (default never)')
    .option(
      '--give-up <time>',
      'end the run once every connection attempt has failed this long; shorter outages are recorded and the run goes on (default 5s)',
    )
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
  const o: LoadOptionsInput = { ...requestOptionsFromFlags(f) };
  if (url !== undefined) o.url = url;
  if (f.protocol) o.protocol = f.protocol as LoadOptionsInput['protocol'];
  if (f.concurrency) o.concurrency = parseInteger(f.concurrency, '--concurrency', 1);
  if (f.connections) o.connections = parseInteger(f.connections, '--connections', 1);
  if (f.policy) o.policy = f.policy as LoadOptionsInput['policy'];
  if (f.rate) o.rateRps = parseRate(f.rate);
  if (f.arrivals) o.arrivals = f.arrivals as 'even' | 'poisson';
  if (f.duration) o.durationMs = parseDurationMs(f.duration, '--duration', 's');
  if (f.requests) o.requests = parseInteger(f.requests, '--requests', 1);
  if (f.warmup) o.warmupMs = parseDurationMs(f.warmup, '--warmup', 's');
  if (f.burst) o.burst = parseInteger(f.burst, '--burst', 1, 100_000);
  if (f.bursts) o.bursts = parseInteger(f.bursts, '--bursts', 1, 1000);
  if (f.burstGap) o.burstGapMs = parseDurationMs(f.burstGap, '--burst-gap', 's');
  if (f.burstHandshakes) o.burstHandshakes = f.burstHandshakes as 'include' | 'exclude';
  if (f.seed) o.seed = parseInteger(f.seed, '--seed');
  if (f.urls) {
    o.paths = readOptionText(f.urls, '--urls', { kind: 'urls' })
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.length > 0 && !l.startsWith('#'));
  }
  if (f.pick) o.pick = f.pick as 'sequential' | 'random';
  if (f.bodySize) o.bodySizeBytes = parseBytes(f.bodySize, '--body-size', INPUT_FILE_CAPS.body);
  if (f.window) o.window = f.window as LoadOptionsInput['window'];
  if (f.h2Client) o.h2Client = f.h2Client as LoadOptionsInput['h2Client'];
  if (f.streamWindow) o.streamWindowBytes = parseBytes(f.streamWindow, '--stream-window');
  if (f.connectionWindow) o.connectionWindowBytes = parseBytes(f.connectionWindow, '--connection-window');
  if (f.ca) o.ca = f.ca;
  if (f.cert) o.cert = f.cert;
  if (f.key) o.key = f.key;
  if (f.insecure) o.insecure = true;
  if (f.idleTimeout) o.idleTimeoutMs = parseDurationMs(f.idleTimeout, '--idle-timeout', 's');
  if (f.giveUp) {
    const ms = parseDurationMs(f.giveUp, '--give-up', 's');
    if (ms < 100 || ms > 3_600_000)
      throw invalidOption('--give-up', f.giveUp, 'use a duration from 100ms to 1h, e.g. 30s');
    o.reconnectGiveUpMs = ms;
  }
  if (f.maxAge) o.maxAgeMs = parseDurationMs(f.maxAge, '--max-age', 's');
  if (f.maxErrorRate) o.maxErrorRate = parseFraction(f.maxErrorRate, '--max-error-rate');
  if (f.workers) o.workers = parseInteger(f.workers, '--workers', 1, 256);
  if (f.samples) o.samplesFile = f.samples;
  if (f.plain) o.embeddedListener = 'plain';
  if (f.serverMetrics !== undefined) o.serverMetrics = f.serverMetrics;
  return o;
}

async function bench(run: LoadRun, f: BenchFlags): Promise<void> {
  // The run may fail while the renderers load (a dead target behind a link fails in milliseconds):
  // its rejection is handled here and rethrown by the await below, not left unhandled (a crash).
  run.done.catch(() => {});
  // The renderers load with a run, not with the command's flags (`bench --help`, issue 29).
  const { renderRunText, runCsv } = await import('../report/index.ts');
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
  const toStdout = f.json === '-' || f.csv === '-';
  // The table first, so that it is on the screen whatever happens to the file.
  if (!f.quiet) {
    const out = toStdout ? process.stderr : process.stdout;
    out.write(`${renderRunText(result, { width: outputWidth(out) })}\n`);
  }
  if (f.csv === '-') process.stdout.write(runCsv(result));
  if (f.json === '-') process.stdout.write(json);
  // Every file is written before any failure is told, so one bad path never costs the other output.
  const failures: H2labError[] = [];
  for (const [option, path, data, ext] of [
    ['--json', f.json, json, 'json'],
    ['--csv', f.csv, () => runCsv(result), 'csv'],
  ] as const) {
    if (!path || path === '-') continue;
    const w = writeWithFallback(path, typeof data === 'string' ? data : data(), 'h2lab-result', ext);
    if (w.fallback) {
      failures.push(
        new H2labError(
          'H2LAB_ERR_OUTPUT',
          `${option} ${path}: writing the result failed (${w.reason}); it was written to ${w.path} instead`,
          { option, path, fallback: w.path, reason: w.reason },
        ),
      );
    }
  }
  if (failures[0]) exitWithError(failures[0]);
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

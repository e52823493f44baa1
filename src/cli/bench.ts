/**
 * `h2lab bench [URL]`: one load run. Flags map onto LoadOptions (src/load/options.ts, the source of
 * truth for defaults and validation); this file parses, shows progress and writes. `register()` loads
 * only the flags' declarations (src/load/meta.ts); the engine loads when the command runs.
 */
import type { Command } from 'commander';
import {
  checkOutputPath,
  ERROR_CODES,
  type ErrorCode,
  H2labError,
  invalidOption,
  writeWithFallback,
} from '../core/index.ts';
import type { LoadOptionsInput, LoadProgress, LoadRun } from '../load/index.ts';
import { LOAD_FLAGS } from '../load/meta.ts';
import { CSV_FLAG, JSON_FLAG, QUIET_FLAG } from './common-flags.ts';
import { addFlags, optionOf, valuesOf } from './flags.ts';
import {
  addLinkOptions,
  CAPTURE_FLAGS,
  captureRequestFromFlags,
  type LinkFlags,
  linkOptionsFromFlags,
  wantsLink,
} from './net-options.ts';
import { exitWithError, outputWidth } from './output.ts';
import { addConfigFlag, flagsWithConfig } from './schema-flags.ts';

export interface BenchFlags {
  method?: string;
  header?: string[];
  body?: string;
  timeout?: string;
  connectTimeout?: string;
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
  quicRetry?: boolean;
  idleTimeout?: string;
  giveUp?: string;
  maxAge?: string;
  maxErrorRate?: string;
  workers?: string;
  samples?: string;
  json?: string;
  csv?: string;
  report?: string;
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
    .addOption(optionOf(CAPTURE_FLAGS[0]))
    .addOption(optionOf(CAPTURE_FLAGS[1]))
    .addOption(optionOf(CAPTURE_FLAGS[2]))
    .addOption(optionOf(JSON_FLAG))
    .addOption(
      optionOf({
        of: CSV_FLAG,
        description: 'write the run as one CSV summary row (per request: --samples); - for stdout',
      }),
    )
    .option(
      '--report <dir>',
      'write report.md and report.html of the run here (with --capture: a time-sequence graph per connection)',
    )
    .addOption(optionOf(QUIET_FLAG))
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
    if (flags.report !== undefined) checkOutputPath(flags.report, '--report', 'dir');
    // bench's --rate is requests per second; the link's bit rate is --bandwidth here.
    // `--net`/`--rtt` …: the fixture server runs behind an emulated link (src/load/linked.ts).
    const link = wantsLink({ ...flags, rate: flags.bandwidth }) ? linkOptionsFromFlags(flags) : undefined;
    const capture = captureRequestFromFlags(flags, link !== undefined);
    // The engine loads with a run, not with the command's flags (`bench --help`).
    const { runLoad, runLoadThroughLink } = await import('../load/index.ts');
    const { linkSummary } = await import('./net.ts');
    const run = link
      ? runLoadThroughLink(input, link, {
          onLink: (l) => {
            if (!flags.quiet) process.stderr.write(`h2lab bench: link ${linkSummary(l)}\n`);
          },
          ...(capture ? { capture } : {}),
        })
      : runLoad(input);
    await bench(run, flags);
  });
}

/** The flags of one load run (LoadOptions), shared by `bench` and `plan`: declared in src/load. */
export function addLoadFlags(cmd: Command): Command {
  return addFlags(cmd, LOAD_FLAGS);
}

/** Maps flags to LoadOptions by the declarations' keys (units parsed there; validation in the schema). */
export function toLoadOptions(url: string | undefined, f: BenchFlags): LoadOptionsInput {
  const o = valuesOf(f as Record<string, unknown>, LOAD_FLAGS) as LoadOptionsInput;
  if (url !== undefined) o.url = url;
  if (f.samples) o.samplesFile = f.samples;
  if (f.plain) o.embeddedListener = 'plain';
  if (f.serverMetrics !== undefined) o.serverMetrics = f.serverMetrics;
  return o;
}

async function bench(run: LoadRun, f: BenchFlags): Promise<void> {
  // The run may fail while the renderers load (a dead target behind a link fails in milliseconds):
  // its rejection is handled here and rethrown by the await below, not left unhandled (a crash).
  run.done.catch(() => {});
  // The renderers load with a run, not with the command's flags (`bench --help`).
  const { loadHtmlAssets, renderRunText, runCsv } = await import('../report/index.ts');
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
  if (f.report !== undefined) {
    const { writeRunReports } = await import('./report-files.ts');
    try {
      const files = writeRunReports(f.report, result, loadHtmlAssets());
      if (!f.quiet) process.stderr.write(`wrote ${files.md} and ${files.html}\n`);
    } catch (err) {
      failures.push(
        new H2labError(
          'H2LAB_ERR_OUTPUT',
          `--report ${f.report}: writing the report failed (${(err as NodeJS.ErrnoException).code ?? String(err)}); the run's JSON (--json) renders it again with h2lab report`,
          { option: '--report', path: f.report, reason: String(err) },
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

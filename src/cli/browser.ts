/**
 * `h2lab browser [ORIGIN…]`: real Chromium over CDP. Maps flags onto {@link BrowserOptionsSchema},
 * shows progress on stderr, prints the table on stdout, writes `--json` and `--out`.
 */
import { join } from 'node:path';
import type { Command } from 'commander';
import {
  CHROMIUM_FLAG,
  MAX_STREAMS_FLAG,
  measureBrowser,
  POOL_FLAG,
  TRUST_CERT_FLAG,
} from '../browser/index.ts';
import { RUNS_FLAG } from '../compare/index.ts';
import {
  checkOutputPath,
  H2labError,
  KEYLOG_FLAG,
  parseDurationMs,
  parseInteger,
  readFlag,
  writeFileAtomic,
} from '../core/index.ts';
import { type BrowserOptionsInput, DEFAULT_CHROMIUM_PATH, DEFAULT_PATH_TEMPLATE } from '../model/index.ts';
import { renderBrowserHtml, renderBrowserText } from '../report/index.ts';
import { METRICS_URL_FLAG } from '../server/index.ts';
import { JSON_FLAG, OUT_FLAG, QUIET_FLAG } from './common-flags.ts';
import { optionOf } from './flags.ts';
import { exitWithError, outputWidth, untilDoneOrStopped } from './output.ts';

/** browser's `--runs`: bursts per target, the first discarded; each is a Chromium burst of --count. */
const BROWSER_RUNS = {
  of: RUNS_FLAG,
  min: 2,
  max: 200,
  why: 'the first burst is discarded; each is a burst of --count requests in Chromium',
  description: 'bursts per target, alternating targets; the first is discarded',
  defaultValue: '6',
} as const;

interface Flags {
  chromium: string;
  keylog?: string;
  count: string;
  runs: string;
  pathTemplate: string;
  cancelAfter: string;
  cancelRuns: string;
  burst: boolean;
  cancel: boolean;
  control: boolean;
  h3?: boolean;
  trustCert: string[];
  trustSpki: string[];
  metricsUrl?: string;
  pool: string;
  tileMs: string;
  maxStreams: string;
  runTimeout: string;
  json?: string;
  out?: string;
  quiet?: boolean;
}

const collect = (v: string, prev: string[]) => [...prev, v];

/** argv flags → library options (units parsed here, validated by the schema). */
function browserOptionsFromFlags(origins: string[], f: Flags): BrowserOptionsInput {
  const opts: BrowserOptionsInput = {
    origins,
    chromiumPath: f.chromium,
    ...(f.keylog ? { keyLogFile: f.keylog } : {}),
    count: parseInteger(f.count, '--count', 1, 2000),
    runs: readFlag(BROWSER_RUNS, f.runs) as number,
    pathTemplate: f.pathTemplate,
    cancelAfterMs: parseDurationMs(f.cancelAfter, '--cancel-after'),
    cancelRuns: parseInteger(f.cancelRuns, '--cancel-runs', 1, 50),
    burst: f.burst,
    cancel: f.cancel,
    control: f.control,
    h3: f.h3 === true,
    trustCert: f.trustCert,
    trustSpki: f.trustSpki,
    fixture: {
      poolSize: readFlag(POOL_FLAG, f.pool) as number,
      tileMs: parseDurationMs(f.tileMs, '--tile-ms'),
      maxConcurrentStreams: readFlag(MAX_STREAMS_FLAG, f.maxStreams) as number,
    },
    runTimeoutMs: parseDurationMs(f.runTimeout, '--run-timeout'),
  };
  if (f.metricsUrl) opts.metricsUrl = f.metricsUrl;
  return opts;
}

export function register(program: Command): void {
  program
    .command('browser')
    .argument('[origins...]', 'origins to measure, e.g. http://127.0.0.1:8080 https://127.0.0.1:8443')
    .addOption(optionOf({ of: CHROMIUM_FLAG, defaultValue: DEFAULT_CHROMIUM_PATH }))
    .option('--count <n>', 'requests fired at once', '121')
    .addOption(
      optionOf({
        of: KEYLOG_FLAG,
        description: "Chromium's TLS key log (its SSLKEYLOGFILE), to decrypt a capture",
      }),
    )
    .addOption(optionOf(BROWSER_RUNS))
    .option(
      '--path-template <t>',
      'request path; {x} {y} walk a square grid, {i} is the index',
      DEFAULT_PATH_TEMPLATE,
    )
    .option('--cancel-after <dur>', 'the cancellation experiment aborts its requests after this long', '60ms')
    .option('--cancel-runs <n>', 'repetitions of every cancellation leg (medians are reported)', '3')
    .option('--no-burst', 'skip the burst experiment')
    .option('--no-cancel', 'skip the cancellation experiment')
    .option('--no-control', 'skip HTTP/1.1 over TLS (a second Chromium with HTTP/2 disabled)')
    .option(
      '--h3',
      'also HTTP/3 for every https:// origin (a Chromium forcing QUIC to it; the fixture serves h3)',
    )
    .addOption(optionOf(TRUST_CERT_FLAG))
    .option('--trust-spki <base64>', 'SPKI pin (base64 SHA-256) to trust; repeatable', collect, [])
    .addOption(
      optionOf({
        of: METRICS_URL_FLAG,
        description: "the target's h2lab /metrics (the server's view: cancellations, pool queue)",
        defaultText: 'not read',
      }),
    )
    .addOption(optionOf({ of: POOL_FLAG, defaultValue: '4' }))
    .option('--tile-ms <dur>', 'fixture: time one tile holds a pool worker', '20ms')
    .addOption(
      optionOf({
        of: MAX_STREAMS_FLAG,
        description: 'fixture: SETTINGS_MAX_CONCURRENT_STREAMS (Chrome stops at 100 without one)',
        defaultValue: '256',
      }),
    )
    .option('--run-timeout <dur>', 'bound on one burst or cancellation run', '60s')
    .addOption(optionOf({ of: JSON_FLAG, description: "write the result as JSON ('-' for stdout)" }))
    .addOption(
      optionOf({ of: OUT_FLAG, arg: 'dir', description: 'write report.html and result.json into DIR' }),
    )
    .addOption(optionOf({ of: QUIET_FLAG, description: 'no progress on stderr' }))
    .action(async (origins: string[], f: Flags) => {
      const opts = browserOptionsFromFlags(origins, f);
      // Before Chromium starts: the measurement takes minutes, its output must have somewhere to go.
      if (f.json && f.json !== '-') checkOutputPath(f.json, '--json', 'file');
      if (f.out) checkOutputPath(f.out, '--out', 'dir');
      const ac = new AbortController();
      const result = await untilDoneOrStopped(
        measureBrowser(opts, {
          signal: ac.signal,
          onProgress: (e) => {
            if (f.quiet) return;
            const step = e.step !== undefined && e.of ? ` [${e.step + 1}/${e.of}]` : '';
            process.stderr.write(`h2lab browser:${step} ${e.message}\n`);
          },
        }),
        () => ac.abort(),
        (m) => process.stderr.write(`${m}\n`),
        'h2lab browser: stopping after the run in progress; finished runs are kept',
      );
      const json = `${JSON.stringify(result, null, 2)}\n`;
      if (f.json === '-') process.stdout.write(json);
      else {
        process.stdout.write(renderBrowserText(result, { width: outputWidth(process.stdout) }));
        if (f.json) writeFileAtomic(f.json, json);
      }
      if (f.out) {
        writeFileAtomic(join(f.out, 'result.json'), json);
        writeFileAtomic(join(f.out, 'report.html'), renderBrowserHtml(result));
        if (!f.quiet) process.stderr.write(`h2lab browser: wrote ${join(f.out, 'report.html')}\n`);
      }
      if (result.error) {
        exitWithError(
          new H2labError(result.error.code as never, result.error.message, result.error.details ?? {}),
        );
      }
    });
}

/**
 * `h2lab page record URL -o site.har` and `h2lab page replay site.har`: flags → options, progress on
 * stderr, the Markdown report on stdout, files written (results.json, report.md, report.html).
 */
import { join } from 'node:path';
import type { Command } from 'commander';
import { CHROMIUM_FLAG, MAX_STREAMS_FLAG, TRUST_CERT_FLAG } from '../browser/index.ts';
import { RUNS_FLAG } from '../compare/index.ts';
import {
  checkOutputPath,
  H2labError,
  INSECURE_FLAG,
  KEYLOG_FLAG,
  parseList,
  readFlag,
  TIMEOUT_FLAG,
  writeFileAtomic,
} from '../core/index.ts';
import {
  DEFAULT_CHROMIUM_PATH,
  type PageReplayOptionsInput,
  type ReplayProtocol,
  replayProtocolSchema,
} from '../model/index.ts';
import { checkNetAvailable } from '../net/index.ts';
import { HAR_MAX_BODY_FLAG, HAR_MAX_TOTAL_FLAG, recordPage, replayPage } from '../page/index.ts';
import { loadHtmlAssets, renderPageHtml, renderPageMarkdown } from '../report/index.ts';
import { parseSiteSpec } from '../server/index.ts';
import { JSON_FLAG, OUT_FLAG, QUIET_FLAG } from './common-flags.ts';
import { optionOf } from './flags.ts';
import {
  addLinkOptions,
  CAPTURE_FLAGS,
  captureRequestFromFlags,
  type LinkFlags,
  linkOptionsFromFlags,
  wantsLink,
} from './net-options.ts';
import { exitWithError, untilDoneOrStopped } from './output.ts';

/** page replay's `--runs`: kept loads per setting (a discarded round is made first, beyond them). */
const PAGE_RUNS = {
  of: RUNS_FLAG,
  max: 100,
  why: 'each run is a page load in Chromium per setting',
  description: 'kept loads per setting (one more round is made first and discarded)',
  defaultValue: '5',
} as const;

interface RecordFlags {
  output: string;
  generate?: string;
  chromium: string;
  timeout: string;
  trustCert: string[];
  insecure?: boolean;
  quiet?: boolean;
}

interface ReplayFlags extends LinkFlags {
  keylog?: string;
  protocols: string;
  h2Origins?: string;
  runs: string;
  chromium: string;
  timeout: string;
  maxStreams: string;
  harMaxBody: string;
  harMaxTotal: string;
  out?: string;
  json?: string;
  quiet?: boolean;
}

/** The flag's short form of a setting, `h` and HTTP's major version, as the wire protocol it names. */
const BY_MAJOR_VERSION: Record<string, ReplayProtocol> = { 1: 'http/1.1', 2: 'h2', 3: 'h3' };

/**
 * `--protocols h1,h2,h3` → the settings, checked: `hN` is HTTP/N; the wire protocols' own ids
 * (`http/1.1`, `h2`, `h3`, what the result names the settings by) are taken as well.
 */
export function parseProtocols(text: string): ReplayProtocol[] {
  const list = parseList(text).map((p) => BY_MAJOR_VERSION[/^h([1-9])$/.exec(p)?.[1] ?? ''] ?? p);
  const bad = list.find((p) => !replayProtocolSchema.safeParse(p).success);
  if (bad !== undefined || list.length === 0)
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `--protocols ${JSON.stringify(text)} is not valid: name settings from h1, h2, h3 (e.g. h1,h2,h3)`,
      { option: '--protocols', value: text },
    );
  return [...new Set(list)] as ReplayProtocol[];
}

function linkLabel(f: ReplayFlags): string {
  const parts = [
    f.net && `--net ${f.net}`,
    f.rtt && `--rtt ${f.rtt}`,
    f.bandwidth && `--bandwidth ${f.bandwidth}`,
    f.loss && `--loss ${f.loss}`,
  ].filter(Boolean);
  return parts.length ? parts.join(' ') : 'loopback';
}

export function register(program: Command): void {
  const page = program
    .command('page')
    .description('Record a page as a HAR and replay it under HTTP/1.1, h2 and h3 through the same link');
  page
    .command('record')
    .description(
      'Load URL in Chromium over CDP and save a HAR 1.2 with bodies, initiators, priorities and timings',
    )
    .argument('[url]', 'the page, e.g. https://www.example.com/ (omit with --generate)')
    .requiredOption('-o, --output <file>', 'the HAR to write')
    .option(
      '--generate <spec>',
      'record a page h2lab generates and serves itself: origins=N,resources=N,think=MS,asset-think=MS,image=BYTES (or "default": 3 origins, 80 resources)',
    )
    .addOption(optionOf({ of: CHROMIUM_FLAG, defaultValue: DEFAULT_CHROMIUM_PATH }))
    .addOption(optionOf({ of: TIMEOUT_FLAG, description: 'bound on the page load', defaultValue: '60s' }))
    .addOption(optionOf(TRUST_CERT_FLAG))
    .addOption(
      optionOf({
        of: INSECURE_FLAG,
        description:
          "accept the certificate the page's origin presents, whoever signed it (pinned for that origin only)",
      }),
    )
    .addOption(optionOf({ of: QUIET_FLAG, description: 'no progress on stderr' }))
    .action(async (url: string | undefined, f: RecordFlags) => {
      const generate = f.generate !== undefined ? parseSiteSpec(f.generate) : undefined;
      if (!generate && !url)
        throw new H2labError(
          'H2LAB_ERR_USAGE',
          'page record needs a URL, or --generate SPEC to record a generated page',
          {
            option: 'URL',
          },
        );
      checkOutputPath(f.output, '--output', 'file');
      const rec = await recordPage({
        ...(url && !generate ? { url } : {}),
        ...(generate ? { generate } : {}),
        chromiumPath: f.chromium,
        timeoutMs: readFlag(TIMEOUT_FLAG, f.timeout) as number,
        trustCert: f.trustCert,
        ...(f.insecure ? { insecure: true } : {}),
      });
      writeFileAtomic(f.output, `${JSON.stringify(rec.har)}\n`);
      for (const w of rec.warnings) process.stderr.write(`h2lab page record: warning: ${w}\n`);
      process.stdout.write(
        `recorded ${rec.url}: ${rec.requests} requests on ${rec.origins.length} origins (${rec.origins.join(', ')}) → ${f.output}\n`,
      );
    });
  const replay = page
    .command('replay')
    .description(
      'Serve a HAR from one listener per origin and load it in Chromium under each protocol, alternating, through the same link; say why it was faster or slower',
    )
    .argument('<har>', 'the HAR (from page record, DevTools or Playwright)')
    .option('--protocols <list>', 'settings to load, alternating: h1, h2, h3', 'h1,h2')
    .option(
      '--h2-origins <hosts>',
      'only these origins (comma list of hostnames) get h2/h3 in their setting; the rest stay HTTP/1.1 (dilution)',
    )
    .addOption(optionOf(PAGE_RUNS))
    .addOption(optionOf({ of: CHROMIUM_FLAG, defaultValue: DEFAULT_CHROMIUM_PATH }))
    .addOption(
      optionOf({
        of: KEYLOG_FLAG,
        description: "Chromium's TLS key log (its SSLKEYLOGFILE), to decrypt a capture",
      }),
    )
    .addOption(optionOf(CAPTURE_FLAGS[0]))
    .addOption(optionOf(CAPTURE_FLAGS[1]))
    .addOption(optionOf(CAPTURE_FLAGS[2]))
    .addOption(optionOf({ of: TIMEOUT_FLAG, description: 'bound on one page load', defaultValue: '60s' }))
    .addOption(
      optionOf({
        of: MAX_STREAMS_FLAG,
        max: 10_000,
        why: 'nginx-like origins; the replay opens as many streams as the page asks',
        description: 'concurrent streams each replayed origin allows (nginx default 128)',
        defaultValue: '128',
      }),
    )
    .addOption(optionOf(HAR_MAX_BODY_FLAG))
    .addOption(optionOf(HAR_MAX_TOTAL_FLAG))
    .addOption(
      optionOf({
        of: OUT_FLAG,
        arg: 'dir',
        description: 'write results.json, report.md and report.html into DIR',
      }),
    )
    .addOption(optionOf({ of: JSON_FLAG, description: "write the result as JSON ('-' for stdout)" }))
    .addOption(optionOf({ of: QUIET_FLAG, description: 'no progress on stderr' }));
  addLinkOptions(replay).action(async (har: string, f: ReplayFlags) => {
    const opts: PageReplayOptionsInput = {
      har,
      protocols: parseProtocols(f.protocols),
      runs: readFlag(PAGE_RUNS, f.runs) as number,
      chromiumPath: f.chromium,
      ...(f.keylog ? { keyLogFile: f.keylog } : {}),
      loadTimeoutMs: readFlag(TIMEOUT_FLAG, f.timeout) as number,
      maxConcurrentStreams: readFlag({ of: MAX_STREAMS_FLAG, max: 10_000 }, f.maxStreams) as number,
      harMaxBodyBytes: readFlag(HAR_MAX_BODY_FLAG, f.harMaxBody) as number,
      harMaxTotalBytes: readFlag(HAR_MAX_TOTAL_FLAG, f.harMaxTotal) as number,
      linkLabel: linkLabel(f),
    };
    if (f.h2Origins !== undefined) opts.h2Origins = parseList(f.h2Origins);
    const link = wantsLink({ ...f, rate: f.bandwidth }) ? linkOptionsFromFlags(f) : undefined;
    if (link) checkNetAvailable(link.backend ?? 'auto');
    if (f.out) checkOutputPath(f.out, '--out', 'dir');
    if (f.json && f.json !== '-') checkOutputPath(f.json, '--json', 'file');
    const capture = captureRequestFromFlags(f, link !== undefined);
    const ac = new AbortController();
    const result = await untilDoneOrStopped(
      replayPage(opts, {
        ...(link ? { link } : {}),
        ...(capture ? { capture } : {}),
        signal: ac.signal,
        onProgress: (m, step, of) => {
          if (!f.quiet) process.stderr.write(`h2lab page replay: [${step + 1}/${of}] ${m}\n`);
        },
      }),
      () => ac.abort(),
      (m) => process.stderr.write(`${m}\n`),
      'h2lab page replay: stopping after the load in progress; finished loads are kept',
    );
    const json = `${JSON.stringify(result, null, 2)}\n`;
    const md = renderPageMarkdown(result);
    if (f.json === '-') process.stdout.write(json);
    else {
      process.stdout.write(md);
      if (f.json) writeFileAtomic(f.json, json);
    }
    if (f.out) {
      writeFileAtomic(join(f.out, 'results.json'), json);
      writeFileAtomic(join(f.out, 'report.md'), md);
      writeFileAtomic(join(f.out, 'report.html'), renderPageHtml(result, loadHtmlAssets()));
      if (!f.quiet) process.stderr.write(`h2lab page replay: wrote ${join(f.out, 'report.html')}\n`);
    }
    if (result.error)
      exitWithError(
        new H2labError(result.error.code as never, result.error.message, result.error.details ?? {}),
      );
  });
}

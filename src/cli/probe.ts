/**
 * `h2lab probe URL`: what does this server speak, and how is it configured for HTTP/2?
 * Exit status: 0 probed (and every --expect met), 1 an --expect was not met (the report is still
 * printed), 2 the target could not be probed or the command line is wrong (docs/errors.md).
 */
import type { Command } from 'commander';
import { H2labError } from '../errors.ts';
import {
  EXPECTATIONS,
  PROBE_RESULT_VERSION,
  type ProbeOptionsInput,
  probe,
  renderProbeText,
} from '../probe/index.ts';
import { parseDurationMs, parseList } from '../util/units.ts';
import { exitWithError } from './output.ts';

interface Flags {
  ca?: string;
  cert?: string;
  key?: string;
  insecure?: boolean;
  json?: boolean;
  expect?: string;
  timeout?: string;
  large?: string;
  waitIdle?: string;
}

export function register(program: Command): void {
  program
    .command('probe')
    .description(
      'What a server speaks (HTTP/1.1 keep-alive, h2 by ALPN, h2c, Upgrade), its HTTP/2 SETTINGS, TLS and response behaviour',
    )
    .argument('<url>', 'http:// or https:// URL of the server (the path is the one requested)')
    .option('--ca <file>', 'PEM CA certificate(s) to trust in addition to the system ones')
    .option('--cert <file>', 'PEM client certificate to present (with --key)')
    .option('--key <file>', 'PEM private key of --cert')
    .option('--insecure', 'probe even if the server certificate is not trusted (trust is still reported)')
    .option('--json', 'write the result as JSON (versioned, kind "h2lab.probe") instead of the table')
    .option(
      '--expect <list>',
      'comma-separated gate, e.g. h2,tls1.3,keepalive,no-tls1.2: exit 1 when one is not met',
    )
    .option('--timeout <duration>', 'deadline of each step (connect, handshake, exchange)', '5s')
    .option(
      '--large <path>',
      'time a large response on this path: does it stream or arrive late as if spooled?',
    )
    .option(
      '--wait-idle <duration>',
      'hold idle HTTP/1.1 and HTTP/2 connections up to this long to see when the server closes them',
    )
    .addHelpText(
      'after',
      `\n--expect names (prefix no- to expect the opposite):\n${Object.entries(EXPECTATIONS)
        .map(([name, e]) => `  ${name.padEnd(12)} ${e.describe}`)
        .join(
          '\n',
        )}\n\nExit status: 0 probed (every --expect met), 1 an --expect not met, 2 could not probe (each cause has its code: docs/errors.md).`,
    )
    .action(async (url: string, flags: Flags) => {
      const opts: ProbeOptionsInput = {
        ...(flags.ca ? { caPath: flags.ca } : {}),
        ...(flags.cert ? { certPath: flags.cert } : {}),
        ...(flags.key ? { keyPath: flags.key } : {}),
        insecure: Boolean(flags.insecure),
        timeoutMs: parseDurationMs(flags.timeout ?? '5s', '--timeout'),
        expect: flags.expect ? parseList(flags.expect) : [],
        ...(flags.large ? { largePath: flags.large.startsWith('/') ? flags.large : `/${flags.large}` } : {}),
        ...(flags.waitIdle ? { waitIdleMs: parseDurationMs(flags.waitIdle, '--wait-idle') } : {}),
      };
      if (!flags.json) process.stderr.write(`probing ${url} …\n`);
      let result: Awaited<ReturnType<typeof probe>>;
      try {
        result = await probe(url, opts);
      } catch (err) {
        // With --json a pipeline still gets a JSON document on stdout: the error in place of a result.
        if (flags.json && err instanceof H2labError) {
          process.stdout.write(
            `${JSON.stringify({ kind: 'h2lab.probe', version: PROBE_RESULT_VERSION, url, error: err.toJSON() }, null, 2)}\n`,
          );
        }
        throw err;
      }
      process.stdout.write(flags.json ? `${JSON.stringify(result, null, 2)}\n` : renderProbeText(result));
      const unmet = result.expectations?.unmet ?? [];
      if (unmet.length) {
        exitWithError(
          new H2labError(
            'H2LAB_ERR_PROBE_EXPECT_UNMET',
            `${unmet.length} expectation(s) not met: ${unmet.map((u) => `${u.expectation} (${u.reason})`).join('; ')}`,
            { unmet },
          ),
        );
      }
    });
}

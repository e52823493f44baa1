/**
 * `h2lab probe URL`: what does this server speak, and how is it configured for HTTP/2?
 * Exit status: 0 probed (and every --expect met), 1 an --expect was not met (the report is still
 * printed), 2 the target could not be probed or the command line is wrong (docs/errors.md).
 */
import type { Command } from 'commander';
import { describeOptions, H2labError } from '../core/index.ts';
import { PROBE_RESULT_VERSION } from '../model/index.ts';
import {
  EXPECTATIONS,
  type ProbeOptionsInput,
  ProbeOptionsSchema,
  probe,
  renderProbeText,
} from '../probe/index.ts';
import { exitWithError } from './output.ts';
import { addSchemaFlags, optionsFromFlags } from './schema-flags.ts';

export function register(program: Command): void {
  const meta = describeOptions(ProbeOptionsSchema);
  const cmd = program
    .command('probe')
    .argument('<url>', 'http:// or https:// URL of the server (the path is the one requested)')
    .option('--json', 'write the result as JSON (versioned, kind "h2lab.probe") instead of the table');
  addSchemaFlags(cmd, meta)
    .addHelpText(
      'after',
      `\n--expect names (prefix no- to expect the opposite):\n${Object.entries(EXPECTATIONS)
        .map(([name, e]) => `  ${name.padEnd(12)} ${e.describe}`)
        .join(
          '\n',
        )}\n\nExit status: 0 probed (every --expect met), 1 an --expect not met, 2 could not probe (each cause has its code: docs/errors.md).`,
    )
    .action(async (url: string) => {
      const flags = cmd.opts() as { json?: boolean };
      const opts = optionsFromFlags(cmd, meta) as ProbeOptionsInput;
      if (typeof opts.largePath === 'string' && !opts.largePath.startsWith('/'))
        opts.largePath = `/${opts.largePath}`;
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

/**
 * `h2lab study NAME`: reruns one of the field studies. One subcommand per registered study (its own
 * flags declared by the study), the same output as compare: results.json after every cell (so Ctrl-C
 * or a crash leaves a valid file), report.md and report.html, the tables and the explanation on the
 * terminal. `register()` reads the studies' descriptors only (src/studies/meta.ts); the action loads
 * the study and the run (study-run.ts) when it runs.
 */
import type { Command } from 'commander';
import { H2labError } from '../core/index.ts';
import { SEED_FLAG } from '../load/meta.ts';
import { CAPTURE_ALL_FLAG } from '../net/meta.ts';
import { listStudies, type StudyDescriptor } from '../studies/meta.ts';
import { JSON_FLAG, OUT_FLAG, QUIET_FLAG } from './common-flags.ts';
import { addFlags, optionOf, valuesOf } from './flags.ts';
import { CAPTURE_FLAGS } from './net-options.ts';
import { exitWithError } from './output.ts';

/** The flags every study takes, and its own by their names. */
export interface StudyCommonFlags {
  quick?: boolean;
  out?: string;
  json?: string;
  seed?: string;
  quiet?: boolean;
  captureAll?: boolean;
  [key: string]: unknown;
}

/** The study's own flags → the options it was given (by each use's key). Exported for tests. */
export function studyOptionsFromFlags(
  study: StudyDescriptor,
  flags: Record<string, unknown>,
): Record<string, unknown> {
  return valuesOf(flags, study.flags ?? []);
}

export function register(program: Command): void {
  const cmd = program.command('study');
  const names = listStudies().map((s) => s.name);
  // `h2lab study NAME` with a name no study has: say which names there are.
  cmd.on('command:*', (operands: string[]) => {
    exitWithError(
      new H2labError(
        'H2LAB_ERR_USAGE',
        `unknown study '${operands[0]}': use one of ${names.join(', ')}, e.g. h2lab study ${names[0]} --quick`,
      ),
    );
  });
  for (const study of listStudies()) {
    const sub = cmd
      .command(study.name)
      .description(`${study.title} — reruns ${study.source}`)
      .option('--quick', 'a smaller grid that runs in under 2 minutes (the tests use it); same files')
      .addOption(
        optionOf({
          of: OUT_FLAG,
          arg: 'dir',
          description: 'where results.json, report.md and report.html go',
          defaultText: 'h2lab-study-NAME',
        }),
      )
      .addOption(
        optionOf({
          of: JSON_FLAG,
          description: 'also write results.json here; - for stdout (the tables go to stderr)',
        }),
      )
      .addOption(optionOf(SEED_FLAG))
      .addOption(optionOf({ of: QUIET_FLAG, description: 'no progress, no tables' }));
    addFlags(sub, study.flags ?? []);
    // The linked runs of the study's comparisons, captured as compare captures them.
    addFlags(sub, [...CAPTURE_FLAGS, CAPTURE_ALL_FLAG]);
    sub.action(async (flags: StudyCommonFlags) => {
      // The flags are read first, so a bad value is refused before the study's code loads.
      const options = studyOptionsFromFlags(study, flags);
      const { runStudyCommand } = await import('./study-run.ts');
      await runStudyCommand(study, flags, options);
    });
  }
}

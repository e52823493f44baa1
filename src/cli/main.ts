#!/usr/bin/env node
/**
 * The h2lab command line: argv → options → library API → renderer. Thin by design (house-style.md):
 * one file per command in this folder, each exporting `register(program)`.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { EXIT_USAGE, H2labError, VERSION } from '../core/index.ts';
import { COMMANDS } from './commands.ts';
import { exitWithError } from './output.ts';

export function buildProgram(): Command {
  const program = new Command('h2lab')
    .description(
      'What is HTTP/2 actually worth against HTTP/1.1 for your server and your clients — measured, explained.',
    )
    .version(VERSION)
    .configureOutput({ outputError: () => {} })
    .exitOverride();
  for (const register of COMMANDS) register(program);
  return program;
}

export async function main(argv: string[] = process.argv): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version arrive here too, with exit code 0.
      if (err.exitCode === 0) process.exit(0);
      // `h2lab` alone (or a command group without its subcommand): commander has printed the help
      // on stderr; like git and npm, that is a usage error (2), with no further text.
      if (err.code === 'commander.help') process.exit(EXIT_USAGE);
      const text = `${err.message.replace(/^error: /, '')} (see h2lab --help)`;
      exitWithError(new H2labError('H2LAB_ERR_USAGE', text, { commander: err.code }));
    }
    exitWithError(err);
  }
}

function isEntry(): boolean {
  if (!process.argv[1]) return false;
  try {
    return realpathSync(fileURLToPath(import.meta.url)) === realpathSync(process.argv[1]);
  } catch {
    return false;
  }
}
if (isEntry()) await main();

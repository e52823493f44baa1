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
import { HELP_CONFIG } from './help.ts';
import { exitWithError } from './output.ts';

/** The command an argv names (`h2lab help X` names X), if any. */
function commandNamed(argv: readonly string[]): string | undefined {
  const args = argv.slice(2).filter((a) => !a.startsWith('-'));
  return args[0] === 'help' ? args[1] : args[0];
}

/**
 * The program for `argv`: the command it names is loaded and registered in full, the others are
 * listed by name and summary only (loading every command's modules took 1.3–4 s before any output).
 * Without `argv`, every command is loaded (tests that parse several command lines).
 */
export async function buildProgram(argv?: readonly string[]): Promise<Command> {
  const program = new Command('h2lab')
    .description(
      'What is HTTP/2 actually worth against HTTP/1.1 for your server and your clients — measured, explained.',
    )
    .version(VERSION)
    .configureHelp(HELP_CONFIG)
    .configureOutput({ outputError: () => {} })
    .exitOverride();
  const wanted = argv ? commandNamed(argv) : undefined;
  for (const c of COMMANDS) {
    if (argv === undefined || c.name === wanted) {
      (await c.load()).register(program);
      program.commands.find((x) => x.name() === c.name)?.description(c.summary);
    } else program.command(c.name).description(c.summary);
  }
  return program;
}

export async function main(argv: string[] = process.argv): Promise<void> {
  // A reader that went away (`h2lab … | head`): what it did not read is not wanted, as for any Unix
  // tool. Without a handler the write's EPIPE is an unhandled 'error' event and a stack trace.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(0);
      throw err;
    });
  }
  const program = await buildProgram(argv);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version arrive here too, with exit code 0.
      if (err.exitCode === 0) process.exit(0);
      // `h2lab` alone (or a command group without its subcommand): commander has printed the help
      // on stderr; like git and npm, that is a usage error (2), with no further text.
      if (err.code === 'commander.help') process.exit(EXIT_USAGE);
      const hint = err.code === 'commander.excessArguments' ? shellExpandedHint(argv.slice(2)) : '';
      const text = `${err.message.replace(/^error: /, '').replace(/\.$/, hint ? '' : '.')}${hint} (see h2lab --help)`;
      exitWithError(new H2labError('H2LAB_ERR_USAGE', text, { commander: err.code }));
    }
    exitWithError(err);
  }
}

/**
 * Several URLs where one is wanted, the shell's brace expansion of `/chunks/{0..63}` (bash and zsh
 * expand it before h2lab sees it): the fix is to quote it, since h2lab expands ranges itself. When the
 * URLs differ in one run of consecutive integers the quoted template is named.
 */
export function shellExpandedHint(args: readonly string[]): string {
  const urls = args.filter((a) => /^https?:\/\//.test(a));
  if (urls.length < 2) return '';
  let pre = 0;
  while (urls.every((u) => u[pre] === urls[0]![pre]) && pre < urls[0]!.length) pre++;
  while (pre > 0 && /\d/.test(urls[0]![pre - 1]!)) pre--;
  let suf = 0;
  const at = (u: string, i: number) => u[u.length - 1 - i];
  while (urls.every((u) => at(u, suf) === at(urls[0]!, suf)) && suf < urls[0]!.length - pre) suf++;
  while (suf > 0 && /\d/.test(at(urls[0]!, suf - 1)!)) suf--;
  const mids = urls.map((u) => u.slice(pre, u.length - suf));
  const nums = mids.map(Number);
  const consecutive =
    mids.every((m) => /^\d+$/.test(m)) && nums.every((n, i) => i === 0 || n === nums[i - 1]! + 1);
  const template = consecutive
    ? `'${urls[0]!.slice(0, pre)}{${nums[0]}..${nums[nums.length - 1]}}${urls[0]!.slice(urls[0]!.length - suf)}'`
    : 'the URL in single quotes';
  return `: ${urls.length} URLs arrived where one is wanted — did the shell expand a range? Quote it (${template}): h2lab expands {a..b} itself`;
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

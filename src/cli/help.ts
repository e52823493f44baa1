/**
 * How every command's help shows an option, and the options reference generated from it
 * (docs/options.md, `npm run docs:options`). One formatter, so `--help` and the docs say the same
 * thing in one style: the description, then `(one of: a, b; default: x)`. Defaults written into a
 * description by hand ("(default 30s)") are rewritten to the same `default: x` form; an empty list
 * or `false` is no default worth printing.
 */
import type { Command, Help, Option } from 'commander';

/** A default as a user would type it: no JSON quotes, lists comma-separated. */
function shownDefault(o: Option): string | undefined {
  if (o.defaultValueDescription) return o.defaultValueDescription;
  const v: unknown = o.defaultValue;
  if (v === undefined || v === false || (Array.isArray(v) && v.length === 0)) return undefined;
  if (Array.isArray(v)) return v.join(',');
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** The one wording of an option's help: description, choices, default. */
function optionHelp(o: Option): string {
  const text = (o.description ?? '').replace(/\(default (?!:)/g, '(default: ');
  const extra: string[] = [];
  if (o.argChoices?.length) extra.push(`one of: ${o.argChoices.join(', ')}`);
  const d = shownDefault(o);
  if (d !== undefined) extra.push(`default: ${d}`);
  return extra.length === 0 ? text : `${text} (${extra.join('; ')})`;
}

/** Settings for `program.configureHelp`, inherited by every command created after it. */
export const HELP_CONFIG: Partial<Help> = {
  optionDescription: optionHelp,
  sortSubcommands: false,
};

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

function commandPath(c: Command): string {
  const names: string[] = [];
  for (let x: Command | null = c; x; x = x.parent) names.unshift(x.name());
  return names.join(' ');
}

function section(c: Command, depth: number, out: string[]): void {
  const help = c.createHelp();
  out.push(`${'#'.repeat(depth)} ${commandPath(c)}`, '');
  out.push('```', help.commandUsage(c), '```', '');
  const description = c.description();
  if (description) out.push(description, '');
  const args = help.visibleArguments(c);
  const options = help.visibleOptions(c).filter((o) => o.long !== '--help' && o.long !== '--version');
  if (args.length > 0 || options.length > 0) {
    out.push('| flag | meaning |', '|---|---|');
    for (const a of args) out.push(`| \`${help.argumentTerm(a)}\` | ${cell(help.argumentDescription(a))} |`);
    for (const o of options) out.push(`| \`${cell(o.flags)}\` | ${cell(optionHelp(o))} |`);
    out.push('');
  }
  for (const sub of c.commands) if (sub.name() !== 'help') section(sub, depth + 1, out);
}

/**
 * docs/options.md: every command and subcommand of `program` (built with every command loaded),
 * its usage line, its summary and one row per flag as `--help` words it.
 */
export function renderOptionsReference(program: Command): string {
  const out = [
    '# Every flag of every command',
    '',
    'Generated from the command definitions by `npm run docs:options`: the same words as each',
    "command's `--help`. A test fails when this page and the commands differ. How the options work",
    'together, with examples, is in [usage.md](usage.md).',
    '',
  ];
  for (const c of program.commands) if (c.name() !== 'help') section(c, 2, out);
  return `${out.join('\n').trimEnd()}\n`;
}

/**
 * The flags the commands define and the pages that document them cannot drift apart:
 * docs/options.md is regenerated and compared, and docs/usage.md must name every flag of a command in
 * that command's section (or a section it points to), and name no flag in an option table that the
 * command does not have.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { Command } from 'commander';
import { renderOptionsReference } from '../../src/cli/help.ts';
import { buildProgram } from '../../src/cli/main.ts';

const program = await buildProgram();

/** Long flags of a command and its subcommands, without --help and --version. */
function flagsOf(c: Command): string[] {
  const own = c.options.map((o) => o.long ?? '').filter((f) => f && f !== '--help' && f !== '--version');
  return [...new Set([...own, ...c.commands.flatMap(flagsOf)])];
}

/** usage.md split at its `## h2lab NAME[, NAME…]` headings; the text before the first is the intro. */
function usageSections(): { intro: string; byCommand: Map<string, string> } {
  const doc = readFileSync(new URL('../../docs/usage.md', import.meta.url), 'utf8');
  const [intro, ...parts] = doc.split(/^## /m);
  const byCommand = new Map<string, string>();
  for (const part of parts) {
    const names = part.split('\n')[0]!.match(/^h2lab ([a-z0-9, ]+?)(?::|$)/)?.[1];
    if (names) for (const n of names.split(/,\s*/)) byCommand.set(n.trim(), part);
  }
  return { intro: intro ?? '', byCommand };
}

/** Sections a command's flags are documented in besides its own: bench's link flags under net, … */
const ALSO_IN: Record<string, string[]> = {
  bench: ['net'],
  compare: ['net', 'bench', 'plan'],
  plan: ['bench'],
  page: ['net', 'bench'],
};

const named = (text: string, flag: string) => new RegExp(`${flag}(?![a-z0-9-])`).test(text);

describe('docs/options.md and docs/usage.md against the command definitions', () => {
  test('docs/options.md is what `npm run docs:options` writes now', () => {
    const page = readFileSync(new URL('../../docs/options.md', import.meta.url), 'utf8');
    assert.equal(page, renderOptionsReference(program), 'docs/options.md is stale: run npm run docs:options');
  });

  test('every flag of every command is named in its usage.md section', () => {
    const { intro, byCommand } = usageSections();
    const missing: string[] = [];
    for (const c of program.commands) {
      if (c.name() === 'help') continue;
      const own = byCommand.get(c.name());
      assert.ok(own, `usage.md has no "## h2lab ${c.name()}" section`);
      const text = [intro, own, ...(ALSO_IN[c.name()] ?? []).map((n) => byCommand.get(n) ?? '')].join('\n');
      for (const f of flagsOf(c)) if (!named(text, f)) missing.push(`${c.name()} ${f}`);
    }
    assert.deepEqual(missing, [], 'flags usage.md does not name (document them in the command’s section)');
  });

  test('an option table in usage.md names only flags its commands have', () => {
    const { byCommand } = usageSections();
    const bySection = new Map<string, Set<string>>();
    for (const c of program.commands) {
      const s = byCommand.get(c.name());
      if (!s) continue;
      const set = bySection.get(s) ?? new Set<string>();
      for (const f of flagsOf(c)) set.add(f);
      bySection.set(s, set);
    }
    const stale: string[] = [];
    for (const [s, flags] of bySection) {
      const title = s.split('\n')[0];
      for (const m of s.matchAll(/^\|\s*`(-[a-zA-Z], )?(--[a-z0-9-]+)/gm)) {
        const f = m[2]!;
        const known = flags.has(f) || flags.has(`--no-${f.slice(2)}`) || flags.has(f.replace(/^--no-/, '--'));
        if (!known) stale.push(`${title}: ${f}`);
      }
    }
    assert.deepEqual(stale, [], 'usage.md tables name flags that no longer exist');
  });
});

/**
 * Declared flags on commander commands (docs/design.md, "Options"): a command lists the flags it
 * uses (`addFlags(cmd, [SEED_FLAG, { of: RUNS_FLAG, max: 100, why: '…' }])`) and reads their values
 * into its options by the keys of those uses (`valuesOf`), so no command copies a flag field by field
 * and no flag is declared by a command. The declarations live with the options they fill
 * (src/load/options.ts, src/compare/options.ts, src/cli/output-flags.ts, …).
 */
import { type Command, Option } from 'commander';
import { type FlagDeclaration, type FlagRef, type FlagUse, flagUse, readFlag } from '../core/index.ts';

/** Commander accumulator of a repeatable flag. */
const collect = (v: string, acc: string[]): string[] => [...acc, v];

/** Commander's attribute of a declared flag (`--h2-sessions` → `h2Sessions`). */
const attributeOf = (d: FlagDeclaration): string =>
  d.flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** The commander option of one use of a declared flag. */
export function optionOf(ref: FlagRef): Option {
  const u = flagUse(ref);
  const d = u.of;
  if (u.list && !d.sweep) throw new Error(`--${d.flag} is not declared as a sweep: it takes one value`);
  if ((u.min !== undefined || u.max !== undefined) && !u.why)
    throw new Error(`--${d.flag}: a narrowed range needs its reason (why)`);
  const short = d.short ? `-${d.short}, ` : '';
  const arg = d.grammar === 'bool' ? '' : ` <${u.list ? 'list' : (u.arg ?? d.arg ?? 'value')}>`;
  const long = d.negatable ? `--no-${d.flag}` : `--${d.flag}`;
  let description = u.description ?? d.description;
  if (u.list && d.sweep && !u.description) description = `${description}; ${d.sweep}`;
  const o = new Option(`${short}${long}${arg}`, description);
  if (d.choices && d.grammar === 'enum' && !u.list) o.choices(d.choices);
  if (d.repeatable) o.argParser(collect).default([]);
  else if ((u.defaultValue ?? d.defaultValue) !== undefined) o.default(u.defaultValue ?? d.defaultValue);
  if (u.required) o.makeOptionMandatory();
  const dflt = u.defaultText ?? d.defaultText;
  if (dflt !== undefined) o.defaultValueDescription = dflt;
  return o;
}

/** Adds each use to `cmd`, in order. */
export function addFlags(cmd: Command, refs: readonly FlagRef[]): Command {
  for (const r of refs) cmd.addOption(optionOf(r));
  return cmd;
}

/** Sets `path` (dotted) in `o`. */
function setPath(o: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let at = o;
  for (const p of parts.slice(0, -1)) {
    at[p] ??= {};
    at = at[p] as Record<string, unknown>;
  }
  at[parts[parts.length - 1]!] = value;
}

/**
 * The options the given flags fill: each use with a `key` whose flag was given (a `--no-X` flag only
 * when it said no), read by its declaration's grammar and range, set at its key.
 *
 * @example valuesOf(flags, [{ of: RUNS_FLAG, key: 'runs' }]) // { runs: 5 } for --runs 5
 */
export function valuesOf(
  flags: Readonly<Record<string, unknown>>,
  refs: readonly FlagRef[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const r of refs) {
    const u: FlagUse = flagUse(r);
    if (!u.key) continue;
    const v = flags[attributeOf(u.of)];
    if (v === undefined) continue;
    if (u.of.negatable && v !== false) continue;
    if (u.of.grammar === 'bool' && !u.of.negatable && v !== true) continue;
    if (u.of.repeatable) {
      if (Array.isArray(v) && v.length > 0)
        setPath(out, u.key, u.of.gather ? u.of.gather(v as string[], `--${u.of.flag}`) : v);
      continue;
    }
    setPath(out, u.key, typeof v === 'string' ? readFlag(u, v) : v);
  }
  return out;
}

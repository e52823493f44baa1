/**
 * Flags and `--config` files from a schema's option metadata (src/util/option-meta.ts): a command
 * declares its schema, this file adds one flag per option and merges config < flags into the object
 * the library validates. Config keys are the long flag names.
 */
import type { Command } from 'commander';
import { parse as parseYaml } from 'yaml';
import {
  convertOptionValue,
  type DescribedOption,
  H2labError,
  isH2labError,
  readOptionText,
} from '../core/index.ts';

const camel = (flag: string) => flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

function show(o: DescribedOption): string {
  const v = o.defaultValue;
  if (typeof v === 'number' && o.kind === 'duration') return `${v}ms`;
  if (typeof v === 'number' && o.kind === 'bytes') {
    for (const [u, k] of [
      ['GiB', 1024 ** 3],
      ['MiB', 1024 ** 2],
      ['KiB', 1024],
    ] as const)
      if (v >= k && v % k === 0) return `${v / k}${u}`;
  }
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** Adds one commander option per schema option, plus `--config FILE` unless `config` is false. */
export function addSchemaFlags(cmd: Command, options: DescribedOption[], config = true): Command {
  for (const o of options) {
    if (o.kind === 'bool') {
      if (o.negatable) cmd.option(`--no-${o.flag}`, `do not ${o.description}`);
      else cmd.option(`--${o.flag}`, o.description);
      continue;
    }
    const dflt = o.defaultValue === undefined ? '' : ` (default: ${show(o)})`;
    const choices = o.choices ? ` [${o.choices.join('|')}]` : '';
    cmd.option(
      `--${o.flag} <${o.kind === 'string' ? 'value' : o.kind}>`,
      `${o.description}${choices}${dflt}`,
    );
  }
  if (!config) return cmd;
  cmd.option(
    '--config <file>',
    'YAML (or JSON) file of options; keys are the long flag names; flags override it',
  );
  return cmd;
}

/** Reads a `--config` file into flag-name → value. */
export function readConfigFile(path: string, options: DescribedOption[]): Record<string, unknown> {
  const text = readOptionText(path, '--config', { kind: 'config', code: 'H2LAB_ERR_CONFIG_FILE' });
  let doc: unknown;
  try {
    // The yaml library's own bound on aliases (its default, stated so an upgrade cannot drop it): an
    // alias may be expanded at most 100 times its anchor's size, which stops "billion laughs" anchors.
    doc = parseYaml(text, { maxAliasCount: 100 });
  } catch (err) {
    // The parser recurses per level: deep nesting ends in a RangeError, not in a YAML error.
    const why =
      err instanceof RangeError || /call stack/i.test((err as Error).message)
        ? 'nested too deeply (a config is one mapping of option names to values)'
        : (err as Error).message.split('\n')[0];
    throw new H2labError('H2LAB_ERR_CONFIG_FILE', `--config ${path}: not valid YAML: ${why}`, {
      option: '--config',
      path,
    });
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new H2labError(
      'H2LAB_ERR_CONFIG_FILE',
      `--config ${path}: expected a mapping of option names to values`,
      { path },
    );
  }
  const known = new Map(options.map((o) => [o.flag, o]));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(doc)) {
    const o = known.get(k);
    if (!o) {
      throw new H2labError(
        'H2LAB_ERR_CONFIG_FILE',
        `--config ${path}: unknown key "${k}"; keys are the long flag names without --, e.g. ${options
          .slice(0, 3)
          .map((x) => x.flag)
          .join(', ')}`,
        { path, key: k },
      );
    }
    try {
      out[o.key] = convertOptionValue(o, v);
    } catch (err) {
      if (isH2labError(err)) {
        throw new H2labError('H2LAB_ERR_CONFIG_FILE', `--config ${path}: key "${k}": ${err.message}`, {
          path,
          key: k,
        });
      }
      throw err;
    }
  }
  return out;
}

/**
 * The options object for the library: config-file values, overridden by flags given on the command
 * line. Defaults are left to the schema.
 */
export function optionsFromFlags(cmd: Command, options: DescribedOption[]): Record<string, unknown> {
  const values = cmd.opts() as Record<string, unknown>;
  const config = typeof values.config === 'string' ? readConfigFile(values.config, options) : {};
  const out: Record<string, unknown> = { ...config };
  for (const o of options) {
    const attr = camel(o.flag);
    if (cmd.getOptionValueSource(attr) !== 'cli') continue;
    out[o.key] = convertOptionValue(o, values[attr]);
  }
  return out;
}

/**
 * Flags and `--config` files from a schema's option metadata (src/util/option-meta.ts): a command
 * declares its schema, this file adds one flag per option and merges config < flags into the object
 * the library validates. Config keys are the long flag names.
 */
import type { Command } from 'commander';
import type * as Yaml from 'yaml';
import {
  convertOptionValue,
  type DescribedOption,
  H2labError,
  isH2labError,
  lazyModule,
  readOptionText,
} from '../core/index.ts';

const yaml = lazyModule<typeof Yaml>('yaml');

const camel = (flag: string) => flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

function show(o: DescribedOption): string {
  if (o.defaultText) return o.defaultText;
  const v = o.defaultValue;
  if (typeof v === 'number' && (o.kind === 'duration' || o.kind === 'seconds')) return `${v}ms`;
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
    const short = o.short ? `-${o.short}, ` : '';
    if (o.kind === 'bool') {
      if (o.negatable) cmd.option(`--no-${o.flag}`, `do not ${o.description}`);
      else cmd.option(`${short}--${o.flag}`, o.description);
      continue;
    }
    const dflt = o.defaultValue === undefined ? '' : ` (default: ${show(o)})`;
    const choices = o.choices ? ` [${o.choices.join('|')}]` : '';
    cmd.option(
      `${short}--${o.flag} <${o.kind === 'string' ? 'value' : o.kind === 'seconds' ? 'duration' : o.kind}>`,
      `${o.description}${choices}${dflt}`,
    );
  }
  return config ? addConfigFlag(cmd) : cmd;
}

/** Reads a `--config` file into flag-name → value. */
function readConfigFile(path: string, options: DescribedOption[]): Record<string, unknown> {
  const doc = readConfigDocument(path);
  const known = new Map(options.map((o) => [o.flag, o]));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(doc)) {
    const o = known.get(k);
    if (!o)
      throw unknownKey(
        path,
        k,
        options.map((x) => x.flag),
      );
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

function unknownKey(path: string, key: string, flags: string[]): H2labError {
  return new H2labError(
    'H2LAB_ERR_CONFIG_FILE',
    `--config ${path}: unknown key "${key}"; keys are the long flag names without --, e.g. ${flags.slice(0, 3).join(', ')}`,
    { path, key },
  );
}

/**
 * How deep a config may nest `[` and `{`: a config is one mapping of flags to scalars and short
 * lists, so a few levels; the parser recurses per level and builds every level before it fails.
 */
const CONFIG_MAX_FLOW_DEPTH = 64;

/** The deepest nesting of flow collections in `text`, outside quoted strings and comments. */
function flowDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!)))
      while (i < text.length && text[i] !== '\n') i++;
    else if (c === '[' || c === '{') max = Math.max(max, ++depth);
    else if (c === ']' || c === '}') depth = Math.max(0, depth - 1);
  }
  return max;
}

/** A `--config` file's mapping, read (bounded) and parsed (YAML 1.2, so JSON too). */
function readConfigDocument(path: string): Record<string, unknown> {
  const text = readOptionText(path, '--config', { kind: 'config', code: 'H2LAB_ERR_CONFIG_FILE' });
  if (flowDepth(text) > CONFIG_MAX_FLOW_DEPTH) {
    throw new H2labError(
      'H2LAB_ERR_CONFIG_FILE',
      `--config ${path}: not valid YAML: nested too deeply (more than ${CONFIG_MAX_FLOW_DEPTH} levels of [ ] or { }; a config is one mapping of option names to values)`,
      { option: '--config', path },
    );
  }
  let doc: unknown;
  try {
    // The yaml library's own bound on aliases (its default, stated so an upgrade cannot drop it): an
    // alias may be expanded at most 100 times its anchor's size, which stops "billion laughs" anchors.
    doc = yaml().parse(text, { maxAliasCount: 100 });
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
  return doc as Record<string, unknown>;
}

/** Adds `--config FILE` to a command: its one declaration, for every command that reads one. */
export function addConfigFlag(cmd: Command): Command {
  return cmd.option(
    '--config <file>',
    'YAML (or JSON) file of options; keys are the long flag names; flags override it',
  );
}

/**
 * The command's flag values with a `--config` file's under them: each key is a long flag name
 * (`rate`, `header`, `insecure`; a `--no-X` flag is `X: false`), its value what the flag would be
 * given (a YAML list for a list or a repeatable flag), parsed afterwards by the same code as the
 * flag's text, so a bad value names the flag. A flag on the command line wins.
 *
 * @example flagsWithConfig<CompareFlags>(cmd)
 */
export function flagsWithConfig<T>(cmd: Command): T {
  const values = cmd.opts() as Record<string, unknown>;
  const path = values.config;
  if (typeof path !== 'string') return values as T;
  const doc = readConfigDocument(path);
  const byKey = new Map<string, { attr: string; negate: boolean; bool: boolean; repeat: boolean }>();
  for (const o of cmd.options) {
    if (!o.long || o.long === '--config') continue;
    const negate = o.long.startsWith('--no-');
    const key = negate ? o.long.slice(5) : o.long.slice(2);
    const repeat = Array.isArray(o.defaultValue);
    byKey.set(key, { attr: o.attributeName(), negate, bool: negate || !(o.required || o.optional), repeat });
  }
  for (const [k, v] of Object.entries(doc)) {
    const o = byKey.get(k);
    if (!o) throw unknownKey(path, k, [...byKey.keys()]);
    if (cmd.getOptionValueSource(o.attr) === 'cli') continue;
    let value: unknown;
    if (o.bool) {
      if (typeof v !== 'boolean')
        throw new H2labError('H2LAB_ERR_CONFIG_FILE', `--config ${path}: key "${k}": use true or false`, {
          path,
          key: k,
        });
      value = v;
    } else if (o.repeat) {
      value = (Array.isArray(v) ? v : [v]).map(String);
    } else if (Array.isArray(v)) {
      value = v.map(String).join(',');
    } else if (v !== null && typeof v === 'object') {
      throw new H2labError('H2LAB_ERR_CONFIG_FILE', `--config ${path}: key "${k}": give a value or a list`, {
        path,
        key: k,
      });
    } else {
      value = String(v);
    }
    cmd.setOptionValueWithSource(o.attr, value, 'config');
  }
  return cmd.opts() as T;
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

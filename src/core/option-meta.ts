/**
 * Options metadata shared by every subsystem's zod schema: each option carries its long flag name
 * (also its key in a `--config` file), how text becomes its value, and its help. The CLI builds its
 * flags from this, so the schema stays the one source of truth (house-style: "Options: one source").
 */
import type { z } from 'zod';
import { H2labError, invalidOption } from './errors.ts';
import {
  formatBytes,
  formatMs,
  parseBitRate,
  parseBytes,
  parseDurationMs,
  parseFraction,
  parseInteger,
  parseList,
} from './units.ts';

/** How the CLI (and a config file) turns text into the option's value. */
type OptionKind = 'string' | 'int' | 'bytes' | 'duration' | 'seconds' | 'fraction' | 'bool' | 'enum' | 'list';

/** Metadata on one option. */
interface OptionMeta {
  /** Long flag name without `--`; also the config-file key. */
  flag: string;
  kind: OptionKind;
  description: string;
  /** One-letter alias without `-` (the declaration's, e.g. `k` of `--insecure`). */
  short?: string;
  /** A `bool` defaulting to true: the CLI offers `--no-<flag>`. */
  negatable?: boolean;
  /**
   * The default in words, for a default that depends on the machine (the number of cores): help and
   * docs/options.md show these words, not this machine's value.
   */
  defaultText?: string;
}

/** Builds the metadata object for `.meta()` (typed for zod's registry). */
export function optionMeta(
  flag: string,
  kind: OptionKind,
  description: string,
  negatable?: boolean,
  defaultText?: string,
): OptionMeta & Record<string, unknown> {
  return {
    flag,
    kind,
    description,
    ...(negatable ? { negatable } : {}),
    ...(defaultText ? { defaultText } : {}),
  };
}

/** One option of a schema, with its key and default. */
export interface DescribedOption extends OptionMeta {
  key: string;
  /** The schema default (undefined when the option has none). */
  defaultValue: unknown;
  /** Accepted values of an `enum` option. */
  choices?: string[];
}

/** Lists the options of a strict object schema whose fields carry {@link OptionMeta}. */
export function describeOptions(schema: z.ZodObject): DescribedOption[] {
  return Object.entries(schema.shape).map(([key, s]) => {
    const field = s as z.ZodType & { meta(): unknown };
    const meta = field.meta() as OptionMeta | undefined;
    if (!meta?.flag) throw new Error(`option ${key} has no meta({ flag, kind, description })`);
    let defaultValue: unknown;
    try {
      defaultValue = field.parse(undefined);
    } catch {
      defaultValue = undefined;
    }
    const opt: DescribedOption = { key, ...meta, defaultValue };
    if (meta.kind === 'enum') {
      let inner: unknown = field;
      for (let i = 0; i < 4 && inner && !(inner as { options?: unknown }).options; i++) {
        inner = (inner as { def?: { innerType?: unknown } }).def?.innerType;
      }
      const options = (inner as { options?: unknown[] } | undefined)?.options;
      if (options) opt.choices = options.map(String);
    }
    return opt;
  });
}

/**
 * Converts one value given as text (flag) or as YAML scalar (config file) to the option's type.
 * Throws H2LAB_ERR_INVALID_OPTION naming `--flag`.
 */
export function convertOptionValue(o: DescribedOption, value: unknown): unknown {
  const name = `--${o.flag}`;
  if (value === undefined || value === null) return undefined;
  switch (o.kind) {
    case 'bool':
      if (typeof value === 'boolean') return value;
      if (value === 'true') return true;
      if (value === 'false') return false;
      throw invalidOption(name, value, 'use true or false');
    case 'int':
      return parseInteger(value as string | number, name);
    case 'bytes':
      return parseBytes(value as string | number, name);
    case 'duration':
      return parseDurationMs(value as string | number, name);
    case 'seconds':
      return parseDurationMs(value as string | number, name, 's');
    case 'fraction':
      return parseFraction(value as string | number, name);
    case 'list':
      // A comma-separated flag (`h2,tls1.3`) or a YAML sequence.
      if (Array.isArray(value)) return value.map((v) => String(v).trim()).filter(Boolean);
      if (typeof value === 'object') throw invalidOption(name, value, 'give a comma-separated list');
      return parseList(String(value));
    case 'enum':
      if (o.choices && !o.choices.includes(String(value)))
        throw invalidOption(name, value, `use one of ${o.choices.join(', ')}`);
      return String(value);
    default:
      if (typeof value === 'object') throw invalidOption(name, value, 'give a single value');
      return String(value);
  }
}

/**
 * Parses `input` with an options schema built from {@link optionMeta}: a zod issue becomes
 * H2LAB_ERR_INVALID_OPTION naming the option as the user wrote it (its flag, also its `--config`
 * key), the value and zod's reason, never a ZodError (which the CLI would report as internal).
 *
 * @example const o = parseOptions(CertsOptionsSchema, { out: '' }); // throws: --out "" is not valid: …
 */
export function parseOptions<S extends z.ZodObject>(schema: S, input: unknown, of = 'options'): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const unknown = unknownOptionError(issue, of, Object.keys(schema.shape));
  if (unknown) throw unknown;
  const key = String(issue.path[0] ?? '');
  const flag = describeOptions(schema).find((o) => o.key === key)?.flag;
  throw invalidOption(
    flag ? `--${flag}` : key || '(options)',
    key && input && typeof input === 'object' ? (input as Record<string, unknown>)[key] : input,
    issue.message,
  );
}

/**
 * Option keys the library has renamed (old → new): one name per concept, the CLI flag's — `ca`,
 * `cert`, `key` for PEM files everywhere, `trustCert` for the browser's `--trust-cert` files.
 */
const RENAMED_OPTIONS: Readonly<Record<string, string>> = {
  caFile: 'ca',
  certFile: 'cert',
  keyFile: 'key',
  caPath: 'ca',
  certPath: 'cert',
  keyPath: 'key',
  trustCertPem: 'trustCert',
};

/**
 * The error for a key an options object does not have (zod's `unrecognized_keys`), or undefined
 * for any other issue: H2LAB_ERR_INVALID_OPTION naming the key where it sits (`tls.caFile`), what it
 * is called now when it was renamed, else a known key that differs only in case or a few letters.
 * `of` names the call (`runLoad`, `probe`); `known` lists the keys at that place.
 */
export function unknownOptionError(
  issue: { code: string; path: readonly PropertyKey[]; keys?: readonly string[] },
  of: string,
  known: readonly string[] = [],
): H2labError | undefined {
  if (issue.code !== 'unrecognized_keys' || !issue.keys?.length) return undefined;
  const key = issue.keys[0]!;
  const where = [...issue.path.map(String), key].join('.');
  const renamed = RENAMED_OPTIONS[key];
  const close = known.find(
    (k) => k.toLowerCase() === key.toLowerCase() || (key.length > 3 && editDistance(k, key) <= 2),
  );
  const hint = renamed
    ? `it is called "${renamed}" now (a PEM file's path, as the --${renamed.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} flag)`
    : close
      ? `did you mean "${close}"?`
      : 'see docs/api.md for the options';
  return new H2labError('H2LAB_ERR_INVALID_OPTION', `${of}: unknown option "${where}": ${hint}`, {
    option: where,
    ...(renamed ? { renamed } : {}),
  });
}

/** Levenshtein distance of two short strings. */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * The grammar of one flag value: how its text becomes the option's value. `seconds` is a duration whose
 * bare number means seconds (the command line's habit); `duration` reads a bare number as ms.
 */
export type FlagGrammar =
  | 'string'
  | 'int'
  | 'number'
  | 'bytes'
  | 'duration'
  | 'seconds'
  | 'fraction'
  | 'bitrate'
  | 'enum'
  | 'bool';

/**
 * One flag, declared once (docs/design.md, "Options"): its name, grammar, range, default and help.
 * Commands and studies compose declarations ({@link FlagUse}); the library schemas take their enums
 * and ranges from the same object (`WINDOW_FLAG.choices`, `RUNS_FLAG.min`). `declareFlag` refuses a
 * second declaration of a name, and test/cli/flags.test.ts refuses one in the sources.
 */
export interface FlagDeclaration {
  /** Long name without `--`; also the `--config` key. */
  readonly flag: string;
  /** One-letter alias without `-`. */
  readonly short?: string;
  readonly grammar: FlagGrammar;
  /** The placeholder in help (`<n>`, `<time>`); a `bool` has none. */
  readonly arg?: string;
  readonly description: string;
  /** Inclusive range of a number (of each item of a list). */
  readonly min?: number;
  readonly max?: number;
  /** Accepted values of an `enum`. */
  readonly choices?: readonly string[];
  /** The default as help shows it ("10s", "the strategy's"); the value itself is the schema's. */
  readonly defaultText?: string;
  /** A value commander fills in when the flag is absent (only where the command reads it itself). */
  readonly defaultValue?: string | boolean;
  /** `bool` defaulting to true: offered as `--no-<flag>`. */
  readonly negatable?: boolean;
  /** Given several times (`-H a -H b`): the texts, in order, become the value through `gather`. */
  readonly repeatable?: boolean;
  readonly gather?: (texts: readonly string[], flag: string) => unknown;
  /**
   * Where a command sweeps this option (compare, studies: one cell per value) it takes a comma list
   * of the same grammar; elsewhere one value. The difference is this declaration's, not a second one.
   */
  readonly sweep?: string;
  /** A grammar of its own (a template, `concurrency` or numbers); throws naming `flag`. */
  readonly parse?: (text: string, flag: string, inList: boolean) => unknown;
}

const DECLARED = new Map<string, FlagDeclaration>();

/**
 * Declares a flag; a name declared twice is a defect (a second grammar or range for one name).
 *
 * @example export const SEED_FLAG = declareFlag({ flag: 'seed', grammar: 'int', arg: 'n', description: 'seed of every random choice', defaultText: '1' });
 */
export function declareFlag<D extends FlagDeclaration>(d: D): Readonly<D> {
  if (DECLARED.has(d.flag)) throw new Error(`--${d.flag} is declared twice: compose the one declaration`);
  DECLARED.set(d.flag, d);
  return Object.freeze(d);
}

/**
 * The PEM files and the trust switch of a TLS client or server — bench, compare, probe and serve
 * alike (one name per concept: `ca`, `cert`, `key`, RENAMED_OPTIONS) — declared here because
 * src/load, src/probe and src/server all use them and none imports another.
 */
export const CA_FLAG = declareFlag({
  flag: 'ca',
  grammar: 'string',
  arg: 'file',
  description: 'extra CA certificate (PEM) to trust',
});
export const CERT_FLAG = declareFlag({
  flag: 'cert',
  grammar: 'string',
  arg: 'file',
  description: 'client certificate (PEM) for mutual TLS',
});
export const KEY_FLAG = declareFlag({
  flag: 'key',
  grammar: 'string',
  arg: 'file',
  description: 'client key (PEM) for mutual TLS',
});
/**
 * `--quic-retry`: the fixture's QUIC server validates each client address with a Retry before the
 * handshake (RFC 9000 §8.1.2), one more round trip; off by default, as deployed servers run outside
 * an attack.
 */
export const QUIC_RETRY_FLAG = declareFlag({
  flag: 'quic-retry',
  grammar: 'bool',
  description:
    "the fixture's QUIC server sends a Retry before every handshake (RFC 9000 §8.1.2): 2 round trips to set up HTTP/3 instead of 1, as a server under attack",
});
/** `--frames`: the HTTP/2 frame log of h2lab's own client (bench, compare). */
export const FRAMES_FLAG = declareFlag({
  flag: 'frames',
  grammar: 'string',
  arg: 'file',
  description:
    "append one JSON line per HTTP/2 frame in and out of h2lab's own client to this file (type, stream, flags, length, window updates, SETTINGS), as nghttp -v prints them",
});
/** `--qlog`: the qlog of the HTTP/3 client's connections (bench, compare). */
export const QLOG_FLAG = declareFlag({
  flag: 'qlog',
  grammar: 'string',
  arg: 'dir',
  description:
    "write one qlog (JSON-SEQ, for qvis) per QUIC connection of h2lab's HTTP/3 client into this directory, and the embedded fixture's side of each (server-*.qlog)",
});
/** `--keylog`: the NSS key log of a TLS client (bench, compare) or server (serve). */
export const KEYLOG_FLAG = declareFlag({
  flag: 'keylog',
  grammar: 'string',
  arg: 'file',
  description:
    'append the TLS secrets of every connection to this NSS key log (SSLKEYLOGFILE format), to decrypt a capture; anyone holding it can read that traffic',
});
export const INSECURE_FLAG = declareFlag({
  flag: 'insecure',
  short: 'k',
  grammar: 'bool',
  description: 'accept any server certificate',
});

/**
 * `--timeout`: how long one request (bench, compare), one probe step or one page load may take;
 * a bare number is seconds, as every duration on the command line (probe's read ms before).
 */
export const TIMEOUT_FLAG = declareFlag({
  flag: 'timeout',
  grammar: 'seconds',
  arg: 'time',
  min: 1,
  description: 'per-request timeout (a bare number is seconds)',
  defaultText: '30s',
});

/**
 * A schema field's {@link OptionMeta} from a declared flag (serve, certs and probe build their flags
 * from their schemas): the field is a use of the declaration, in its own words where it says more.
 *
 * @example cert: z.string().optional().meta(flagMeta(CERT_FLAG, 'server certificate PEM (with --key)'))
 */
export function flagMeta(
  d: FlagDeclaration,
  description = d.description,
): OptionMeta & Record<string, unknown> {
  const kinds: Partial<Record<FlagGrammar, OptionKind>> = {
    int: 'int',
    bytes: 'bytes',
    duration: 'duration',
    seconds: 'seconds',
    fraction: 'fraction',
    bool: 'bool',
    enum: 'enum',
  };
  // The schema's default is the field's (`defaultText` is the declaration's own use).
  return {
    ...optionMeta(d.flag, kinds[d.grammar] ?? 'string', description, d.negatable),
    ...(d.short ? { short: d.short } : {}),
  };
}

/** Every declared flag (those of the modules loaded so far). */
export function declaredFlags(): FlagDeclaration[] {
  return [...DECLARED.values()];
}

/**
 * How a command or a study uses a declared flag: as one value or as a sweep (a list), a range
 * narrowed for its reason (never widened: the declaration's range is what the schema allows), the
 * help of what this command does with it, and the options key it fills.
 */
export interface FlagUse {
  readonly of: FlagDeclaration;
  /** The options key (a dotted path: `links.rttMs`). */
  readonly key?: string;
  /** Takes a comma list (the declaration must say where: `sweep`). */
  readonly list?: boolean;
  readonly min?: number;
  readonly max?: number;
  /** Why the range is narrower here (required with `min`/`max`). */
  readonly why?: string;
  /** What this command does with the value, when it says more than the declaration's words. */
  readonly description?: string;
  readonly defaultText?: string;
  /** The placeholder here (`dir` where the declaration says `path`). */
  readonly arg?: string;
  /** The command cannot run without it. */
  readonly required?: boolean;
  /** A value commander fills in when the flag is absent, for this command. */
  readonly defaultValue?: string;
}

/** A declaration used as it is, or a use of it. */
export type FlagRef = FlagDeclaration | FlagUse;

/** The use of `ref` (a declaration alone is used as it is). */
export function flagUse(ref: FlagRef): FlagUse {
  return 'of' in ref ? ref : { of: ref };
}

/**
 * The value of one use of a flag from its text (a list where the use sweeps). Errors name the flag.
 *
 * @example readFlag({ of: RUNS_FLAG, max: 100, why: 'a study' }, '7') // 7
 */
export function readFlag(ref: FlagRef, text: string | boolean): unknown {
  const u = flagUse(ref);
  const d = u.of;
  const name = `--${d.flag}`;
  if (typeof text === 'boolean') return text;
  if (u.list) {
    const items = parseList(text);
    if (items.length === 0) throw invalidOption(name, text, 'give at least one value');
    return items.map((x) => readOne(u, x, text, true));
  }
  return readOne(u, text, text, false);
}

function readOne(u: FlagUse, text: string, whole: string, inList: boolean): unknown {
  const d = u.of;
  const [min, max] = [u.min ?? d.min, u.max ?? d.max];
  const name = `--${d.flag}`;
  if (d.parse) return d.parse(text, name, inList);
  const inRange = (n: number, shown: (x: number) => string): number => {
    if ((min !== undefined && n < min) || (max !== undefined && n > max))
      throw invalidOption(
        name,
        whole,
        min === undefined
          ? `use at most ${shown(max!)}`
          : max === undefined
            ? `use at least ${shown(min)}`
            : `use a value from ${shown(min)} to ${shown(max)}`,
      );
    return n;
  };
  switch (d.grammar) {
    case 'int':
      return parseInteger(text, name, min ?? 0, max ?? Number.MAX_SAFE_INTEGER);
    case 'number': {
      const n = Number(text);
      if (text.trim() === '' || !Number.isFinite(n)) throw invalidOption(name, whole, 'use a number, e.g. 4');
      return inRange(n, String);
    }
    case 'bytes':
      // parseBytes says the cap in its own words (`max`).
      return inRange(parseBytes(text, name, max ?? Number.POSITIVE_INFINITY), formatBytes);
    case 'duration':
      return inRange(parseDurationMs(text, name), formatMs);
    case 'seconds':
      return inRange(parseDurationMs(text, name, 's'), formatMs);
    case 'fraction':
      return inRange(parseFraction(text, name), String);
    case 'bitrate':
      return inRange(parseBitRate(text, name), (x) => `${x} bit/s`);
    case 'enum':
      if (d.choices && !d.choices.includes(text))
        throw invalidOption(name, whole, `use ${inList ? 'a list' : 'one'} of ${d.choices.join(', ')}`);
      return text;
    default:
      return text;
  }
}

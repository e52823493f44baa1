/**
 * The link flags of `h2lab net run` and `bench`: `--profile`/`--net PROFILE` plus explicit
 * `--rtt --jitter --loss --rate --queue …` on top of (or instead of) a preset. Maps human units to
 * {@link LinkOptions}. The condition flags are not declared here: each link condition declares its
 * keys (flag, grammar, help, range) in its file under src/net/conditions/, and the flags, their
 * parsing and the link spec's schema derive from those declarations.
 * `--net` and the link's other settings are declared beside them (src/net/link-flags.ts); here they
 * are added to commands and parsed ({@link addNetOption}, {@link parseNet}): one grammar, a comma
 * list, of which bench takes exactly one name. It imports the network's light face (src/net/meta.ts),
 * so that a command's help loads no link.
 */

import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { checkOutputPath, invalidOption, parseInteger, parseList } from '../core/index.ts';
import type { LinkOptions, LinkSpecInput } from '../net/index.ts';
import {
  CAPTURE_DEFAULTS,
  CAPTURE_FLAG,
  CAPTURE_MAX_FLAG,
  CAPTURE_SNAP_FLAG,
  CC_FLAG,
  type CongestionControl,
  captureNoLinkError,
  INITCWND_FLAG,
  type LinkKey,
  linkSpecKeys,
  NET_BACKEND_FLAG,
  NET_FLAG,
  NO_LINK,
  parseConditionValue,
  presetNamed,
  profileNames,
  SLOW_START_AFTER_IDLE_FLAG,
} from '../net/meta.ts';
import { addFlags, optionOf, valuesOf } from './flags.ts';

/**
 * Declares `--net` on `cmd`: a comma list of network names, each `loopback` (no link: the target
 * reached directly) or a link preset of src/net. `many` = the command runs over several (compare);
 * otherwise it takes exactly one (bench). The value is parsed by {@link parseNet}.
 */
export function addNetOption(cmd: Command, many: boolean): Command {
  return cmd.addOption(
    optionOf(
      many
        ? {
            of: NET_FLAG,
            list: true,
            arg: 'profiles',
            description: `networks to compare over, one cell each, e.g. ${NO_LINK},wan,lossy; each is ${NO_LINK} (no link, the default) or a link preset: ${profileNames().join(', ')}`,
          }
        : NET_FLAG,
    ),
  );
}

/**
 * Parses a `--net` value: names separated by commas, each `loopback` or a preset (an unknown name
 * fails naming the presets). With `many` false, exactly one name.
 *
 * @example parseNet('loopback,wan', true) // ['loopback', 'wan']
 */
export function parseNet(text: string, many: boolean): string[] {
  const names = parseList(text);
  if (names.length === 0)
    throw invalidOption('--net', text, `name ${NO_LINK} or a preset: ${profileNames().join(', ')}`);
  if (!many && names.length > 1)
    throw invalidOption(
      '--net',
      text,
      `bench runs over one network: give one name (h2lab compare --net ${names.join(',')} runs each)`,
    );
  for (const n of names) if (n !== NO_LINK) presetNamed(n);
  return names;
}

/**
 * The flags as commander hands them over: the ones named here, and each condition's (`--rtt` as
 * `rtt`, `--loss-up` as `lossUp`: the declared flag in camel case).
 */
export interface LinkFlags {
  [conditionFlag: string]: unknown;
  net?: string;
  /** The link rate (`net run`); bench's and compare's `--rate` is requests per second. */
  rate?: string;
  /** The link rate in bench and compare. */
  bandwidth?: string;
  netBackend?: string;
  cc?: string;
  slowStartAfterIdle?: boolean;
  initcwnd?: string;
  addressRange?: string;
  seed?: string;
}

/** `loss-burst` → `lossBurst`: the property commander gives a flag. */
function camel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
}

/** A condition key's flag on a command: `--rate` is `--bandwidth` where `--rate` means requests/s. */
function flagOf(k: LinkKey, rateFlag: '--rate' | '--bandwidth'): string {
  return k.flag === 'rate' ? rateFlag : `--${k.flag}`;
}

/**
 * Adds the link flags to a command. `h2lab net run` uses `--profile`, `--rate` and `--seed`; `bench`
 * and `compare`, whose `--rate` is requests per second and `--seed` the load's, use `--net`,
 * `--bandwidth` and the load's seed (pass `seed: false`).
 */
export function addLinkOptions(
  cmd: Command,
  names: { profile: '--net' | '--profile'; rate: '--rate' | '--bandwidth'; seed: boolean } = {
    profile: '--net',
    rate: '--bandwidth',
    seed: false,
  },
): Command {
  if (names.profile === '--net') addNetOption(cmd, false);
  else cmd.option('--profile <name>', `link preset: ${profileNames().join(', ')}`);
  for (const [, k] of linkSpecKeys()) {
    const flag = flagOf(k, names.rate);
    cmd.option(k.grammar === 'bool' ? flag : `${flag} <${k.arg}>`, k.help);
  }
  addFlags(cmd, [NET_BACKEND_FLAG, CC_FLAG, SLOW_START_AFTER_IDLE_FLAG, INITCWND_FLAG]);
  cmd.option('--address-range <cidr>', 'where link addresses come from (default 198.18.0.0/15)');
  if (names.seed) cmd.option('--seed <n>', 'seed of the loss and jitter draws (default 1)');
  return cmd;
}

/**
 * True when any link flag was given (so the command should run through an emulated link); `--net
 * loopback` alone is no link.
 */
export function wantsLink(flags: LinkFlags & { profile?: string }): boolean {
  const net = flags.net === undefined || parseNet(flags.net, false)[0] === NO_LINK ? undefined : flags.net;
  const conditions = linkSpecKeys()
    .filter(([, k]) => k.asksForLink)
    .map(([, k]) => flags[camel(k.flag)]);
  return [net, flags.profile, ...conditions].some((v) => v !== undefined);
}

/**
 * Maps the flags to {@link LinkOptions} (units parsed; errors name the flag). `rateFlag` names the
 * flag that carries the link rate: `--rate` for `net run`, `--bandwidth` for bench/compare.
 */
export function linkOptionsFromFlags(
  flags: LinkFlags & { profile?: string },
  rateFlag: '--rate' | '--bandwidth' = '--bandwidth',
): LinkOptions {
  const spec: Record<string, number | boolean> = {};
  for (const [key, k] of linkSpecKeys()) {
    const flag = flagOf(k, rateFlag);
    const text = flags[camel(flag.slice(2))];
    if (text === undefined || text === false) continue;
    spec[key] = k.grammar === 'bool' ? true : parseConditionValue(k, flag, String(text));
  }
  // `--net loopback` with --rtt … is an explicit link, as compare plans it (src/net/axes.ts).
  const net = flags.net === undefined ? undefined : parseNet(flags.net, false)[0];
  const name = net === NO_LINK ? undefined : (net ?? flags.profile);
  const opts: LinkOptions = {
    profile: name ?? (spec as LinkSpecInput),
    overrides: name === undefined ? {} : (spec as LinkSpecInput),
    backend: (flags.netBackend ?? 'auto') as 'auto' | 'relay' | 'netem',
    slowStartAfterIdle: flags.slowStartAfterIdle !== false,
  };
  if (flags.cc !== undefined) opts.congestionControl = flags.cc as CongestionControl;
  if (flags.initcwnd !== undefined) opts.initialCwnd = parseInteger(flags.initcwnd, '--initcwnd', 1, 1000);
  if (flags.addressRange !== undefined) opts.addressRange = flags.addressRange;
  if (flags.seed !== undefined) opts.seed = parseInteger(flags.seed, '--seed');
  return opts;
}

/** The capture flags (`--capture DIR`, `--capture-snap`, `--capture-max`), for bench and compare. */
export const CAPTURE_FLAGS = [
  { of: CAPTURE_FLAG, key: 'dir' },
  { of: CAPTURE_SNAP_FLAG, key: 'snapBytes' },
  { of: CAPTURE_MAX_FLAG, key: 'maxBytes' },
] as const;

/**
 * The capture a command's flags ask for, checked before any load: undefined without `--capture`;
 * H2LAB_ERR_CAPTURE_NO_LINK when the command has no link (loopback: no relay sees the packets);
 * H2LAB_ERR_OUTPUT when the directory cannot be written. Makes the directory.
 */
export function captureRequestFromFlags(
  flags: Readonly<Record<string, unknown>>,
  hasLink: boolean,
): { dir: string; snapBytes: number; maxBytes: number } | undefined {
  const v = valuesOf(flags, CAPTURE_FLAGS) as { dir?: string; snapBytes?: number; maxBytes?: number };
  if (v.dir === undefined) return undefined;
  if (!hasLink) throw captureNoLinkError(v.dir);
  checkOutputPath(v.dir, '--capture', 'dir');
  mkdirSync(v.dir, { recursive: true });
  return {
    dir: resolve(v.dir),
    snapBytes: v.snapBytes ?? CAPTURE_DEFAULTS.snapBytes,
    maxBytes: v.maxBytes ?? CAPTURE_DEFAULTS.maxBytes,
  };
}

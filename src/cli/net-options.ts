/**
 * The link flags of `h2lab net run` and `bench`: `--profile`/`--net PROFILE` plus explicit
 * `--rtt --jitter --loss --rate --queue …` on top of (or instead of) a preset. Maps human units to
 * {@link LinkOptions}; the schema in src/net is the one source of truth for values and defaults.
 * `--net` itself is declared and parsed here once for `bench` and `compare` ({@link addNetOption},
 * {@link parseNet}): one grammar, a comma list, of which bench takes exactly one name.
 */
import { type Command, Option } from 'commander';
import {
  invalidOption,
  parseBitRate,
  parseBytes,
  parseDurationMs,
  parseFraction,
  parseInteger,
  parseList,
} from '../core/index.ts';
import type { LinkOptions, LinkSpecInput } from '../net/index.ts';
import { CONGESTION_CONTROLS, NO_LINK, profileNames, resolveProfile } from '../net/index.ts';

/**
 * Declares `--net` on `cmd`: a comma list of network names, each `loopback` (no link: the target
 * reached directly) or a link preset of src/net. `many` = the command runs over several (compare);
 * otherwise it takes exactly one (bench). The value is parsed by {@link parseNet}.
 */
export function addNetOption(cmd: Command, many: boolean): Command {
  const names = `${NO_LINK} (no link, the default) or a link preset: ${profileNames().join(', ')}`;
  return cmd.option(
    many ? '--net <profiles>' : '--net <profile>',
    many
      ? `networks to compare over, one cell each, e.g. ${NO_LINK},wan,lossy; each is ${names}`
      : `the network: ${names}`,
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
  for (const n of names) if (n !== NO_LINK) resolveProfile(n);
  return names;
}

/** The flags as commander hands them over. */
export interface LinkFlags {
  net?: string;
  rtt?: string;
  jitter?: string;
  reorder?: boolean;
  loss?: string;
  lossUp?: string;
  lossDown?: string;
  lossBurst?: string;
  rate?: string;
  bandwidth?: string;
  rateUp?: string;
  queue?: string;
  netBackend?: string;
  cc?: string;
  slowStartAfterIdle?: boolean;
  initcwnd?: string;
  addressRange?: string;
  seed?: string;
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
  cmd
    .option('--rtt <duration>', 'round-trip delay of the link, e.g. 100ms')
    .option('--jitter <duration>', 'one-way delay varies uniformly by ± this (≤ rtt/2)')
    .option('--reorder', 'let jittered packets overtake each other')
    .option('--loss <fraction>', 'packet loss in each direction, e.g. 1%')
    .option('--loss-up <fraction>', 'loss client → server only')
    .option('--loss-down <fraction>', 'loss server → client only')
    .option('--loss-burst <packets>', 'mean loss burst length (> 1 = Gilbert–Elliott bursty loss)')
    .option(`${names.rate} <bitrate>`, 'bottleneck rate of the link both ways, e.g. 50mbit')
    .option('--rate-up <bitrate>', 'client → server rate when it differs')
    .option(
      '--queue <size>',
      'bottleneck queue per direction (drop-tail, shared by all flows), e.g. 64KiB; default one BDP',
    )
    .addOption(
      new Option('--net-backend <name>', 'emulation backend')
        .choices(['auto', 'relay', 'netem'])
        .default('auto'),
    )
    .addOption(
      new Option(
        '--cc <algorithm>',
        'TCP congestion control pinned on both ends (default: the host default)',
      ).choices([...CONGESTION_CONTROLS]),
    )
    .option('--no-slow-start-after-idle', 'set net.ipv4.tcp_slow_start_after_idle=0 in the server namespace')
    .option('--initcwnd <segments>', 'initial congestion window on both ends (default 10)')
    .option('--address-range <cidr>', 'where link addresses come from (default 198.18.0.0/15)');
  if (names.seed) cmd.option('--seed <n>', 'seed of the loss and jitter draws (default 1)');
  return cmd;
}

/**
 * True when any link flag was given (so the command should run through an emulated link); `--net
 * loopback` alone is no link.
 */
export function wantsLink(flags: LinkFlags & { profile?: string }): boolean {
  return [
    flags.net === undefined || parseNet(flags.net, false)[0] === NO_LINK ? undefined : flags.net,
    flags.profile,
    flags.rtt,
    flags.loss,
    flags.lossUp,
    flags.lossDown,
    flags.rate,
    flags.jitter,
  ].some((v) => v !== undefined);
}

/**
 * Maps the flags to {@link LinkOptions} (units parsed; errors name the flag). `rateFlag` names the
 * flag that carries the link rate: `--rate` for `net run`, `--bandwidth` for bench/compare.
 */
export function linkOptionsFromFlags(
  flags: LinkFlags & { profile?: string },
  rateFlag: '--rate' | '--bandwidth' = '--bandwidth',
): LinkOptions {
  const spec: LinkSpecInput = {};
  if (flags.rtt !== undefined) spec.rttMs = parseDurationMs(flags.rtt, '--rtt');
  if (flags.jitter !== undefined) spec.jitterMs = parseDurationMs(flags.jitter, '--jitter');
  if (flags.reorder) spec.reorder = true;
  if (flags.loss !== undefined) spec.loss = parseFraction(flags.loss, '--loss');
  if (flags.lossUp !== undefined) spec.lossUp = parseFraction(flags.lossUp, '--loss-up');
  if (flags.lossDown !== undefined) spec.lossDown = parseFraction(flags.lossDown, '--loss-down');
  if (flags.lossBurst !== undefined) {
    const b = Number(flags.lossBurst);
    if (!Number.isFinite(b) || b < 1)
      throw invalidOption('--loss-burst', flags.lossBurst, 'use a mean burst length in packets ≥ 1, e.g. 4');
    spec.burstPackets = b;
  }
  const rate = rateFlag === '--rate' ? flags.rate : flags.bandwidth;
  if (rate !== undefined) spec.rateBitsPerSec = parseBitRate(rate, rateFlag);
  if (flags.rateUp !== undefined) spec.rateUpBitsPerSec = parseBitRate(flags.rateUp, '--rate-up');
  if (flags.queue !== undefined) {
    const q = parseBytes(flags.queue, '--queue');
    if (q < 1500)
      throw invalidOption('--queue', flags.queue, 'use at least one packet, 1500 bytes (e.g. 64KiB)');
    spec.queueBytes = q;
  }
  // `--net loopback` with --rtt … is an explicit link, as compare plans it (src/net/axes.ts).
  const net = flags.net === undefined ? undefined : parseNet(flags.net, false)[0];
  const name = net === NO_LINK ? undefined : (net ?? flags.profile);
  const opts: LinkOptions = {
    profile: name ?? spec,
    overrides: name === undefined ? {} : spec,
    backend: (flags.netBackend ?? 'auto') as 'auto' | 'relay' | 'netem',
    slowStartAfterIdle: flags.slowStartAfterIdle !== false,
  };
  if (flags.cc !== undefined) opts.congestionControl = flags.cc as (typeof CONGESTION_CONTROLS)[number];
  if (flags.initcwnd !== undefined) opts.initialCwnd = parseInteger(flags.initcwnd, '--initcwnd', 1, 1000);
  if (flags.addressRange !== undefined) opts.addressRange = flags.addressRange;
  if (flags.seed !== undefined) opts.seed = parseInteger(flags.seed, '--seed');
  return opts;
}

/**
 * The link presets and the names `--net` takes, as plain data: the flags' help and `--net`'s check read
 * them without loading the link or its schema (docs/design.md, "Start-up: what a command's help
 * loads"). profiles.ts resolves them into links.
 */
import { H2labError } from '../core/index.ts';
import type { LinkSpecValues } from './conditions/index.ts';

/** Congestion control algorithms h2lab can pin. */
export const CONGESTION_CONTROLS = ['reno', 'cubic', 'bbr'] as const;
export type CongestionControl = (typeof CONGESTION_CONTROLS)[number];

/**
 * The name that means *no link*: the target is reached directly (127.0.0.1 for the embedded fixture
 * server), nothing is emulated. It is a value of `--net` in every command, never a preset: a link that
 * adds nothing is the {@link PROFILES} preset `relay`.
 */
export const NO_LINK = 'loopback';

/**
 * The presets. Figures are typical, not any particular network; each says what it stands for.
 * `relay` is a link with no impairment: the namespace, the TUN devices and the relay alone, to see
 * what the emulation itself costs. `loopback` means no link in every command.
 */
export const PROFILES: Readonly<Record<string, { description: string; spec: LinkSpecValues }>> =
  Object.freeze({
    relay: {
      description: 'no delay, no loss, no limit: the relay alone (what the emulation costs)',
      spec: {},
    },
    lan: { description: '1 ms RTT, 1 Gbit/s', spec: { rttMs: 1, rateBitsPerSec: 1e9 } },
    wan: { description: '40 ms RTT, 50 Mbit/s', spec: { rttMs: 40, rateBitsPerSec: 50e6 } },
    intercontinental: { description: '150 ms RTT, 100 Mbit/s', spec: { rttMs: 150, rateBitsPerSec: 100e6 } },
    'mobile-4g': {
      description: '70 ms RTT ±5 ms jitter, 20 Mbit/s down, 5 Mbit/s up, 0.1% loss',
      spec: { rttMs: 70, jitterMs: 5, loss: 0.001, rateBitsPerSec: 20e6, rateUpBitsPerSec: 5e6 },
    },
    'mobile-3g': {
      description: '150 ms RTT ±10 ms jitter, 1.6 Mbit/s down, 768 kbit/s up',
      spec: { rttMs: 150, jitterMs: 10, rateBitsPerSec: 1.6e6, rateUpBitsPerSec: 768e3 },
    },
    lossy: {
      description: '40 ms RTT, 50 Mbit/s, 1% i.i.d. loss each way',
      spec: { rttMs: 40, rateBitsPerSec: 50e6, loss: 0.01 },
    },
    'lossy-2': {
      description: '40 ms RTT, 50 Mbit/s, 2% i.i.d. loss each way',
      spec: { rttMs: 40, rateBitsPerSec: 50e6, loss: 0.02 },
    },
    'lossy-bursty': {
      description: '40 ms RTT, 50 Mbit/s, 1% loss in bursts of 4 packets on average (Gilbert–Elliott)',
      spec: { rttMs: 40, rateBitsPerSec: 50e6, loss: 0.01, burstPackets: 4 },
    },
  });

/** The names of the presets, for help texts and errors. */
export function profileNames(): string[] {
  return Object.keys(PROFILES);
}

/**
 * The preset named `profile`. Throws H2LAB_ERR_INVALID_OPTION for `loopback` (no link, not a preset)
 * and for an unknown name, naming the presets.
 */
export function presetNamed(profile: string): { description: string; spec: LinkSpecValues } {
  const preset = PROFILES[profile];
  if (profile === NO_LINK) {
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `--net ${NO_LINK} means no link (the target reached directly), so there is no link to make here: use --net relay for a link with no delay, loss or limit`,
      { option: '--net', value: profile },
    );
  }
  if (!preset) {
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `--net ${JSON.stringify(profile)} is not a known profile: use one of ${profileNames().join(', ')}, or describe the link with --rtt --loss --rate --queue`,
      { option: '--net', value: profile, profiles: profileNames() },
    );
  }
  return preset;
}

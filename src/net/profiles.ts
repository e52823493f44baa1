/**
 * Link profiles: named presets and explicit links (`--rtt 100ms --loss 1% --rate 10mbit --queue 64KiB`),
 * resolved into what each direction of the link does. The zod schema is the one source of truth for
 * the options' types, defaults and validation.
 *
 * Directions: `down` is server → client (responses), `up` is client → server (requests, ACKs).
 */
import { z } from 'zod';
import { H2labError } from '../core/index.ts';
import {
  checkLinkSpec,
  directionSpec,
  type LinkSpecValues,
  linkSpecKeys,
  type ResolvedLinkSpec,
} from './conditions/index.ts';
import { defaultQueueBytes } from './conditions/rate.ts';
import type { DirectionSpec, LinkKey, NumberKey } from './conditions/types.ts';

export { type DirectionSpec, defaultQueueBytes };

/** The range of a number key, from its declaration in its condition's file (no default). */
export function keyRange(k: NumberKey): z.ZodNumber {
  let n = z.number();
  if (k.int) n = n.int();
  if (k.positive) n = n.positive();
  if (k.min !== undefined) n = n.min(k.min);
  if (k.max !== undefined) n = n.max(k.max);
  return n;
}

/** The zod schema of one key: its range, its default (or optional) and its documentation. */
function keySchema(k: LinkKey): z.ZodType {
  if (k.type === 'boolean') return z.boolean().default(k.default).describe(k.doc);
  const n = keyRange(k);
  return (k.default === undefined ? n.optional() : n.default(k.default)).describe(k.doc);
}

/**
 * What a user may say about a link: every condition's keys (src/net/conditions/), each carrying its
 * unit, and the conditions' rules across keys. Unknown keys are rejected.
 */
export const LinkSpecSchema: z.ZodType<ResolvedLinkSpec, LinkSpecValues> = z
  .strictObject(Object.fromEntries(linkSpecKeys().map(([key, k]) => [key, keySchema(k)])))
  .superRefine((spec, ctx) => {
    for (const rule of checkLinkSpec(spec))
      ctx.addIssue({ code: 'custom', message: rule.message, path: [rule.path] });
  }) as unknown as z.ZodType<ResolvedLinkSpec, LinkSpecValues>;

export type LinkSpecInput = z.input<typeof LinkSpecSchema>;
export type LinkSpec = z.output<typeof LinkSpecSchema>;

/** A resolved profile: the spec with every default filled and both directions spelled out. */
export interface LinkProfile extends LinkSpec {
  /** The preset's name, or "custom". */
  name: string;
  description: string;
  up: DirectionSpec;
  down: DirectionSpec;
}

/**
 * The name that means *no link*: the target is reached directly (127.0.0.1 for the embedded fixture
 * server), nothing is emulated. It is a value of `--net` in every command, never a preset: a link that
 * adds nothing is the {@link PROFILES} preset `relay`.
 */
export const NO_LINK = 'loopback';

/**
 * The presets. Figures are typical, not any particular network; each says what it stands for.
 * `relay` is a link with no impairment: the namespace, the TUN devices and the relay alone, to see
 * what the emulation itself costs. `bench --net loopback` used to mean this preset while
 * `compare --net loopback` meant no link; `loopback` now means no link in every command.
 */
export const PROFILES: Readonly<Record<string, { description: string; spec: LinkSpecInput }>> = Object.freeze(
  {
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
  },
);

/** The names of the presets, for help texts and errors. */
export function profileNames(): string[] {
  return Object.keys(PROFILES);
}

/**
 * Resolves a preset name or an explicit spec (optionally with overrides on top of a preset) into a
 * {@link LinkProfile}.
 *
 * @example resolveProfile('wan') // 40 ms RTT, 50 Mbit/s, 250 KB queue
 * @example resolveProfile({ rttMs: 100, loss: 0.01, rateBitsPerSec: 10e6 })
 * @example resolveProfile('wan', { loss: 0.01 }) // wan with 1% loss, named "wan+custom"
 */
export function resolveProfile(profile: string | LinkSpecInput, overrides: LinkSpecInput = {}): LinkProfile {
  let name = 'custom';
  let description = 'explicit link';
  let base: LinkSpecInput = {};
  if (typeof profile === 'string') {
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
    name = profile;
    description = preset.description;
    base = preset.spec;
  } else {
    base = profile;
  }
  const defined = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined));
  if (typeof profile === 'string' && Object.keys(defined).length > 0) {
    name = `${profile}+custom`;
    description = `${description}, with ${Object.keys(defined).join(', ')} changed`;
  }
  const parsed = LinkSpecSchema.safeParse({ ...base, ...defined });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = issue?.path.join('.') ?? '';
    throw new H2labError('H2LAB_ERR_INVALID_OPTION', `link option ${key}: ${issue?.message ?? 'invalid'}`, {
      option: key,
      issues: parsed.error.issues.map((i) => i.message),
    });
  }
  const spec = parsed.data;
  return {
    ...spec,
    name,
    description,
    down: directionSpec(spec, 'down'),
    up: directionSpec(spec, 'up'),
  };
}

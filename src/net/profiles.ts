/**
 * Link profiles: named presets and explicit links (`--rtt 100ms --loss 1% --rate 10mbit --queue 64KiB`),
 * resolved into what each direction of the link does. The zod schema is the one source of truth for
 * the options' types, defaults and validation.
 *
 * Directions: `down` is server → client (responses), `up` is client → server (requests, ACKs).
 */
import { z } from 'zod';
import { H2labError } from '../core/index.ts';

/** What a user may say about a link. Every key carries its unit. Unknown keys are rejected. */
export const LinkSpecSchema = z
  .strictObject({
    /** Round-trip propagation delay, ms; each direction gets half. */
    rttMs: z.number().min(0).max(10_000).default(0),
    /** One-way delay varies uniformly by ±jitterMs around rttMs/2 (≤ rttMs/2). */
    jitterMs: z.number().min(0).default(0),
    /** Let jittered packets overtake each other (default false: jitter without reordering). */
    reorder: z.boolean().default(false),
    /** Packet loss probability in each direction, [0, 1]. */
    loss: z.number().min(0).max(1).default(0),
    /** Loss on the client → server direction only (overrides `loss` there). */
    lossUp: z.number().min(0).max(1).optional(),
    /** Loss on the server → client direction only (overrides `loss` there). */
    lossDown: z.number().min(0).max(1).optional(),
    /** Mean loss burst length in packets: > 1 selects Gilbert–Elliott bursty loss, 1 = i.i.d. */
    burstPackets: z.number().min(1).default(1),
    /** Bottleneck rate in bits/s in both directions (undefined = no limit). */
    rateBitsPerSec: z.number().positive().optional(),
    /** Client → server rate when it differs (asymmetric access links). */
    rateUpBitsPerSec: z.number().positive().optional(),
    /**
     * Bottleneck queue per direction, bytes (drop-tail, shared by all flows). Default: one
     * bandwidth-delay product of the link, at least 64 KiB — a "rule of thumb" buffer.
     */
    queueBytes: z.number().int().min(1500).optional(),
  })
  .refine((s) => s.jitterMs <= s.rttMs / 2, {
    message: 'jitterMs must not exceed half of rttMs (a one-way delay cannot be negative)',
    path: ['jitterMs'],
  });

export type LinkSpecInput = z.input<typeof LinkSpecSchema>;
export type LinkSpec = z.output<typeof LinkSpecSchema>;

/** What one direction of the link does. */
export interface DirectionSpec {
  /** Constant one-way delay, ms. */
  delayMs: number;
  jitterMs: number;
  reorder: boolean;
  loss: number;
  burstPackets: number;
  /** undefined = no rate limit (and no bottleneck queue). */
  rateBitsPerSec?: number;
  queueBytes?: number;
}

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

/** The default bottleneck queue: one bandwidth-delay product, at least 64 KiB. */
export function defaultQueueBytes(rateBitsPerSec: number, rttMs: number): number {
  return Math.max(64 * 1024, Math.round((rateBitsPerSec * rttMs) / 8000));
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
  const direction = (rateBitsPerSec: number | undefined, lossValue: number): DirectionSpec => ({
    delayMs: spec.rttMs / 2,
    jitterMs: spec.jitterMs,
    reorder: spec.reorder,
    loss: lossValue,
    burstPackets: spec.burstPackets,
    ...(rateBitsPerSec === undefined
      ? {}
      : { rateBitsPerSec, queueBytes: spec.queueBytes ?? defaultQueueBytes(rateBitsPerSec, spec.rttMs) }),
  });
  return {
    ...spec,
    name,
    description,
    down: direction(spec.rateBitsPerSec, spec.lossDown ?? spec.loss),
    up: direction(spec.rateUpBitsPerSec ?? spec.rateBitsPerSec, spec.lossUp ?? spec.loss),
  };
}

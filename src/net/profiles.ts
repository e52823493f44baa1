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
import type { DirectionSpec, LinkKey, NumberKey } from './conditions/types.ts';
import { presetNamed } from './presets.ts';

export { NO_LINK, PROFILES } from './presets.ts';
export type { DirectionSpec };

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
const LinkSpecSchema: z.ZodType<ResolvedLinkSpec, LinkSpecValues> = z
  .strictObject(Object.fromEntries(linkSpecKeys().map(([key, k]) => [key, keySchema(k)])))
  .superRefine((spec, ctx) => {
    for (const rule of checkLinkSpec(spec))
      ctx.addIssue({ code: 'custom', message: rule.message, path: [rule.path] });
  }) as unknown as z.ZodType<ResolvedLinkSpec, LinkSpecValues>;

export type LinkSpecInput = z.input<typeof LinkSpecSchema>;
type LinkSpec = z.output<typeof LinkSpecSchema>;

/** A resolved profile: the spec with every default filled and both directions spelled out. */
export interface LinkProfile extends LinkSpec {
  /** The preset's name, or "custom". */
  name: string;
  description: string;
  up: DirectionSpec;
  down: DirectionSpec;
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
    const preset = presetNamed(profile);
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

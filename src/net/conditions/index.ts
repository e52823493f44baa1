/**
 * The link conditions, one file each, listed once here. Everything else derives from this list: the
 * link spec's keys and their validation (profiles.ts), what each direction does (a DirectionSpec),
 * the stages of a direction in the relay (pipeline.ts), and the link flags (src/cli/net-options.ts).
 *
 * The order of the list is the order of the keys (the spec, the flags, the help); the order of the
 * stages in a direction is each condition's `stage`.
 */
import type { Rng } from '../../core/index.ts';
import { delayCondition } from './delay.ts';
import { gilbertElliottCondition } from './gilbert-elliott.ts';
import { jitterCondition } from './jitter.ts';
import { lossCondition } from './loss.ts';
import { rateCondition } from './rate.ts';
import type {
  ConditionDeclaration,
  DirectionSpec,
  KeyInput,
  KeyValues,
  LinkCondition,
  LinkDirection,
  LinkKey,
  LinkKeys,
  NumberKey,
} from './types.ts';

const LINK_CONDITIONS = [
  delayCondition,
  jitterCondition,
  lossCondition,
  gilbertElliottCondition,
  rateCondition,
] as const;

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void
  ? I
  : never;

/** Every key of every condition. */
type LinkSpecKeys = UnionToIntersection<(typeof LINK_CONDITIONS)[number]['keys']>;
/** A link spec with every default applied. */
export type ResolvedLinkSpec = KeyValues<LinkSpecKeys>;
/** A link spec as a user gives it: every key optional. */
export type LinkSpecValues = KeyInput<LinkSpecKeys>;

/** The conditions as their common declaration type (their own key types are not needed here). */
const conditions = LINK_CONDITIONS as readonly ConditionDeclaration<LinkKeys>[];

/** Every link-spec key with its declaration, in the registry's order. */
export function linkSpecKeys(): Array<[string, LinkKey]> {
  return conditions.flatMap((c) => Object.entries(c.keys));
}

/** The keys that are axes of a comparison, typed. */
export type AxisKey = {
  [P in keyof LinkSpecKeys]: LinkSpecKeys[P] extends { axisTag: unknown } ? P : never;
}[keyof LinkSpecKeys];

/** The keys that can be an axis of a comparison (they declare `axisTag`), in the registry's order. */
export function linkAxisKeys(): Array<[AxisKey, NumberKey & Required<Pick<NumberKey, 'axisTag'>>]> {
  return linkSpecKeys().filter(
    (e): e is [AxisKey, NumberKey & Required<Pick<NumberKey, 'axisTag'>>] =>
      e[1].type === 'number' && e[1].axisTag !== undefined,
  );
}

/** The values of one condition's own keys, read from the whole spec. */
function ownValues(c: ConditionDeclaration<LinkKeys>, spec: Readonly<Record<string, unknown>>) {
  return Object.fromEntries(Object.keys(c.keys).map((k) => [k, spec[k]])) as KeyValues<LinkKeys>;
}

/** The cross-key rules that fail for a resolved spec, in the registry's order. */
export function checkLinkSpec(
  spec: Readonly<Record<string, unknown>>,
): Array<{ message: string; path: string }> {
  return conditions.flatMap((c) => c.check?.(ownValues(c, spec), spec) ?? []);
}

/** What one direction does: each condition's part of it, from a resolved spec. */
export function directionSpec(spec: ResolvedLinkSpec, dir: LinkDirection): DirectionSpec {
  const all = spec as unknown as Readonly<Record<string, unknown>>;
  return Object.assign(
    {},
    ...conditions.map((c) => c.direction(ownValues(c, all), all, dir)),
  ) as DirectionSpec;
}

/** The stages of one direction, in stage order; a condition the direction does not have is left out. */
export function buildStages(d: DirectionSpec, rng: Rng): LinkCondition[] {
  const ordered = [...conditions].sort((a, b) => a.stage - b.stage);
  return ordered.flatMap((c) => c.build(d, rng) ?? []);
}

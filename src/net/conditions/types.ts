/**
 * One link condition = one stage a packet passes through in one direction of the emulated link, and
 * its declaration: the link-spec keys it reads (with their flags), where it sits in the pipeline, what
 * it makes of one direction, and how it is built. The conditions are listed once in `index.ts`.
 *
 * A stage is a pure function of the packet's arrival time at it and its own state: it returns the
 * time the packet leaves it, or {@link DROP}. Because every stage computes the departure when the
 * packet arrives, a direction of the link is just the stages composed in order, and the relay only
 * has to hold each packet until the time the last stage returned (see `src/net/pipeline.ts`).
 *
 * Times are milliseconds on one monotonic clock (the relay's CLOCK_MONOTONIC; a fake clock in tests).
 */
import type { Rng } from '../../core/index.ts';

/** Returned by {@link LinkCondition.admit} when the packet is lost or dropped. */
export const DROP = -1;

/** Why a packet was dropped: counted per reason in the link statistics. */
export type DropReason = 'loss' | 'queue';

export interface LinkCondition {
  /** The registry key: the file name under `src/net/conditions/`. */
  readonly kind: string;
  /** The reason recorded when this stage drops a packet. */
  readonly dropReason?: DropReason;
  /**
   * A queue's stage: how long the last packet it admitted waits behind the ones before it, ms
   * (serialisation excluded). Read by the capture stage for each packet's comment.
   */
  readonly lastWaitMs?: number;
  /**
   * A packet of `sizeBytes` (the whole IP packet) arrives at `atMs`. Returns its departure time
   * (≥ `atMs`) or {@link DROP}. Calls come in non-decreasing `atMs` order, except after a stage that
   * reorders (jitter with `reorder`), which is therefore always the last stage.
   */
  admit(sizeBytes: number, atMs: number): number;
}

/**
 * Where a stage sits in a direction: stages run in ascending order. Loss comes first (a lost packet
 * does not occupy the bottleneck), then the bottleneck, then propagation; variation (jitter) last,
 * because with `reorder` it is the only stage whose output is not in order.
 */
export const STAGE = { loss: 10, bottleneck: 20, propagation: 30, variation: 40 } as const;

/** What one direction of the link does: the fields the conditions fill in from the link spec. */
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

/** How a link flag's text becomes the key's value (src/cli/net-options.ts parses each grammar). */
type LinkKeyGrammar = 'duration' | 'fraction' | 'bitrate' | 'bytes' | 'number' | 'bool';

/**
 * One link-spec key: its value's type, range and default (src/net/profiles.ts makes the zod schema of
 * the link spec from these), and its flag. Plain data, so the relay process loads no zod.
 */
interface KeyBase {
  /** What the key means, with its unit (the spec's documentation). */
  doc: string;
  /** Long flag name without `--`. */
  flag: string;
  grammar: LinkKeyGrammar;
  /** The flag's value placeholder (`duration` → `--rtt <duration>`); none for a `bool`. */
  arg?: string;
  /** The flag's help. */
  help: string;
  /**
   * Checked when the flag is parsed: the value must be in the key's range, else the error names the
   * flag with this fix. Without it the range is checked with the whole link (resolveProfile).
   */
  fix?: string;
  /** Given alone, the flag asks for a link (`--rtt 50ms`); `--queue` alone does not. */
  asksForLink?: boolean;
}

export interface NumberKey extends KeyBase {
  type: 'number';
  min?: number;
  max?: number;
  /** Greater than 0 (an exclusive minimum). */
  positive?: boolean;
  int?: boolean;
  /** Absent: the key is optional (undefined = the condition is off, or another key decides). */
  default?: number;
  /**
   * The key is an axis of a comparison (`compare --rtt 20ms,200ms`): its part of a link's name for a
   * value (`rtt200ms`), or undefined for a value that is the base's own (`loss` 0: `wan`, not
   * `wan+loss0%`). Keys without it are not axes.
   */
  axisTag?: (v: number) => string | undefined;
}

interface BooleanKey extends KeyBase {
  type: 'boolean';
  default: boolean;
}

export type LinkKey = NumberKey | BooleanKey;
export type LinkKeys = Readonly<Record<string, LinkKey>>;

type ValueOf<K extends LinkKey> = K extends BooleanKey ? boolean : number;
type WithDefault<K extends LinkKeys> = {
  [P in keyof K]: K[P] extends { default: number | boolean } ? P : never;
}[keyof K];

/** The values of keys `K` once defaults are applied (a key without one may be undefined). */
export type KeyValues<K extends LinkKeys> = { -readonly [P in WithDefault<K>]: ValueOf<K[P]> } & {
  -readonly [P in Exclude<keyof K, WithDefault<K>>]?: ValueOf<K[P]>;
};

/** The values of keys `K` as a user gives them: every key optional. */
export type KeyInput<K extends LinkKeys> = { -readonly [P in keyof K]?: ValueOf<K[P]> };

/** A direction: `up` is client → server (requests, ACKs), `down` server → client (responses). */
export type LinkDirection = 'up' | 'down';

/** A condition's declaration, typed by its keys `K`. */
export interface ConditionDeclaration<K extends LinkKeys = LinkKeys> {
  /** The registry key: the file name under `src/net/conditions/`. */
  readonly kind: string;
  /** Its place in each direction ({@link STAGE}); equal stages keep the registry's order. */
  readonly stage: number;
  /** The link-spec keys it owns, in the order they are listed (flags, spec, help). */
  readonly keys: K;
  /**
   * What it makes of one direction, from its own keys (defaults applied) and, for a condition that
   * depends on another's key, the whole resolved spec (read by key).
   */
  direction(
    own: KeyValues<K>,
    spec: Readonly<Record<string, unknown>>,
    dir: LinkDirection,
  ): Partial<DirectionSpec>;
  /** A rule across keys, checked with the whole spec: the message names the key at `path`. */
  check?(
    own: KeyValues<K>,
    spec: Readonly<Record<string, unknown>>,
  ): { message: string; path: string } | undefined;
  /** Its stage in a direction, or undefined when the direction does not have it (e.g. loss 0). */
  build(d: DirectionSpec, rng: Rng): LinkCondition | undefined;
}

/** Declares a condition, typed by its keys. */
export function defineCondition<const K extends LinkKeys>(
  c: ConditionDeclaration<K>,
): ConditionDeclaration<K> {
  return c;
}

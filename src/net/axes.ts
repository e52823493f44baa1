/**
 * Link conditions as axes of a comparison: lists of RTT, jitter, loss, bandwidth and congestion
 * control, crossed with each other (and with any named profiles) into one link per combination. Each
 * link is named by what it changes (`rtt200ms+10mbit+cubic`), seeded, and carries the same TCP
 * settings, so two cells on one link differ only by the client strategy.
 *
 * ```
 *  --net wan  --loss 0,2%  --cc cubic,bbr      →  wan+cubic  wan+bbr  wan+loss2%+cubic  wan+loss2%+bbr
 *  --rtt 20ms,200ms --bandwidth 10mbit         →  rtt20ms+10mbit  rtt200ms+10mbit
 * ```
 */
import { z } from 'zod';
import { H2labError } from '../core/index.ts';
import { type AxisKey, linkAxisKeys, linkSpecKeys } from './conditions/index.ts';
import type { NumberKey } from './conditions/types.ts';
import { CONGESTION_CONTROLS, type LinkOptions } from './link.ts';
import { keyRange, type LinkSpecInput, NO_LINK, resolveProfile } from './profiles.ts';

/** The lists a comparison can cross: every condition key that declares an `axisTag` (rtt, jitter, loss, rate). */
const axisShape = Object.fromEntries(
  linkAxisKeys().map(([key, k]) => [key, z.array(keyRange(k)).min(1).optional()]),
) as { [P in AxisKey]: z.ZodOptional<z.ZodArray<z.ZodNumber>> };

/** The bottleneck queue's range, from its declaration (rate.ts). */
const queueRange = keyRange(linkSpecKeys().find(([key]) => key === 'queueBytes')![1] as NumberKey);

/** The axes a user can cross. Lists: one link per value (times the other lists). */
export const LinkAxesSchema = z.strictObject({
  ...axisShape,
  /** TCP congestion control on both ends. */
  congestionControl: z.array(z.enum(CONGESTION_CONTROLS)).min(1).optional(),
  /** Bottleneck queue per direction, bytes (default one BDP). Not an axis: the same for every link. */
  queueBytes: queueRange.optional(),
  /** Initial congestion window, segments (kernel default 10). The same for every link. */
  initialCwnd: z.number().int().min(1).max(1000).optional(),
  /** tcp_slow_start_after_idle in the server namespace. The same for every link. */
  slowStartAfterIdle: z.boolean().optional(),
  /** Emulation backend. */
  backend: z.enum(['auto', 'relay', 'netem']).optional(),
});
type LinkAxes = z.output<typeof LinkAxesSchema>;

/** One link of the plan: its name in the result's `net` axis and what creates it. */
export interface PlannedLink {
  name: string;
  options: LinkOptions;
  /**
   * The `net` and `links` that plan this link alone: a comparison given them (`runComparison({ ...alone
   * })`) runs over exactly this link, with this name, seed and settings. How a study runs one
   * comparison per link of a grid it planned here (src/studies/chunks/).
   */
  alone: { net?: string[]; links: LinkAxes };
}

/** True when the axes ask for a link of their own (a spec axis, not only TCP settings). */
function hasSpecAxis(a: LinkAxes): boolean {
  return linkAxisKeys().some(([key]) => a[key] !== undefined);
}

/**
 * The links a comparison runs over: every named profile in `net` (except `loopback`, which is no
 * link), or one explicit link when only axes are given, crossed with every combination of the axis
 * lists. The cartesian product is in the order of the lists, so the plan is deterministic.
 * `loopback` in `net` stays a cell without a link. Throws H2LAB_ERR_INVALID_OPTION naming the flag when
 * a TCP setting (--cc, --initcwnd) is given with no link to apply it to, or a combination is invalid.
 *
 * @example planLinks(['loopback'], { rttMs: [20, 200], rateBitsPerSec: [10e6] }, 1).map((l) => l.name)
 * // ['rtt20ms+10mbit', 'rtt200ms+10mbit']
 */
export function planLinks(net: readonly string[], axes: LinkAxes | undefined, seed: number): PlannedLink[] {
  const a = axes ?? {};
  const named = net.filter((n) => n !== NO_LINK);
  const bases: Array<string | undefined> = named.length > 0 ? named : hasSpecAxis(a) ? [undefined] : [];
  if (bases.length === 0) {
    const tcp = [
      a.congestionControl ? '--cc' : undefined,
      a.initialCwnd !== undefined ? '--initcwnd' : undefined,
      a.queueBytes !== undefined ? '--queue' : undefined,
    ].filter(Boolean);
    if (tcp.length > 0) {
      throw new H2labError(
        'H2LAB_ERR_INVALID_OPTION',
        `${tcp.join(', ')} set the TCP of an emulated link, but no link was asked for: add --net PROFILE or --rtt/--loss/--bandwidth`,
        { option: tcp[0] },
      );
    }
    return [];
  }
  const specAxes = linkAxisKeys().flatMap(([key, k]) => {
    const values = a[key];
    return values ? [{ key, values, tag: k.axisTag }] : [];
  });
  let combos: Array<{ spec: LinkSpecInput; tags: string[] }> = [{ spec: {}, tags: [] }];
  for (const { key, values, tag } of specAxes) {
    combos = combos.flatMap((c) =>
      values.map((v) => {
        // A value that is the base's own is not part of the name (`wan`, not `wan+loss0%`).
        const t = tag(v);
        return { spec: { ...c.spec, [key]: v }, tags: t === undefined ? c.tags : [...c.tags, t] };
      }),
    );
  }
  const ccs: Array<(typeof CONGESTION_CONTROLS)[number] | undefined> = a.congestionControl ?? [undefined];
  const out: PlannedLink[] = [];
  for (const base of bases) {
    for (const combo of combos) {
      const spec: LinkSpecInput = {
        ...combo.spec,
        ...(a.queueBytes !== undefined ? { queueBytes: a.queueBytes } : {}),
      };
      // Validate now, so a bad combination (jitter > rtt/2) fails before any link starts.
      resolveProfile(base ?? spec, base === undefined ? {} : spec);
      for (const cc of ccs) {
        const parts = [...(base ? [base] : []), ...combo.tags, ...(cc ? [cc] : [])];
        const name = parts.length > 0 ? parts.join('+') : 'custom';
        const single = Object.fromEntries(Object.entries(combo.spec).map(([k, v]) => [k, [v]]));
        const { congestionControl: _all, ...settings } = a;
        out.push({
          name,
          alone: {
            ...(base ? { net: [base] } : {}),
            links: { ...settings, ...single, ...(cc ? { congestionControl: [cc] } : {}) },
          },
          options: {
            profile: base ?? spec,
            overrides: base === undefined ? {} : spec,
            backend: a.backend ?? 'auto',
            slowStartAfterIdle: a.slowStartAfterIdle ?? true,
            ...(cc ? { congestionControl: cc } : {}),
            ...(a.initialCwnd !== undefined ? { initialCwnd: a.initialCwnd } : {}),
            seed,
          } as LinkOptions,
        });
      }
    }
  }
  const names = new Set<string>();
  for (const l of out) {
    if (names.has(l.name)) {
      throw new H2labError(
        'H2LAB_ERR_INVALID_OPTION',
        `the link ${l.name} appears twice in the plan: a value is repeated in a list (--rtt, --loss, --bandwidth, --jitter, --cc or --net)`,
        { option: '--net', value: l.name },
      );
    }
    names.add(l.name);
  }
  return out;
}

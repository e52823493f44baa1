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
import { CONGESTION_CONTROLS, type LinkOptions } from './link.ts';
import { type LinkSpecInput, NO_LINK, resolveProfile } from './profiles.ts';

/** The axes a user can cross. Lists: one link per value (times the other lists). */
export const LinkAxesSchema = z.strictObject({
  /** Round-trip delays, ms. */
  rttMs: z.array(z.number().min(0).max(10_000)).min(1).optional(),
  /** Jitter of the one-way delay, ms (each ≤ rtt/2). */
  jitterMs: z.array(z.number().min(0)).min(1).optional(),
  /** Packet loss in each direction, fractions. */
  loss: z.array(z.number().min(0).max(1)).min(1).optional(),
  /** Bottleneck rates both ways, bits/s. */
  rateBitsPerSec: z.array(z.number().positive()).min(1).optional(),
  /** TCP congestion control on both ends. */
  congestionControl: z.array(z.enum(CONGESTION_CONTROLS)).min(1).optional(),
  /** Bottleneck queue per direction, bytes (default one BDP). Not an axis: the same for every link. */
  queueBytes: z.number().int().min(1500).optional(),
  /** Initial congestion window, segments (kernel default 10). The same for every link. */
  initialCwnd: z.number().int().min(1).max(1000).optional(),
  /** tcp_slow_start_after_idle in the server namespace. The same for every link. */
  slowStartAfterIdle: z.boolean().optional(),
  /** Emulation backend. */
  backend: z.enum(['auto', 'relay', 'netem']).optional(),
});
export type LinkAxes = z.output<typeof LinkAxesSchema>;

/** One link of the plan: its name in the result's `net` axis and what creates it. */
export interface PlannedLink {
  name: string;
  options: LinkOptions;
}

/** True when the axes ask for a link of their own (a spec axis, not only TCP settings). */
function hasSpecAxis(a: LinkAxes): boolean {
  return [a.rttMs, a.jitterMs, a.loss, a.rateBitsPerSec].some((x) => x !== undefined);
}

/** 200 → "200ms", 0.02 → "loss2%", 10e6 → "10mbit": the parts of a link's name. */
function tagOf(key: keyof LinkSpecInput, v: number): string {
  switch (key) {
    case 'rttMs':
      return `rtt${v}ms`;
    case 'jitterMs':
      return `jitter${v}ms`;
    case 'loss':
      return `loss${+(v * 100).toPrecision(6)}%`;
    case 'rateBitsPerSec':
      return v >= 1e9 && v % 1e9 === 0
        ? `${v / 1e9}gbit`
        : v >= 1e6 && v % 1e6 === 0
          ? `${v / 1e6}mbit`
          : `${+(v / 1e3).toPrecision(6)}kbit`;
    default:
      return `${key}${v}`;
  }
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
  const specAxes: Array<[keyof LinkSpecInput, number[]]> = [];
  if (a.rttMs) specAxes.push(['rttMs', a.rttMs]);
  if (a.jitterMs) specAxes.push(['jitterMs', a.jitterMs]);
  if (a.loss) specAxes.push(['loss', a.loss]);
  if (a.rateBitsPerSec) specAxes.push(['rateBitsPerSec', a.rateBitsPerSec]);
  let combos: Array<{ spec: LinkSpecInput; tags: string[] }> = [{ spec: {}, tags: [] }];
  for (const [key, values] of specAxes) {
    combos = combos.flatMap((c) =>
      values.map((v) => ({
        spec: { ...c.spec, [key]: v },
        // A zero on an axis is the base's own value: not part of the name (`wan`, not `wan+loss0%`).
        tags: v === 0 && key !== 'rttMs' ? c.tags : [...c.tags, tagOf(key, v)],
      })),
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
        out.push({
          name,
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

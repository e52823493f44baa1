/**
 * The `netem` backend: a veth pair between the host and the server namespace with `tc qdisc netem`
 * on each end's egress (delay, jitter, loss incl. Gilbert–Elliott, rate with a packet-limited queue).
 * Used where the kernel has sch_netem; `auto` falls back to the relay otherwise.
 */

import { ip, run } from './netns.ts';
import type { DirectionSpec } from './profiles.ts';

let cached: boolean | undefined;

/**
 * True when this kernel has netem: tries to add one on the loopback of a throwaway namespace (a
 * qdisc cannot be probed any other way without root side effects).
 */
export async function netemAvailable(): Promise<boolean> {
  if (cached !== undefined) return cached;
  const ns = `h2lab-${process.pid}-probe`;
  try {
    await run('ip', ['netns', 'add', ns]);
    await ip(ns, 'link', 'set', 'lo', 'up');
    await run('tc', ['-n', ns, 'qdisc', 'add', 'dev', 'lo', 'root', 'netem', 'delay', '1ms']);
    cached = true;
  } catch {
    cached = false;
  } finally {
    await run('ip', ['netns', 'del', ns]).catch(() => {});
  }
  return cached;
}

/** The `tc qdisc ... netem` arguments for one direction (egress of the sending side). */
export function netemArgs(d: DirectionSpec, mtuBytes: number): string[] {
  const args = ['netem'];
  if (d.delayMs > 0 || d.jitterMs > 0) {
    args.push('delay', `${d.delayMs}ms`);
    if (d.jitterMs > 0) args.push(`${d.jitterMs}ms`, 'distribution', 'uniform');
  }
  if (d.loss > 0) {
    if (d.burstPackets > 1) {
      const r = 1 / d.burstPackets;
      const p = (d.loss * r) / (1 - d.loss);
      // gemodel p r 1-h 1-k: percentages; loss in Bad = 100%, in Good = 0%.
      args.push('loss', 'gemodel', `${(p * 100).toFixed(6)}%`, `${(r * 100).toFixed(6)}%`, '100%', '0%');
    } else args.push('loss', 'random', `${(d.loss * 100).toFixed(6)}%`);
  }
  if (d.rateBitsPerSec !== undefined) {
    args.push('rate', `${Math.round(d.rateBitsPerSec)}bit`);
    args.push('limit', String(Math.max(1, Math.floor((d.queueBytes ?? 65536) / mtuBytes))));
  } else {
    args.push('limit', '100000');
  }
  return args;
}

/** Creates the veth pair and puts netem on both ends. Returns the device names. */
export async function setupNetem(opts: {
  ns: string;
  /** The client side's namespace, when not the host's. */
  clientNs?: string;
  clientDev: string;
  serverDev: string;
  up: DirectionSpec;
  down: DirectionSpec;
  mtuBytes: number;
}): Promise<void> {
  const { ns, clientDev, serverDev } = opts;
  await ip(
    undefined,
    'link',
    'add',
    clientDev,
    'mtu',
    String(opts.mtuBytes),
    'type',
    'veth',
    'peer',
    'name',
    serverDev,
    'netns',
    ns,
  );
  // Moved before any qdisc is set: a move to another namespace drops the device's qdiscs.
  if (opts.clientNs) await ip(undefined, 'link', 'set', clientDev, 'netns', opts.clientNs);
  const inClient = opts.clientNs ? ['ip', 'netns', 'exec', opts.clientNs] : [];
  // Offloads off (best effort: ethtool may be absent), so netem sees real packets, not GSO super-packets.
  const offloads = ['-K', 'tso', 'off', 'gso', 'off', 'gro', 'off'];
  const [cmd, ...args] = [...inClient, 'ethtool', offloads[0]!, clientDev, ...offloads.slice(1)];
  await run(cmd!, args).catch(() => {});
  await run('ip', ['netns', 'exec', ns, 'ethtool', offloads[0]!, serverDev, ...offloads.slice(1)]).catch(
    () => {},
  );
  await run('tc', [
    ...(opts.clientNs ? ['-n', opts.clientNs] : []),
    'qdisc',
    'replace',
    'dev',
    clientDev,
    'root',
    ...netemArgs(opts.up, opts.mtuBytes),
  ]);
  await run('tc', [
    '-n',
    ns,
    'qdisc',
    'replace',
    'dev',
    serverDev,
    'root',
    ...netemArgs(opts.down, opts.mtuBytes),
  ]);
}

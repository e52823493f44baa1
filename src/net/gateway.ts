/**
 * A link to a server h2lab did not start: the link's namespace becomes a gateway that forwards to
 * the target by NAT, so every connection keeps its own kernel TCP end to end (h2lab's socket on one
 * side, the user's server on the other) and crosses the emulated link both ways — UDP (QUIC) too.
 *
 * ```
 *  host (client: h2lab's engine)      namespace h2lab-<pid>-<n>                     host / network
 *  h2l…c 198.18.x.1 ──relay/link──▶ h2l…s 198.18.x.2                                 target T:port
 *    dials 198.18.x.2:port            DNAT 198.18.x.2 → T (or → h2l…g for 127.x)     (127.0.0.1, a host
 *                                     SNAT (masquerade) out h2l…n 198.18.y.2 ──veth──▶ h2l…g 198.18.y.1
 *                                                                                    address, or remote)
 * ```
 * Exactly one flow crosses: from the link's client address to the target's port (TCP, and UDP when
 * the run speaks QUIC), and its replies. Every NAT rule names that flow, and a filter chain in the
 * namespace and one in h2lab's host table drop everything else arriving from the link's devices, so
 * a neighbour that routes the link's addresses to this host reaches nothing through them.
 * - A target on the host's loopback (127.0.0.0/8) cannot be named from inside a namespace (there it
 *   is the namespace's own loopback): the namespace sends to the host's end of the veth, and the host
 *   DNATs that one port to the loopback address, which Linux allows only with `route_localnet` on
 *   that device.
 * - A target elsewhere (another host, a container, a test's namespace) is reached through the host's
 *   own routes: forwarding is switched on for the two devices the flow comes in by (h2l…g, and the
 *   device of the route to the target, for the replies), never host-wide (src/net/forwarding.ts),
 *   and the host masquerades what leaves by that device.
 * - A target on one of the host's own addresses needs neither.
 *
 * Everything on the host lives in one nftables table named after the link (`h2lab_<pid>_<n>`);
 * `sweepGateways()` removes the tables of dead owners and puts forwarding back, as the namespace sweep
 * does for namespaces.
 */
import { execFileSync, spawn } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { H2labError } from '../core/index.ts';
import {
  acquireForwarding,
  deviceForwarding,
  releaseForwarding,
  setDeviceForwarding,
  sweepForwarding,
} from './forwarding.ts';
import { ip, run, setSysctls } from './netns.ts';
import { ServerSocketWatch } from './server-sockets.ts';

/** Where the target sits, seen from this host: it decides the NAT the gateway needs. */
type TargetLocality = 'loopback' | 'host' | 'remote';

/** What a gateway needs to know from the link it extends. */
interface GatewaySpec {
  /** The link's namespace and its device id (`h2l<id>…`). */
  namespace: string;
  id: string;
  /** The link's device inside the namespace and the address the client dials there. */
  linkDevice: string;
  linkAddress: string;
  /** The link's client address: the only source the gateway forwards from. */
  clientAddress: string;
  /** The target's IPv4 address and port: the only destination it forwards to. */
  target: string;
  port: number;
  /** Whether UDP to the port crosses too (the run speaks QUIC); TCP always does. */
  udp: boolean;
  /** A free /30 for the veth pair between the namespace and the host. */
  pair: { client: string; server: string };
  /** Route pins (`congctl X initcwnd N initrwnd M`) for the server side, when it is on this host. */
  pins: string[];
}

/** What the gateway did, for the link's record. */
export interface Gateway {
  locality: TargetLocality;
  /** Whether the server's side of TCP got the link's congestion control and initial window. */
  serverPinned: boolean;
  /** The address the target sees connections come from (the namespace's end of the veth). */
  serverSide: string;
  /**
   * The server's sockets of this link's connections, read by the kernel as they closed — for a
   * server on this host only (src/net/server-sockets.ts); undefined for a remote one.
   */
  serverSockets: ServerSocketWatch | undefined;
  /** Host changes made for the run, each put back by `close()`. */
  hostChanges: string[];
  close(): Promise<void>;
  /** Synchronous best-effort undo, for the process's 'exit' hook. */
  closeSync(): void;
}

const TABLE_PREFIX = 'h2lab_';

/** The nft command's path, or undefined. */
function nftPath(): string | undefined {
  return ['/usr/sbin/nft', '/sbin/nft', '/usr/bin/nft', '/bin/nft'].find((p) => existsSync(p));
}

/** What is missing for a gateway link, or undefined. */
export function missingGatewayPrerequisite(): string | undefined {
  return nftPath()
    ? undefined
    : 'the `nft` command (Debian: apt-get install nftables): a link to a server h2lab did not start forwards to it by NAT';
}

/** Runs an nft script (in `ns` when given). */
function nft(ns: string | undefined, script: string): Promise<void> {
  const bin = nftPath() ?? 'nft';
  const [cmd, args] = ns ? ['ip', ['netns', 'exec', ns, bin, '-f', '-']] : [bin, ['-f', '-']];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd as string, args as string[], { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve();
      else
        reject(
          new H2labError(
            'H2LAB_ERR_NET_SETUP',
            `\`nft -f -\`${ns ? ` in ${ns}` : ''} failed: ${stderr.trim()}`,
            {
              command: [cmd, ...args],
              stderr: stderr.trim(),
              script,
            },
          ),
        );
    });
    child.stdin.end(script);
  });
}

/**
 * The target's IPv4 address: an IPv4 literal as it is, a name resolved (first IPv4 answer). An IPv6
 * target cannot be put behind a link yet: H2LAB_ERR_INVALID_OPTION naming the fix.
 */
export async function targetAddress(host: string, option = '--net'): Promise<string> {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (net.isIPv4(bare)) return bare;
  if (net.isIPv6(bare) || bare === 'localhost6') {
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `${option}: the target ${host} is an IPv6 address, and links are IPv4 only: give the server's IPv4 address (e.g. 127.0.0.1 for ::1) in the URL`,
      { option, value: host },
    );
  }
  try {
    return (await lookup(bare, { family: 4 })).address;
  } catch (err) {
    throw new H2labError(
      'H2LAB_ERR_TARGET_UNREACHABLE',
      `the target host ${host} has no IPv4 address (${(err as Error).message}): check the URL's host name`,
      { target: host },
    );
  }
}

/** Where `address` is: this host's loopback, one of this host's addresses, or elsewhere. */
export async function localityOf(address: string): Promise<TargetLocality> {
  if (address.startsWith('127.')) return 'loopback';
  const out = await run('ip', ['-4', '-o', 'addr', 'show']);
  for (const m of out.matchAll(/inet (\d+\.\d+\.\d+\.\d+)/g)) if (m[1] === address) return 'host';
  return 'remote';
}

/**
 * The round-trip time to the target without any link: the median of `samples` TCP handshakes from
 * this host (a SYN and its SYN-ACK, so one round trip each; no request reaches the server). The
 * result says what the link's delay adds to. Resolves with the times in ms; rejects with
 * H2LAB_ERR_TARGET_UNREACHABLE when no handshake completes.
 */
export async function measureBaseRtt(
  address: string,
  port: number,
  opts: { samples?: number; timeoutMs?: number } = {},
): Promise<{ medianMs: number; minMs: number; samplesMs: number[] }> {
  const n = opts.samples ?? 5;
  const timeoutMs = opts.timeoutMs ?? 3000;
  const times: number[] = [];
  let lastError = '';
  for (let i = 0; i < n; i++) {
    const t = await new Promise<number | string>((resolve) => {
      const t0 = performance.now();
      const s = net.connect({ host: address, port });
      s.setTimeout(timeoutMs, () => {
        s.destroy();
        resolve(`no answer within ${timeoutMs} ms`);
      });
      s.once('connect', () => {
        const dt = performance.now() - t0;
        s.destroy();
        resolve(dt);
      });
      s.once('error', (err) => resolve(err.message));
    });
    if (typeof t === 'number') times.push(t);
    else lastError = t;
  }
  if (times.length === 0) {
    throw new H2labError(
      'H2LAB_ERR_TARGET_UNREACHABLE',
      `the target ${address}:${port} could not be reached before the link was set up (${lastError}): start the server, or check the URL's host and port`,
      { target: `${address}:${port}` },
    );
  }
  const sorted = [...times].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const medianMs = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { medianMs, minMs: sorted[0]!, samplesMs: times };
}

/** The host table of a link: `h2lab_<pid>_<n>` from its namespace `h2lab-<pid>-<n>`. */
function tableOf(namespace: string): string {
  return namespace.replace(/^h2lab-/, TABLE_PREFIX).replaceAll('-', '_');
}

/** The device the route to `address` leaves by (the one its replies come in by). */
async function deviceTowards(address: string): Promise<string> {
  const out = await ip(undefined, '-4', '-o', 'route', 'get', address);
  const dev = /\bdev (\S+)/.exec(out)?.[1];
  if (!dev)
    throw new H2labError(
      'H2LAB_ERR_NET_SETUP',
      `\`ip route get ${address}\` names no device: ${out.trim()}`,
      {
        target: address,
      },
    );
  return dev;
}

/**
 * Turns the link's namespace into a gateway to `spec.target`'s one port. Call after the link's
 * devices and routes are up. Undo with `close()` (deleting the namespace removes its half anyway).
 */
export async function setupGateway(spec: GatewaySpec): Promise<Gateway> {
  const locality = await localityOf(spec.target);
  const hostDev = `h2l${spec.id}g`;
  const nsDev = `h2l${spec.id}n`;
  const clientDev = `h2l${spec.id}c`;
  const table = tableOf(spec.namespace);
  const hostChanges: string[] = [];
  const undo: Array<() => Promise<void>> = [];
  let forwarded = false;
  const close = async (): Promise<void> => {
    for (const u of undo.reverse()) {
      try {
        await u();
      } catch {}
    }
    undo.length = 0;
  };
  // The one flow: its transport and port, as nft matches them.
  const flow = spec.udp ? `meta l4proto { tcp, udp } th dport ${spec.port}` : `tcp dport ${spec.port}`;
  try {
    await ip(undefined, 'link', 'add', hostDev, 'type', 'veth', 'peer', 'name', nsDev);
    undo.push(async () => {
      await ip(undefined, 'link', 'del', hostDev).catch(() => {});
    });
    await ip(undefined, 'link', 'set', nsDev, 'netns', spec.namespace);
    await run('sysctl', ['-q', '-w', `net.ipv6.conf.${hostDev}.disable_ipv6=1`]).catch(() => {});
    await ip(undefined, 'addr', 'add', spec.pair.client, 'peer', spec.pair.server, 'dev', hostDev);
    await ip(undefined, 'link', 'set', hostDev, 'up');
    await ip(spec.namespace, 'addr', 'add', spec.pair.server, 'peer', spec.pair.client, 'dev', nsDev);
    await ip(spec.namespace, 'link', 'set', nsDev, 'up');
    await ip(spec.namespace, 'route', 'replace', 'default', 'via', spec.pair.client, 'dev', nsDev);
    await setSysctls(spec.namespace, { 'net.ipv4.ip_forward': 1 });
    // The namespace: what the link's client sends to the link's address and the target's port goes
    // to the target (or, for the host's loopback, to the host's end of the veth), and leaves with the
    // namespace's own address (the client's address is one of the host's, which the host would drop
    // as a martian source). Nothing else is forwarded, and nothing reaches the namespace itself.
    const dnatTo = locality === 'loopback' ? spec.pair.client : spec.target;
    await nft(
      spec.namespace,
      [
        'table ip h2lab_gateway {',
        `  chain pre { type nat hook prerouting priority dstnat; iifname "${spec.linkDevice}" ip saddr ${spec.clientAddress} ip daddr ${spec.linkAddress} ${flow} dnat to ${dnatTo}; }`,
        `  chain post { type nat hook postrouting priority srcnat; oifname "${nsDev}" masquerade; }`,
        `  chain forward { type filter hook forward priority filter; policy drop; ct state established,related accept; iifname "${spec.linkDevice}" oifname "${nsDev}" ip saddr ${spec.clientAddress} ip daddr ${dnatTo} ${flow} accept; }`,
        '  chain input { type filter hook input priority filter; policy drop; iifname "lo" accept; ct state established,related accept; }',
        '}',
      ].join('\n'),
    );
    // The host: one table per link. Whatever arrives from the link's devices but the one flow (and
    // its replies) is dropped, so the gateway opens nothing else on this host or beyond it.
    const uplink = locality === 'remote' ? await deviceTowards(spec.target) : undefined;
    const links = `{ "${hostDev}", "${clientDev}" }`;
    const pre: string[] = [];
    const input = [`iifname ${links} ct state established,related accept;`];
    const forward: string[] = [];
    const post: string[] = [];
    if (locality === 'loopback') {
      await run('sysctl', ['-q', '-w', `net.ipv4.conf.${hostDev}.route_localnet=1`]);
      hostChanges.push(`route_localnet on ${hostDev}`);
      pre.push(
        `iifname "${hostDev}" ip saddr ${spec.pair.server} ip daddr ${spec.pair.client} ${flow} dnat to ${spec.target};`,
      );
    }
    if (locality === 'remote') {
      post.push(`ip saddr ${spec.pair.server} oifname "${uplink}" masquerade;`);
      forward.push(
        `iifname "${hostDev}" oifname "${uplink}" ip saddr ${spec.pair.server} ip daddr ${spec.target} ${flow} accept;`,
        `oifname "${hostDev}" ct state established,related accept;`,
      );
    } else
      input.push(`iifname "${hostDev}" ip saddr ${spec.pair.server} ip daddr ${spec.target} ${flow} accept;`);
    input.push(`iifname ${links} drop;`);
    forward.push(`iifname ${links} drop;`, `oifname ${links} drop;`);
    // A device whose forwarding a gateway switches on forwards nothing but gateways' replies.
    const uplinkGuard = [
      `iifname "${uplink}" ct direction reply ct status snat oifname "h2l*" accept;`,
      `iifname "${uplink}" drop;`,
    ];
    const guarded = uplink !== undefined && deviceForwarding(uplink) !== '1';
    if (guarded) forward.push(...uplinkGuard);
    const chain = (name: string, hook: string, rules: string[]): string[] =>
      rules.length === 0 ? [] : [`  chain ${name} { type ${hook}; ${rules.join(' ')} }`];
    await nft(
      undefined,
      [
        `table ip ${table} {`,
        ...chain('pre', 'nat hook prerouting priority dstnat', pre),
        ...chain('post', 'nat hook postrouting priority srcnat', post),
        ...chain('input', 'filter hook input priority filter', input),
        ...chain('forward', 'filter hook forward priority filter', forward),
        '}',
      ].join('\n'),
    );
    undo.push(() => nft(undefined, `delete table ip ${table}`));
    hostChanges.push(`nftables table ${table}`);
    if (uplink !== undefined) {
      // Forwarding for the flow's two input devices: the veth's end (gone with it) and the uplink,
      // whose switch is shared with other gateways (src/net/forwarding.ts).
      setDeviceForwarding(hostDev, '1');
      forwarded = true;
      undo.push(async () => {
        releaseForwarding(spec.namespace);
      });
      const before = acquireForwarding(uplink, spec.namespace);
      if (before !== '1') {
        if (!guarded)
          await nft(
            undefined,
            uplinkGuard.map((r) => `add rule ip ${table} forward ${r.replace(/;$/, '')}`).join('\n'),
          );
        hostChanges.push(`forwarding on ${uplink} (was ${before}) and ${hostDev}`);
      } else hostChanges.push(`forwarding on ${hostDev}`);
    }
    // A server on this host answers through the veth: its route there carries the link's pins, so its
    // side of TCP (the one that sends the responses) gets the congestion control and window asked for.
    let serverPinned = false;
    let serverSockets: ServerSocketWatch | undefined;
    if (locality !== 'remote') {
      serverSockets = new ServerSocketWatch(spec.pair.server);
      const w = serverSockets;
      undo.push(async () => w.close());
      await ip(
        undefined,
        'route',
        'replace',
        `${spec.pair.server}/32`,
        'dev',
        hostDev,
        'src',
        spec.pair.client,
        ...spec.pins,
      );
      serverPinned = true;
    }
    return {
      locality,
      serverPinned,
      serverSide: spec.pair.server,
      serverSockets,
      hostChanges,
      close,
      closeSync() {
        // The namespace's deletion takes the veth (and the route) with it; the table and the
        // uplink's forwarding are the host's.
        serverSockets?.close();
        if (forwarded) releaseForwarding(spec.namespace);
        try {
          spawnSyncNft(`delete table ip ${table}`);
        } catch {}
      },
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Synchronous on purpose: called from a process 'exit' hook and the sweep. */
function spawnSyncNft(cmd: string): void {
  const bin = nftPath();
  if (!bin) return;
  execFileSync(bin, cmd.split(' '), { stdio: 'ignore', timeout: 5000 });
}

/** Live h2lab gateway tables on the host. */
function gatewayTables(): string[] {
  const bin = nftPath();
  if (!bin) return [];
  try {
    const text = execFileSync(bin, ['list', 'tables', 'ip'], { encoding: 'utf8', timeout: 5000 });
    return [...text.matchAll(/table ip (h2lab_\d+_\d+)/g)].map((m) => m[1]!);
  } catch {
    return [];
  }
}

/**
 * Removes the host tables of gateways whose owner process is gone (a crash or SIGKILL), and puts
 * back the forwarding only such gateways needed (src/net/forwarding.ts). Returns the tables removed
 * and the forwarding put back.
 * With `all`, removes every h2lab gateway table.
 */
export function sweepGateways(alive: (pid: number) => boolean, opts: { all?: boolean } = {}): string[] {
  const doomed = gatewayTables().filter((name) => {
    const pid = Number(/^h2lab_(\d+)_/.exec(name)?.[1]);
    return opts.all || !alive(pid);
  });
  // Forwarding first, while the tables still drop what it would let through.
  const restored = doomed.flatMap((name) =>
    releaseForwarding(name.replace(/^h2lab_/, 'h2lab-').replaceAll('_', '-')),
  );
  restored.push(...sweepForwarding());
  const removed: string[] = [];
  for (const name of doomed) {
    try {
      spawnSyncNft(`delete table ip ${name}`);
      removed.push(name);
    } catch {}
  }
  return [...removed, ...restored];
}

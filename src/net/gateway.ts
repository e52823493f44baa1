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
 * - A target on the host's loopback (127.0.0.0/8) cannot be named from inside a namespace (there it
 *   is the namespace's own loopback): the namespace sends to the host's end of the veth, and the host
 *   DNATs that to the loopback address, which Linux allows only with `route_localnet` on that device.
 * - A target elsewhere (another host, a container, a test's namespace) is reached through the host's
 *   own routes: forwarding is switched on for the run (`net.ipv4.ip_forward`, put back after) and the
 *   host masquerades what leaves by any other device, so replies find their way back.
 * - A target on one of the host's own addresses needs neither.
 * Ports are kept (DNAT changes only the address), so one gateway serves every port of the target.
 *
 * Everything on the host lives in one nftables table named after the link (`h2lab_<pid>_<n>`), whose
 * comment records the forwarding value to restore; `sweepGateways()` removes the tables of dead
 * owners and puts forwarding back, as the namespace sweep does for namespaces.
 */
import { execFileSync, spawn } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { H2labError } from '../core/index.ts';
import { ip, readSysctl, run, setSysctls } from './netns.ts';
import { ServerSocketWatch } from './server-sockets.ts';

/** Where the target sits, seen from this host: it decides the NAT the gateway needs. */
export type TargetPlacement = 'loopback' | 'host' | 'remote';

/** What a gateway needs to know from the link it extends. */
export interface GatewaySpec {
  /** The link's namespace and its device id (`h2l<id>…`). */
  namespace: string;
  id: string;
  /** The link's device inside the namespace and the address the client dials there. */
  linkDevice: string;
  linkAddress: string;
  /** The target's IPv4 address. */
  target: string;
  /** A free /30 for the veth pair between the namespace and the host. */
  pair: { client: string; server: string };
  /** Route pins (`congctl X initcwnd N initrwnd M`) for the server side, when it is on this host. */
  pins: string[];
}

/** What the gateway did, for the link's record. */
export interface Gateway {
  placement: TargetPlacement;
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

const FORWARD = 'net.ipv4.ip_forward';
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
export async function placementOf(address: string): Promise<TargetPlacement> {
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

/**
 * Turns the link's namespace into a gateway to `spec.target`. Call after the link's devices and
 * routes are up. Undo with `close()` (deleting the namespace removes its half anyway).
 */
export async function setupGateway(spec: GatewaySpec): Promise<Gateway> {
  const placement = await placementOf(spec.target);
  const hostDev = `h2l${spec.id}g`;
  const nsDev = `h2l${spec.id}n`;
  const table = tableOf(spec.namespace);
  const hostChanges: string[] = [];
  const undo: Array<() => Promise<void>> = [];
  let forwardBefore: string | undefined;
  const close = async (): Promise<void> => {
    for (const u of undo.reverse()) {
      try {
        await u();
      } catch {}
    }
    undo.length = 0;
  };
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
    // The namespace: what the client sends to the link's address goes to the target (or, for the
    // host's loopback, to the host's end of the veth), and leaves with the namespace's own address
    // (the client's address is one of the host's, which the host would drop as a martian source).
    const dnatTo = placement === 'loopback' ? spec.pair.client : spec.target;
    await nft(
      spec.namespace,
      [
        'table ip h2lab_gateway {',
        `  chain pre { type nat hook prerouting priority dstnat; iifname "${spec.linkDevice}" ip daddr ${spec.linkAddress} meta l4proto { tcp, udp } dnat to ${dnatTo}; }`,
        `  chain post { type nat hook postrouting priority srcnat; oifname "${nsDev}" masquerade; }`,
        '}',
      ].join('\n'),
    );
    // The host: one table per link, its comment what to restore if the owner dies.
    const rules: string[] = [];
    if (placement === 'loopback') {
      await run('sysctl', ['-q', '-w', `net.ipv4.conf.${hostDev}.route_localnet=1`]);
      rules.push(
        `  chain pre { type nat hook prerouting priority dstnat; iifname "${hostDev}" ip daddr ${spec.pair.client} meta l4proto { tcp, udp } dnat to ${spec.target}; }`,
      );
    }
    if (placement === 'remote') {
      forwardBefore = readSysctl(FORWARD);
      rules.push(
        `  chain post { type nat hook postrouting priority srcnat; ip saddr ${spec.pair.server} oifname != "${hostDev}" masquerade; }`,
        // Accept the gateway's traffic in a filter chain of our own (a host whose other tables drop
        // forwarded packets still drops them: docs/net.md says what to allow).
        `  chain gateway_forward { type filter hook forward priority filter; ip saddr ${spec.pair.server} accept; ip daddr ${spec.pair.server} accept; }`,
      );
    }
    const comment = forwardBefore === undefined ? '' : `comment "ip_forward=${forwardBefore}";`;
    await nft(undefined, [`table ip ${table} {`, `  ${comment}`, ...rules, '}'].join('\n'));
    undo.push(() => nft(undefined, `delete table ip ${table}`));
    hostChanges.push(`nftables table ${table}`);
    if (placement === 'remote' && forwardBefore !== '1') {
      await run('sysctl', ['-q', '-w', `${FORWARD}=1`]);
      hostChanges.push(`${FORWARD}=1 (was ${forwardBefore ?? 'unset'})`);
      undo.push(() => restoreForwarding(forwardBefore ?? '0', table));
    }
    if (placement === 'loopback') hostChanges.push(`route_localnet on ${hostDev}`);
    // A server on this host answers through the veth: its route there carries the link's pins, so its
    // side of TCP (the one that sends the responses) gets the congestion control and window asked for.
    let serverPinned = false;
    let serverSockets: ServerSocketWatch | undefined;
    if (placement !== 'remote') {
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
      placement,
      serverPinned,
      serverSide: spec.pair.server,
      serverSockets,
      hostChanges,
      close,
      closeSync() {
        // The namespace's deletion takes the veth (and the route) with it; the table and forwarding
        // are the host's.
        serverSockets?.close();
        try {
          spawnSyncNft(`delete table ip ${table}`);
        } catch {}
        if (placement === 'remote' && forwardBefore !== '1') restoreForwardingSync(forwardBefore ?? '0');
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

/** Live h2lab gateway tables on the host: name → comment. */
function gatewayTables(): Map<string, string> {
  const bin = nftPath();
  const out = new Map<string, string>();
  if (!bin) return out;
  let text = '';
  try {
    text = execFileSync(bin, ['list', 'tables', 'ip'], { encoding: 'utf8', timeout: 5000 });
  } catch {
    return out;
  }
  for (const m of text.matchAll(/table ip (h2lab_\d+_\d+)/g)) {
    let comment = '';
    try {
      const body = execFileSync(bin, ['list', 'table', 'ip', m[1]!], { encoding: 'utf8', timeout: 5000 });
      comment = /comment "([^"]*)"/.exec(body)?.[1] ?? '';
    } catch {}
    out.set(m[1]!, comment);
  }
  return out;
}

/** Puts forwarding back to `before` unless another live gateway still forwards. */
async function restoreForwarding(before: string, ownTable: string): Promise<void> {
  const others = [...gatewayTables()].filter(([name, c]) => name !== ownTable && c.startsWith('ip_forward='));
  if (others.length === 0 && readSysctl(FORWARD) === '1')
    await run('sysctl', ['-q', '-w', `${FORWARD}=${before}`]);
}

function restoreForwardingSync(before: string): void {
  try {
    execFileSync('sysctl', ['-q', '-w', `${FORWARD}=${before}`], { stdio: 'ignore', timeout: 5000 });
  } catch {}
}

/**
 * Removes the host tables of gateways whose owner process is gone (a crash or SIGKILL), and puts
 * forwarding back to what the oldest of them recorded when no live gateway needs it. Returns the
 * tables removed. With `all`, removes every h2lab gateway table.
 */
export function sweepGateways(alive: (pid: number) => boolean, opts: { all?: boolean } = {}): string[] {
  const tables = gatewayTables();
  const removed: string[] = [];
  let restore: string | undefined;
  for (const [name, comment] of tables) {
    const pid = Number(/^h2lab_(\d+)_/.exec(name)?.[1]);
    if (!opts.all && alive(pid)) continue;
    try {
      spawnSyncNft(`delete table ip ${name}`);
      removed.push(name);
      const before = /^ip_forward=(\d)/.exec(comment)?.[1];
      if (before !== undefined) restore ??= before;
    } catch {}
  }
  const stillForwarding = [...tables].some(
    ([name, c]) => !removed.includes(name) && c.startsWith('ip_forward='),
  );
  if (restore !== undefined && !stillForwarding) restoreForwardingSync(restore);
  return removed;
}

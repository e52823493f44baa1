/**
 * `createLink()`: a server network namespace joined to the host by an emulated link.
 *
 * ```
 *   host namespace (client: h2lab's load engine, curl, …)        namespace h2lab-<pid>-<n> (server)
 *   h2l…c  198.18.x.1  ◀──── relay process (link pipeline) ────▶  h2l…s  198.18.x.2
 *                        or a veth pair with tc netem (netem backend)
 * ```
 * The client side is the host namespace: h2lab's own load engine runs in-process there and reaches
 * the server at `serverAddress` without being re-spawned; only the target needs a namespace. The
 * host's own sysctls are never changed: the client side's congestion control and initial window are
 * pinned on the one route to the server (`ip route … congctl … initcwnd …`), which affects only this
 * link. The server namespace gets them as sysctls plus larger socket buffers for high-BDP links.
 */
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { H2labError, nodeArgv } from '../core/index.ts';
import type { LinkInfo } from '../model/index.ts';
import type { CaptureSummary } from './capture.ts';
import type { FlowDrops } from './flows.ts';
import { type Gateway, missingGatewayPrerequisite, setupGateway, sweepGateways } from './gateway.ts';
import { loadNative } from './native.ts';
import { netemAvailable, setupNetem } from './netem.ts';
import {
  alive,
  allocatePair,
  deleteNamespace,
  deleteNamespaceSync,
  ip,
  missingPrerequisite,
  readSysctl,
  readSysctls,
  run,
  setSysctls,
  sweepNamespaces,
} from './netns.ts';
import type { DirectionStats } from './pipeline.ts';
import { CONGESTION_CONTROLS } from './presets.ts';
import { type LinkProfile, type LinkSpecInput, resolveProfile } from './profiles.ts';
import type { RelayStats } from './relay.ts';
import type { RelayTraceData } from './relay-trace.ts';
import type { TcpReading } from './tcp-info.ts';

export { CONGESTION_CONTROLS } from './presets.ts';

/** Options of {@link createLink}. The schema is the one source of truth (defaults, validation). */
const LinkOptionsSchema = z.strictObject({
  /** A preset name (`wan`, `lossy`, …) or an explicit link spec. Default `relay` (no impairment). */
  profile: z.union([z.string(), z.record(z.string(), z.unknown())]).default('relay'),
  /** Changes on top of the preset (e.g. `{ lossDown: 0.01 }`). */
  overrides: z.record(z.string(), z.unknown()).default({}),
  /** `auto` = netem where the kernel has it, else relay. */
  backend: z.enum(['auto', 'relay', 'netem']).default('auto'),
  /** TCP congestion control on both ends. Default: the host's current default (recorded). */
  congestionControl: z.enum(CONGESTION_CONTROLS).optional(),
  /** net.ipv4.tcp_slow_start_after_idle in the server namespace (kernel default true). */
  slowStartAfterIdle: z.boolean().default(true),
  /** Initial congestion window in segments on both ends' routes (kernel default 10, RFC 6928). */
  initialCwnd: z.number().int().min(1).max(1000).default(10),
  /**
   * Maximum TCP socket buffer in the server namespace, bytes (tcp_rmem/tcp_wmem max). Default 32 MiB:
   * with the kernel's 4 MiB one flow at 100 ms RTT is capped near 260 Mbit/s by its send buffer.
   */
  socketBufferMaxBytes: z
    .number()
    .int()
    .min(65536)
    .default(32 * 1024 * 1024),
  /**
   * The IPv4 address of a server h2lab did not start (this host's loopback, one of its addresses, or
   * another host): the namespace becomes a gateway that forwards what the client sends to
   * `serverAddress` and `targetPort` on to it by NAT, and nothing else (src/net/gateway.ts).
   * Default: none (the server
   * runs in the namespace).
   */
  target: z.string().optional(),
  /**
   * Put the client side in a namespace of its own (`clientNamespace`) instead of the host's: a
   * process started there (`spawnInClient`) sees this link's interface and loopback only, never the
   * ones other links add and remove in the host's. Not with `target`.
   */
  clientNamespace: z.boolean().default(false),
  /** With `target`: the target's port, the only one the gateway forwards to (required). */
  targetPort: z.number().int().min(1).max(65535).optional(),
  /** With `target`: UDP to that port crosses too (the run speaks QUIC). TCP always does. */
  targetUdp: z.boolean().default(false),
  /** Where link addresses come from: RFC 2544's benchmarking range by default. */
  addressRange: z.string().default('198.18.0.0/15'),
  /** Device MTU, bytes. */
  mtuBytes: z.number().int().min(576).max(1500).default(1500),
  /** Seed for loss and jitter draws (relay backend): the same seed drops the same packets. */
  seed: z.number().int().default(1),
  /** Relay: release packets due within this many ms in one wake-up. */
  relaySlackMs: z.number().min(0).max(1).default(0.1),
  /**
   * Relay: before a sleep longer than twice this (ms), set the timer this much early and spin to the
   * deadline. A sleeping relay's wake-up is 0.03–0.2 ms late on a VM; 0 = off.
   */
  relayEarlyWakeMs: z.number().min(0).max(1).default(0.15),
  /**
   * Relay scheduling. `realtime` (SCHED_FIFO 20 through chrt) lets the relay preempt ordinary
   * processes, so a busy host (the load generator, the server, other work) does not delay packets;
   * the kernel's RT throttling still leaves 5% of each core to others. `high` = nice −10.
   */
  relayPriority: z.enum(['realtime', 'high', 'normal']).default('realtime'),
  /**
   * Relay: record per-packet timestamps (read, due, write) for this many packets, to find where
   * added delay comes from; read them with `Link.relayTrace()`. 0 = off (the default; 56 bytes each).
   */
  relayTraceCapacity: z.number().int().min(0).max(10_000_000).default(0),
});

export type LinkOptions = z.input<typeof LinkOptionsSchema>;

/** Live counters of the link (relay backend; netem's counters are the kernel's). */
export interface LinkStats {
  up?: DirectionStats;
  down?: DirectionStats;
  /** CPU seconds the relay used / its wall seconds (1.0 = one core). */
  relayCpu?: number;
  relayCpuSeconds?: number;
  /** How late the relay released queued packets after their due time, ms. */
  releaseLateMs?: RelayStats['releaseLateMs'];
  /** Garbage collections in the relay process since it started (each one pauses the link). */
  relayGc?: { count: number; totalMs: number; maxMs: number };
  /**
   * Packets the relay dropped, per flow (client address:port ↔ server address:port) and cause, since
   * the link was created; only flows that lost any. Match a run's connections by client port
   * ({@link linkDropsFor}).
   */
  flows?: FlowDrops[];
  /** Dropped packets no flow could be named for (not IPv4, or more flows than the relay tracks). */
  untrackedDrops?: number;
}

/** One emulated link. Close it when done (also done on process exit). */
export interface Link {
  /** What the link is, for results: profile, backend, pinned kernel knobs. */
  readonly info: LinkInfo;
  readonly profile: LinkProfile;
  /** The namespace the server side lives in (`ip netns exec NAME …`). */
  readonly namespace: string;
  /**
   * The server side's address (inside the namespace). With `target`, the address a client dials to
   * reach the target through the link (on the target's port, the only one forwarded).
   */
  readonly serverAddress: string;
  /** The client side's address (host namespace, or `clientNamespace`). */
  readonly clientAddress: string;
  /** The client side's own namespace, when asked for (`clientNamespace: true`); else the host's. */
  readonly clientNamespace: string | undefined;
  /** The relay process's pid (relay backend; undefined with netem), e.g. to watch its CPU. */
  readonly relayPid: number | undefined;
  /** Runs a command inside the server namespace (as `ip netns exec NS cmd args`). */
  spawnInServer(cmd: string, args?: readonly string[], opts?: SpawnOptions): ChildProcess;
  /** Runs a command on the client side: in `clientNamespace`, or here in the host's. */
  spawnInClient(cmd: string, args?: readonly string[], opts?: SpawnOptions): ChildProcess;
  stats(): Promise<LinkStats>;
  /**
   * Forgets what the host's TCP metrics cache learnt about this link's addresses (ssthresh, RTT), so
   * the next connection starts from the kernel's defaults, as the namespace's side always does
   * (`tcp_no_metrics_save`): call between runs. Never throws.
   */
  forgetTcpMetrics(): Promise<void>;
  /**
   * A server h2lab did not start, on this host, behind this link: its sockets of the given
   * connections as the kernel read them when they closed (waiting briefly for late closes), for
   * `connections.tcp.server`. Undefined when the server side cannot be read (a remote target, or a
   * server in the namespace, which reads its own).
   */
  serverTcp(
    connections: ReadonlyArray<{ clientPort: number; serverPort: number }>,
  ): Promise<TcpReading[] | undefined>;
  /** The relay's per-packet trace so far (needs `relayTraceCapacity`), else undefined. */
  relayTrace(): Promise<RelayTraceData | undefined>;
  /**
   * Starts the link's capture stage (`capture.ts`): every packet from now on, both directions, with
   * its fate. False when this link cannot capture (the netem backend has no relay to see packets).
   */
  startCapture(opts: { snapBytes: number; maxBytes: number }): Promise<boolean>;
  /** Ends the capture and writes it to `path` as pcapng; undefined when none was running. */
  stopCapture(path: string): Promise<CaptureSummary | undefined>;
  /** Stops the relay, deletes the namespace and restores what was changed globally. Idempotent. */
  close(): Promise<void>;
}

let linkCounter = 0;

function unavailable(what: string): H2labError {
  return new H2labError(
    'H2LAB_ERR_NET_UNAVAILABLE',
    `network emulation is not available here: missing ${what}`,
    {
      missing: what,
    },
  );
}

/**
 * Checks what the given backend needs, without creating anything. Throws H2LAB_ERR_NET_UNAVAILABLE
 * naming what is missing.
 */
export function checkNetAvailable(backend: 'relay' | 'netem' | 'auto' = 'relay'): void {
  const missing = missingPrerequisite(backend !== 'netem');
  if (missing) throw unavailable(missing);
  if (backend !== 'netem') loadNative();
}

const ALLOWED_CC = 'net.ipv4.tcp_allowed_congestion_control';

/**
 * Creates the link: namespace, devices, addresses, routes, kernel knobs, and (relay backend) the
 * relay process. Sweeps namespaces left by dead h2lab processes first.
 *
 * @example
 * const link = await createLink({ profile: 'wan', congestionControl: 'cubic' });
 * const server = link.spawnInServer('node', ['server.js', '--host', link.serverAddress]);
 * // … client traffic to link.serverAddress …
 * await link.close();
 */
export async function createLink(options: LinkOptions = {}): Promise<Link> {
  const opts = parseLinkOptions(options);
  const profile = resolveProfile(
    typeof opts.profile === 'string' ? opts.profile : (opts.profile as LinkSpecInput),
    opts.overrides as LinkSpecInput,
  );
  if (opts.target !== undefined && opts.targetPort === undefined) {
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      'link option targetPort: a link to a target forwards one port only: give the port the target listens on',
      { option: 'targetPort' },
    );
  }
  const missing =
    missingPrerequisite(opts.backend !== 'netem') ??
    (opts.target !== undefined ? missingGatewayPrerequisite() : undefined);
  if (missing) throw unavailable(missing);
  if (opts.clientNamespace && opts.target !== undefined) {
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      'link option clientNamespace: a link to a target keeps its client side in the host namespace: drop one of the two',
      { option: 'clientNamespace' },
    );
  }
  await sweepLinks();
  const backend = await chooseBackend(opts.backend);
  const parts = new LinkParts(
    linkCounter++,
    (opts.congestionControl ?? readSysctl('net.ipv4.tcp_congestion_control') ?? 'cubic') as string,
    opts.clientNamespace,
  );
  try {
    await run('ip', ['netns', 'add', parts.namespace]);
    process.on('exit', parts.onExit);
    parts.cleanups.push(() => deleteNamespace(parts.namespace));
    await ip(parts.namespace, 'link', 'set', 'lo', 'up');
    if (parts.clientNamespace) {
      const cns = parts.clientNamespace;
      await run('ip', ['netns', 'add', cns]);
      parts.cleanups.push(() => deleteNamespace(cns));
      await ip(cns, 'link', 'set', 'lo', 'up');
    }
    await allowCongestionControl(parts);
    const pair = await allocatePair(opts.addressRange);
    if (backend === 'relay') await attachRelay(parts, profile, opts);
    else await attachNetem(parts, profile, opts.mtuBytes);
    await addressDevices(parts, pair, opts.mtuBytes);
    const pins = routePins(parts.cc, opts.initialCwnd);
    await pinRoutes(parts, pair, pins);
    await tuneServerNamespace(parts, opts);
    if (opts.target !== undefined) await attachGateway(parts, pair, opts, pins);
    // Read back what the kernel took: the result records facts, not requests.
    const actual = await readSysctls(parts.namespace, [
      'net.ipv4.tcp_congestion_control',
      'net.ipv4.tcp_slow_start_after_idle',
      'net.ipv4.tcp_no_metrics_save',
    ]);
    return linkHandle(parts, profile, linkInfo({ profile, backend, opts, actual, pair, parts }), pair, opts);
  } catch (err) {
    await parts.close();
    throw err;
  }
}

/** Parses the options; a zod issue becomes H2LAB_ERR_INVALID_OPTION naming the option. */
function parseLinkOptions(options: LinkOptions): z.output<typeof LinkOptionsSchema> {
  const parsedOpts = LinkOptionsSchema.safeParse(options);
  if (parsedOpts.success) return parsedOpts.data;
  const issue = parsedOpts.error.issues[0];
  throw new H2labError(
    'H2LAB_ERR_INVALID_OPTION',
    `link option ${issue?.path.join('.')}: ${issue?.message}`,
    {
      option: issue?.path.join('.'),
    },
  );
}

/** `auto` takes netem where the kernel has it; `netem` on a kernel without it is refused. */
async function chooseBackend(asked: 'auto' | 'relay' | 'netem'): Promise<'relay' | 'netem'> {
  let backend: 'relay' | 'netem' = asked === 'netem' ? 'netem' : 'relay';
  if (asked === 'auto' && (await netemAvailable())) backend = 'netem';
  if (asked === 'netem' && !(await netemAvailable())) {
    throw new H2labError(
      'H2LAB_ERR_NET_BACKEND',
      '--backend netem: this kernel has no netem qdisc (sch_netem): use --backend relay or auto',
      { option: '--backend', value: 'netem' },
    );
  }
  // Fail early and clearly (exit 2) when the addon is missing, before creating anything.
  if (backend === 'relay') loadNative();
  return backend;
}

/**
 * What a link being built holds: its names, what undoes each step (run in reverse by {@link close}),
 * and the processes a dying h2lab must not leave behind.
 */
class LinkParts {
  readonly cleanups: Array<() => Promise<void> | void> = [];
  relayChild: ChildProcess | undefined;
  relayPriority: 'realtime' | 'high' | 'normal' | undefined;
  gateway: Gateway | undefined;
  closed = false;

  /** `h2lab-<pid>-<n>`: the server side's namespace. */
  readonly namespace: string;
  /** Short, unique among this host's links: device and gateway names carry it. */
  readonly id: string;
  readonly clientDev: string;
  readonly serverDev: string;

  /** `h2lab-<pid>-<n>c`: the client side's namespace, when it has one. */
  readonly clientNamespace: string | undefined;

  constructor(
    n: number,
    /** The congestion control pinned on both ends. */
    readonly cc: string,
    ownClientNamespace = false,
  ) {
    this.namespace = `h2lab-${process.pid}-${n}`;
    this.clientNamespace = ownClientNamespace ? `${this.namespace}c` : undefined;
    this.id = `${process.pid.toString(36)}${n.toString(36)}`;
    this.clientDev = `h2l${this.id}c`;
    this.serverDev = `h2l${this.id}s`;
  }

  readonly onExit = (): void => {
    this.relayChild?.kill('SIGKILL');
    this.gateway?.closeSync();
    deleteNamespaceSync(this.namespace);
    if (this.clientNamespace) deleteNamespaceSync(this.clientNamespace);
  };

  readonly close = async (): Promise<void> => {
    if (this.closed) return;
    this.closed = true;
    process.off('exit', this.onExit);
    for (const c of this.cleanups.reverse()) {
      try {
        await c();
      } catch {}
    }
  };
}

/**
 * Inside a namespace only algorithms in the *global* allowed list can be chosen; cubic is not in it
 * by default. Adds it from the root namespace and puts the list back afterwards.
 */
async function allowCongestionControl(parts: LinkParts): Promise<void> {
  const allowed = readSysctl(ALLOWED_CC);
  if (allowed === undefined || allowed.split(' ').includes(parts.cc)) return;
  const widened = `${allowed} ${parts.cc}`;
  await run('sysctl', ['-q', '-w', `${ALLOWED_CC}=${widened}`]);
  parts.cleanups.push(async () => {
    // Restore only if nobody changed it since (another link may have widened it too).
    if (readSysctl(ALLOWED_CC) === widened) await run('sysctl', ['-q', '-w', `${ALLOWED_CC}=${allowed}`]);
  });
}

/** Relay backend: the relay process opens both TUN devices; the server one moves into the namespace. */
async function attachRelay(
  parts: LinkParts,
  profile: LinkProfile,
  opts: z.output<typeof LinkOptionsSchema>,
): Promise<void> {
  const child = await startRelay(parts.clientDev, parts.serverDev, profile, opts.seed, {
    slackMs: opts.relaySlackMs,
    earlyWakeMs: opts.relayEarlyWakeMs,
    traceCapacity: opts.relayTraceCapacity,
  });
  parts.relayChild = child;
  parts.relayPriority = await prioritise(child, opts.relayPriority);
  parts.cleanups.push(() => stopRelay(child));
  await ip(undefined, 'link', 'set', parts.serverDev, 'netns', parts.namespace);
  if (parts.clientNamespace)
    await ip(undefined, 'link', 'set', parts.clientDev, 'netns', parts.clientNamespace);
}

/** netem backend: a veth pair with netem on each end's egress. */
async function attachNetem(parts: LinkParts, profile: LinkProfile, mtuBytes: number): Promise<void> {
  await setupNetem({
    ns: parts.namespace,
    clientDev: parts.clientDev,
    serverDev: parts.serverDev,
    ...(parts.clientNamespace ? { clientNs: parts.clientNamespace } : {}),
    up: profile.up,
    down: profile.down,
    mtuBytes,
  });
  parts.cleanups.push(() =>
    ip(parts.clientNamespace, 'link', 'del', parts.clientDev)
      .then(() => {})
      .catch(() => {}),
  );
}

/** Both ends' addresses and MTU; IPv4 only. */
async function addressDevices(
  parts: LinkParts,
  pair: { client: string; server: string },
  mtuBytes: number,
): Promise<void> {
  const { namespace, clientNamespace: cns, clientDev, serverDev } = parts;
  const mtu = String(mtuBytes);
  // IPv4 only: without this the kernel sends IPv6 router/multicast chatter through the link, which
  // takes loss and jitter draws and shows up in the counters.
  const noV6 = `net.ipv6.conf.${clientDev}.disable_ipv6`;
  await (cns ? setSysctls(cns, { [noV6]: 1 }) : run('sysctl', ['-q', '-w', `${noV6}=1`])).catch(() => {});
  await setSysctls(namespace, { [`net.ipv6.conf.${serverDev}.disable_ipv6`]: 1 }).catch(() => {});
  await ip(cns, 'addr', 'add', pair.client, 'peer', pair.server, 'dev', clientDev);
  await ip(cns, 'link', 'set', clientDev, 'mtu', mtu, 'up');
  await ip(namespace, 'addr', 'add', pair.server, 'peer', pair.client, 'dev', serverDev);
  await ip(namespace, 'link', 'set', serverDev, 'mtu', mtu, 'up');
}

/** The per-route TCP pins: congestion control and initial windows. */
function routePins(cc: string, initialCwnd: number): string[] {
  return ['congctl', cc, 'initcwnd', String(initialCwnd), 'initrwnd', String(Math.max(initialCwnd, 10))];
}

/** Per-route pins: they apply to connections on this link only, on both ends. */
async function pinRoutes(
  parts: LinkParts,
  pair: { client: string; server: string },
  pins: string[],
): Promise<void> {
  await ip(
    parts.clientNamespace,
    'route',
    'replace',
    `${pair.server}/32`,
    'dev',
    parts.clientDev,
    'src',
    pair.client,
    ...pins,
  );
  await ip(
    parts.namespace,
    'route',
    'replace',
    `${pair.client}/32`,
    'dev',
    parts.serverDev,
    'src',
    pair.server,
    ...pins,
  );
}

/** The server namespace's TCP: congestion control, slow start after idle, no metrics cache, buffers. */
async function tuneServerNamespace(
  parts: LinkParts,
  opts: z.output<typeof LinkOptionsSchema>,
): Promise<void> {
  const bufMax = opts.socketBufferMaxBytes;
  await setSysctls(parts.namespace, {
    'net.ipv4.tcp_congestion_control': parts.cc,
    'net.ipv4.tcp_slow_start_after_idle': opts.slowStartAfterIdle ? 1 : 0,
    // Each run starts from the kernel's defaults, not from the ssthresh and RTT the last run's
    // losses left in the namespace's per-destination metrics cache (the referee saw runs on one
    // link carry over that way); the host side is never reconfigured.
    'net.ipv4.tcp_no_metrics_save': 1,
    'net.ipv4.tcp_rmem': `4096 131072 ${bufMax}`,
    'net.ipv4.tcp_wmem': `4096 16384 ${bufMax}`,
    'net.core.rmem_max': bufMax,
    'net.core.wmem_max': bufMax,
  });
}

/** `target`: the namespace becomes a gateway to a server h2lab did not start (src/net/gateway.ts). */
async function attachGateway(
  parts: LinkParts,
  pair: { client: string; server: string },
  opts: z.output<typeof LinkOptionsSchema>,
  pins: string[],
): Promise<void> {
  const gwPair = await allocatePair(opts.addressRange);
  const gateway = await setupGateway({
    namespace: parts.namespace,
    id: parts.id,
    linkDevice: parts.serverDev,
    linkAddress: pair.server,
    clientAddress: pair.client,
    target: opts.target!,
    port: opts.targetPort!,
    udp: opts.targetUdp,
    pair: gwPair,
    pins,
  });
  parts.gateway = gateway;
  parts.cleanups.push(() => gateway.close());
}

/** What the link is, for results: the profile, the backend and what the kernel took. */
function linkInfo(a: {
  profile: LinkProfile;
  backend: 'relay' | 'netem';
  opts: z.output<typeof LinkOptionsSchema>;
  actual: Record<string, string | undefined>;
  pair: { client: string; server: string };
  parts: LinkParts;
}): LinkInfo {
  const { profile, opts, actual, parts } = a;
  const { gateway, relayPriority } = parts;
  return {
    profile: profile.name,
    backend: a.backend,
    rttMs: profile.rttMs,
    jitterMs: profile.jitterMs,
    loss: profile.loss,
    ...(profile.rateBitsPerSec === undefined ? {} : { rateBitsPerSec: profile.rateBitsPerSec }),
    ...(profile.down.queueBytes === undefined ? {} : { queueBytes: profile.down.queueBytes }),
    congestionControl: actual['net.ipv4.tcp_congestion_control'] ?? parts.cc,
    slowStartAfterIdle: actual['net.ipv4.tcp_slow_start_after_idle'] === '1',
    noMetricsSave: actual['net.ipv4.tcp_no_metrics_save'] === '1',
    initialCwnd: opts.initialCwnd,
    lossUp: profile.up.loss,
    lossDown: profile.down.loss,
    burstPackets: profile.burstPackets,
    ...(profile.up.rateBitsPerSec === undefined ? {} : { rateUpBitsPerSec: profile.up.rateBitsPerSec }),
    reorder: profile.reorder,
    mtuBytes: opts.mtuBytes,
    socketBufferMaxBytes: opts.socketBufferMaxBytes,
    seed: opts.seed,
    ...(relayPriority ? { relayPriority } : {}),
    serverAddress: a.pair.server,
    clientAddress: a.pair.client,
    ...(gateway && opts.target !== undefined
      ? {
          gateway: {
            target: opts.target,
            placement: gateway.locality,
            serverPinned: gateway.serverPinned,
            hostChanges: gateway.hostChanges,
          },
        }
      : {}),
  };
}

/** The {@link Link} a caller holds. */
function linkHandle(
  parts: LinkParts,
  profile: LinkProfile,
  info: LinkInfo,
  pair: { client: string; server: string },
  opts: z.output<typeof LinkOptionsSchema>,
): Link {
  const { namespace, clientNamespace, gateway, relayChild } = parts;
  return {
    info,
    profile,
    namespace,
    serverAddress: pair.server,
    clientAddress: pair.client,
    relayPid: relayChild?.pid,
    clientNamespace,
    spawnInServer(cmd, args = [], spawnOpts = {}) {
      return spawn('ip', ['netns', 'exec', namespace, cmd, ...args], spawnOpts);
    },
    spawnInClient(cmd, args = [], spawnOpts = {}) {
      if (!clientNamespace) return spawn(cmd, [...args], spawnOpts);
      return spawn('ip', ['netns', 'exec', clientNamespace, cmd, ...args], spawnOpts);
    },
    async forgetTcpMetrics() {
      const addresses = [pair.server, ...(gateway?.serverSide ? [gateway.serverSide] : [])];
      for (const a of addresses)
        await ip(clientNamespace, 'tcp_metrics', 'delete', 'address', a).catch(() => {});
    },
    async serverTcp(connections) {
      // The server's socket is destroyed only once its FIN and the client's last ACK have crossed
      // the link: wait up to a few round trips beyond the half second a busy host may need.
      return gateway?.serverSockets?.readings(connections, 500 + 4 * profile.rttMs);
    },
    async stats() {
      if (!relayChild || parts.closed) return {};
      return relayStats(relayChild);
    },
    async relayTrace() {
      if (!relayChild || parts.closed || opts.relayTraceCapacity === 0) return undefined;
      return readRelayTrace(relayChild);
    },
    async startCapture(capture) {
      if (!relayChild || parts.closed) return false;
      const reply = await askRelay(relayChild, { type: 'capture-start', ...capture }, 5000);
      return reply?.ok === true;
    },
    async stopCapture(path) {
      if (!relayChild || parts.closed) return undefined;
      // Writing a capture at its size cap takes the relay a moment: a generous wait.
      const reply = await askRelay(relayChild, { type: 'capture-stop', path }, 30_000);
      return reply?.summary as CaptureSummary | undefined;
    },
    close: parts.close,
  };
}

/**
 * Removes what dead h2lab processes left: their namespaces (with the processes inside) and their
 * gateways' host tables (forwarding put back). With `all`, every h2lab namespace and table.
 * Returns what was removed.
 */
export async function sweepLinks(opts: { all?: boolean } = {}): Promise<string[]> {
  const namespaces = await sweepNamespaces(opts);
  return [...namespaces, ...sweepGateways(alive, opts)];
}

/**
 * V8 flags of the relay process. `--single-threaded-gc`: the garbage collector works on the relay's
 * own thread only. With background GC threads, the realtime main thread waits for them at the end of
 * a collection (the C++ heap's sweeper reschedules itself in a busy loop until its concurrent sweeper
 * job is done); with several realtime relays holding both cores, those threads never got a CPU and
 * the relays spun at 95% for minutes while their links stalled. The relay's heap is a few MB, so the
 * collector's work on the main thread is short.
 */
const RELAY_V8_FLAGS: readonly string[] = [
  '--single-threaded-gc',
  // A young generation of 16 MB from the start (V8 begins with 1 MB and grows it only when much
  // survives): the relay allocates a little per wake-up, and at 100 Mbit/s the default size meant a
  // 0.3–0.6 ms scavenge about every 0.6 s, each one delaying every packet due meanwhile.
  '--min-semi-space-size=16',
  '--max-semi-space-size=16',
  // So the relay can collect its start-up garbage before it forwards anything (relay-process.ts).
  '--expose-gc',
];

async function startRelay(
  clientName: string,
  serverName: string,
  profile: LinkProfile,
  seed: number,
  tuning: { slackMs: number; earlyWakeMs: number; traceCapacity: number },
): Promise<ChildProcess> {
  const [node, ...args] = nodeArgv('net/relay-process');
  // A process group of its own: Ctrl-C in a terminal signals the whole foreground group, and a relay
  // that died with it would take the link away under the run being stopped (its owner stops it; it
  // exits by itself when its owner's IPC channel closes).
  const child = spawn(node!, [...RELAY_V8_FLAGS, ...args], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    detached: true,
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new H2labError('H2LAB_ERR_NET_SETUP', 'the packet relay did not start within 15 s', {}));
    }, 15_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(
        new H2labError('H2LAB_ERR_NET_SETUP', `the packet relay exited during start-up (status ${code})`, {}),
      );
    });
    child.on('message', function onMessage(raw) {
      const msg = raw as { type: string; message?: string; code?: string };
      if (msg.type === 'ready') {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.removeAllListeners('exit');
        resolve();
      } else if (msg.type === 'error') {
        clearTimeout(timer);
        child.kill('SIGKILL');
        reject(
          msg.code === 'H2LAB_ERR_NET_UNAVAILABLE'
            ? new H2labError('H2LAB_ERR_NET_UNAVAILABLE', msg.message ?? 'relay unavailable', {})
            : new H2labError(
                'H2LAB_ERR_NET_SETUP',
                `the packet relay could not open its TUN devices: ${msg.message}`,
                {},
              ),
        );
      }
    });
    child.send({
      type: 'start',
      clientName,
      serverName,
      up: profile.up,
      down: profile.down,
      seed,
      ...tuning,
    });
  });
  // Keep the relay from holding the parent's event loop open; the IPC channel is unref'd too.
  child.unref();
  (child.channel as { unref?: () => void } | undefined)?.unref?.();
  return child;
}

/**
 * The relay is the link: if it waits for a CPU, every packet waits. Returns the priority it got
 * (best effort: falls back from realtime to nice −10 to normal).
 *
 * Realtime applies to the relay's main thread only (the event loop that moves every packet), never
 * to Node's helper threads (`chrt -a` did that once): a SCHED_FIFO thread is never preempted by an
 * equal-priority one, so a realtime main thread that waits for a realtime helper queued on the same
 * core waits forever when the other core is held too. Helper threads stay ordinary and the kernel
 * runs them on whichever core is free (or in the 5% of each second its RT throttling keeps back).
 */
async function prioritise(
  child: ChildProcess,
  want: 'realtime' | 'high' | 'normal',
): Promise<'realtime' | 'high' | 'normal'> {
  if (child.pid === undefined || want === 'normal') return 'normal';
  if (want === 'realtime') {
    try {
      // Without -a: the thread whose id is the pid, i.e. the main thread.
      await run('chrt', ['-f', '-p', '20', String(child.pid)]);
      return 'realtime';
    } catch {}
  }
  try {
    setPriority(child.pid, -10);
    return 'high';
  } catch {
    return 'normal';
  }
}

function relayStats(child: ChildProcess): Promise<LinkStats> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({}), 2000);
    child.on('message', function onMessage(raw) {
      const msg = raw as {
        type: string;
        stats?: RelayStats;
        cpuUs?: number;
        uptimeMs?: number;
        gc?: LinkStats['relayGc'];
      };
      if (msg.type !== 'stats') return;
      clearTimeout(timer);
      child.off('message', onMessage);
      const cpuSeconds = (msg.cpuUs ?? 0) / 1e6;
      resolve({
        ...(msg.stats
          ? {
              up: msg.stats.up,
              down: msg.stats.down,
              releaseLateMs: msg.stats.releaseLateMs,
              flows: msg.stats.flows,
              untrackedDrops: msg.stats.untrackedDrops,
            }
          : {}),
        relayCpuSeconds: cpuSeconds,
        ...(msg.gc ? { relayGc: msg.gc } : {}),
        relayCpu: msg.uptimeMs ? cpuSeconds / (msg.uptimeMs / 1000) : 0,
      });
    });
    // A relay that is gone (killed with its process group, crashed) has no stats: none, not a throw.
    if (!child.connected) {
      clearTimeout(timer);
      resolve({});
      return;
    }
    child.send({ type: 'stats' }, (err) => {
      if (!err) return;
      clearTimeout(timer);
      resolve({});
    });
  });
}

/**
 * Sends `msg` to the relay and resolves with its answer of the same type, or undefined when the
 * relay is gone or silent for `timeoutMs`.
 */
function askRelay(
  child: ChildProcess,
  msg: { type: string } & Record<string, unknown>,
  timeoutMs: number,
): Promise<Record<string, unknown> | undefined> {
  return new Promise((resolve) => {
    if (!child.connected) {
      resolve(undefined);
      return;
    }
    const timer = setTimeout(() => done(undefined), timeoutMs);
    function onMessage(raw: unknown): void {
      const reply = raw as { type: string };
      if (reply.type === msg.type) done(reply as Record<string, unknown>);
    }
    function done(reply: Record<string, unknown> | undefined): void {
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(reply);
    }
    child.on('message', onMessage);
    child.send(msg, (err) => {
      if (err) done(undefined);
    });
  });
}

/** Asks the relay to write its trace to a temporary file and reads it back. */
async function readRelayTrace(child: ChildProcess): Promise<RelayTraceData | undefined> {
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-trace-'));
  const path = join(dir, 'trace');
  try {
    const ok = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 10_000);
      child.on('message', function onMessage(raw) {
        const msg = raw as { type: string; ok?: boolean };
        if (msg.type !== 'trace') return;
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve(msg.ok === true);
      });
      if (!child.connected) {
        clearTimeout(timer);
        resolve(false);
        return;
      }
      child.send({ type: 'trace', path }, (err) => {
        if (err) resolve(false);
      });
    });
    if (!ok) return undefined;
    const f64 = (b: Buffer) => new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
    const meta = JSON.parse(readFileSync(`${path}.json`, 'utf8')) as Pick<RelayTraceData, 'gcs' | 'missed'>;
    return {
      packets: f64(readFileSync(`${path}.packets`)),
      wakes: f64(readFileSync(`${path}.wakes`)),
      ...meta,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function stopRelay(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
    }, 2000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    try {
      child.send({ type: 'stop' });
    } catch {
      child.kill('SIGKILL');
    }
  });
}

/**
 * Warnings in words for a result, from the link's counters: anything that means the emulator itself
 * distorted the run (packets released late because the host was busy, packets the kernel refused).
 */
export function linkWarnings(stats: LinkStats): string[] {
  const out: string[] = [];
  const late = stats.releaseLateMs;
  if (late && late.count > 100 && late.p99 > 1) {
    out.push(
      `the link relay released 1% of packets more than ${late.p99} ms after their due time (max ${late.max} ms): the host was too busy for the emulation to be exact`,
    );
  }
  if (stats.relayGc && stats.relayGc.maxMs > 5) {
    out.push(
      `the link relay paused up to ${stats.relayGc.maxMs.toFixed(1)} ms for garbage collection (${stats.relayGc.count} collections): packets due meanwhile left that much late`,
    );
  }
  const refused = (stats.up?.writeErrors ?? 0) + (stats.down?.writeErrors ?? 0);
  if (refused > 0)
    out.push(`the kernel refused ${refused} packets the link relay forwarded (counted as lost)`);
  if ((stats.relayCpu ?? 0) > 0.9) {
    out.push(
      `the link relay used ${((stats.relayCpu ?? 0) * 100).toFixed(0)}% of a core: it may have limited the throughput`,
    );
  }
  return out;
}

/**
 * Where a replay's origin listeners run:
 *
 * ```
 *   no link   this process, 127.0.0.1; Chromium dials 127.0.0.1:port
 *   { link }  a child process inside the link's server namespace (page/origins-entry.ts), bound to
 *             link.serverAddress there; Chromium, on the link's client side, dials it, so every
 *             connection crosses the emulated link both ways, and the server's side of TCP has the
 *             link's pinned congestion control and initial window, as the fixture behind a link does
 *   private   no link, but root: a child process in the namespace Chromium runs in, on 127.0.0.1 there
 *             (net/isolation.ts says why Chromium gets a namespace of its own)
 * ```
 * Why a namespace and not the gateway to this host's loopback that `compare` uses for a user's
 * server: QUIC. The HTTP/3 server (quiche) answers from an unconnected UDP socket; bound to 127.0.0.1
 * it takes its path-MTU probe ceiling from loopback (65536) and Chromium closes connections on the
 * oversized probes (QUIC_PACKET_TOO_LARGE); bound to 0.0.0.0 on the host its replies to a
 * NATed client leave from the veth's address instead of the one the client dialled, and every h3
 * load failed with ERR_QUIC_PROTOCOL_ERROR (measured). Inside the namespace, bound to the link's
 * address, the path MTU is the link's. Every listener, TCP and UDP, binds the address reported.
 */
import type { ChildProcess } from 'node:child_process';
import { H2labError, nodeArgv, stopChildProcess } from '../core/index.ts';
import type { ReplayProtocol } from '../model/index.ts';
import type { ServerNamespace } from '../net/index.ts';
import {
  generateSite,
  type OriginListener,
  type OriginServers,
  type SiteSpec,
  startOriginServers,
} from '../server/index.ts';
import type { HarLimits, ReplaySite } from './har.ts';

/** One protocol setting (named by what its candidate origins speak): what each origin speaks in it. */
interface SettingSpec {
  protocol: ReplayProtocol;
  map: Record<string, ReplayProtocol>;
}

/** A setting's listeners. */
interface SettingListeners {
  protocol: ReplayProtocol;
  listeners: OriginListener[];
  certPems: string[];
}

/** The started origins of every setting. */
export interface ReplayOrigins {
  /** The address Chromium dials for every listener. */
  address: string;
  settings: SettingListeners[];
  /** Requests no recorded entry matched, `host path`. */
  misses(): Promise<string[]>;
  close(): Promise<void>;
}

/** What origins-entry.ts is told. */
interface OriginsStart {
  type: 'start';
  /** The HAR and the caps it was read with (the child reads it again: bodies never cross IPC). */
  har: { file: string; limits: HarLimits };
  settings: SettingSpec[];
  ca: { caPem: string; caKeyPem: string };
  maxStreams: number;
  /** The address every listener binds: the link's server address. */
  address: string;
  /** The address the QUIC listeners bind instead ({@link ServerNamespace.quicAddress}). */
  quicAddress?: string;
}
/** What origins-entry.ts is told to serve a generated page (`page record --generate`). */
interface SiteStart {
  type: 'start-site';
  spec: SiteSpec;
  ca: { caPem: string; caKeyPem: string };
  address: string;
  quicAddress?: string;
}
export type ToOrigins = OriginsStart | SiteStart | { type: 'misses' } | { type: 'stop' };
export type FromOrigins =
  | { type: 'ready'; settings: SettingListeners[] }
  | { type: 'site-ready'; url: string; listeners: OriginListener[]; certPems: string[] }
  | { type: 'misses'; misses: string[] }
  | { type: 'error'; error: { code: string; message: string } };

/** A generated page's origins, started here or in a namespace ({@link startSiteOrigins}). */
export interface SiteOrigins {
  /** The page's URL. */
  url: string;
  /** The address Chromium dials for every listener. */
  address: string;
  listeners: readonly OriginListener[];
  certPems: readonly string[];
  close(): Promise<void>;
}

/** Starts every setting's listeners in this process, on `address`. */
export async function startSettings(
  site: ReplaySite,
  settings: readonly SettingSpec[],
  ca: { caPem: string; caKeyPem: string },
  maxStreams: number,
  address: string,
  quicAddress?: string,
): Promise<{ settings: SettingListeners[]; servers: OriginServers[] }> {
  const certCache = new Map<string, { pem: string; keyPem: string }>();
  const servers: OriginServers[] = [];
  const out: SettingListeners[] = [];
  try {
    for (const s of settings) {
      const o = await startOriginServers(
        [...site.origins].map(([host, resources]) => ({ host, wire: s.map[host]!, resources })),
        {
          ca,
          certCache,
          maxConcurrentStreams: maxStreams,
          address,
          ...(quicAddress ? { quicAddress } : {}),
          shared: site.shared,
        },
      );
      servers.push(o);
      out.push({ protocol: s.protocol, listeners: [...o.listeners], certPems: [...o.certPems] });
    }
  } catch (err) {
    for (const o of servers) await o.close();
    throw err;
  }
  return { settings: out, servers };
}

/** The addresses a server namespace's listeners bind. */
function addressesOf(serverNs: ServerNamespace): { address: string; quicAddress?: string } {
  return {
    address: serverNs.address,
    ...(serverNs.quicAddress ? { quicAddress: serverNs.quicAddress } : {}),
  };
}

type Answer<T extends FromOrigins['type']> = Extract<FromOrigins, { type: T }>;

/**
 * The origins' child process in `serverNs`: `start` tells it what to serve (stopping it when that
 * fails), `ask` asks it something, `stop` ends it.
 */
function originsChild(serverNs: ServerNamespace): {
  start<T extends 'ready' | 'site-ready'>(msg: OriginsStart | SiteStart, want: T): Promise<Answer<T>>;
  ask<T extends FromOrigins['type']>(msg: ToOrigins, want: T, timeoutMs: number): Promise<Answer<T>>;
  stop(): Promise<void>;
} {
  const [node, ...args] = nodeArgv('page/origins-entry');
  const c: ChildProcess = serverNs.spawn(node!, args, {
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    detached: true,
  });
  let stderr = '';
  c.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const ask = <T extends FromOrigins['type']>(msg: ToOrigins, want: T, timeoutMs: number) =>
    new Promise<Extract<FromOrigins, { type: T }>>((resolve, reject) => {
      const fail = (why: string) =>
        reject(
          new H2labError(
            'H2LAB_ERR_NET_SETUP',
            `the page's origins in namespace ${serverNs.namespace} ${why}${stderr.trim() ? `: ${stderr.trim()}` : ''}`,
            { namespace: serverNs.namespace },
          ),
        );
      const timer = setTimeout(() => fail(`did not answer within ${timeoutMs / 1000} s`), timeoutMs);
      const onExit = (code: number | null) => {
        clearTimeout(timer);
        fail(`exited with status ${code}`);
      };
      c.once('exit', onExit);
      c.on('message', function onMessage(raw) {
        const m = raw as FromOrigins;
        clearTimeout(timer);
        c.off('message', onMessage);
        c.off('exit', onExit);
        if (m.type === want) resolve(m as Extract<FromOrigins, { type: T }>);
        else if (m.type === 'error')
          reject(new H2labError(m.error.code as never, m.error.message, { namespace: serverNs.namespace }));
        else fail(`answered ${m.type} to ${msg.type}`);
      });
      c.send(msg);
    });
  const stop = () => stopChildProcess(c, { type: 'stop' } satisfies ToOrigins);
  return {
    ask,
    stop,
    async start(msg, want) {
      try {
        return await ask(msg, want, 60_000);
      } catch (err) {
        await stop();
        throw err;
      }
    },
  };
}

/**
 * Starts a generated page's origins (`page record --generate`) here, on 127.0.0.1 (no namespace), or in
 * a namespace (Chromium's own).
 */
export async function startSiteOrigins(
  spec: SiteSpec,
  ca: { caPem: string; caKeyPem: string },
  serverNs: ServerNamespace | undefined,
): Promise<SiteOrigins> {
  if (!serverNs) {
    const o = await startSiteHere(spec, ca, '127.0.0.1');
    return {
      url: o.url,
      address: '127.0.0.1',
      listeners: o.listeners,
      certPems: o.certPems,
      close: () => o.close(),
    };
  }
  const child = originsChild(serverNs);
  const ready = await child.start(
    { type: 'start-site', spec, ca, ...addressesOf(serverNs) } satisfies SiteStart,
    'site-ready',
  );
  return {
    url: ready.url,
    address: serverNs.address,
    listeners: ready.listeners,
    certPems: ready.certPems,
    close: child.stop,
  };
}

/** A generated page's origins in this process, on `address`, and its URL. */
export async function startSiteHere(
  spec: SiteSpec,
  ca: { caPem: string; caKeyPem: string },
  address: string,
  quicAddress?: string,
): Promise<OriginServers & { url: string }> {
  const site = generateSite(spec);
  const o = await startOriginServers(site.origins, {
    ca,
    shared: site.shared,
    address,
    ...(quicAddress ? { quicAddress } : {}),
  });
  return Object.assign(o, { url: site.url });
}

/** Starts the origins here (no namespace) or in a namespace (a link's server side, or Chromium's own). */
export async function startReplayOrigins(
  site: ReplaySite,
  har: OriginsStart['har'],
  settings: readonly SettingSpec[],
  ca: { caPem: string; caKeyPem: string },
  maxStreams: number,
  serverNs: ServerNamespace | undefined,
): Promise<ReplayOrigins> {
  if (!serverNs) {
    const { settings: ls, servers } = await startSettings(site, settings, ca, maxStreams, '127.0.0.1');
    return {
      address: '127.0.0.1',
      settings: ls,
      misses: async () => [...new Set(servers.flatMap((s) => s.tally().misses))],
      async close() {
        for (const s of servers) await s.close();
      },
    };
  }
  const child = originsChild(serverNs);
  const ready = await child.start(
    {
      type: 'start',
      har,
      settings: [...settings],
      ca,
      maxStreams,
      ...addressesOf(serverNs),
    } satisfies OriginsStart,
    'ready',
  );
  return {
    address: serverNs.address,
    settings: ready.settings,
    misses: async () => (await child.ask({ type: 'misses' }, 'misses', 10_000)).misses,
    close: child.stop,
  };
}

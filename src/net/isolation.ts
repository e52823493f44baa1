/**
 * Where a browser and the servers h2lab starts for it run, so that other links' interfaces stay out
 * of the browser's view.
 *
 * Chromium aborts every request in flight with net::ERR_NETWORK_CHANGED when an address or interface
 * of its network namespace comes or goes, and each h2lab link (or container) adds and removes a veth
 * in the host's. So, one decision for every command that launches Chromium:
 *
 * ```
 *   behind a link   Chromium in the link's client namespace (created with `clientNamespace`), the
 *                   servers in its server namespace: Chromium sees that link's interface only
 *   root            a private namespace holding only `lo`: Chromium and the servers both inside it,
 *                   the servers on 127.0.0.1 there (unreachable from this host's loopback)
 *   otherwise       the host's namespace, and the reason (not root; or origins that are reached
 *                   through the host's network)
 * ```
 */
import { isIPv6 } from 'node:net';
import type { Link } from './link.ts';
import { createPrivateNamespace, missingPrerequisite } from './netns.ts';

/** A namespace to start servers in, and the address they bind there. */
export interface ServerNamespace {
  /** The namespace's `ip netns` name. */
  namespace: string;
  /** The address every listener binds (and clients dial). */
  address: string;
  /**
   * Whether this process (in the host's namespace) reaches `address`: a link's server address is
   * routed through its veth when its client side is in the host's namespace; a private namespace's
   * 127.0.0.1 is its own.
   */
  reachable: boolean;
  /**
   * The address QUIC listeners bind instead of `address`, where that is as private: the unspecified
   * one in a namespace holding only `lo`. Bound to 127.0.0.1, quiche takes its path-MTU probe
   * ceiling from loopback (MTU 65536) and probes with datagrams Chromium refuses
   * (QUIC_PACKET_TOO_LARGE); bound to the unspecified address its ceiling is 1472.
   */
  quicAddress?: string;
  spawn: Link['spawnInServer'];
}

/**
 * The namespace of a link's server side. It holds only the link's server address, so QUIC listeners
 * bind the unspecified address there: bound to the link's address, quiche takes its path-MTU
 * ceiling from the route to a local address (loopback's, 65,536), and the kernel fragments its
 * 16 KB datagrams onto the link's 1,500-byte MTU (docs/net.md).
 */
export function linkServerNamespace(link: Link): ServerNamespace {
  return {
    namespace: link.namespace,
    address: link.serverAddress,
    reachable: link.clientNamespace === undefined,
    quicAddress: isIPv6(link.serverAddress) ? '::' : '0.0.0.0',
    spawn: (cmd, args, opts) => link.spawnInServer(cmd, args, opts),
  };
}

/** Where Chromium runs, and where the servers started for it go (see the file's doc). */
export interface BrowserNetwork {
  /** The namespace Chromium runs in; absent: the host's. */
  netns?: string;
  /** Where to start the servers Chromium loads from; absent: this process, on 127.0.0.1. */
  serverNamespace?: ServerNamespace;
  /** Why Chromium shares the host's network view (absent when it does not). */
  hostReason?: string;
  /** Deletes the private namespace, if one was made. Safe to call twice. */
  close(): Promise<void>;
}

const nothing = async (): Promise<void> => {};

/** The one line a command prints when Chromium shares the host's network view. */
export function hostNetworkLine(reason: string): string {
  return `Chromium shares the host's network view (${reason}): another link or container starting or stopping during the run makes Chromium abort requests in flight (net::ERR_NETWORK_CHANGED), which are then repeated.`;
}

/**
 * Decides where Chromium runs: in `link`'s client namespace when the link has one, else in a
 * private namespace when this process may make one, else in the host's namespace. `hostOnly` forces
 * the host's namespace and says why (e.g. origins reached through the host's network).
 *
 * @example
 * const net = await browserNetwork(undefined);
 * try { … launchChromium({ …, netns: net.netns }) … } finally { await net.close(); }
 */
export async function browserNetwork(link: Link | undefined, hostOnly?: string): Promise<BrowserNetwork> {
  if (link) {
    return {
      serverNamespace: linkServerNamespace(link),
      ...(link.clientNamespace
        ? { netns: link.clientNamespace }
        : { hostReason: "the link's client side is in the host's namespace" }),
      close: nothing,
    };
  }
  if (hostOnly) return { hostReason: hostOnly, close: nothing };
  const missing = missingPrerequisite(false);
  if (missing !== undefined) return { hostReason: `a namespace of its own needs ${missing}`, close: nothing };
  const ns = await createPrivateNamespace();
  return {
    netns: ns.name,
    serverNamespace: {
      namespace: ns.name,
      address: '127.0.0.1',
      reachable: false,
      quicAddress: '0.0.0.0',
      spawn: ns.spawn,
    },
    close: () => ns.close(),
  };
}

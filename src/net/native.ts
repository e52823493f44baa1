/**
 * Loads h2lab's native addon (`native/`, built at install time or on first use, see native-build.ts): TUN
 * devices, readiness, batched packet I/O and timerfd, and one socket query (TCP_INFO). Only device
 * and fd plumbing is native.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { H2labError } from '../core/index.ts';
import { ADDON_RELATIVE, BUILD_NEEDS, buildNativeAddon, nativeCacheDir } from './native-build.ts';

/** The addon's functions (see native/h2lab_net.cc). fds are plain integers. */
export interface NetNative {
  /** Opens a TUN device (IFF_TUN | IFF_NO_PI, non-blocking). `name` "" lets the kernel choose. */
  openTun(name: string): { fd: number; name: string };
  /** Reads packets until none is ready or `lens` is full; packet i is at slab[i·stride]. */
  readBatch(fd: number, slab: Buffer, stride: number, lens: Int32Array): number;
  /** Writes one packet; returns bytes written or −errno. */
  writePacket(fd: number, buf: Buffer, offset: number, len: number): number;
  timerCreate(): number;
  /** Arms a timerfd for an absolute {@link nowMs} deadline; ≤ 0 disarms. */
  timerArm(fd: number, deadlineMs: number): void;
  timerAck(fd: number): void;
  /** CLOCK_MONOTONIC in ms (fractional). */
  nowMs(): number;
  /** Writes {@link nowMs} into `out[0]` without allocating (the relay's per-batch clock). */
  nowInto?(out: Float64Array): void;
  /** Busy-waits until {@link nowMs} reaches `deadlineMs` (at most 1 ms). */
  spinUntil?(deadlineMs: number): void;
  closeFd(fd: number): void;
  /** Calls `cb` whenever `fd` is readable, from Node's own event loop. */
  watch(fd: number, cb: (events: number) => void): unknown;
  unwatch(handle: unknown): void;
  /**
   * getsockopt(TCP_INFO) and TCP_CONGESTION on a TCP socket: `struct tcp_info` fields by their kernel
   * names without `tcpi_` (times in µs, rates in bytes/s), only those this kernel filled in, and
   * `congestion`. Throws (errno) for an fd that is not a TCP socket. Absent from an addon built
   * before it existed.
   */
  tcpInfo?(fd: number): Record<string, number | string>;
}

const ADDON = `native/${ADDON_RELATIVE}`;

/** The package root: the first ancestor of this module holding `native/binding.gyp`. */
function packageRoot(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(join(dir, 'native', 'binding.gyp'))) return dir;
    dir = dirname(dir);
  }
  return undefined;
}

/** Built addons, in the order they are tried: the package's own (install time), the per-user cache's. */
function builtAddons(): string[] {
  const root = packageRoot();
  return [...(root ? [join(root, ADDON)] : []), join(nativeCacheDir(), ADDON_RELATIVE)].filter((p) =>
    existsSync(p),
  );
}

let cached: NetNative | undefined;

/** The addon when one is built and loads here, else undefined (for optional facts: nothing is built or thrown). */
export function tryLoadNative(): NetNative | undefined {
  if (cached) return cached;
  for (const p of builtAddons()) {
    try {
      cached = createRequire(import.meta.url)(p) as NetNative;
      return cached;
    } catch {}
  }
  return undefined;
}

/**
 * Loads the addon, building it into the per-user cache first when none is built or the one there
 * does not load (another Node ABI), or throws H2LAB_ERR_NET_UNAVAILABLE saying what to install.
 */
export function loadNative(): NetNative {
  if (cached) return cached;
  if (process.platform !== 'linux') {
    throw new H2labError(
      'H2LAB_ERR_NET_UNAVAILABLE',
      `network emulation needs Linux (this is ${process.platform})`,
      {
        missing: 'linux',
      },
    );
  }
  const found = tryLoadNative();
  if (found) return found;
  const root = packageRoot();
  if (!root) {
    throw new H2labError(
      'H2LAB_ERR_NET_UNAVAILABLE',
      'the native addon sources (native/binding.gyp) are not beside h2lab: reinstall the package',
      { missing: 'native addon' },
    );
  }
  const dir = nativeCacheDir();
  process.stderr.write(`h2lab: building the native addon of \`h2lab net\` once, into ${dir} (node-gyp) …\n`);
  const b = buildNativeAddon(join(root, 'native'), dir);
  if (!b.ok) {
    throw new H2labError(
      'H2LAB_ERR_NET_UNAVAILABLE',
      `the native addon is not built and building it failed (${b.reason}; log: ${b.log}): install ${BUILD_NEEDS}, then run the command again`,
      { missing: 'native addon', log: b.log },
    );
  }
  try {
    cached = createRequire(import.meta.url)(b.path) as NetNative;
  } catch (err) {
    throw new H2labError(
      'H2LAB_ERR_NET_UNAVAILABLE',
      `the native addon ${b.path} was built but does not load (${(err as Error).message}): remove ${dir} and run the command again`,
      { missing: 'native addon', path: b.path },
    );
  }
  return cached;
}

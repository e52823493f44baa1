/**
 * Loads h2lab's native addon (`native/`, built by `npm run build:native` at install time): TUN
 * devices, readiness, batched packet I/O and timerfd, and one socket query (TCP_INFO). Only device
 * and fd plumbing is native.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { H2labError } from '../core/index.ts';

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

const ADDON = 'native/build/Release/h2lab_net.node';

/** Where the built addon is: the package root is the first ancestor holding `native/`. */
export function nativeAddonPath(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const p = join(dir, ADDON);
    if (existsSync(p)) return p;
    dir = dirname(dir);
  }
  return undefined;
}

let cached: NetNative | undefined;

/** The addon when it loads here, else undefined (for optional facts; nothing is thrown). */
export function tryLoadNative(): NetNative | undefined {
  try {
    return loadNative();
  } catch {
    return undefined;
  }
}

/** Loads the addon or throws H2LAB_ERR_NET_UNAVAILABLE saying what is missing. */
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
  const path = nativeAddonPath();
  if (!path) {
    throw new H2labError(
      'H2LAB_ERR_NET_UNAVAILABLE',
      `the native addon ${ADDON} is not built: install g++, make and python3 (Debian: apt-get install g++ make python3), then run \`npm run build:native\``,
      { missing: 'native addon' },
    );
  }
  try {
    cached = createRequire(import.meta.url)(path) as NetNative;
  } catch (err) {
    throw new H2labError(
      'H2LAB_ERR_NET_UNAVAILABLE',
      `the native addon ${path} does not load (${(err as Error).message}): rebuild it with \`npm run build:native\``,
      { missing: 'native addon', path },
    );
  }
  return cached;
}

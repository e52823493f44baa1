/**
 * IPv4 forwarding switched on for gateways, kept in one place per network namespace so that runs
 * beside each other, a run killed with SIGKILL, and `h2lab net clean` agree on what to put back.
 *
 * IPv4 forwards a packet only when its *input* device's `net.ipv4.conf.<dev>.forwarding` is 1
 * (`net.ipv4.ip_forward` is `conf.all.forwarding`, and writing it writes every device's switch). A
 * gateway to another host therefore switches on the two devices its flow comes in by: its own veth
 * end (which disappears with it) and the device the replies come in by (the route to the target),
 * never the host-wide switch; its nftables table drops whatever else that device would forward.
 *
 * The state file (`/run/h2lab/forwarding-<netns inode>.json`, under a lock file holding its
 * writer's pid) records, per device, the value before the first gateway switched it on and the
 * gateways still using it (their namespaces, `h2lab-<pid>-<n>`). An owner counts while its process
 * and namespace exist, so one killed by SIGKILL drops out at the next look; the last one out puts
 * the device back, unless something else changed the switch since.
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { H2labError } from '../core/index.ts';
import { alive, ownerPid } from './netns.ts';

/** One device's switch as h2lab found it, and the gateways that need it on. */
interface DeviceEntry {
  before: string;
  owners: string[];
}

interface ForwardingState {
  devices: Record<string, DeviceEntry>;
}

const STATE_DIR = '/run/h2lab';
const LOCK_WAIT_MS = 5000;

/** The file of this network namespace's state, and its lock. */
function paths(): { state: string; lock: string } {
  const ino = statSync('/proc/self/ns/net').ino;
  return {
    state: join(STATE_DIR, `forwarding-${ino}.json`),
    lock: join(STATE_DIR, `forwarding-${ino}.lock`),
  };
}

/** `/proc/sys/net/ipv4/conf/<dev>/forwarding` (a device name may hold dots, which sysctl's keys cannot). */
const switchPath = (dev: string): string => `/proc/sys/net/ipv4/conf/${dev}/forwarding`;

/** A device's forwarding switch ('0' or '1'), or undefined when the device is gone. */
export function deviceForwarding(dev: string): string | undefined {
  try {
    return readFileSync(switchPath(dev), 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Sets a device's forwarding switch; throws H2LAB_ERR_NET_SETUP naming the device. */
export function setDeviceForwarding(dev: string, value: string): void {
  try {
    writeFileSync(switchPath(dev), value);
  } catch (err) {
    throw new H2labError(
      'H2LAB_ERR_NET_SETUP',
      `could not set net.ipv4.conf.${dev}.forwarding=${value}: ${(err as Error).message}`,
      { device: dev },
    );
  }
}

/** Whether a gateway owner (its namespace name) still exists: its process and its namespace. */
function live(owner: string): boolean {
  const pid = ownerPid(owner);
  return pid !== undefined && alive(pid) && existsSync(join('/run/netns', owner));
}

const sleepSync = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

/**
 * Runs `fn` on the state with the lock held and writes back what it returns. Synchronous on
 * purpose: the process 'exit' hook uses it. A lock whose writer is gone (SIGKILL) is taken over.
 */
function withState(fn: (s: ForwardingState) => ForwardingState): void {
  mkdirSync(STATE_DIR, { recursive: true, mode: 0o700 });
  const p = paths();
  const deadline = Date.now() + LOCK_WAIT_MS;
  let fd: number | undefined;
  while (fd === undefined) {
    try {
      fd = openSync(p.lock, 'wx', 0o600);
      writeSync(fd, String(process.pid));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSyncOr(p.lock, ''));
      // No pid yet: its writer is between creating the file and writing to it, or died there.
      const stale = holder > 0 ? !alive(holder) : Date.now() - mtimeMs(p.lock) > 1000;
      if (stale) {
        // Its writer died inside the lock: take it over.
        try {
          unlinkSync(p.lock);
        } catch {}
        continue;
      }
      if (Date.now() > deadline)
        throw new H2labError(
          'H2LAB_ERR_NET_SETUP',
          `the forwarding state's lock ${p.lock} is held by process ${holder} for more than ${LOCK_WAIT_MS} ms: retry, or remove the file if that process is not h2lab`,
          { lock: p.lock },
        );
      sleepSync(20);
    }
  }
  try {
    const before = readState(p.state);
    const after = fn(before);
    if (Object.keys(after.devices).length === 0) {
      if (existsSync(p.state)) unlinkSync(p.state);
    } else writeFileSync(p.state, `${JSON.stringify(after, null, 2)}\n`, { mode: 0o600 });
  } finally {
    closeSync(fd);
    unlinkSync(p.lock);
  }
}

function mtimeMs(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function readFileSyncOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return fallback;
  }
}

function readState(path: string): ForwardingState {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as ForwardingState;
    if (parsed && typeof parsed.devices === 'object') return parsed;
  } catch {}
  return { devices: {} };
}

/**
 * Drops owners that are gone and `leaving`; a device nobody needs any more is put back to what it
 * was (unless it is off now: someone else switched it since). Returns what was put back, in
 * words (`forwarding on eth0 put back to 0`).
 */
function settle(s: ForwardingState, leaving?: string): { state: ForwardingState; restored: string[] } {
  const restored: string[] = [];
  const devices: Record<string, DeviceEntry> = {};
  for (const [dev, e] of Object.entries(s.devices)) {
    const owners = e.owners.filter((o) => o !== leaving && live(o));
    if (owners.length > 0) {
      devices[dev] = { before: e.before, owners };
      continue;
    }
    if (deviceForwarding(dev) === '1' && e.before !== '1') {
      try {
        setDeviceForwarding(dev, e.before);
        restored.push(`forwarding on ${dev} put back to ${e.before}`);
      } catch {}
    }
  }
  return { state: { devices }, restored };
}

/**
 * Switches forwarding on for `dev` on behalf of the gateway `owner` (its namespace name). Returns
 * the value it had before any h2lab gateway switched it on ('1': it was on already, and stays the
 * host's).
 */
export function acquireForwarding(dev: string, owner: string): string {
  let before = '1';
  withState((s) => {
    const { state } = settle(s);
    const entry = state.devices[dev];
    if (entry) {
      entry.owners.push(owner);
      before = entry.before;
      return state;
    }
    before = deviceForwarding(dev) ?? '0';
    if (before === '1') return state;
    setDeviceForwarding(dev, '1');
    state.devices[dev] = { before, owners: [owner] };
    return state;
  });
  return before;
}

/**
 * The gateway `owner` is done with forwarding: devices nobody needs are put back (returned, in
 * words). Never throws.
 */
export function releaseForwarding(owner: string): string[] {
  let restored: string[] = [];
  try {
    withState((s) => {
      const r = settle(s, owner);
      restored = r.restored;
      return r.state;
    });
  } catch {}
  return restored;
}

/** Puts back the devices only dead gateways needed (`net clean`, and each new link). Never throws. */
export function sweepForwarding(): string[] {
  return releaseForwarding('');
}

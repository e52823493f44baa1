/**
 * Network namespaces, addresses and kernel knobs, through iproute2 and sysctl (what an operator would
 * type, so every step can be reproduced by hand from the error message).
 *
 * Names: namespaces are `h2lab-<pid>-<n>` and devices `h2l<pid36><n36>c|s`, so parallel runs never
 * collide and a sweep can tell a stale namespace (its owner pid is gone) from a live one.
 */
import { type ChildProcess, execFile, execFileSync, type SpawnOptions, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { H2labError } from '../core/index.ts';

/** The prefix of every namespace h2lab creates. */
const NS_PREFIX = 'h2lab-';

/** Runs a command; rejects with H2LAB_ERR_NET_SETUP quoting the command line and its stderr. */
export function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { encoding: 'utf8', timeout: 15_000 }, (err, stdout, stderr) => {
      if (err) {
        reject(
          new H2labError(
            'H2LAB_ERR_NET_SETUP',
            `\`${cmd} ${args.join(' ')}\` failed: ${(stderr || err.message).trim()}`,
            { command: [cmd, ...args], stderr: stderr.trim() },
          ),
        );
      } else resolve(stdout);
    });
  });
}

/** `ip` with `-n NS` when a namespace is given. */
export function ip(ns: string | undefined, ...args: string[]): Promise<string> {
  return run('ip', ns ? ['-n', ns, ...args] : args);
}

/** Names of h2lab's namespaces that exist now. */
export async function listH2labNamespaces(): Promise<string[]> {
  const out = await run('ip', ['netns', 'list']);
  return out
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter((n) => n.startsWith(NS_PREFIX));
}

/** The owner pid encoded in an h2lab namespace name, or undefined. */
export function ownerPid(ns: string): number | undefined {
  const m = /^h2lab-(\d+)-/.exec(ns);
  return m ? Number(m[1]) : undefined;
}

/** Whether a process with this pid exists (an owner of a namespace or gateway table). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Deletes h2lab namespaces whose owner process is gone (left by a crash or SIGKILL). With `all`,
 * deletes every h2lab namespace, live or not. Returns the names deleted.
 */
export async function sweepNamespaces(opts: { all?: boolean } = {}): Promise<string[]> {
  const deleted: string[] = [];
  for (const ns of await listH2labNamespaces()) {
    const pid = ownerPid(ns);
    const stale = pid === undefined ? false : !alive(pid);
    if (opts.all || stale) {
      try {
        await deleteNamespace(ns);
        deleted.push(ns);
      } catch {
        // Another sweeper got there first.
      }
    }
  }
  return deleted;
}

/**
 * SIGKILLs every process still inside an h2lab namespace (the server a run started there, or what
 * `net run` left). Deleting a namespace does not end its processes: they would run on, unreachable,
 * after their owner is gone. Never throws.
 */
function killNamespaceProcesses(ns: string): void {
  if (!ns.startsWith(NS_PREFIX)) return;
  try {
    const out = execFileSync('ip', ['netns', 'pids', ns], { encoding: 'utf8', timeout: 5000 });
    for (const pid of out.split('\n').filter(Boolean).map(Number)) {
      try {
        if (pid !== process.pid) process.kill(pid, 'SIGKILL');
      } catch {}
    }
  } catch {}
}

/** Ends the namespace's processes and deletes it. */
export async function deleteNamespace(ns: string): Promise<void> {
  killNamespaceProcesses(ns);
  await run('ip', ['netns', 'del', ns]);
}

/** Synchronous delete, for process 'exit' handlers. Never throws. */
export function deleteNamespaceSync(ns: string): void {
  killNamespaceProcesses(ns);
  try {
    execFileSync('ip', ['netns', 'del', ns], { stdio: 'ignore', timeout: 5000 });
  } catch {}
}

/** Reads a sysctl of the current (root) namespace, or undefined. */
export function readSysctl(key: string): string | undefined {
  const path = `/proc/sys/${key.replaceAll('.', '/')}`;
  try {
    return readFileSync(path, 'utf8').trim().replace(/\s+/g, ' ');
  } catch {
    return undefined;
  }
}

/** Sets sysctls inside a namespace in one `sysctl -w` call. */
export async function setSysctls(ns: string, values: Record<string, string | number>): Promise<void> {
  const args = Object.entries(values).map(([k, v]) => `${k}=${v}`);
  await run('ip', ['netns', 'exec', ns, 'sysctl', '-q', '-w', ...args]);
}

/** Reads sysctls inside a namespace. */
export async function readSysctls(ns: string, keys: string[]): Promise<Record<string, string>> {
  const out = await run('ip', ['netns', 'exec', ns, 'sysctl', '-n', ...keys]);
  const lines = out.trimEnd().split('\n');
  return Object.fromEntries(keys.map((k, i) => [k, (lines[i] ?? '').trim().replace(/\s+/g, ' ')]));
}

/** What is missing for network emulation on this machine, or undefined when all is there. */
export function missingPrerequisite(needTun: boolean): string | undefined {
  if (process.platform !== 'linux') return `Linux (this is ${process.platform})`;
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    return 'root (network namespaces and TUN devices need CAP_NET_ADMIN: run as root, e.g. with sudo)';
  }
  const hasIp = ['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip'].some((p) => existsSync(p));
  if (!hasIp) return 'the `ip` command (Debian: apt-get install iproute2)';
  if (needTun && !existsSync('/dev/net/tun')) {
    return '/dev/net/tun (load the tun module: modprobe tun; in a container, pass --device /dev/net/tun)';
  }
  return undefined;
}

/** An IPv4 address as a 32-bit unsigned integer. */
function ipv4ToInt(a: string): number {
  const parts = a.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) return Number.NaN;
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

function intToIpv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** Parses `a.b.c.d/len` (len ≤ 30), or throws H2LAB_ERR_INVALID_OPTION naming `option`. */
function parseCidr(cidr: string, option = '--address-range'): { base: number; prefix: number } {
  const m = /^(\d+\.\d+\.\d+\.\d+)\/(\d+)$/.exec(cidr.trim());
  const base = m ? ipv4ToInt(m[1]!) : Number.NaN;
  const prefix = m ? Number(m[2]) : Number.NaN;
  if (!m || Number.isNaN(base) || prefix < 8 || prefix > 30) {
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `${option} ${JSON.stringify(cidr)} is not valid: use an IPv4 range from /8 to /30 such as 198.18.0.0/15`,
      { option, value: cidr },
    );
  }
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return { base: (base & mask) >>> 0, prefix };
}

/** IPv4 addresses configured on the host (root namespace). */
async function hostAddresses(): Promise<Set<number>> {
  const out = await run('ip', ['-4', '-o', 'addr', 'show']);
  const set = new Set<number>();
  for (const m of out.matchAll(/inet (\d+\.\d+\.\d+\.\d+)/g)) set.add(ipv4ToInt(m[1]!));
  for (const m of out.matchAll(/peer (\d+\.\d+\.\d+\.\d+)/g)) set.add(ipv4ToInt(m[1]!));
  return set;
}

/**
 * Picks a free /30 inside `cidr` for one link: the client gets .1, the server .2 of the block. Random
 * blocks (checked against the host's addresses) keep parallel runs apart.
 */
export async function allocatePair(cidr: string): Promise<{ client: string; server: string; prefix: 30 }> {
  const { base, prefix } = parseCidr(cidr);
  const blocks = 2 ** (30 - prefix);
  const used = await hostAddresses();
  for (let attempt = 0; attempt < 64; attempt++) {
    const block = (base + Math.floor(Math.random() * blocks) * 4) >>> 0;
    if (![0, 1, 2, 3].some((i) => used.has(block + i))) {
      return { client: intToIpv4(block + 1), server: intToIpv4(block + 2), prefix: 30 };
    }
  }
  throw new H2labError(
    'H2LAB_ERR_NET_SETUP',
    `no free /30 left in --address-range ${cidr}: run \`h2lab net clean\` or choose a larger range`,
    {
      option: '--address-range',
      value: cidr,
    },
  );
}

/** A network namespace with only its loopback, owned by this process (see {@link createPrivateNamespace}). */
interface PrivateNamespace {
  /** `h2lab-<pid>-p<n>`: swept like a link's once this process is gone. */
  readonly name: string;
  /** Starts a process inside it. */
  spawn(cmd: string, args?: readonly string[], opts?: SpawnOptions): ChildProcess;
  /** Ends its processes and deletes it. Safe to call twice. */
  close(): Promise<void>;
}

let privateCounter = 0;

/**
 * A namespace holding nothing but `lo` (up): a process in it sees no interface of the host, so the
 * veths other links add and remove are out of its view, and it reaches only what runs inside it.
 * Needs root, as a link does.
 */
export async function createPrivateNamespace(): Promise<PrivateNamespace> {
  const name = `${NS_PREFIX}${process.pid}-p${privateCounter++}`;
  await run('ip', ['netns', 'add', name]);
  const onExit = () => deleteNamespaceSync(name);
  process.on('exit', onExit);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    process.off('exit', onExit);
    await deleteNamespace(name).catch(() => {});
  };
  try {
    await ip(name, 'link', 'set', 'lo', 'up');
  } catch (err) {
    await close();
    throw err;
  }
  return {
    name,
    spawn: (cmd, args = [], opts = {}) => spawn('ip', ['netns', 'exec', name, cmd, ...args], opts),
    close,
  };
}

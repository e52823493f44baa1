// Shared by the net tests: skip reasons, a peer in the server namespace, TCP measurements.
import assert from 'node:assert/strict';
import { type ChildProcess, spawnSync } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { checkNetAvailable, createLink, type Link } from '../../src/net/index.ts';

/** Why the net tests cannot run here, or undefined when they can. */
/**
 * Why a test that measures with ping cannot run here (iputils-ping missing), or undefined; .ci/run
 * installs it. Together with {@link netSkipReason}.
 */
export function pingSkipReason(): string | undefined {
  const r = spawnSync('ping', ['-V'], { stdio: 'ignore' });
  return r.error || r.status !== 0
    ? 'ping is not installed (Debian: apt-get install iputils-ping)'
    : netSkipReason();
}

export function netSkipReason(): string | undefined {
  try {
    checkNetAvailable('relay');
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

export interface Peer {
  child: ChildProcess;
  tcpPort: number;
  h1Port: number;
  h2Port: number;
  stop(): Promise<void>;
}

/** Starts test/net/fixtures/peer.mjs inside the link's server namespace. */
export async function startPeer(link: Link): Promise<Peer> {
  const script = fileURLToPath(new URL('./fixtures/peer.mjs', import.meta.url));
  const child = link.spawnInServer(process.execPath, [script, link.serverAddress], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ports = await new Promise<number[]>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('peer did not start in 10 s')), 10_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening (\d+) (\d+) (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve([Number(m[1]), Number(m[2]), Number(m[3])]);
      }
    });
    child.once('exit', (c) => reject(new Error(`peer exited with ${c}`)));
  });
  return {
    child,
    tcpPort: ports[0]!,
    h1Port: ports[1]!,
    h2Port: ports[2]!,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Time of one TCP handshake (connect() to 'connect'), ms: one RTT. */
export function tcpConnectMs(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const s = net.connect({ host, port, noDelay: true }, () => {
      const dt = performance.now() - t0;
      s.destroy();
      resolve(dt);
    });
    s.once('error', reject);
    s.setTimeout(10_000, () => {
      s.destroy();
      reject(new Error('connect timeout'));
    });
  });
}

/**
 * Downloads from the peer's tcp port on `flows` parallel connections for `durationMs`; returns the
 * goodput of each flow and their total in bits/s, measured after `warmupMs`.
 */
export async function bulkDownload(
  host: string,
  port: number,
  opts: { flows: number; durationMs: number; warmupMs?: number },
): Promise<{ perFlowBitsPerSec: number[]; totalBitsPerSec: number; maxWindowBitsPerSec: number }> {
  const warmup = opts.warmupMs ?? 0;
  const start = performance.now();
  const counts = new Array<number>(opts.flows).fill(0);
  // Highest rate seen over any 1 s window after warm-up (total), to check the link is never exceeded.
  const windows = new Map<number, number>();
  const sockets = await Promise.all(
    counts.map(
      (_, i) =>
        new Promise<net.Socket>((resolve, reject) => {
          const s = net.connect({ host, port }, () => resolve(s));
          s.once('error', reject);
          s.on('data', (d: Buffer) => {
            const now = performance.now() - start;
            if (now >= warmup) counts[i]! += d.length;
            if (now >= warmup) {
              const w = Math.floor(now / 100);
              windows.set(w, (windows.get(w) ?? 0) + d.length);
            }
          });
        }),
    ),
  );
  await new Promise((r) => setTimeout(r, warmup + opts.durationMs));
  for (const s of sockets) s.destroy();
  // The real measured span (timers fire late on a busy host).
  const secs = (performance.now() - start - warmup) / 1000;
  const perFlow = counts.map((c) => (c * 8) / secs);
  let maxWindow = 0;
  const keys = [...windows.keys()].sort((a, b) => a - b);
  for (const k of keys) {
    let sum = 0;
    for (let j = 0; j < 10; j++) sum += windows.get(k + j) ?? 0;
    if (keys.includes(k + 9)) maxWindow = Math.max(maxWindow, sum * 8);
  }
  return {
    perFlowBitsPerSec: perFlow,
    totalBitsPerSec: perFlow.reduce((a, b) => a + b, 0),
    maxWindowBitsPerSec: maxWindow,
  };
}

/** Why tshark cannot be used here (.ci/run installs Debian's tshark), or undefined. */
export function tsharkSkipReason(): string | undefined {
  const r = spawnSync('tshark', ['--version'], { stdio: 'ignore' });
  return r.error || r.status !== 0 ? 'tshark is not installed (Debian: apt-get install tshark)' : undefined;
}

/** tshark's fields of every packet in `file`, tab-separated, one array per packet. */
export function tsharkFields(file: string, fields: string[], extra: string[] = []): string[][] {
  const r = spawnSync(
    'tshark',
    ['-r', file, '-T', 'fields', '-E', 'separator=/t', ...extra, ...fields.flatMap((f) => ['-e', f])],
    { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  );
  assert.equal(r.status, 0, r.stderr);
  return r.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.split('\t'));
}

/**
 * Rounds of the server's data per TCP stream, counted from tshark's fields by the same rule the
 * graphs state (a round begins with the first data segment sent after the ACK of the round's first
 * segment reached the server; the TLS handshake's server segments before the client answers are
 * not counted), and the slow-start rounds among them.
 */
export function tsharkRounds(file: string): Map<string, number[]> {
  const rows = tsharkFields(file, [
    'frame.time_epoch',
    'frame.interface_name',
    'tcp.stream',
    'tcp.len',
    'tcp.seq',
    'tcp.ack',
    'tcp.flags.syn',
    'tcp.payload',
  ]);
  const flows = new Map<
    string,
    {
      syn?: number;
      up: number;
      answered: boolean;
      tls?: boolean;
      high: number;
      ack: number;
      marker: number;
      at: number;
      rounds: number[];
    }
  >();
  let t0: number | undefined;
  for (const [time, dir, stream, len, seq, ack, syn, payload] of rows) {
    // Whole microseconds, as the pcapng holds them (a float of epoch seconds would blur them).
    const [sec, frac = ''] = time!.split('.');
    const us = Number(sec) * 1e6 + Number(frac.padEnd(6, '0').slice(0, 6));
    t0 ??= us;
    const ms = (us - t0) / 1000;
    const f =
      flows.get(stream!) ??
      flows
        .set(stream!, { up: 0, answered: false, high: 0, ack: 0, marker: -1, at: Infinity, rounds: [] })
        .get(stream!)!;
    const n = Number(len);
    if (dir === 'up') {
      if (syn === '1' || syn === 'True') f.syn = ms;
      if (n > 0) {
        f.tls ??= /^16/.test(payload ?? '');
        if (f.high > 0) f.answered = true;
      }
      const a = Number(ack) - 1;
      if (a > f.ack) {
        f.ack = a;
        if (f.marker >= 0 && a >= f.marker && f.at === Infinity) f.at = ms + f.up;
      }
      continue;
    }
    if (syn === '1' || syn === 'True') {
      if (f.syn !== undefined) f.up = ms - f.syn;
      continue;
    }
    if (n <= 0) continue;
    const end = Number(seq) - 1 + n;
    f.high = Math.max(f.high, end);
    if (f.tls && !f.answered) continue;
    if (f.marker < 0 || ms + 0.5 >= f.at) {
      f.rounds.push(0);
      f.marker = end;
      f.at = f.ack >= end ? ms : Infinity;
    }
    f.rounds[f.rounds.length - 1]!++;
  }
  return new Map([...flows].filter(([, f]) => f.rounds.length > 0).map(([k, f]) => [k, f.rounds]));
}

/**
 * Another h2lab run beside a test: creates and closes links back to back until `stop` says so, at
 * most `max`, one at a time (each adds and removes a veth and its addresses in the host's
 * namespace). Returns how many came and went.
 */
export async function churnLinks(stop: () => boolean, max: number): Promise<number> {
  let n = 0;
  while (!stop() && n < max) {
    const link = await createLink({ profile: 'relay' });
    await link.close();
    n++;
  }
  return n;
}

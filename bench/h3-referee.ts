// The HTTP/3 referee: one bulk download of SIZE through an emulated link (src/net, relay backend),
// from the fixture server (h2lab serve with h3, in the link's server namespace), fetched by ngtcp2's
// `gtlsclient` (Debian ngtcp2-client) and by h2lab's own h3 and h2 clients, interleaved over rounds
// (the client order rotates every round). Prints each client's median time, the packets the link's
// queue dropped on the way down, and the ratios h2lab-h3 / gtlsclient and h2lab-h3 / h2lab-h2.
// gtlsclient is the referee: when it and h2lab's h3 client disagree on the same link and server,
// h2lab is wrong until shown otherwise.
//
// Clients (each one request on a fresh connection; time from the client's start until the body is in,
// handshake included):
//   gtlsclient  gtlsclient -q --exit-on-all-streams-close --download DIR HOST PORT URL (its defaults:
//               cubic, 6 MiB stream / 15 MiB connection windows, auto-tuned up to 16 / 24 MiB), wall
//               clock minus its start-up (measured once, against a closed port on loopback)
//   h2lab-h3    h2lab's h3 transport through runLoad({ burst: 1, burstHandshakes: 'include' })
//   h2lab-h2    h2lab's h2 transport, the same schedule, --window browser
// The server's TCP congestion control is pinned with --cc (QUIC's is the binding's own: cubic).
//
// Run as root (namespaces):
//   node --import tsx bench/h3-referee.ts --quick        (5 MiB, 40 ms, 50 Mbit/s, 2 rounds)
//   node --import tsx bench/h3-referee.ts [--size 20MiB] [--rtt 40] [--bandwidth 10,50] [--loss 0]
//     [--rounds 3] [--cc cubic] [--clients gtlsclient,h2lab-h3,h2lab-h2] [--quic-retry] [--seed 1]
//     [--timeout 120] [--json FILE] [--server-qlog]
// --server-qlog: the fixture writes a qlog per connection, and each QUIC download's line adds the
// packets the server declared lost and sent with retransmitted data, read from it (off by default:
// writing it costs the server CPU).
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseBytes } from '../src/core/units.ts';
import { readQlogSenderFacts } from '../src/h3/index.ts';
import { runLoad } from '../src/load/index.ts';
import { createLink, type Link, type LinkStats } from '../src/net/index.ts';
import { type FixtureTarget, startFixtureTarget } from '../src/server/index.ts';
import { list, median, requireTools, runTool, scratch } from './common.ts';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    size: { type: 'string' },
    rtt: { type: 'string' },
    bandwidth: { type: 'string' },
    loss: { type: 'string' },
    rounds: { type: 'string' },
    cc: { type: 'string', default: 'cubic' },
    clients: { type: 'string' },
    'quic-retry': { type: 'boolean', default: false },
    seed: { type: 'string', default: '1' },
    timeout: { type: 'string', default: '120' },
    json: { type: 'string' },
    'server-qlog': { type: 'boolean', default: false },
  },
});
const quick = values.quick;
const sizeSpec = values.size ?? (quick ? '5MiB' : '20MiB');
const sizeBytes = parseBytes(sizeSpec, '--size');
const rtts = list(values.rtt ?? '40').map(Number);
const rates = list(values.bandwidth ?? (quick ? '50' : '10,50')).map(Number);
const losses = list(values.loss ?? '0').map(Number);
const rounds = Number(values.rounds ?? (quick ? 2 : 3));
const cc = values.cc as 'cubic' | 'bbr' | 'reno';
const quicRetry = values['quic-retry'];
const seed = Number(values.seed);
const timeoutMs = Number(values.timeout) * 1000;
const serverQlog = values['server-qlog'];
const ALL_CLIENTS = ['gtlsclient', 'h2lab-h3', 'h2lab-h2'] as const;
type ClientName = (typeof ALL_CLIENTS)[number];
const clients = list(values.clients ?? ALL_CLIENTS.join(',')) as ClientName[];
for (const c of clients)
  if (!ALL_CLIENTS.includes(c)) throw new Error(`--clients ${c}: use ${ALL_CLIENTS.join(', ')}`);

if (clients.includes('gtlsclient')) requireTools([['gtlsclient', '--help']]);
const { dir } = scratch('h2lab-h3-referee-');

// --- the clients ---------------------------------------------------------------------------------
interface Target {
  h3Url: string;
  tlsUrl: string;
  caFile: string;
}
interface Measured {
  ms: number;
  protocol: string;
}

const run = (cmd: string, args: string[]): Promise<string> => runTool(cmd, args, timeoutMs);

async function h2lab(proto: 'h2' | 'h3', t: Target): Promise<Measured> {
  const r = await runLoad({
    url: `${proto === 'h3' ? t.h3Url : t.tlsUrl}/bytes/${sizeBytes}`,
    ca: t.caFile,
    protocol: proto,
    ...(proto === 'h2' ? { h2Client: 'h2lab' as const, window: 'browser' as const } : {}),
    burst: 1,
    bursts: 1,
    burstHandshakes: 'include',
    timeoutMs,
    connectTimeoutMs: timeoutMs,
    serverMetrics: false,
  }).done;
  if (r.error) throw new Error(`h2lab-${proto}: ${r.error.code} ${r.error.message}`);
  if (r.counts.ok !== 1 || r.throughput.bytesIn !== sizeBytes)
    throw new Error(`h2lab-${proto}: ${r.counts.ok} of 1 ok, ${r.throughput.bytesIn} bytes`);
  return { ms: r.burst!.completionMs, protocol: r.protocol.negotiated ?? proto };
}

/** gtlsclient's own start-up (process, GnuTLS init) until it would send its first packet, ms. */
let gtlsStartupMs = 0;
async function measureGtlsStartup(): Promise<number> {
  // A handshake timeout of 1 ms against a port nobody answers: the process starts, sends its Initial
  // and gives up; what remains is start-up and exit, which the wall clock of a download also holds.
  const xs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    await run('gtlsclient', [
      '-q',
      '--handshake-timeout=1ms',
      '127.0.0.1',
      '9',
      'https://127.0.0.1:9/',
    ]).catch(() => undefined);
    xs.push(performance.now() - t0);
  }
  return median(xs);
}

async function gtlsclient(t: Target): Promise<Measured> {
  const u = new URL(`${t.h3Url}/bytes/${sizeBytes}`);
  const out = join(dir, `dl-${Date.now()}`);
  mkdirSync(out);
  const args = [
    '-q',
    '--exit-on-all-streams-close',
    '--no-quic-dump',
    '--no-http-dump',
    `--download=${out}`,
    `--timeout=${Math.ceil(timeoutMs / 1000)}s`,
    u.hostname.replace(/^\[|\]$/g, ''),
    u.port,
    u.href,
  ];
  const t0 = performance.now();
  await run('gtlsclient', args);
  const wall = performance.now() - t0;
  const files = readdirSync(out);
  const bytes = files.reduce((a, f) => a + statSync(join(out, f)).size, 0);
  rmSync(out, { recursive: true, force: true });
  if (bytes !== sizeBytes) throw new Error(`gtlsclient: ${bytes} of ${sizeBytes} bytes downloaded`);
  return { ms: wall - gtlsStartupMs, protocol: 'h3' };
}

const CLIENT_FNS: Record<ClientName, (t: Target) => Promise<Measured>> = {
  gtlsclient,
  'h2lab-h3': (t) => h2lab('h3', t),
  'h2lab-h2': (t) => h2lab('h2', t),
};

// --- links ---------------------------------------------------------------------------------------
interface Point {
  rttMs: number;
  rateMbit: number;
  lossPct: number;
}
const label = (p: Point): string => `${p.rttMs} ms, ${p.rateMbit} Mbit/s, loss ${p.lossPct}%`;

async function openLink(p: Point): Promise<{ link: Link; fixture: FixtureTarget; target: Target }> {
  const link = await createLink({
    profile: { rttMs: p.rttMs, loss: p.lossPct / 100, rateBitsPerSec: p.rateMbit * 1e6 },
    backend: 'relay',
    congestionControl: cc,
    seed,
  });
  try {
    const fixture = await startFixtureTarget(
      { h3: true, quicRetry, ...(serverQlog ? { qlogDir: join(dir, 'server-qlog') } : {}) },
      { link },
    );
    if (!fixture.h3Url) throw new Error(`the fixture serves no h3: ${fixture.h3Unavailable ?? '?'}`);
    return {
      link,
      fixture,
      target: { h3Url: fixture.h3Url, tlsUrl: fixture.tlsUrl!, caFile: fixture.caFile! },
    };
  } catch (err) {
    await link.close();
    throw err;
  }
}

// --- the run -------------------------------------------------------------------------------------
const points: Point[] = [];
for (const rttMs of rtts)
  for (const rateMbit of rates) for (const lossPct of losses) points.push({ rttMs, rateMbit, lossPct });
const times = new Map<string, number[]>();
const failures = new Map<string, string[]>();
/** Packets the link's queue dropped server → client during each measurement. */
const drops = new Map<string, number[]>();
/** What the link carried and dropped server → client between two readings (one client at a time). */
function linkDelta(
  a: LinkStats,
  b: LinkStats,
): { packetsDown: number; bytesDown: number; dropsDown: number } {
  return {
    packetsDown: (b.down?.packetsIn ?? 0) - (a.down?.packetsIn ?? 0),
    bytesDown: (b.down?.bytesIn ?? 0) - (a.down?.bytesIn ?? 0),
    dropsDown: (b.down?.droppedQueue ?? 0) - (a.down?.droppedQueue ?? 0),
  };
}
const key = (p: Point, c: ClientName): string => `${label(p)}|${c}`;
/** With --server-qlog: what the server's qlogs written since the last call say it lost and resent. */
const seenQlogs = new Set<string>();
function serverLosses(): string {
  const qdir = join(dir, 'server-qlog');
  if (!serverQlog) return '';
  const fresh = readdirSync(qdir).filter((f) => f.startsWith('server-') && !seenQlogs.has(f));
  for (const f of fresh) seenQlogs.add(f);
  const facts = fresh.flatMap((f) => readQlogSenderFacts(join(qdir, f)) ?? []);
  if (facts.length === 0) return '';
  const lost = facts.reduce((n, f) => n + (f.packetsLost ?? 0), 0);
  const again = facts.reduce((n, f) => n + f.packetsRetransmitted, 0);
  const sent = facts.reduce((n, f) => n + f.packetsSent, 0);
  return `; server (its qlog): ${sent} packets sent, ${lost} declared lost, ${again} with retransmitted data`;
}
const push = <T>(m: Map<string, T[]>, k: string, v: T): void => {
  m.set(k, [...(m.get(k) ?? []), v]);
};

const command = `node --import tsx bench/h3-referee.ts ${process.argv.slice(2).join(' ')}`.trim();
const load0 = loadavg();
const started = performance.now();
console.log(`# h2lab HTTP/3 referee — ${new Date().toISOString()}`);
console.log(`command: ${command}`);
console.log(
  `machine: ${cpus().length} cores, load average ${load0.map((x) => x.toFixed(2)).join(' ')} at start; node ${process.version}`,
);
console.log(
  `download: 1 × ${sizeSpec} (${sizeBytes} B) on a fresh connection per client; ${rounds} rounds, interleaved; links ${points.map(label).join(' / ')}, queue = 1 BDP (≥ 64 KiB), seed ${seed}; TCP cc ${cc} (both ends), QUIC cc the binding's (cubic) and gtlsclient's default (cubic); Retry ${quicRetry ? 'on' : 'off'}`,
);
gtlsStartupMs = clients.includes('gtlsclient') ? await measureGtlsStartup() : 0;
console.log(
  `gtlsclient start-up (median of 5 runs against a closed port, 1 ms handshake timeout): ${gtlsStartupMs.toFixed(1)} ms, subtracted from its wall clock\n`,
);

for (const p of points) {
  console.log(`## ${label(p)}`);
  const l = await openLink(p);
  try {
    // Not recorded: the server's JIT and h2lab's TLS contexts warm before the clock.
    const t = l.target;
    await runLoad({ url: `${t.h3Url}/bytes/1024`, ca: t.caFile, protocol: 'h3', requests: 4 }).done;
    await runLoad({ url: `${t.tlsUrl}/bytes/1024`, ca: t.caFile, protocol: 'h2', requests: 4 }).done;
    serverLosses();
    for (let r = 0; r < rounds; r++) {
      const order = clients.map((_, i) => clients[(i + r) % clients.length]!);
      for (const c of order) {
        try {
          const before = await l.link.stats();
          const m = await CLIENT_FNS[c](l.target);
          const d = linkDelta(before, await l.link.stats());
          push(times, key(p, c), m.ms);
          push(drops, key(p, c), d.dropsDown);
          console.log(
            `  r${r + 1} ${c.padEnd(10)} ${m.ms.toFixed(0).padStart(7)} ms ${m.protocol}; link, server → client: ${d.packetsDown} packets of ${d.packetsDown ? (d.bytesDown / d.packetsDown).toFixed(0) : 0} B, ${d.dropsDown} dropped at the full queue${serverLosses()}`,
          );
        } catch (err) {
          const msg = (err as Error).message.split('\n')[0]!;
          push(failures, key(p, c), msg);
          console.log(`  r${r + 1} ${c.padEnd(10)} FAILED ${msg}`);
        }
      }
    }
  } finally {
    await l.fixture.close();
    await l.link.close();
  }
}

// --- the table -----------------------------------------------------------------------------------
const med = (p: Point, c: ClientName): number | undefined => {
  const xs = times.get(key(p, c));
  return xs?.length ? median(xs) : undefined;
};
const cellText = (p: Point, c: ClientName): string => {
  const xs = times.get(key(p, c)) ?? [];
  const f = failures.get(key(p, c))?.length ?? 0;
  if (xs.length === 0) return f ? `failed ×${f}` : '—';
  const ds = drops.get(key(p, c)) ?? [];
  return `${(median(xs) / 1000).toFixed(2)} (${(Math.min(...xs) / 1000).toFixed(2)}–${(Math.max(...xs) / 1000).toFixed(2)}) [drops ${median(ds).toFixed(0)}]${f ? ` +${f} failed` : ''}`;
};
const ratioText = (a: number | undefined, b: number | undefined): string =>
  a !== undefined && b !== undefined ? (a / b).toFixed(2) : '—';
console.log(
  `\n### ${sizeSpec}: time to the whole body, s — median (min–max) of ${rounds} rounds [median packets the link's queue dropped, server → client]`,
);
console.log(`| link | ${clients.join(' | ')} | h2lab-h3 / gtlsclient | h2lab-h3 / h2lab-h2 |`);
console.log(`|---|${clients.map(() => '---').join('|')}|---|---|`);
const summary: unknown[] = [];
for (const p of points) {
  const h3 = med(p, 'h2lab-h3');
  const ref = med(p, 'gtlsclient');
  const h2 = med(p, 'h2lab-h2');
  console.log(
    `| ${label(p)} | ${clients.map((c) => cellText(p, c)).join(' | ')} | ${ratioText(h3, ref)} | ${ratioText(h3, h2)} |`,
  );
  summary.push({
    point: p,
    medians: Object.fromEntries(clients.map((c) => [c, med(p, c)])),
    times: Object.fromEntries(clients.map((c) => [c, times.get(key(p, c)) ?? []])),
    drops: Object.fromEntries(clients.map((c) => [c, drops.get(key(p, c)) ?? []])),
    failures: Object.fromEntries(clients.map((c) => [c, failures.get(key(p, c)) ?? []])),
  });
}
const load1 = loadavg();
console.log(
  `\nload average ${load0.map((x) => x.toFixed(2)).join(' ')} at start, ${load1.map((x) => x.toFixed(2)).join(' ')} at end; ${((performance.now() - started) / 60_000).toFixed(1)} min`,
);
console.log(`reproduce: ${command}`);
if (values.json) {
  writeFileSync(
    values.json,
    `${JSON.stringify({ command, loadStart: load0, loadEnd: load1, sizeBytes, rounds, cc, quicRetry, seed, gtlsStartupMs, summary }, null, 2)}\n`,
  );
}
process.exit(0);

// Hostile floods against the fixture server and nginx side by side, each server in its own
// process (so RSS and CPU are the server's alone; the attacker is this process): rapid reset spread
// over 50 connections (with h2load beside it, for the normal client's share), WINDOW_UPDATE(0, +1)
// and unknown-type floods after one GET, header lists of 39/63/98 KB, and a first request on stream
// 203. Every loop is bounded in count and time; loopback only. The figures of docs/reliability.md.
// Usage: node --import tsx bench/floods-vs-nginx.ts [--checkout DIR] [--only h2lab|nginx] [--rounds N]
//   --checkout DIR   run DIR/src/cli/main.ts serve as "h2lab" (another checkout: the "before" column)
import { execFile, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  connectPeer,
  encodeFrame,
  flood,
  largeHeaderList,
  type Peer,
  preface,
  requestHeaders,
  rstStream,
  settingsAck,
  until,
  windowUpdate,
  within,
} from '../test/hostile/attacker.ts';
import { freePort, median, requireTools, scratch } from './common.ts';

const { values } = parseArgs({
  options: {
    checkout: { type: 'string' },
    only: { type: 'string' },
    rounds: { type: 'string', default: '1' },
    cases: { type: 'string', default: 'reset,floods,headers' },
    connections: { type: 'string', default: '50' },
    pairs: { type: 'string', default: '2000' },
  },
});
const root = fileURLToPath(new URL('..', import.meta.url));
const checkout = resolve(values.checkout ?? root);
const CONNECTIONS = Number(values.connections);
const PAIRS = Number(values.pairs);
const cases = new Set(values.cases.split(','));
requireTools([
  ['nginx', '-v'],
  ['h2load', '--version'],
]);
const { dir, children } = scratch('h2lab-bench-floods-');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// --- the servers -------------------------------------------------------------------------------------
const h2lab = spawn(
  process.execPath,
  ['--import', 'tsx', join(checkout, 'src/cli/main.ts'), 'serve', '--port', '0', '--no-tls'],
  { cwd: checkout, stdio: ['ignore', 'pipe', 'inherit'] },
);
children.push(h2lab);
const h2labPort = await new Promise<number>((res, rej) => {
  let out = '';
  h2lab.stdout!.on('data', (d: Buffer) => {
    out += d;
    const m = /listening http:\/\/[^:]+:(\d+)/.exec(out);
    if (m) res(Number(m[1]));
  });
  h2lab.once('exit', (code) => rej(new Error(`h2lab serve exited with ${code}`)));
});
const ngPort = await freePort();
const conf = join(dir, 'nginx.conf');
writeFileSync(
  conf,
  `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  keepalive_requests 100000000;
  client_body_temp_path ${dir}/cb; proxy_temp_path ${dir}/pt; fastcgi_temp_path ${dir}/ft;
  uwsgi_temp_path ${dir}/ut; scgi_temp_path ${dir}/st;
  server { listen 127.0.0.1:${ngPort} http2; location / { return 200 "ok\\n"; } }
}
`,
);
const nginx = spawn('nginx', ['-e', join(dir, 'error.log'), '-p', dir, '-c', conf], { stdio: 'inherit' });
children.push(nginx);
await until(() => false, 300);

/** The processes whose RSS and CPU are the server's: nginx's worker(s), h2lab's one process. */
function pidsOf(pid: number): number[] {
  const out = [pid];
  try {
    for (const c of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/))
      if (c) out.push(...pidsOf(Number(c)));
  } catch {
    // gone
  }
  return out;
}
function rssMiB(pid: number): number {
  let kb = 0;
  for (const p of pidsOf(pid)) {
    const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
    kb += Number(m?.[1] ?? 0);
  }
  return kb / 1024;
}
function cpuSeconds(pid: number): number {
  let t = 0;
  for (const p of pidsOf(pid)) {
    const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    t += (Number(f[11]) + Number(f[12])) / 100;
  }
  return t;
}

const servers = [
  { name: 'h2lab', port: h2labPort, pid: h2lab.pid! },
  { name: 'nginx', port: ngPort, pid: nginx.pid! },
].filter((s) => !values.only || s.name === values.only);

// --- cases ---------------------------------------------------------------------------------------------
async function rapidReset(port: number): Promise<{ peer: Peer; lastWriteAt: number }> {
  const peer = await connectPeer({ port });
  await peer.write(Buffer.concat([preface(), settingsAck()]));
  const h = requestHeaders();
  await flood(peer, (i) => Buffer.concat([h(2 * i + 1), rstStream(2 * i + 1)]), PAIRS, 5000, 500);
  return { peer, lastWriteAt: performance.now() };
}

/** h2load -c 1 -m 10 for `seconds` against /healthz: req/s. */
function h2loadRate(port: number, seconds: number): Promise<number> {
  return new Promise((res) =>
    execFile(
      'h2load',
      ['-c', '1', '-m', '10', '-D', String(seconds), `http://127.0.0.1:${port}/healthz`],
      { timeout: (seconds + 20) * 1000 },
      (_err, out) => res(Number(/finished in [\d.]+m?s, ([\d.]+) req\/s/.exec(String(out))?.[1] ?? 0)),
    ),
  );
}

async function rapidResetCase(s: (typeof servers)[number], beside: boolean): Promise<string> {
  const rss0 = rssMiB(s.pid);
  const cpu0 = cpuSeconds(s.pid);
  let peak = rss0;
  let peakInAttack = 0;
  const sampler = setInterval(() => {
    const rss = rssMiB(s.pid);
    peak = Math.max(peak, rss);
    peakInAttack = Math.max(peakInAttack, rss);
  }, 50);
  const alone = beside ? await h2loadRate(s.port, 3) : 0;
  const load = beside ? h2loadRate(s.port, 3) : Promise.resolve(0);
  if (beside) await sleep(300);
  // What h2load alone left behind (3 s of normal requests) is not the attack's doing.
  const rssAtAttack = rssMiB(s.pid);
  peakInAttack = rssAtAttack;
  const t0 = performance.now();
  const attacks = await Promise.all(Array.from({ length: CONNECTIONS }, () => rapidReset(s.port)));
  await until(() => attacks.every((a) => a.peer.isClosed()), 5000);
  const cpu = cpuSeconds(s.pid) - cpu0;
  const closed = await Promise.all(attacks.map((a) => within(a.peer.closed, 0, Number.NaN)));
  const afterWrite = attacks.map((a, i) => a.peer.t0 + closed[i]! - a.lastWriteAt);
  const goaways = attacks.map((a) => a.peer.goaway?.atMs ?? Number.NaN);
  const codes = new Set(attacks.map((a) => a.peer.goaway?.code ?? '-'));
  const attackMs = performance.now() - t0;
  for (const a of attacks) a.peer.destroy();
  const withAttack = await load;
  await sleep(5000);
  clearInterval(sampler);
  const rssIdle = rssMiB(s.pid);
  const open = closed.filter((c) => Number.isNaN(c)).length;
  return (
    `rapid reset ${CONNECTIONS} × ${PAIRS}${beside ? ' beside h2load' : ''}: RSS ${rss0.toFixed(0)} → peak ${peak.toFixed(0)} → ${rssIdle.toFixed(0)} MiB 5 s after` +
    (beside
      ? ` (${rssAtAttack.toFixed(0)} when the attack began, after h2load alone; +${(peakInAttack - rssAtAttack).toFixed(0)} during it)`
      : '') +
    `; CPU ${cpu.toFixed(2)} s; ` +
    `GOAWAY ${[...codes].join('/')} at median ${median(goaways.filter(Number.isFinite)).toFixed(0)} / max ${Math.max(...goaways.filter(Number.isFinite)).toFixed(0)} ms from connect; ` +
    `closed ${open === 0 ? 'all' : `${CONNECTIONS - open} of ${CONNECTIONS}`}, max ${Math.max(...afterWrite.filter(Number.isFinite)).toFixed(0)} ms after the connection's last write (attack ${attackMs.toFixed(0)} ms)` +
    (beside
      ? `; h2load alone ${alone.toFixed(0)} req/s, beside the attack ${withAttack.toFixed(0)} req/s (${((100 * withAttack) / alone).toFixed(0)} %)`
      : '')
  );
}

async function floodCase(s: (typeof servers)[number], name: string, unit: () => Buffer): Promise<string> {
  const peer = await connectPeer({ port: s.port });
  await peer.write(Buffer.concat([preface(), settingsAck(), requestHeaders()(1, '/healthz')]));
  await sleep(50);
  const cpu0 = cpuSeconds(s.pid);
  const t0 = performance.now();
  const sent = await flood(peer, unit, 3_000_000, 3000, 1000);
  const closedMs = await within(peer.closed, 1000, Number.NaN);
  const cpu = cpuSeconds(s.pid) - cpu0;
  peer.destroy();
  const into = (ms: number) => (ms - (t0 - peer.t0)).toFixed(0);
  // A server that closes with the flood unread in its receive buffer resets the connection, and the
  // peer's kernel may drop a GOAWAY it had not read yet: the close is the figure that always shows.
  return `${name}: ${sent} frames written; GOAWAY ${peer.goaway ? `${peer.goaway.code} ${into(peer.goaway.atMs)} ms into the flood` : 'not read'}; ${Number.isNaN(closedMs) ? 'not closed' : `closed ${into(closedMs)} ms into the flood`}; CPU ${cpu.toFixed(2)} s`;
}

async function headerListCase(s: (typeof servers)[number], kb: number): Promise<string> {
  const peer = await connectPeer({ port: s.port });
  const t0 = performance.now();
  await peer.write(Buffer.concat([preface(), largeHeaderList(1, kb)]));
  await until(() => peer.headersReceived > 0 || peer.rstReceived > 0 || peer.goaway !== undefined, 1000);
  const ms = performance.now() - t0;
  peer.destroy();
  const what =
    peer.headersReceived > 0
      ? 'a response (HEADERS)'
      : peer.rstReceived > 0
        ? `RST_STREAM ${peer.rstCodes[0]}`
        : peer.goaway
          ? `GOAWAY ${peer.goaway.code}`
          : 'nothing';
  return `${kb} KB header list in the first flight: ${what} after ${ms.toFixed(1)} ms`;
}

async function skippedIdsCase(s: (typeof servers)[number]): Promise<string> {
  const peer = await connectPeer({ port: s.port });
  await peer.write(Buffer.concat([preface(), settingsAck(), requestHeaders()(203)]));
  await until(() => peer.headersReceived > 0 || peer.isClosed(), 1000);
  await sleep(500);
  peer.destroy();
  return `first request on stream 203: ${peer.headersReceived > 0 ? 'served' : 'not served'}; GOAWAY ${peer.goaway?.code ?? '-'}`;
}

console.log(
  `${cpus().length} cores; load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}; h2lab from ${checkout}; ${new Date().toISOString()}`,
);
for (let r = 0; r < Number(values.rounds); r++) {
  for (const s of servers) {
    const line = (x: string) => console.log(`${s.name.padEnd(6)} ${x}`);
    if (cases.has('reset')) {
      line(await rapidResetCase(s, false));
      line(await rapidResetCase(s, true));
    }
    if (cases.has('floods')) {
      line(await floodCase(s, 'WINDOW_UPDATE(0, +1) after one GET', () => windowUpdate(0, 1)));
      line(await floodCase(s, 'unknown type 0x20 after one GET', () => encodeFrame(0x20, 0, 0)));
    }
    if (cases.has('headers')) {
      for (const kb of [39, 63, 98]) line(await headerListCase(s, kb));
      line(await skippedIdsCase(s));
    }
  }
}
console.log(
  `load average after: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
process.exit(0);

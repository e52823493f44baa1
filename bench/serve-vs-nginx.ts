// The fixture server against nginx (Debian package, one worker) on the same content: GET /bytes/1KiB,
// driven by h2load for h2c (1 connection × 100 streams) and HTTP/1.1 (16 connections), alternating
// which server goes first in each round. Prints req/s per run, medians, and the ratio h2lab / nginx;
// a bare Node server (respond + end, nothing else) runs too, to show how much of the gap is Node's own.
// Target: ratio ≥ 0.5 on both protocols; server CPU per request within 1.2× nginx's.
// h2lab runs through bin/h2lab.js, as an installed package does (dist/ when it is built and fresh).
// --baseline DIR runs another build's `serve` beside it (DIR/bin/h2lab.js, its dist/ built; see
// docs/performance.md), in the same rotation: a before/after of a change to the server.
// --requests N sends exactly N requests per run (h2load -n, no warm-up) instead of --seconds, so CPU
// per request is CPU / N rather than an estimate from the rate; --protocols h2c,http/1.1 picks rows.
// Usage: node --import tsx bench/serve-vs-nginx.ts [--rounds 5] [--seconds 5 | --requests N]
//        [--protocols h2c,http/1.1] [--baseline DIR] [--json FILE]
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort, median, requireTools, scratch } from './common.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '5' },
    requests: { type: 'string' },
    protocols: { type: 'string', default: 'h2c,http/1.1' },
    baseline: { type: 'string' },
    json: { type: 'string' },
  },
});
const requests = values.requests === undefined ? undefined : Number(values.requests);
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const root = fileURLToPath(new URL('..', import.meta.url));

requireTools([
  ['nginx', '-v'],
  ['h2load', '--version'],
]);

const { dir, children, cleanup } = scratch('h2lab-bench-nginx-');

// --- h2lab serve (its own process, as users run it) ------------------------------------------------
async function startServe(dirOf: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [join(dirOf, 'bin/h2lab.js'), 'serve', '--port', '0', '--no-tls'], {
    cwd: dirOf,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /listening (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`h2lab serve (${dirOf}) exited with ${code}`)));
  });
  return { child, url };
}
const { child: h2lab, url: h2labUrl } = await startServe(root);
const base = values.baseline === undefined ? undefined : await startServe(values.baseline);

// --- bare Node: the least any Node server does for this request (the floor of Node's own cost) -----
const bareScript = `
const http = require('node:http'), http2 = require('node:http2');
const body = Buffer.from(process.argv[1], 'base64');
const h = { 'content-type': 'application/octet-stream', 'content-length': body.length };
const s2 = http2.createServer({ settings: { maxConcurrentStreams: 250 } });
s2.on('stream', (st) => { st.respond(h); st.end(body); });
const s1 = http.createServer((q, r) => { r.writeHead(200, h); r.end(body); });
s2.listen(0, '127.0.0.1', () => s1.listen(0, '127.0.0.1', () =>
  console.log('bare', s2.address().port, s1.address().port)));
`;

// --- nginx, one worker, the same bytes from a file -------------------------------------------------
const body = Buffer.from(await (await fetch(`${h2labUrl}/bytes/1KiB`)).arrayBuffer());
const www = join(dir, 'www');
mkdirSync(join(www, 'bytes'), { recursive: true });
writeFileSync(join(www, 'bytes', '1KiB'), body);
// nginx started as root serves as `nobody`: the tree must be world-readable.
for (const p of [dir, www, join(www, 'bytes')]) chmodSync(p, 0o755);
chmodSync(join(www, 'bytes', '1KiB'), 0o644);
const [h2Port, h1Port] = [await freePort(), await freePort()];
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
  default_type application/octet-stream;
  keepalive_requests 100000000;
  keepalive_timeout 75s;
  http2_max_concurrent_streams 250;
  client_body_temp_path ${dir}/cb; proxy_temp_path ${dir}/pt; fastcgi_temp_path ${dir}/ft;
  uwsgi_temp_path ${dir}/ut; scgi_temp_path ${dir}/st;
  server { listen 127.0.0.1:${h2Port} http2; location / { root ${www}; } }
  server { listen 127.0.0.1:${h1Port}; location / { root ${www}; } }
}
`,
);
const nginx = spawn('nginx', ['-e', join(dir, 'error.log'), '-p', dir, '-c', conf], { stdio: 'inherit' });
children.push(nginx);
for (let i = 0; i < 100; i++) {
  const ok = await fetch(`http://127.0.0.1:${h1Port}/bytes/1KiB`).then(
    (r) => r.ok,
    () => false,
  );
  if (ok) break;
  await new Promise((r) => setTimeout(r, 50));
}
const bare = spawn(process.execPath, ['-e', bareScript, body.toString('base64')], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
children.push(bare);
const [bareH2, bareH1] = await new Promise<[number, number]>((resolve) => {
  bare.stdout!.on('data', (d: Buffer) => {
    const m = /bare (\d+) (\d+)/.exec(String(d));
    if (m) resolve([Number(m[1]), Number(m[2])]);
  });
});
const check = Buffer.from(await (await fetch(`http://127.0.0.1:${h1Port}/bytes/1KiB`)).arrayBuffer());
if (!check.equals(body)) throw new Error('nginx does not serve the same bytes');

// --- runs ------------------------------------------------------------------------------------------
type Proto = 'h2c' | 'http/1.1';
const targets = {
  h2lab: { 'http/1.1': `${h2labUrl}/bytes/1KiB`, h2c: `${h2labUrl}/bytes/1KiB` },
  nginx: {
    'http/1.1': `http://127.0.0.1:${h1Port}/bytes/1KiB`,
    h2c: `http://127.0.0.1:${h2Port}/bytes/1KiB`,
  },
  node: { 'http/1.1': `http://127.0.0.1:${bareH1}/`, h2c: `http://127.0.0.1:${bareH2}/` },
  base: { 'http/1.1': `${base?.url}/bytes/1KiB`, h2c: `${base?.url}/bytes/1KiB` },
} as const;
type Target = keyof typeof targets;
const NAMES: Target[] = base ? ['h2lab', 'base', 'nginx', 'node'] : ['h2lab', 'nginx', 'node'];
const PROTOCOLS = (values.protocols ?? '').split(',').filter(Boolean) as Proto[];
for (const p of PROTOCOLS) if (p !== 'h2c' && p !== 'http/1.1') throw new Error(`--protocols: unknown ${p}`);
const argsFor: Record<Proto, string[]> = { h2c: ['-c', '1', '-m', '100'], 'http/1.1': ['--h1', '-c', '16'] };

/** CPU seconds (user + system) used so far by these processes and their children (nginx workers). */
function cpuSeconds(pids: number[]): number {
  const tick = 100; // USER_HZ on Linux
  let t = 0;
  const seen = new Set<number>();
  const visit = (pid: number) => {
    if (seen.has(pid)) return;
    seen.add(pid);
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      t += (Number(f[11]) + Number(f[12])) / tick; // utime, stime
      for (const c of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/))
        if (c) visit(Number(c));
    } catch {
      // the process is gone
    }
  };
  for (const p of pids) visit(p);
  return t;
}

/** Requests per second, and how many requests the CPU reading covers (an estimate under --seconds). */
function h2load(url: string, proto: Proto): { rps: number; count: number } {
  const span =
    requests === undefined ? ['-D', String(seconds), '--warm-up-time', '1'] : ['-n', String(requests)];
  const out = execFileSync('h2load', [...argsFor[proto], ...span, url], {
    encoding: 'utf8',
    timeout: (seconds + 30) * 1000,
  });
  const m = /finished in [\d.]+m?s, ([\d.]+) req\/s/.exec(out);
  const fail = /(\d+) failed/.exec(out);
  if (!m || Number(m[1]) === 0) throw new Error(`h2load gave no rate for ${url}:\n${out}`);
  if (fail && Number(fail[1]) > 0) throw new Error(`h2load saw ${fail[1]} failed requests on ${url}`);
  const rps = Number(m[1]);
  // The warm-up second is counted at the measured rate (an approximation); -n N is exact.
  return { rps, count: requests ?? rps * (seconds + 1) };
}

const pidsOf: Record<Target, number[]> = {
  h2lab: [h2lab.pid!],
  base: base ? [base.child.pid!] : [],
  nginx: [nginx.pid!],
  node: [bare.pid!],
};
const cpuUs = Object.fromEntries(
  NAMES.map((t) => [t, { h2c: [] as number[], 'http/1.1': [] as number[] }]),
) as Record<Target, Record<Proto, number[]>>;
const results = Object.fromEntries(
  NAMES.map((t) => [t, { h2c: [] as number[], 'http/1.1': [] as number[] }]),
) as Record<Target, Record<Proto, number[]>>;
const span = requests === undefined ? `${seconds} s (+1 s warm-up)` : `${requests} requests`;
console.log(
  `GET /bytes/1KiB, ${rounds} rounds × ${span} per run; ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)}`,
);
for (let r = 0; r < rounds; r++) {
  for (const proto of PROTOCOLS) {
    // Rotate who goes first, so a drift in the machine's load does not favour one server.
    const order = NAMES.map((_, i) => NAMES[(i + r) % NAMES.length]!);
    for (const t of order) {
      const cpu0 = cpuSeconds(pidsOf[t]);
      const { rps, count } = h2load(targets[t][proto], proto);
      // Server CPU per request: robust to the machine's load where req/s is not.
      const us = ((cpuSeconds(pidsOf[t]) - cpu0) / count) * 1e6;
      results[t][proto].push(rps);
      cpuUs[t][proto].push(us);
      console.log(
        `round ${r + 1} ${proto.padEnd(8)} ${t.padEnd(5)} ${rps.toFixed(0).padStart(7)} req/s ${us.toFixed(1).padStart(6)} µs CPU/req (load ${loadavg()[0]!.toFixed(1)})`,
      );
    }
  }
}

console.log(
  '\nprotocol  h2load                 h2lab median  nginx median  node median  h2lab/nginx  median round ratio  h2lab/node',
);
const summary: Record<string, unknown> = {};
for (const proto of PROTOCOLS) {
  const a = median(results.h2lab[proto]);
  const b = median(results.nginx[proto]);
  const n = median(results.node[proto]);
  const perRound = median(results.h2lab[proto].map((x, i) => x / results.nginx[proto][i]!));
  const cols = [a.toFixed(0).padStart(12), b.toFixed(0).padStart(12), n.toFixed(0).padStart(11)];
  const ratios = [
    (a / b).toFixed(2).padStart(11),
    perRound.toFixed(2).padStart(18),
    (a / n).toFixed(2).padStart(10),
  ];
  console.log(
    `${proto.padEnd(9)} ${argsFor[proto].join(' ').padEnd(22)} ${cols.join('  ')}  ${ratios.join('  ')}`,
  );
  const cpu = NAMES.map((t) => `${t} ${median(cpuUs[t][proto]).toFixed(1)}`).join(', ');
  console.log(`${''.padEnd(9)} server CPU per request (median µs): ${cpu}`);
  const cpuRatio = (t: Target, to: Target) =>
    median(cpuUs[t][proto].map((x, i) => x / cpuUs[to][proto][i]!)).toFixed(2);
  console.log(
    `${''.padEnd(9)} CPU per request, median of per-round ratios: h2lab/nginx ${cpuRatio('h2lab', 'nginx')}, node/nginx ${cpuRatio('node', 'nginx')}, h2lab/node ${cpuRatio('h2lab', 'node')}${base ? `, h2lab/baseline ${cpuRatio('h2lab', 'base')}` : ''}`,
  );
  summary[proto] = {
    cpuMicrosPerRequest: Object.fromEntries(NAMES.map((t) => [t, cpuUs[t][proto]])),
    ...Object.fromEntries(NAMES.map((t) => [t, results[t][proto]])),
    ratioOfMedians: a / b,
    medianRoundRatio: perRound,
    h2labOverNode: a / n,
  };
}
if (values.json)
  writeFileSync(
    values.json,
    `${JSON.stringify({ seconds, requests, rounds, loadavg: loadavg(), summary }, null, 2)}\n`,
  );
cleanup();
process.exit(0);

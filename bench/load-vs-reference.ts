// h2lab's load generator against the reference clients, on the same nginx (Debian package, one
// worker, a 1 KiB file), alternating the order of the clients in every round:
//   h2:  h2lab bench --protocol h2 --concurrency 100   vs  h2load -c1 -m100          (target ≥ 0.6×)
//   h1:  h2lab bench --protocol h1 --connections 16    vs  autocannon -c16 and h2load --h1 -c16
//                                                                          (target ≥ 1.0× autocannon)
// Both HTTP/2 clients speak h2c (prior knowledge) so TLS cost does not blur the comparison.
// Prints req/s per run, medians and ratios; --node PATH runs h2lab under another Node as well.
// Usage: node --import tsx bench/load-vs-reference.ts [--rounds 3] [--seconds 5] [--node PATH]
//
// --cpu: CPU time per request instead of req/s, the steadier figure on a shared machine.
// Each client runs --small and --large requests (closed loop, no warm-up) in every round, clients
// interleaved and their order rotated; per request it reports
//   whole:        the process's user + system CPU (getrusage of the child: module loading included)
//                 / requests, for the --large run;
//   from connect: h2lab's own `client.cpuSeconds` (from opening its connections to the end) / requests,
//                 --large run; for h2load (a C program: nothing to load) the same as whole;
//   steady:       (whole CPU of the --large run − whole CPU of the --small run) / (large − small):
//                 start-up, connection setup and JIT warm-up cancel out.
// h2lab runs from the compiled package (dist/, as an installed package runs it; `npm run build` first).
// Suites: h2 (h2lab -p h2 -c 100 vs h2load -c1 -m100), h1 (-p h1 --connections 6 -c 6 vs h2load --h1
// -c6, and bench/bare-h1-client.ts: bare node:net, the floor of any Node client), h2w2 (--workers 2 vs h2load -t2 -c2 -m50: two sessions of 50 streams each).
// --baseline DIR (repeatable) runs another build of h2lab beside it in every round, DIR/dist/cli/main.js
// (e.g. `git archive <commit> | tar -x -C DIR`, node_modules linked, `tsc -p tsconfig.build.json`
// there): a before/after of a change in one interleaved run.
// Usage: node --import tsx bench/load-vs-reference.ts --cpu [--rounds 5] [--small 5000] [--large 50000]
//        [--suites h2,h1,h2w2] [--baseline DIR]
import { execFile, spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort, median, requireTools, scratch } from './common.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    node: { type: 'string' },
    cpu: { type: 'boolean', default: false },
    small: { type: 'string', default: '5000' },
    large: { type: 'string', default: '50000' },
    suites: { type: 'string', default: 'h2,h1,h2w2' },
    baseline: { type: 'string', multiple: true },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const root = fileURLToPath(new URL('..', import.meta.url));
const run = (cmd: string, args: string[]): Promise<string> =>
  new Promise((resolve, reject) => {
    execFile(
      cmd,
      args,
      { encoding: 'utf8', timeout: (seconds + 60) * 1000, cwd: root, maxBuffer: 1 << 26 },
      (err, out, errOut) =>
        err ? reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${errOut}`)) : resolve(out),
    );
  });

requireTools([
  ['nginx', '-v'],
  ['h2load', '--version'],
]);

// --- nginx: one worker, 1 KiB from a file, h2c on one port and HTTP/1.1 on another ----------------
const { dir, children } = scratch('h2lab-bench-load-');
const www = join(dir, 'www');
mkdirSync(www);
writeFileSync(join(www, '1k'), Buffer.alloc(1024, 97));
for (const p of [dir, www]) chmodSync(p, 0o755);
chmodSync(join(www, '1k'), 0o644);
const [h2Port, h1Port] = [await freePort(), await freePort()];
writeFileSync(
  join(dir, 'nginx.conf'),
  `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  keepalive_requests 100000000;
  http2_max_concurrent_streams 256;
  client_body_temp_path ${dir}/cb; proxy_temp_path ${dir}/pt; fastcgi_temp_path ${dir}/ft;
  uwsgi_temp_path ${dir}/ut; scgi_temp_path ${dir}/st;
  server { listen 127.0.0.1:${h2Port} http2; location / { root ${www}; } }
  server { listen 127.0.0.1:${h1Port}; location / { root ${www}; } }
}
`,
);
const nginx = spawn('nginx', ['-e', join(dir, 'error.log'), '-p', dir, '-c', join(dir, 'nginx.conf')], {
  stdio: 'inherit',
});
children.push(nginx);
for (let i = 0; i < 100; i++) {
  if (
    await fetch(`http://127.0.0.1:${h1Port}/1k`).then(
      (r) => r.ok,
      () => false,
    )
  )
    break;
  await new Promise((r) => setTimeout(r, 50));
}
const h1Url = `http://127.0.0.1:${h1Port}/1k`;
const h2Url = `http://127.0.0.1:${h2Port}/1k`;

// --- the clients ---------------------------------------------------------------------------------
if (values.cpu) {
  await cpuMode();
  process.exit(0);
}

async function h2load(args: string[], url: string): Promise<number> {
  const out = await run('h2load', [...args, '-D', String(seconds), '--warm-up-time', '1', url]);
  const m = /finished in [\d.]+m?s, ([\d.]+) req\/s/.exec(out);
  if (!m) throw new Error(`h2load gave no rate:\n${out}`);
  return Number(m[1]);
}
async function autocannon(url: string): Promise<number> {
  const out = await run(join(root, 'node_modules/.bin/autocannon'), [
    '-c',
    '16',
    '-d',
    String(seconds),
    '-j',
    url,
  ]);
  const j = JSON.parse(out) as {
    requests: { total: number };
    duration: number;
    non2xx: number;
    errors: number;
  };
  if (j.non2xx > 0 || j.errors > 0) throw new Error(`autocannon saw ${j.non2xx} non-2xx, ${j.errors} errors`);
  return j.requests.total / j.duration;
}
async function h2lab(
  node: string,
  args: string[],
  url: string,
): Promise<{ rps: number; elu: number; cpu: number }> {
  const json = join(dir, 'r.json');
  await run(node, [
    '--import',
    'tsx',
    join(root, 'src/cli/main.ts'),
    'bench',
    url,
    ...args,
    '-d',
    `${seconds}s`,
    '--warmup',
    '1s',
    '-q',
    '--json',
    json,
  ]);
  const r = JSON.parse(readFileSync(json, 'utf8')) as {
    throughput: { rps: number };
    counts: { failed: number };
    client: { eventLoopUtilization: number; cpu: number };
  };
  if (r.counts.failed > 0) throw new Error(`h2lab saw ${r.counts.failed} failed requests`);
  return { rps: r.throughput.rps, elu: r.client.eventLoopUtilization, cpu: r.client.cpu };
}

const nodes: Array<[string, string]> = [['h2lab', process.execPath]];
if (values.node)
  nodes.push([
    `h2lab@${spawnSync(values.node, ['--version'], { encoding: 'utf8' }).stdout.trim()}`,
    values.node,
  ]);
type Client = { name: string; go: () => Promise<number> };
const suites: Record<'h2' | 'h1', Client[]> = {
  h2: [
    { name: 'h2load -c1 -m100', go: () => h2load(['-c', '1', '-m', '100'], h2Url) },
    ...nodes.map(([n, bin]) => ({
      name: `${n} -p h2 -c 100`,
      go: async () => {
        const r = await h2lab(bin, ['-p', 'h2', '-c', '100'], h2Url);
        console.log(`      (event loop ${(r.elu * 100).toFixed(0)}%, ${r.cpu.toFixed(2)} CPU)`);
        return r.rps;
      },
    })),
  ],
  h1: [
    { name: 'autocannon -c16', go: () => autocannon(h1Url) },
    { name: 'h2load --h1 -c16', go: () => h2load(['--h1', '-c', '16'], h1Url) },
    ...nodes.map(([n, bin]) => ({
      name: `${n} -p h1 --connections 16`,
      go: async () => {
        const r = await h2lab(bin, ['-p', 'h1', '--connections', '16'], h1Url);
        console.log(`      (event loop ${(r.elu * 100).toFixed(0)}%, ${r.cpu.toFixed(2)} CPU)`);
        return r.rps;
      },
    })),
  ],
};
const results = new Map<string, number[]>();
console.log(
  `nginx 1 worker, GET 1 KiB; ${rounds} rounds × ${seconds} s (+1 s warm-up); ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)}`,
);
for (let r = 0; r < rounds; r++) {
  for (const [suite, clients] of Object.entries(suites)) {
    const order = clients.map((_, i) => clients[(i + r) % clients.length]!);
    for (const c of order) {
      const rps = await c.go();
      results.set(`${suite} ${c.name}`, [...(results.get(`${suite} ${c.name}`) ?? []), rps]);
      console.log(
        `round ${r + 1} ${suite} ${c.name.padEnd(36)} ${rps.toFixed(0).padStart(7)} req/s (load ${loadavg()[0]!.toFixed(1)})`,
      );
    }
  }
}
console.log('\nmedians');
for (const [k, v] of results) console.log(`  ${k.padEnd(40)} ${median(v).toFixed(0).padStart(7)} req/s`);
const m = (k: string): number => median(results.get(k) ?? [Number.NaN]);
console.log('\nratios (medians)');
for (const [n] of nodes) {
  console.log(
    `  h2: ${n} / h2load            ${(m(`h2 ${n} -p h2 -c 100`) / m('h2 h2load -c1 -m100')).toFixed(2)}  (target ≥ 0.6)`,
  );
  console.log(
    `  h1: ${n} / autocannon        ${(m(`h1 ${n} -p h1 --connections 16`) / m('h1 autocannon -c16')).toFixed(2)}  (target ≥ 1.0)`,
  );
  console.log(
    `  h1: ${n} / h2load --h1       ${(m(`h1 ${n} -p h1 --connections 16`) / m('h1 h2load --h1 -c16')).toFixed(2)}`,
  );
}

// The nginx child keeps the event loop alive: exit, which stops it (the 'exit' handler above).
process.exit(0);

/** CPU seconds (user + system) a command used, from bash's `times` for its child: µs resolution. */
function timedCpu(cmd: string, args: string[], out: string): Promise<number> {
  return new Promise((resolve, reject) => {
    execFile(
      'bash',
      ['-c', '"$@" >"$OUT" 2>&1; s=$?; times; exit $s', 'bash', cmd, ...args],
      { encoding: 'utf8', cwd: root, timeout: 600_000, env: { ...process.env, OUT: out } },
      (err, stdout) => {
        if (err)
          return reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${readFileSync(out, 'utf8')}`));
        const m = /\n(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/.exec(stdout);
        if (!m) return reject(new Error(`no times output: ${stdout}`));
        resolve(Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4]));
      },
    );
  });
}

async function cpuMode(): Promise<void> {
  const small = Number(values.small);
  const large = Number(values.large);
  const main = join(root, 'dist/cli/main.js');
  const out = join(dir, 'out.txt');
  const json = join(dir, 'r.json');
  type Run = { whole: number; fromConnect: number };
  type CpuClient = { name: string; go: (n: number) => Promise<Run> };
  const h2loadCpu =
    (args: string[], url: string) =>
    async (n: number): Promise<Run> => {
      const cpu = await timedCpu('h2load', [...args, '-n', String(n), url], out);
      const text = readFileSync(out, 'utf8');
      const m = /requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded/.exec(text);
      if (!m || Number(m[2]) !== n) throw new Error(`h2load did not complete ${n} requests:\n${text}`);
      return { whole: cpu, fromConnect: cpu };
    };
  const h2labCpu =
    (args: string[], url: string, entry = main) =>
    async (n: number): Promise<Run> => {
      const cpu = await timedCpu(
        process.execPath,
        [entry, 'bench', url, ...args, '-n', String(n), '-q', '--json', json],
        out,
      );
      const r = JSON.parse(readFileSync(json, 'utf8')) as {
        counts: { total: number; failed: number };
        client: { cpuSeconds?: number };
      };
      if (r.counts.failed > 0 || r.counts.total !== n)
        throw new Error(`h2lab: ${r.counts.total} requests, ${r.counts.failed} failed`);
      return { whole: cpu, fromConnect: r.client.cpuSeconds ?? Number.NaN };
    };
  // The floor of a Node HTTP/1.1 client (bench/bare-h1-client.ts): what h2lab's own code adds.
  const bareH1 = async (n: number): Promise<Run> => {
    const cpu = await timedCpu(
      process.execPath,
      ['--import', 'tsx', join(root, 'bench/bare-h1-client.ts'), h1Url, String(n), '6'],
      out,
    );
    return { whole: cpu, fromConnect: Number.NaN };
  };
  const all: Record<string, CpuClient[]> = {
    h2: [
      { name: 'h2load -c1 -m100', go: h2loadCpu(['-c', '1', '-m', '100'], h2Url) },
      { name: 'h2lab -p h2 -c 100', go: h2labCpu(['-p', 'h2', '-c', '100'], h2Url) },
    ],
    h1: [
      { name: 'h2load --h1 -c6', go: h2loadCpu(['--h1', '-c', '6'], h1Url) },
      {
        name: 'h2lab -p h1 --connections 6',
        go: h2labCpu(['-p', 'h1', '--connections', '6', '-c', '6'], h1Url),
      },
      { name: 'bare node:net -c6 (floor)', go: bareH1 },
    ],
    h2w2: [
      { name: 'h2load -t2 -c2 -m50', go: h2loadCpu(['-t', '2', '-c', '2', '-m', '50'], h2Url) },
      {
        name: 'h2lab -p h2 -c 100 --workers 2',
        go: h2labCpu(['-p', 'h2', '-c', '100', '--workers', '2'], h2Url),
      },
    ],
  };
  for (const b of values.baseline ?? []) {
    const entry = join(b, 'dist/cli/main.js');
    const tag = `h2lab@${b.replace(/\/+$/, '').split('/').at(-1)}`;
    all.h2!.push({ name: `${tag} -p h2 -c 100`, go: h2labCpu(['-p', 'h2', '-c', '100'], h2Url, entry) });
    all.h1!.push({
      name: `${tag} -p h1 --connections 6`,
      go: h2labCpu(['-p', 'h1', '--connections', '6', '-c', '6'], h1Url, entry),
    });
    all.h2w2!.push({
      name: `${tag} -p h2 -c 100 --workers 2`,
      go: h2labCpu(['-p', 'h2', '-c', '100', '--workers', '2'], h2Url, entry),
    });
  }
  const suites = values.suites.split(',').map((x) => x.trim());
  for (const x of suites) if (!all[x]) throw new Error(`unknown suite ${x}: h2, h1, h2w2`);
  const loads: number[] = [loadavg()[0]!];
  const us = new Map<string, { whole: number[]; fromConnect: number[]; steady: number[] }>();
  console.log(
    `nginx 1 worker, GET 1 KiB; CPU per request, ${rounds} rounds × (${small} and ${large} requests); ${cpus().length} cores, load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  for (let r = 0; r < rounds; r++) {
    for (const suite of suites) {
      const clients = all[suite]!;
      const order = clients.map((_, i) => clients[(i + r) % clients.length]!);
      for (const c of order) {
        const a = await c.go(small);
        const b = await c.go(large);
        const k = `${suite} ${c.name}`;
        const e = us.get(k) ?? { whole: [], fromConnect: [], steady: [] };
        e.whole.push((b.whole / large) * 1e6);
        e.fromConnect.push((b.fromConnect / large) * 1e6);
        e.steady.push(((b.whole - a.whole) / (large - small)) * 1e6);
        us.set(k, e);
        loads.push(loadavg()[0]!);
        console.log(
          `round ${r + 1} ${k.padEnd(40)} whole ${e.whole.at(-1)!.toFixed(1).padStart(6)}  from connect ${e.fromConnect.at(-1)!.toFixed(1).padStart(6)}  steady ${e.steady.at(-1)!.toFixed(1).padStart(6)} µs/req (load ${loadavg()[0]!.toFixed(2)})`,
        );
      }
    }
  }
  console.log(
    `\nmedians, µs CPU per request (load average during the run ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)})`,
  );
  console.log(
    `  ${'client'.padEnd(40)} ${'whole'.padStart(7)} ${'connect'.padStart(7)} ${'steady'.padStart(7)}`,
  );
  for (const [k, e] of us) {
    console.log(
      `  ${k.padEnd(40)} ${median(e.whole).toFixed(1).padStart(7)} ${median(e.fromConnect).toFixed(1).padStart(7)} ${median(e.steady).toFixed(1).padStart(7)}`,
    );
  }
  // Per-round ratios too: the clients of one round ran minutes apart at most, so a machine that got
  // busier or quieter during the run moves both sides of a round's ratio.
  console.log('\nmedian of the per-round ratios to h2load');
  for (const suite of suites) {
    const [ref, ...mine] = all[suite]!.map((c) => us.get(`${suite} ${c.name}`)!);
    for (const [i, m] of mine.entries()) {
      const per = (f: 'whole' | 'fromConnect' | 'steady') =>
        median(m[f].map((v, r) => v / ref![f][r]!)).toFixed(2);
      console.log(
        `  ${suite.padEnd(5)} ${all[suite]![i + 1]!.name.padEnd(36)} whole ${per('whole')}  from connect ${per('fromConnect')}  steady ${per('steady')}`,
      );
    }
  }
  console.log('\nratios to h2load (medians)');
  for (const suite of suites) {
    const [ref, ...mine] = all[suite]!.map((c) => [c.name, us.get(`${suite} ${c.name}`)!] as const);
    for (const [name, m] of mine) {
      const ratio = (f: 'whole' | 'fromConnect' | 'steady') => (median(m[f]) / median(ref![1][f])).toFixed(2);
      console.log(
        `  ${suite.padEnd(5)} ${name.padEnd(36)} whole ${ratio('whole')}  from connect ${ratio('fromConnect')}  steady ${ratio('steady')}`,
      );
    }
  }
  // h2lab's HTTP/1.1 client against Node's own floor, steady (per-round ratios, as above).
  const bare = us.get('h1 bare node:net -c6 (floor)');
  const h1 = us.get('h1 h2lab -p h1 --connections 6');
  if (bare && h1) {
    console.log(
      `  h2lab -p h1 steady CPU per request / bare node:net: ${median(h1.steady.map((v, r) => v / bare.steady[r]!)).toFixed(2)} (median of per-round ratios)`,
    );
  }
  // Workers: requests per CPU-second of two workers against one (≥ 1.8 wanted), steady.
  const one = us.get('h2 h2lab -p h2 -c 100');
  const two = us.get('h2w2 h2lab -p h2 -c 100 --workers 2');
  if (one && two) {
    console.log(
      `  h2lab steady CPU per request, --workers 2 / 1: ${(median(two.steady) / median(one.steady)).toFixed(2)}`,
    );
  }
}

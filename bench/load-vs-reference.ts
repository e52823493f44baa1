// h2lab's load generator against the reference clients, on the same nginx (Debian package, one
// worker, a 1 KiB file), alternating the order of the clients in every round:
//   h2:  h2lab bench --protocol h2 --concurrency 100   vs  h2load -c1 -m100          (target ≥ 0.6×)
//   h1:  h2lab bench --protocol h1 --connections 16    vs  autocannon -c16 and h2load --h1 -c16
//                                                                          (target ≥ 1.0× autocannon)
// Both HTTP/2 clients speak h2c (prior knowledge) so TLS cost does not blur the comparison.
// Prints req/s per run, medians and ratios; --node PATH runs h2lab under another Node as well.
// Usage: node --import tsx bench/load-vs-reference.ts [--rounds 3] [--seconds 5] [--node PATH]
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

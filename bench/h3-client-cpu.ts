// The HTTP/3 client's CPU per request against HTTP/2's and HTTP/1.1's: the same fixture server
// (`h2lab serve --h3`, in a process of its own so this process's CPU is the client's alone: its
// event loop and the binding's native threads), N requests of 1 KiB per round, closed loop at
// concurrency C, the strategies alternating within every round. Prints CPU µs per request and
// requests per second for each run, the medians and the ratios against h2.
// Usage: node --import tsx bench/h3-client-cpu.ts [--rounds 3] [--requests 3000] [--concurrency 16]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { createTransport } from '../src/transport/index.ts';
import { median, scratch } from './common.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    requests: { type: 'string', default: '3000' },
    concurrency: { type: 'string', default: '16' },
  },
});
const rounds = Number(values.rounds);
const total = Number(values.requests);
const conc = Number(values.concurrency);
const { dir, children } = scratch('h2lab-h3-cpu-');

const child = spawn(
  process.execPath,
  ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', '0', '--tls-port', '0', '--h3'],
  {
    cwd: new URL('..', import.meta.url),
    env: { ...process.env, H2LAB_HOME: dir },
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
children.push(child);
const lines = await new Promise<string>((resolve, reject) => {
  let out = '';
  const t = setTimeout(() => reject(new Error(`h2lab serve did not start: ${out}`)), 30_000);
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    if (/development CA/.test(out)) {
      clearTimeout(t);
      resolve(out);
    }
  });
});
const tlsUrl = /listening (https:\S+) \(h2, http\/1\.1\)/.exec(lines)![1]!;
const h3Url = /listening (https:\S+) \(h3\)/.exec(lines)?.[1];
if (!h3Url) throw new Error(`no h3 listener: ${lines}`);
const ca = readFileSync(/development CA (\S+)/.exec(lines)![1]!, 'utf8');

async function once(protocol: string): Promise<{ usPerReq: number; rps: number }> {
  const tr = createTransport(protocol, {
    url: protocol === 'h3' ? h3Url! : tlsUrl,
    connections: protocol === 'h1' ? conc : 1,
    tls: { ca },
  });
  await tr.open();
  let next = 0;
  let failed = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (next < total) {
        const seq = next++;
        const now = performance.now();
        const s = await tr.request(
          { method: 'GET', path: '/bytes/1024' },
          { seq, intendedMs: now, queuedMs: now },
        );
        if (s.error) failed++;
      }
    }),
  );
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  await tr.close();
  if (failed > 0) throw new Error(`${protocol}: ${failed} of ${total} failed`);
  return { usPerReq: (cpu.user + cpu.system) / total, rps: total / (wallMs / 1000) };
}

const protocols = ['h1', 'h2', 'h3'];
const seen: Record<string, Array<{ usPerReq: number; rps: number }>> = { h1: [], h2: [], h3: [] };
await once('h2'); // warm up the JIT and the development CA, not counted
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? protocols : [...protocols].reverse();
  for (const p of order) {
    const x = await once(p);
    seen[p]!.push(x);
    console.log(`round ${r + 1} ${p}: ${x.usPerReq.toFixed(0)} µs CPU/request, ${x.rps.toFixed(0)} req/s`);
  }
}
const med = (p: string, k: 'usPerReq' | 'rps') => median(seen[p]!.map((x) => x[k]));
console.log(
  `\n${total} requests × ${rounds} rounds, concurrency ${conc}, 1 KiB, load average ${loadavg()[0]!.toFixed(1)}`,
);
for (const p of protocols) {
  console.log(
    `${p}: median ${med(p, 'usPerReq').toFixed(0)} µs CPU/request, ${med(p, 'rps').toFixed(0)} req/s; ` +
      `CPU/request ${(med(p, 'usPerReq') / med('h2', 'usPerReq')).toFixed(2)}× h2's, req/s ${(med(p, 'rps') / med('h2', 'rps')).toFixed(2)}× h2's`,
  );
}
process.exit(0);

// Benchmark of the packet relay (h2lab net, relay backend): is the emulator ever the bottleneck it
// emulates? Prints medians of repeated runs and the relay's CPU.
//   1. Throughput with no delay: one TCP download (curl from the test peer in the server namespace)
//      through the relay, against the same transfer over a plain veth pair (the kernel's own path).
//   2. Added delay: ping RTT minus the configured 20 ms while the server sends a steady 100 Mbit/s
//      of TCP through the link, and the relay's own release lateness (how late queued packets left after their due time).
// Run as root: node --import tsx bench/net-relay.ts [--runs 3] [--mbytes 400] [--loads 0,100,400] [--skip-throughput]
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createLink, type Link } from '../src/net/index.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    mbytes: { type: 'string', default: '400' },
    loads: { type: 'string', default: '0,100,400' },
    'skip-throughput': { type: 'boolean', default: false },
  },
});
const runs = Number(values.runs);
const bytes = Number(values.mbytes) * 1024 * 1024;
const peerScript = fileURLToPath(new URL('../test/net/fixtures/peer.mjs', import.meta.url));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(q * xs.length) - 1)]!;

function startPeer(spawnIt: () => ChildProcess): Promise<{ child: ChildProcess; h1Port: number }> {
  const child = spawnIt();
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /listening (\d+) (\d+) (\d+)/.exec(out);
      if (m) resolve({ child, h1Port: Number(m[2]) });
    });
    child.once('exit', (c) => reject(new Error(`peer exited ${c}`)));
  });
}

/** curl's download speed in bits/s. */
function curlBitsPerSec(url: string, limit?: string): number {
  const args = [
    '-s',
    '-o',
    '/dev/null',
    '--max-time',
    '60',
    '-w',
    '%{speed_download}',
    ...(limit ? ['--limit-rate', limit] : []),
    url,
  ];
  const r = spawnSync('curl', args, { encoding: 'utf8' });
  return Number(r.stdout) * 8;
}

async function relayCpu(link: Link): Promise<number> {
  return (await link.stats()).relayCpuSeconds ?? 0;
}

async function throughputThroughRelay(): Promise<{ bps: number; cpu: number }[]> {
  const link = await createLink({ profile: 'loopback', backend: 'relay' });
  const peer = await startPeer(() =>
    link.spawnInServer(process.execPath, [peerScript, link.serverAddress], {
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  const out: { bps: number; cpu: number }[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      const c0 = await relayCpu(link);
      const t0 = performance.now();
      const bps = curlBitsPerSec(`http://${link.serverAddress}:${peer.h1Port}/bytes/${bytes}`);
      const wall = (performance.now() - t0) / 1000;
      out.push({ bps, cpu: ((await relayCpu(link)) - c0) / wall });
    }
  } finally {
    peer.child.kill('SIGTERM');
    await link.close();
  }
  return out;
}

/** The same transfer over a veth pair: what the kernel does without any relay. */
async function throughputOverVeth(): Promise<number[]> {
  const ns = `h2lab-${process.pid}-veth`;
  const sh = (...a: string[]) => execFileSync(a[0]!, a.slice(1), { stdio: 'ignore' });
  const [hostDev, nsDev] = [`h2lv${process.pid.toString(36)}h`, `h2lv${process.pid.toString(36)}n`];
  sh('ip', 'netns', 'add', ns);
  try {
    sh('ip', 'link', 'add', hostDev, 'type', 'veth', 'peer', 'name', nsDev, 'netns', ns);
    sh('ip', 'addr', 'add', '198.19.255.249/30', 'dev', hostDev);
    sh('ip', 'link', 'set', hostDev, 'up');
    sh('ip', '-n', ns, 'addr', 'add', '198.19.255.250/30', 'dev', nsDev);
    sh('ip', '-n', ns, 'link', 'set', nsDev, 'up');
    const peer = await startPeer(() =>
      spawn('ip', ['netns', 'exec', ns, process.execPath, peerScript, '198.19.255.250'], {
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    const out: number[] = [];
    for (let i = 0; i < runs; i++)
      out.push(curlBitsPerSec(`http://198.19.255.250:${peer.h1Port}/bytes/${bytes}`));
    peer.child.kill('SIGTERM');
    return out;
  } finally {
    sh('ip', 'netns', 'del', ns);
  }
}

function pingRtts(address: string, count: number): number[] {
  const r = spawnSync('ping', ['-n', '-c', String(count), '-i', '0.01', address], { encoding: 'utf8' });
  return [...r.stdout.matchAll(/time=([\d.]+) ms/g)].map((m) => Number(m[1]));
}

async function addedDelay(
  loadMbit: number,
): Promise<{ rtts: number[]; late: { p50: number; p99: number; max: number }; cpu: number; bps: number }> {
  const link = await createLink({ profile: { rttMs: 20 }, backend: 'relay' });
  const peer = await startPeer(() =>
    link.spawnInServer(process.execPath, [peerScript, link.serverAddress], {
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  try {
    let load: ChildProcess | undefined;
    const t0 = performance.now();
    const c0 = await relayCpu(link);
    if (loadMbit > 0) {
      // A paced download at loadMbit: curl --limit-rate takes bytes/s.
      load = spawn('curl', [
        '-s',
        '-o',
        '/dev/null',
        '--max-time',
        '30',
        '--limit-rate',
        `${Math.round((loadMbit * 1e6) / 8)}`,
        `http://${link.serverAddress}:${peer.h1Port}/bytes/${4 * 1024 ** 3}`,
      ]);
      await new Promise((r) => setTimeout(r, 2000));
    }
    const s0 = await link.stats();
    const w0 = performance.now();
    const rtts = pingRtts(link.serverAddress, 500);
    const s1 = await link.stats();
    const wall = (performance.now() - w0) / 1000;
    const bps = (((s1.down?.bytesOut ?? 0) - (s0.down?.bytesOut ?? 0)) * 8) / wall;
    load?.kill('SIGTERM');
    const cpu = ((await relayCpu(link)) - c0) / ((performance.now() - t0) / 1000);
    const late = s1.releaseLateMs ?? { p50: Number.NaN, p99: Number.NaN, max: Number.NaN };
    return { rtts, late, cpu, bps };
  } finally {
    peer.child.kill('SIGTERM');
    await link.close();
  }
}

const g = (bps: number) => `${(bps / 1e9).toFixed(2)} Gbit/s`;
console.log(
  `h2lab net relay benchmark — ${runs} runs, ${values.mbytes} MiB per transfer, node ${process.version}`,
);
if (!values['skip-throughput']) {
  const relay = await throughputThroughRelay();
  const veth = await throughputOverVeth();
  const relayMedian = median(relay.map((r) => r.bps));
  const vethMedian = median(veth);
  console.log('\n| path (delay 0, one TCP flow) | median | runs | relay CPU (1.0 = one core) |');
  console.log('|---|---|---|---|');
  console.log(
    `| relay (2 TUN devices) | ${g(relayMedian)} | ${relay.map((r) => g(r.bps)).join(', ')} | ${median(relay.map((r) => r.cpu)).toFixed(2)} |`,
  );
  console.log(`| veth pair (kernel only) | ${g(vethMedian)} | ${veth.map(g).join(', ')} | — |`);
  console.log(`relay / veth = ${(relayMedian / vethMedian).toFixed(2)}`);
}

console.log(
  '\n| load through a 20 ms RTT link | ping RTT − 20 ms p50 | p99 | relay release lateness p50 / p99 / max | relay CPU | measured rate |',
);
console.log('|---|---|---|---|---|---|');
for (const mbit of values.loads.split(',').map(Number)) {
  // A fresh link per run (its lateness histogram starts empty); medians across runs.
  const rs: Awaited<ReturnType<typeof addedDelay>>[] = [];
  for (let i = 0; i < runs; i++) rs.push(await addedDelay(mbit));
  const p50 = median(rs.map((r) => median(r.rtts) - 20));
  const p99 = median(rs.map((r) => quantile(r.rtts, 0.99) - 20));
  const late = (k: 'p50' | 'p99' | 'max') => median(rs.map((r) => r.late[k]));
  console.log(
    `| ${mbit ? `${mbit} Mbit/s TCP` : 'idle'} | ${p50.toFixed(3)} ms | ${p99.toFixed(3)} ms (${rs.map((r) => (quantile(r.rtts, 0.99) - 20).toFixed(2)).join(', ')}) | ${late('p50')} / ${late('p99')} (${rs.map((r) => r.late.p99).join(', ')}) / ${late('max')} ms | ${median(rs.map((r) => r.cpu)).toFixed(2)} | ${(median(rs.map((r) => r.bps)) / 1e6).toFixed(1)} Mbit/s |`,
  );
}

// Soak: does a long series of comparisons leak? Runs h2lab's compare (the library API, against one
// embedded fixture server in a worker thread of this process, loopback unless --net names a link
// profile) back to back for --minutes, and samples every --interval seconds this process's RSS and
// heap, its open file descriptors (/proc/self/fd) and the fixture server's open connections. Prints
// them over time, first/last/max and the drift after a warm-up, and a verdict: flat within 10 % or
// not. After the end: the namespaces and devices this process left.
// Then (root only) a compare with --net in a child process is SIGKILLed mid-run: what it left
// (namespaces, devices, processes) is counted before and after `h2lab net clean`; none may stay.
// The fixture server runs in this process (a thread): its memory and sockets are in the figures.
// Usage: node --import tsx bench/soak.ts [--minutes 30 | --seconds S] [--interval 5] [--warmup 2]
//   [--csv FILE: every sample]
//   [--runs 3] [--duration 500] [--concurrency 1,8] [--net PROFILE] [--kill-net lan] [--skip-kill]
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { checkNetAvailable, runComparison, startFixtureTarget } from '../src/index.ts';
import { median, scratch } from './common.ts';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    seconds: { type: 'string' },
    interval: { type: 'string', default: '5' },
    csv: { type: 'string' },
    warmup: { type: 'string', default: '2' },
    runs: { type: 'string', default: '3' },
    duration: { type: 'string', default: '500' },
    concurrency: { type: 'string', default: '1,8' },
    net: { type: 'string' },
    'kill-net': { type: 'string', default: 'lan' },
    'skip-kill': { type: 'boolean', default: false },
  },
});
const totalS = values.seconds ? Number(values.seconds) : Number(values.minutes) * 60;
const intervalS = Number(values.interval);
// A warm-up of the first minutes (the JIT, V8's heap growing to its working size, TLS session
// caches); a short soak keeps its first third as warm-up so something is left to judge.
const warmupS = Math.min(Number(values.warmup) * 60, totalS / 3);
const FLAT = 0.1;
const root = fileURLToPath(new URL('..', import.meta.url));
/** Why emulated links cannot be made here (not root, no TUN, no addon), or undefined. */
const netSkip = ((): string | undefined => {
  try {
    checkNetAvailable('relay');
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
})();
if (values.net && netSkip) console.log(`--net ${values.net} skipped: ${netSkip}; the soak runs on loopback`);
const compareInput = {
  runs: Number(values.runs),
  durationMs: Number(values.duration),
  concurrency: values.concurrency.split(',').map(Number),
  ...(values.net && !netSkip ? { net: [values.net] } : {}),
};

const mib = (b: number): string => (b / 2 ** 20).toFixed(1);
const pct = (x: number): string => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const openFds = (): number => readdirSync('/proc/self/fd').length;

// --- what a process left: namespaces, devices, processes -------------------------------------------

const ipOut = (args: string[]): string =>
  spawnSync('ip', args, { encoding: 'utf8', timeout: 10_000 }).stdout ?? '';
const namespacesOf = (pid: number): string[] =>
  ipOut(['netns', 'list'])
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter((n) => n.startsWith(`h2lab-${pid}-`));
/** Device names in the host namespace and inside `namespaces` (their loopback aside). */
function devices(namespaces: string[], hostPrefix: string): string[] {
  const names = (out: string): string[] =>
    [...out.matchAll(/^\d+: ([^:@\s]+)/gm)].map((m) => m[1]!).filter((n) => n !== 'lo');
  return [
    ...names(ipOut(['-o', 'link'])).filter((n) => n.startsWith(hostPrefix)),
    ...namespaces.flatMap((ns) => names(ipOut(['-n', ns, '-o', 'link'])).map((n) => `${ns}/${n}`)),
  ];
}
/** h2lab's device names start with `h2l<pid in base 36>` (src/net/link.ts). */
const devicePrefix = (pid: number): string => `h2l${pid.toString(36)}`;

/** Every process descended from `pid` now (from /proc's parent links). */
function descendants(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(join('/proc', d, 'stat'), 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parent.set(Number(d), ppid);
    } catch {}
  }
  const out: number[] = [];
  const walk = (p: number): void => {
    for (const [c, pp] of parent) {
      if (pp !== p || out.includes(c)) continue;
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}
/** A process's command line, shortened, for the list of what was left. */
function whatIs(pid: number): string {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const main = argv.find((a, i) => i > 0 && !a.startsWith('-')) ?? '';
    return `pid ${pid} ${argv[0]?.split('/').pop()}${main ? ` ${main.split('/').slice(-2).join('/')}` : ''}`;
  } catch {
    return `pid ${pid}`;
  }
}
/** Still running: it exists and is not a zombie (exited, waiting for whoever inherited it to reap it). */
const alive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
};

// --- phase 1: the soak --------------------------------------------------------------------------------

interface Sample {
  tS: number;
  rss: number;
  heap: number;
  fds: number;
  serverOpen: number;
}

const target = await startFixtureTarget(
  // The same server compare embeds (src/compare/run.ts COMPARE_FIXTURE), kept for the whole soak so
  // that its connections and memory are watched across iterations too.
  { poolSize: 8, tileMs: 4, tileHeavyFraction: 0.05, tileHeavyMs: 40 },
  'thread',
);
const serverOpen = async (): Promise<number> => {
  const m = await target.metrics.read();
  let n = 0;
  for (const row of Object.values(m.connections.open)) for (const v of Object.values(row)) n += v;
  return n;
};

console.log(
  `soak: ${(totalS / 60).toFixed(totalS < 60 ? 2 : 0)} min of compare ${JSON.stringify(compareInput)} against the embedded fixture server (a thread of this process), samples every ${intervalS} s; warm-up ${(warmupS / 60).toFixed(warmupS < 60 ? 2 : 1)} min excluded from the verdict`,
);
const t0 = performance.now();
const elapsedS = () => (performance.now() - t0) / 1000;
const samples: Sample[] = [];
/** Taken between iterations, when no comparison is running: what should come back to its base. */
const quiet: Sample[] = [];
const take = async (into: Sample[]): Promise<void> => {
  const mem = process.memoryUsage();
  into.push({
    tS: elapsedS(),
    rss: mem.rss,
    heap: mem.heapUsed,
    fds: openFds(),
    serverOpen: await serverOpen(),
  });
};
await take(quiet);
let sampling = Promise.resolve();
const timer = setInterval(() => {
  sampling = sampling.then(() => take(samples)).catch(() => {});
}, intervalS * 1000);
sampling = take(samples);

let iterations = 0;
let failures = 0;
const statuses = new Map<string, number>();
while (elapsedS() < totalS) {
  try {
    const c = await runComparison(compareInput, { target });
    const result = await c.done;
    statuses.set(result.status, (statuses.get(result.status) ?? 0) + 1);
    for (const cell of result.cells)
      if (cell.status !== 'done')
        statuses.set(`cell ${cell.status}`, (statuses.get(`cell ${cell.status}`) ?? 0) + 1);
    failures = 0;
  } catch (err) {
    statuses.set('threw', (statuses.get('threw') ?? 0) + 1);
    console.error(`iteration ${iterations + 1}: ${(err as Error).message}`);
    if (++failures >= 3) {
      console.error('soak: three comparisons in a row threw; stopped');
      process.exit(1);
    }
  }
  iterations++;
  await take(quiet);
}
clearInterval(timer);
await sampling;
const endS = elapsedS();
await target.close();
if (values.csv) {
  const rows = [
    ...samples.map((x) => ({ ...x, between: 0 })),
    ...quiet.map((x) => ({ ...x, between: 1 })),
  ].sort((a, b) => a.tS - b.tS);
  writeFileSync(
    values.csv,
    `t_s,rss_bytes,heap_used_bytes,fds,server_open_connections,between_comparisons\n${rows.map((x) => `${x.tS.toFixed(1)},${x.rss},${x.heap},${x.fds},${x.serverOpen},${x.between}`).join('\n')}\n`,
  );
}

console.log(
  `\n${iterations} comparisons in ${(endS / 60).toFixed(1)} min (the last one started before the deadline and ran to its end): ${[...statuses].map(([k, v]) => `${k} ${v}`).join(', ')}`,
);

const step = Math.max(1, Math.ceil(samples.length / 30));
console.log(`\nevery ${step === 1 ? '' : `${step}th `}sample (${samples.length} in all):`);
console.log(' time s   RSS MiB  heap MiB   fds  server conns');
for (let i = 0; i < samples.length; i += step) {
  const s = samples[i]!;
  console.log(
    `${s.tS.toFixed(0).padStart(7)} ${mib(s.rss).padStart(9)} ${mib(s.heap).padStart(9)} ${String(s.fds).padStart(5)} ${String(s.serverOpen).padStart(13)}`,
  );
}

interface Judged {
  first: number;
  last: number;
  max: number;
  drift: number;
  peak: number;
  flat: boolean;
}
/**
 * first/last: medians of the samples in the first and the last window after the warm-up (a minute,
 * or a third of what is left for short soaks): one sample lands wherever a GC cycle happens to be.
 */
function judge(xs: Sample[], of: (s: Sample) => number, window: number): Judged | undefined {
  const kept = xs.filter((s) => s.tS >= warmupS);
  if (kept.length === 0) return undefined;
  const a = kept[0]!.tS;
  const b = kept[kept.length - 1]!.tS;
  const w = Math.min(window, (b - a) / 3);
  const first = median(kept.filter((s) => s.tS <= a + w).map(of));
  const last = median(kept.filter((s) => s.tS >= b - w).map(of));
  const max = Math.max(...kept.map(of));
  const drift = last / first - 1;
  const peak = max / first - 1;
  return { first, last, max, drift, peak, flat: Math.abs(drift) <= FLAT && peak <= FLAT };
}
const verdict = (j: Judged | undefined): string =>
  j === undefined
    ? 'no sample after the warm-up'
    : j.flat
      ? 'flat within 10 %'
      : `NOT flat (${Math.abs(j.drift) > FLAT ? `drift ${pct(j.drift)}` : `peak ${pct(j.peak)}`} > 10 %)`;

const rss = judge(samples, (s) => s.rss, 60);
// Descriptors are judged between iterations: during one, each cell opens its own connections.
const fds = judge(quiet, (s) => s.fds, 0);
console.log(`\nafter the ${(warmupS / 60).toFixed(warmupS < 60 ? 2 : 1)}-minute warm-up:`);
if (rss)
  console.log(
    `RSS: first ${mib(rss.first)} MiB, last ${mib(rss.last)} MiB, max ${mib(rss.max)} MiB, drift ${pct(rss.drift)}: ${verdict(rss)}`,
  );
const heap = judge(samples, (s) => s.heap, 60);
if (heap)
  console.log(
    `heap (main thread): first ${mib(heap.first)} MiB, last ${mib(heap.last)} MiB, max ${mib(heap.max)} MiB, drift ${pct(heap.drift)}`,
  );
const during = samples.filter((s) => s.tS >= warmupS).map((s) => s.fds);
if (fds)
  console.log(
    `fds between comparisons: first ${fds.first}, last ${fds.last}, max ${fds.max}, drift ${pct(fds.drift)} (during: max ${during.length ? Math.max(...during) : '-'}): ${verdict(fds)}`,
  );
console.log(
  `fixture server's open connections between comparisons: ${[...new Set(quiet.map((s) => s.serverOpen))].join(', ')} (the /metrics read itself included)`,
);
console.log(`verdict: ${rss?.flat && fds?.flat ? 'flat' : 'NOT flat'} (RSS and fds within 10 %)`);

const leftNs = namespacesOf(process.pid);
console.log(
  `left by this process: ${leftNs.length} namespaces, ${devices(leftNs, devicePrefix(process.pid)).length} devices${compareInput.net ? '' : ' (loopback: it made none)'}`,
);

// --- phase 2: SIGKILL a compare behind a link ---------------------------------------------------------

async function killPhase(): Promise<void> {
  const profile = values['kill-net'];
  console.log(`\nSIGKILL mid-run: node bin/h2lab.js compare --net ${profile} in a child process`);
  if (netSkip) {
    console.log(`skipped: ${netSkip}`);
    return;
  }
  if (values['skip-kill']) {
    console.log('skipped: --skip-kill');
    return;
  }
  const { dir } = scratch('h2lab-soak-');
  const child: ChildProcess = spawn(
    process.execPath,
    [
      join(root, 'bin/h2lab.js'),
      'compare',
      '--net',
      profile,
      '--runs',
      '3',
      '--duration',
      '500ms',
      '--concurrency',
      '1,8',
      '-q',
      '--out',
      dir,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d;
  });
  const pid = child.pid!;
  // Mid-run: the link is up (its namespace holds the fixture server) and a run has had time to start.
  const deadline = performance.now() + 60_000;
  let ns: string[] = [];
  while (performance.now() < deadline && child.exitCode === null) {
    ns = namespacesOf(pid);
    if (ns.length > 0 && devices(ns, devicePrefix(pid)).length >= 2) break;
    await sleep(200);
  }
  if (ns.length === 0) {
    child.kill('SIGKILL');
    console.log(`the child made no namespace within 60 s (exit ${child.exitCode}): ${stderr.trim()}`);
    return;
  }
  await sleep(3000);
  const procs = descendants(pid);
  const devs = devices(namespacesOf(pid), devicePrefix(pid));
  const count = (when: string): number => {
    const n = namespacesOf(pid);
    const d = devices(n, devicePrefix(pid)).filter((x) => devs.includes(x));
    const p = procs.filter(alive);
    console.log(
      `${when.padEnd(22)} ${n.length} namespaces, ${d.length} devices, ${p.length} processes${n.length + d.length + p.length ? ` (${[...n, ...d, ...p.map(whatIs)].join(' ')})` : ''}`,
    );
    return n.length + d.length + p.length;
  };
  count('before the kill:');
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  // The relay and the namespace's server notice their parent's end on their IPC channel.
  await sleep(1000);
  count('after SIGKILL:');
  const clean = spawnSync(process.execPath, [join(root, 'bin/h2lab.js'), 'net', 'clean'], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  console.log(`h2lab net clean: exit ${clean.status}, ${(clean.stdout + clean.stderr).trim()}`);
  const left = count('after net clean:');
  console.log(
    `kill verdict: ${left === 0 ? 'nothing left after net clean' : `${left} left after net clean`}`,
  );
}
await killPhase();
process.exit(0);

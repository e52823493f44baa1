// Benchmark of the packet relay (h2lab net, relay backend): is the emulator ever the bottleneck it
// emulates, and what delay does it add? Prints medians of repeated runs and the relay's CPU.
//   1. Throughput with no delay: one TCP download (curl from the test peer in the server namespace)
//      through the relay, against the same transfer over a plain veth pair (the kernel's own path).
//   2. Added delay through a 5 ms RTT, 100 Mbit/s link, idle and under load (a paced 50 or 90 Mbit/s
//      stream, or bulk TCP that fills the link): 500 pings as probes, and the relay's per-packet trace
//      (read, due, write times; `relay-trace.ts`). Reported apart:
//        - end to end: ping RTT − configured RTT;
//        - model queueing: what the link model legitimately imposes on the probe (serialisation and
//          waiting in the shared bottleneck queue behind the load), both directions;
//        - end to end − model: what the relay and the two hosts' stacks add (the figure to hold
//          against the < 0.2 ms target), and per packet the relay's own lateness (write start − due
//          time) over every packet, with what the relay was doing when a late packet fell due.
//      Loads: idle, a paced 50 or 90 Mbit/s stream (the peer's /paced route), bulk TCP, and
//      `curl --limit-rate` (window-sized bursts: the earlier harness's load). `--rate 0` removes the
//      link's rate limit (no bottleneck queue), `--rtt` sets its RTT.
//   3. With `--capture-snap N` (bytes kept per packet), the cost of the link's capture stage
//      (src/net/capture.ts): each throughput run is made without and with capture, alternately on
//      the same link, and the delay scenarios run with capture on (compare a run without the flag).
// Run as root: node --import tsx bench/net-relay.ts [--runs 3] [--mbytes 400] [--loads all|idle,paced,bulk,curl]
//   [--rate 100] [--rtt 5] [--skip-throughput] [--parts] [--capture-snap 65535] [--capture-max-mib 1024]
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { medianInterpolated as median, quantileNearestRank } from '../src/core/index.ts';
import {
  createLink,
  type Link,
  PACKET_FIELDS,
  type RelayTraceData,
  WAKE_FIELDS,
  WAKE_READ,
  WAKE_TIMER,
} from '../src/net/index.ts';
import { loadNative } from '../src/net/native.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    mbytes: { type: 'string', default: '400' },
    loads: { type: 'string', default: 'all' },
    parts: { type: 'boolean', default: false },
    rtt: { type: 'string', default: '5' },
    rate: { type: 'string', default: '100' },
    'skip-throughput': { type: 'boolean', default: false },
    'capture-snap': { type: 'string', default: '0' },
    'capture-max-mib': { type: 'string', default: '1024' },
  },
});
const CAPTURE_SNAP = Number(values['capture-snap']);
const CAPTURE_MAX = Number(values['capture-max-mib']) * 1024 * 1024;
const captureFile = join(tmpdir(), `h2lab-net-relay-${process.pid}.pcapng`);

/** Starts the link's capture stage when `snap` > 0. */
async function startCapture(link: Link, snap: number): Promise<void> {
  if (snap > 0 && !(await link.startCapture({ snapBytes: snap, maxBytes: CAPTURE_MAX })))
    throw new Error('the link did not start its capture');
}

/** Ends the capture (when `snap` > 0): its file size and the packets beyond the cap; the file is removed. */
async function stopCapture(
  link: Link,
  snap: number,
): Promise<{ bytes: number; notRecorded: number } | undefined> {
  if (snap === 0) return undefined;
  const s = await link.stopCapture(captureFile);
  rmSync(captureFile, { force: true });
  return s && { bytes: s.bytes, notRecorded: s.packetsNotRecorded };
}
const runs = Number(values.runs);
const bytes = Number(values.mbytes) * 1024 * 1024;
const peerScript = fileURLToPath(new URL('../test/net/fixtures/peer.mjs', import.meta.url));

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

interface Throughput {
  bps: number;
  cpu: number;
  /** Bytes kept per packet; 0 = no capture. */
  snap: number;
  capture?: { bytes: number; notRecorded: number } | undefined;
}

async function throughputThroughRelay(): Promise<Throughput[]> {
  const link = await createLink({ profile: 'relay', backend: 'relay' });
  const peer = await startPeer(() =>
    link.spawnInServer(process.execPath, [peerScript, link.serverAddress], {
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  const out: Throughput[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      for (const snap of CAPTURE_SNAP > 0 ? [0, CAPTURE_SNAP] : [0]) {
        await startCapture(link, snap);
        const c0 = await relayCpu(link);
        const t0 = performance.now();
        const bps = curlBitsPerSec(`http://${link.serverAddress}:${peer.h1Port}/bytes/${bytes}`);
        const wall = (performance.now() - t0) / 1000;
        const cpu = ((await relayCpu(link)) - c0) / wall;
        out.push({ bps, cpu, snap, capture: await stopCapture(link, snap) });
      }
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

/** ping's RTT per icmp_seq, ms (below 10 ms ping prints 0.01 ms resolution, hence a 5 ms link). */
function pingBySeq(address: string, count: number): Map<number, number> {
  const r = spawnSync('ping', ['-n', '-c', String(count), '-i', '0.01', '-W', '2', address], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return new Map(
    [...r.stdout.matchAll(/icmp_seq=(\d+) .*time=([\d.]+) ms/g)].map((m) => [Number(m[1]), Number(m[2])]),
  );
}

const RTT_MS = Number(values.rtt);
/** The link's rate; 0 = no limit (no bottleneck queue: bursts reach the relay's own write rate). */
const RATE = Number(values.rate) * 1e6;

interface Scenario {
  name: string;
  /** Load through the link while probing: none, a paced stream (bits/s), or bulk TCP. */
  load:
    | { kind: 'none' }
    | { kind: 'paced'; bitsPerSec: number }
    | { kind: 'bulk' }
    | { kind: 'curl-limit'; bitsPerSec: number };
}

/** p-quantile of xs (nearest rank), NaN when empty. */
const q = quantileNearestRank;

interface DelayResult {
  /** ping RTT − configured RTT, per probe. */
  e2e: number[];
  /** The model's queueing + serialisation for the probe, both directions. */
  model: number[];
  /** e2e − model: what the relay and the hosts added. */
  added: number[];
  /** Parts of `added` per probe: relay lateness (write start − due), write() durations, the reply's read lag, the rest (request's read lag, ping itself). */
  parts: { late: number[]; write: number[]; readLag: number[]; outside: number[] };
  /** writeStart − due over every packet in the window, and the same for write durations. */
  allLate: number[];
  allWrite: number[];
  /** Timer wake-ups that found the relay idle: how late the callback ran after its deadline. */
  wakeLate: number[];
  gcCount: number;
  gcMaxMs: number;
  gcTotalMs: number;
  /**
   * Late packets (> 0.2 ms), by what the relay was doing at their due time: in a GC pause, reading a
   * TUN, releasing other packets, or idle (the wake-up itself came late).
   */
  causes: { late: number; gc: number; read: number; batch: number; wake: number };
  gcKinds: string;
  cpu: number;
  bps: number;
  missed: number;
}

async function addedDelay(sc: Scenario): Promise<DelayResult> {
  const link = await createLink({
    profile: { rttMs: RTT_MS, ...(RATE > 0 ? { rateBitsPerSec: RATE } : {}) },
    backend: 'relay',
    relayTraceCapacity: 600_000,
  });
  const native = loadNative();
  const peer = await startPeer(() =>
    link.spawnInServer(process.execPath, [peerScript, link.serverAddress], {
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  try {
    let load: ChildProcess | undefined;
    if (sc.load.kind !== 'none') {
      const url =
        sc.load.kind === 'paced'
          ? `http://${link.serverAddress}:${peer.h1Port}/paced/${Math.round(sc.load.bitsPerSec / 8)}/20000`
          : `http://${link.serverAddress}:${peer.h1Port}/bytes/${4 * 1024 ** 3}`;
      // curl --limit-rate paces by pausing its reads: TCP then sends window-sized bursts.
      const limit =
        sc.load.kind === 'curl-limit' ? ['--limit-rate', String(Math.round(sc.load.bitsPerSec / 8))] : [];
      load = spawn('curl', ['-s', '-o', '/dev/null', '--max-time', '20', ...limit, url]);
      await new Promise((r) => setTimeout(r, 2000));
    }
    await startCapture(link, CAPTURE_SNAP);
    const s0 = await link.stats();
    const w0 = native.nowMs();
    const pings = pingBySeq(link.serverAddress, 500);
    const w1 = native.nowMs();
    const s1 = await link.stats();
    await stopCapture(link, CAPTURE_SNAP);
    const trace = (await link.relayTrace())!;
    load?.kill('SIGTERM');
    const wall = (w1 - w0) / 1000;
    const bps = (((s1.down?.bytesOut ?? 0) - (s0.down?.bytesOut ?? 0)) * 8) / wall;
    const cpu = ((s1.relayCpuSeconds ?? 0) - (s0.relayCpuSeconds ?? 0)) / wall;
    return analyse(trace, pings, w0, w1, link.profile.up.delayMs, cpu, bps);
  } finally {
    peer.child.kill('SIGTERM');
    await link.close();
  }
}

function analyse(
  t: RelayTraceData,
  pings: Map<number, number>,
  w0: number,
  w1: number,
  oneWayMs: number,
  cpu: number,
  bps: number,
): DelayResult {
  const F = PACKET_FIELDS.length;
  const P = t.packets;
  const at = (i: number, f: number) => P[i * F + f]!;
  const n = P.length / F;
  const req = new Map<number, number>();
  const rep = new Map<number, number>();
  const allLate: number[] = [];
  const allWrite: number[] = [];
  const gcs = t.gcs.filter((g) => g.startMs + g.durationMs >= w0 && g.startMs <= w1);
  const W = WAKE_FIELDS.length;
  // Callbacks in time order: [kind, deadline, ran, end, packets].
  const spans: Array<{ kind: number; deadline: number; ran: number; end: number }> = [];
  for (let i = 0; i < t.wakes.length / W; i++)
    spans.push({
      kind: t.wakes[i * W]!,
      deadline: t.wakes[i * W + 1]!,
      ran: t.wakes[i * W + 2]!,
      end: t.wakes[i * W + 3]!,
    });
  spans.sort((a, b) => a.ran - b.ran);
  const causes = { late: 0, gc: 0, read: 0, batch: 0, wake: 0 };
  const spanAt = (ms: number): number => {
    // Index of the last span that began at or before ms (binary search).
    let lo = 0;
    let hi = spans.length - 1;
    let best = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (spans[mid]!.ran <= ms) {
        best = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return best;
  };
  for (let i = 0; i < n; i++) {
    const arrival = at(i, 2);
    const due = at(i, 3);
    const ws = at(i, 4);
    if (arrival < w0 || arrival > w1 || Number.isNaN(ws)) continue;
    const late = Math.max(0, ws - due);
    allLate.push(late);
    allWrite.push(at(i, 5) - ws);
    const icmp = at(i, 6);
    if (icmp >= 0) (icmp >= 65536 ? req : rep).set(icmp % 65536, i);
    if (late > 0.2) {
      // What was the relay doing when the packet fell due?
      causes.late++;
      const k = spanAt(due);
      const sp = k >= 0 ? spans[k]! : undefined;
      if (gcs.some((g) => g.startMs < ws && g.startMs + g.durationMs > due)) causes.gc++;
      else if (sp && sp.end > due) {
        if (sp.kind === WAKE_READ) causes.read++;
        else causes.batch++;
      } else causes.wake++; // idle at its due time: the wake-up itself came late
    }
  }
  // Timer wake-ups that found the relay idle at their deadline: the kernel's (and the VM's) wake-up latency.
  const wakeLate: number[] = [];
  for (let k = 1; k < spans.length; k++) {
    const sp = spans[k]!;
    if (sp.kind !== WAKE_TIMER || sp.ran < w0 || sp.ran > w1 || sp.deadline <= 0) continue;
    if (spans[k - 1]!.end <= sp.deadline) wakeLate.push(sp.ran - sp.deadline);
  }
  const r: DelayResult = {
    e2e: [],
    model: [],
    added: [],
    parts: { late: [], write: [], readLag: [], outside: [] },
    allLate,
    allWrite,
    wakeLate,
    gcCount: gcs.length,
    gcMaxMs: Math.max(0, ...gcs.map((g) => g.durationMs)),
    gcTotalMs: gcs.reduce((a, g) => a + g.durationMs, 0),
    causes,
    gcKinds: gcs.map((g) => `${g.kind}:${g.durationMs.toFixed(2)}`).join(' '),
    cpu,
    bps,
    missed: t.missed,
  };
  for (const [seq, rtt] of pings) {
    const a = req.get(seq);
    const b = rep.get(seq);
    if (a === undefined || b === undefined) continue;
    const model = at(a, 3) - at(a, 2) - oneWayMs + (at(b, 3) - at(b, 2) - oneWayMs);
    const e2e = rtt - 2 * oneWayMs;
    r.e2e.push(e2e);
    r.model.push(model);
    r.added.push(e2e - model);
    r.parts.late.push(at(a, 4) - at(a, 3) + (at(b, 4) - at(b, 3)));
    r.parts.write.push(at(a, 5) - at(a, 4) + (at(b, 5) - at(b, 4)));
    r.parts.readLag.push(at(b, 2) - at(a, 5));
    r.parts.outside.push(rtt - (at(b, 5) - at(a, 2)));
  }
  return r;
}
const g = (bps: number) => `${(bps / 1e9).toFixed(2)} Gbit/s`;
console.log(
  `h2lab net relay benchmark — ${runs} runs, ${values.mbytes} MiB per transfer, node ${process.version}`,
);
if (!values['skip-throughput']) {
  const relay = await throughputThroughRelay();
  const veth = await throughputOverVeth();
  const plain = relay.filter((r) => r.snap === 0);
  const relayMedian = median(plain.map((r) => r.bps));
  const vethMedian = median(veth);
  console.log('\n| path (delay 0, one TCP flow) | median | runs | relay CPU (1.0 = one core) |');
  console.log('|---|---|---|---|');
  console.log(
    `| relay (2 TUN devices) | ${g(relayMedian)} | ${plain.map((r) => g(r.bps)).join(', ')} | ${median(plain.map((r) => r.cpu)).toFixed(2)} |`,
  );
  const captured = relay.filter((r) => r.snap > 0);
  if (captured.length > 0) {
    const mib = (r: Throughput) => ((r.capture?.bytes ?? 0) / 2 ** 20).toFixed(0);
    console.log(
      `| relay, capture on (snap ${CAPTURE_SNAP} B; MiB written ${captured.map(mib).join(', ')}; packets beyond the cap ${captured.map((r) => r.capture?.notRecorded ?? '?').join(', ')}) | ${g(median(captured.map((r) => r.bps)))} | ${captured.map((r) => g(r.bps)).join(', ')} | ${median(captured.map((r) => r.cpu)).toFixed(2)} |`,
    );
  }
  console.log(`| veth pair (kernel only) | ${g(vethMedian)} | ${veth.map(g).join(', ')} | — |`);
  console.log(`relay / veth = ${(relayMedian / vethMedian).toFixed(2)}`);
}

const allScenarios: Scenario[] = [
  { name: 'idle', load: { kind: 'none' } },
  { name: 'paced 50 Mbit/s', load: { kind: 'paced', bitsPerSec: 50e6 } },
  { name: 'paced 90 Mbit/s', load: { kind: 'paced', bitsPerSec: 90e6 } },
  { name: 'bulk TCP (fills the link)', load: { kind: 'bulk' } },
  { name: 'curl --limit-rate 100 Mbit/s', load: { kind: 'curl-limit', bitsPerSec: 100e6 } },
];
const scenarios = allScenarios.filter(
  (sc) => values.loads === 'all' || values.loads.split(',').some((x) => sc.name.startsWith(x)),
);
const f = (x: number) => (Number.isNaN(x) ? '—' : x.toFixed(3));
const pq = (runs: DelayResult[], pick: (r: DelayResult) => number[], p: number) =>
  `${f(median(runs.map((r) => q(pick(r), p))))}`;
console.log(
  `\nAdded delay through a ${RTT_MS} ms RTT, ${RATE ? `${RATE / 1e6} Mbit/s` : 'unlimited'} link; 500 pings at 10 ms intervals per run; medians of ${runs} runs (ms)`,
);
console.log(
  '\n| load | ping − RTT p50 / p99 (end to end) | model queueing p50 / p99 | end to end − model p50 / p99 (relay + hosts) | relay lateness, all packets p50 / p99 / p99.9 | write() p50 / p99 | idle wake-up late p50 / p99 | GCs (max ms) | late > 0.2 ms while: GC / reading / releasing / idle (wake-up) | relay CPU | rate |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
for (const sc of scenarios) {
  const rs: DelayResult[] = [];
  for (let i = 0; i < runs; i++) rs.push(await addedDelay(sc));
  const c = (k: keyof DelayResult['causes']) => rs.map((r) => r.causes[k]).join('+');
  console.log(
    `| ${sc.name} | ${pq(rs, (r) => r.e2e, 0.5)} / ${pq(rs, (r) => r.e2e, 0.99)} | ${pq(rs, (r) => r.model, 0.5)} / ${pq(rs, (r) => r.model, 0.99)} | ${pq(rs, (r) => r.added, 0.5)} / ${pq(rs, (r) => r.added, 0.99)} (${rs.map((r) => f(q(r.added, 0.99))).join(', ')}) | ${pq(rs, (r) => r.allLate, 0.5)} / ${pq(rs, (r) => r.allLate, 0.99)} / ${pq(rs, (r) => r.allLate, 0.999)} (p99 ${rs.map((r) => f(q(r.allLate, 0.99))).join(', ')}) | ${pq(rs, (r) => r.allWrite, 0.5)} / ${pq(rs, (r) => r.allWrite, 0.99)} | ${pq(rs, (r) => r.wakeLate, 0.5)} / ${pq(rs, (r) => r.wakeLate, 0.99)} | ${rs.map((r) => `${r.gcCount} (${r.gcMaxMs.toFixed(2)})`).join(', ')} | ${c('gc')} / ${c('read')} / ${c('batch')} / ${c('wake')} of ${c('late')} | ${median(rs.map((r) => r.cpu)).toFixed(2)} | ${(median(rs.map((r) => r.bps)) / 1e6).toFixed(1)} Mbit/s |`,
  );
  if (values.parts) {
    console.log(`  GCs in the window (V8 kind:ms), run 1: ${rs[0]!.gcKinds}`);
    for (const [k, v] of Object.entries(rs[0]!.parts))
      console.log(
        `  parts of (end to end − model), run 1, ${k}: p50 ${f(q(v, 0.5))} p99 ${f(q(v, 0.99))} max ${f(Math.max(...v))}`,
      );
  }
}

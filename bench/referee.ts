// The referee: h2lab's HTTP/1.1 and HTTP/2 clients beside h2load and curl, on the same emulated links
// (src/net, relay backend) and the same fixture server (h2lab serve, in the link's server namespace).
// The project's standard: when h2lab and h2load disagree on the same link and server, h2lab is wrong
// until shown otherwise — so this prints h2lab's H2/H1 ratio beside h2load's and curl's, per link.
//
// Workloads (each client fetches COUNT objects of SIZE at once; the time runs until the last one has
// completed, connection setup included — each client's own way):
//   burst  default 64x10KiB   (a page's worth of small objects)
//   bulk   default 6x256KiB   (larger objects, one per h1 connection: throughput and congestion
//          control). Not 16x1MiB: at RTT 200 ms with 2% loss one cubic connection moved the 640 KiB
//          burst in a median 7.5 s, so 16 MiB would take minutes per run and the grid hours.
// Clients, all over TLS to the fixture's ALPN listener (or --listener plain):
//   h2lab-h1   h2lab's h1 transport, 6 connections (a browser's pool)
//   h2lab-h2   h2lab's h2 transport (its own client), one session, --window browser (6 MiB stream /
//              15 MiB connection, stated rather than taken from a default)
//              Both through the library's burst schedule: runLoad({ burst: COUNT, burstHandshakes:
//              'include' }) — COUNT requests handed over at t0, connections opened on demand after t0.
//   h2load-h1  h2load --h1 -c 6 -n COUNT          (h2load assigns COUNT/6 requests to each connection)
//   h2load-h2  h2load -c 1 -m COUNT -n COUNT      (advertises 2^30-1 windows: -w 30 -W 30, its default)
//   curl-h1    curl --parallel --parallel-max 6 --http1.1   (wall clock minus curl's start-up)
//   curl-h2    curl --parallel --parallel-max COUNT --http2 (multiplexes onto one connection)
// Grid: --rtt (ms) × --loss (% each way, i.i.d.) × --cc (both ends pinned) at --rate Mbit/s. Each
// measurement is repeated --runs times, interleaved (the client order rotates every round). One link
// per grid point, seeded (--seed); --fresh-link makes a new link for every measurement, seeded with
// seed + round, so within a round every client meets the same loss draws per packet index (pairing).
//
// Run as root (namespaces):
//   node --import tsx bench/referee.ts --quick      (rtt 20,200 × loss 0,1 × bbr, 2 runs: < 4 min)
//   node --import tsx bench/referee.ts [--runs 3] [--rtt 20,200] [--loss 0,1,2] [--cc cubic,bbr]
//     [--rate 50] [--burst 64x10KiB] [--bulk 6x256KiB] [--workloads burst,bulk]
//     [--clients h2lab-h1,h2lab-h2,h2load-h1,h2load-h2,curl-h1,curl-h2] [--listener tls|plain]
//     [--fresh-link [--fresh-warm]] [--no-metrics-save] [--seed 1] [--timeout 90] [--json FILE]
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { bootstrapRatio, type RatioInterval, summarize } from '../src/compare/inference.ts';
import { parseBytes } from '../src/core/units.ts';
import { runLoad } from '../src/load/index.ts';
import { createLink, type Link } from '../src/net/index.ts';
import { type FixtureTarget, startFixtureTarget } from '../src/server/index.ts';
import { resolveWindow } from '../src/transport/index.ts';
import { list, median, requireTools, runTool, scratch } from './common.ts';
import {
  CURL_WRITE_OUT,
  disagree,
  formatRatio,
  parseCurlWriteOut,
  parseH2load,
  parseWorkload,
} from './referee-parse.ts';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    runs: { type: 'string' },
    rtt: { type: 'string' },
    loss: { type: 'string' },
    cc: { type: 'string' },
    rate: { type: 'string' },
    burst: { type: 'string' },
    bulk: { type: 'string' },
    workloads: { type: 'string' },
    clients: { type: 'string' },
    listener: { type: 'string', default: 'tls' },
    'fresh-link': { type: 'boolean', default: false },
    'fresh-warm': { type: 'boolean', default: false },
    'no-metrics-save': { type: 'boolean', default: false },
    seed: { type: 'string', default: '1' },
    timeout: { type: 'string', default: '90' },
    json: { type: 'string' },
  },
});
const quick = values.quick;
const runs = Number(values.runs ?? (quick ? 2 : 3));
const rtts = list(values.rtt ?? '20,200').map(Number);
const losses = list(values.loss ?? (quick ? '0,1' : '0,1,2')).map(Number);
const ccs = list(values.cc ?? (quick ? 'bbr' : 'cubic,bbr')) as Array<'cubic' | 'bbr' | 'reno'>;
const rateMbit = Number(values.rate ?? '50');
const workloadSpecs: Record<string, string> = {
  burst: values.burst ?? '64x10KiB',
  bulk: values.bulk ?? '6x256KiB',
};
const workloads = list(values.workloads ?? 'burst,bulk').map((name) => {
  const spec = workloadSpecs[name];
  if (!spec) throw new Error(`--workloads ${name}: use burst and/or bulk`);
  const w = parseWorkload(spec);
  return { name, count: w.count, sizeBytes: parseBytes(w.size, `--${name}`), spec };
});
// h2lab-h2-64k: the same client with the `node` window preset (64 KiB stream and connection), to
// see what the window alone does on a link; not in the default set.
const ALL_CLIENTS = [
  'h2lab-h1',
  'h2lab-h2',
  'h2load-h1',
  'h2load-h2',
  'curl-h1',
  'curl-h2',
  'h2lab-h2-64k',
] as const;
type ClientName = (typeof ALL_CLIENTS)[number];
const clients = list(values.clients ?? ALL_CLIENTS.slice(0, 6).join(',')) as ClientName[];
for (const c of clients)
  if (!ALL_CLIENTS.includes(c)) throw new Error(`--clients ${c}: use ${ALL_CLIENTS.join(', ')}`);
const freshLink = values['fresh-link'];
/** --fresh-link: warm every fresh link (server JIT, h2lab's TLS context) before its measurement. */
const freshWarm = values['fresh-warm'];
/**
 * The server namespace's kernel caches each finished connection's ssthresh and RTT per client address
 * and seeds the next connection with them (net.ipv4.tcp_no_metrics_save = 0, the default): on one
 * link a run then starts from what the previous run's losses left. 1 makes every connection start
 * fresh, as on a first visit.
 */
const noMetricsSave = values['no-metrics-save'];
const seedBase = Number(values.seed);
const timeoutMs = Number(values.timeout) * 1000;
const tls = values.listener !== 'plain';
/** The pool a browser keeps per origin, and what h2load and curl are given for HTTP/1.1. */
const H1_CONNECTIONS = 6;
const WINDOW = resolveWindow('browser');

requireTools([
  ['h2load', '--version'],
  ['curl', '--version'],
]);
// No files: the scratch turns signals into a normal exit, which closes the fixture servers' IPC
// channels (each then stops; src/server/target-entry.ts) however the harness ends.
scratch('h2lab-referee-');

// --- the clients ---------------------------------------------------------------------------------
interface Target {
  url: string;
  caFile: string;
  ca: string;
}
interface Measured {
  /** Until the last object completed, connection setup included, ms. */
  ms: number;
  /** The same without connection setup, when the client says (h2lab: after open()). */
  afterOpenMs?: number;
  /** Connection setup as the client reports it, ms (h2lab: open(); h2load: mean "time for connect"). */
  setupMs?: number;
  /** Connections the client opened. */
  connections?: number;
  protocol?: string;
}
type Workload = (typeof workloads)[number];

const run = (cmd: string, args: string[]): Promise<string> => runTool(cmd, args, timeoutMs);

async function h2lab(proto: 'h1' | 'h2', t: Target, w: Workload, window = WINDOW.preset): Promise<Measured> {
  // The engine's burst schedule: COUNT requests handed over at t0, the connections opened on demand
  // inside the timed period (burstHandshakes include), one burst on fresh connections.
  const r = await runLoad({
    url: `${t.url}/bytes/${w.sizeBytes}`,
    ca: t.caFile,
    protocol: proto,
    ...(proto === 'h1' ? { connections: H1_CONNECTIONS } : {}),
    h2Client: 'h2lab',
    window: window as 'browser' | 'node',
    burst: w.count,
    bursts: 1,
    burstHandshakes: 'include',
    timeoutMs,
    connectTimeoutMs: timeoutMs,
    serverMetrics: false,
  }).done;
  if (r.error) throw new Error(`h2lab-${proto}: ${r.error.code} ${r.error.message}`);
  if (r.counts.ok !== w.count || r.throughput.bytesIn !== w.count * w.sizeBytes)
    throw new Error(`h2lab-${proto}: ${r.counts.ok} of ${w.count} ok, ${r.throughput.bytesIn} bytes`);
  const c = r.connections;
  return {
    ms: r.burst!.completionMs,
    // The slowest connection's TCP + TLS, as h2load's "time for connect" is its mean.
    ...(c.connectMs ? { setupMs: c.connectMs.max + (c.tlsMs?.max ?? 0) } : {}),
    connections: r.burst!.connectionsOpened,
    protocol: r.protocol.negotiated,
  };
}

async function h2load(proto: 'h1' | 'h2', t: Target, w: Workload): Promise<Measured> {
  const args =
    proto === 'h1'
      ? ['--h1', '-c', String(H1_CONNECTIONS), '-n', String(w.count)]
      : ['-c', '1', '-m', String(w.count), '-n', String(w.count)];
  const r = parseH2load(await run('h2load', [...args, `${t.url}/bytes/${w.sizeBytes}`]));
  if (r.succeeded !== w.count) throw new Error(`h2load-${proto}: ${r.succeeded} of ${w.count} succeeded`);
  return {
    ms: r.durationMs,
    setupMs: r.connectMeanMs,
    connections: proto === 'h1' ? H1_CONNECTIONS : 1,
    protocol: r.protocol ?? '?',
  };
}

/** curl's own start-up (process, libcurl init), ms: subtracted from its wall clock. Measured once. */
let curlStartupMs = 0;
async function measureCurlStartup(): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    await run('curl', ['-s', '-o', '/dev/null', 'file:///dev/null']);
    xs.push(performance.now() - t0);
  }
  return median(xs);
}

async function curl(proto: 'h1' | 'h2', t: Target, w: Workload): Promise<Measured> {
  const url = `${t.url}/bytes/${w.sizeBytes}`;
  const args = [
    '-s',
    '--parallel',
    '--parallel-max',
    String(proto === 'h1' ? H1_CONNECTIONS : w.count),
    proto === 'h1' ? '--http1.1' : tls ? '--http2' : '--http2-prior-knowledge',
    '--cacert',
    t.caFile,
    '--max-time',
    String(timeoutMs / 1000),
    '-w',
    CURL_WRITE_OUT,
  ];
  for (let i = 0; i < w.count; i++) args.push('-o', '/dev/null', url);
  const t0 = performance.now();
  const out = await run('curl', args);
  const wall = performance.now() - t0;
  const rows = parseCurlWriteOut(out);
  const ok = rows.filter((r) => r.status === 200 && r.bytes === w.sizeBytes).length;
  if (ok !== w.count) throw new Error(`curl-${proto}: ${ok} of ${w.count} transfers complete`);
  return {
    ms: wall - curlStartupMs,
    connections: rows.reduce((a, r) => a + r.connects, 0),
    protocol: rows[0]!.httpVersion,
  };
}

const CLIENT_FNS: Record<ClientName, (t: Target, w: Workload) => Promise<Measured>> = {
  'h2lab-h1': (t, w) => h2lab('h1', t, w),
  'h2lab-h2': (t, w) => h2lab('h2', t, w),
  'h2load-h1': (t, w) => h2load('h1', t, w),
  'h2load-h2': (t, w) => h2load('h2', t, w),
  'curl-h1': (t, w) => curl('h1', t, w),
  'curl-h2': (t, w) => curl('h2', t, w),
  'h2lab-h2-64k': (t, w) => h2lab('h2', t, w, 'node'),
};

// --- links ---------------------------------------------------------------------------------------
interface Point {
  rttMs: number;
  lossPct: number;
  cc: 'cubic' | 'bbr' | 'reno';
}
const label = (p: Point): string => `rtt ${p.rttMs} ms, loss ${p.lossPct}%, ${p.cc}, ${rateMbit} Mbit/s`;

async function openLink(
  p: Point,
  seed: number,
): Promise<{ link: Link; fixture: FixtureTarget; target: Target }> {
  const link = await createLink({
    profile: { rttMs: p.rttMs, loss: p.lossPct / 100, rateBitsPerSec: rateMbit * 1e6 },
    backend: 'relay',
    congestionControl: p.cc,
    seed,
  });
  try {
    if (noMetricsSave) {
      await new Promise<void>((resolve, reject) =>
        link
          .spawnInServer('sysctl', ['-q', '-w', 'net.ipv4.tcp_no_metrics_save=1'], { stdio: 'inherit' })
          .once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`sysctl exited ${code}`)))),
      );
    }
    const fixture = await startFixtureTarget({}, { link });
    const url = (tls ? fixture.tlsUrl : fixture.plainUrl)!;
    return {
      link,
      fixture,
      target: { url, caFile: fixture.caFile!, ca: fixture.caPem! },
    };
  } catch (err) {
    await link.close();
    throw err;
  }
}
async function closeLink(l: { link: Link; fixture: FixtureTarget }): Promise<void> {
  await l.fixture.close();
  await l.link.close();
}

/** A few small fetches of each protocol, not recorded: the server's JIT warms before the clock. */
async function warm(t: Target): Promise<void> {
  const w = { name: 'warm', count: 8, sizeBytes: 1024, spec: '8x1KiB' };
  await h2lab('h1', t, w);
  await h2lab('h2', t, w);
}

// --- the run -------------------------------------------------------------------------------------
const points: Point[] = [];
for (const cc of ccs)
  for (const rttMs of rtts) for (const lossPct of losses) points.push({ rttMs, lossPct, cc });

interface Cell {
  point: Point;
  workload: string;
  client: ClientName;
  times: number[];
  afterOpen: number[];
  failures: string[];
  connections: number[];
  protocol?: string;
  /** Every measurement with its round (= the link's seed offset with --fresh-link). */
  records: Array<{ round: number } & Measured>;
}
const cells: Cell[] = [];
const cellOf = (p: Point, w: Workload, c: ClientName): Cell => {
  let cell = cells.find((x) => x.point === p && x.workload === w.name && x.client === c);
  if (!cell) {
    cell = {
      point: p,
      workload: w.name,
      client: c,
      times: [],
      afterOpen: [],
      failures: [],
      connections: [],
      records: [],
    };
    cells.push(cell);
  }
  return cell;
};

const command = `node --import tsx bench/referee.ts ${process.argv.slice(2).join(' ')}`.trim();
const load0 = loadavg();
const started = performance.now();
console.log(`# h2lab referee — ${new Date().toISOString()}`);
console.log(`command: ${command}`);
console.log(
  `machine: ${cpus().length} cores, load average ${load0.map((x) => x.toFixed(2)).join(' ')} at start; node ${process.version}`,
);
console.log(
  `grid: rtt ${rtts.join('/')} ms × loss ${losses.join('/')}% each way × cc ${ccs.join('/')}, ${rateMbit} Mbit/s both ways, queue = 1 BDP (≥ 64 KiB); ${runs} runs, interleaved; ${freshLink ? `a fresh link per measurement, seed ${seedBase} + round${freshWarm ? ', each warmed (8x1KiB h1 + h2) first' : ', not warmed'}` : `one link per grid point, seed ${seedBase}, warmed once (8x1KiB h1 + h2)`}; server-side TCP metrics cache ${noMetricsSave ? 'off (tcp_no_metrics_save=1)' : 'on (kernel default)'}`,
);
console.log(
  `workloads: ${workloads.map((w) => `${w.name} ${w.spec}`).join(', ')}; listener ${tls ? 'TLS (ALPN)' : 'cleartext (h2c prior knowledge)'}`,
);
console.log(
  `settings: h1 pools ${H1_CONNECTIONS} connections (h2lab, h2load -c ${H1_CONNECTIONS}, curl --parallel-max ${H1_CONNECTIONS}); h2lab h2 windows ${WINDOW.preset} (stream ${WINDOW.streamWindowBytes} B, connection ${WINDOW.connectionWindowBytes} B); h2load windows 2^30-1 / 2^30-1 (its default -w 30 -W 30); curl its own; handshakes inside every client's time`,
);
curlStartupMs = clients.some((c) => c.startsWith('curl')) ? await measureCurlStartup() : 0;
console.log(
  `curl start-up (median of 5 runs of curl file:///dev/null): ${curlStartupMs.toFixed(1)} ms, subtracted from curl's wall clock\n`,
);

async function measure(p: Point, w: Workload, c: ClientName, t: Target, round: number): Promise<void> {
  const cell = cellOf(p, w, c);
  try {
    const m = await CLIENT_FNS[c](t, w);
    cell.times.push(m.ms);
    if (m.afterOpenMs !== undefined) cell.afterOpen.push(m.afterOpenMs);
    if (m.connections !== undefined) cell.connections.push(m.connections);
    cell.protocol ??= m.protocol;
    cell.records.push({ round, ...m });
    console.log(
      `  r${round + 1} ${w.name.padEnd(5)} ${c.padEnd(9)} ${m.ms.toFixed(0).padStart(7)} ms${m.setupMs !== undefined ? ` setup ${m.setupMs.toFixed(0)}` : ''}${m.afterOpenMs !== undefined ? ` after-open ${m.afterOpenMs.toFixed(0)}` : ''} conns ${m.connections ?? '?'} ${m.protocol ?? ''}`,
    );
  } catch (err) {
    cell.failures.push((err as Error).message.split('\n')[0]!);
    console.log(
      `  r${round + 1} ${w.name.padEnd(5)} ${c.padEnd(9)} FAILED ${(err as Error).message.split('\n')[0]}`,
    );
  }
}

for (const p of points) {
  console.log(`## ${label(p)}`);
  const shared = freshLink ? undefined : await openLink(p, seedBase);
  try {
    if (shared) await warm(shared.target);
    for (let r = 0; r < runs; r++) {
      for (const w of workloads) {
        const order = clients.map((_, i) => clients[(i + r) % clients.length]!);
        for (const c of order) {
          if (shared) {
            await measure(p, w, c, shared.target, r);
          } else {
            const l = await openLink(p, seedBase + r);
            try {
              if (freshWarm) await warm(l.target);
              await measure(p, w, c, l.target, r);
            } finally {
              await closeLink(l);
            }
          }
        }
      }
    }
  } finally {
    if (shared) await closeLink(shared);
  }
}

// --- the tables ----------------------------------------------------------------------------------
const get = (p: Point, w: string, c: ClientName): Cell | undefined =>
  cells.find((x) => x.point === p && x.workload === w && x.client === c);
const ratio = (p: Point, w: string, a: ClientName, b: ClientName): RatioInterval =>
  bootstrapRatio(get(p, w, a)?.times ?? [], get(p, w, b)?.times ?? []);
const ms = (c: Cell | undefined): string => {
  if (!c || c.times.length === 0) return c?.failures.length ? `failed ×${c.failures.length}` : '—';
  const s = summarize(c.times);
  const open = c.afterOpen.length ? ` [after open ${median(c.afterOpen).toFixed(0)}]` : '';
  return `${s.median.toFixed(0)} (${s.min.toFixed(0)}–${s.max.toFixed(0)})${open}${c.failures.length ? ` +${c.failures.length} failed` : ''}`;
};
const tools = [
  ['h2lab', 'h2lab-h2', 'h2lab-h1'],
  ['h2load', 'h2load-h2', 'h2load-h1'],
  ['curl', 'curl-h2', 'curl-h1'],
] as const;
const verdictText = (v: ReturnType<typeof disagree>): string => (v === 'disagree' ? '**DISAGREE**' : v);
const present = tools.filter(([, a, b]) => clients.includes(a) && clients.includes(b));

const summary: unknown[] = [];
for (const w of workloads) {
  console.log(`\n### ${w.name} ${w.spec}: time until the last object, ms — median (min–max) of ${runs} runs`);
  console.log(`| link | ${clients.join(' | ')} |`);
  console.log(`|---|${clients.map(() => '---').join('|')}|`);
  for (const p of points)
    console.log(`| ${label(p)} | ${clients.map((c) => ms(get(p, w.name, c))).join(' | ')} |`);

  console.log(
    `\n### ${w.name} ${w.spec}: H2/H1 time ratio — median ratio (95% bootstrap interval); < 1 = HTTP/2 faster`,
  );
  const cmp = present.filter(([t]) => t !== 'h2lab');
  console.log(
    `| link | ${present.map(([t]) => t).join(' | ')} | ${cmp.map(([t]) => `h2lab vs ${t}`).join(' | ')} | h2lab-h2 / h2load-h2 | h2lab-h1 / h2load-h1 |`,
  );
  console.log(`|---|${present.map(() => '---').join('|')}|${cmp.map(() => '---').join('|')}|---|---|`);
  for (const p of points) {
    const rs = Object.fromEntries(present.map(([t, a, b]) => [t, ratio(p, w.name, a, b)]));
    const verdicts = cmp.map(([t]) => (rs.h2lab && rs[t] ? verdictText(disagree(rs.h2lab, rs[t]!)) : '—'));
    const side = (a: ClientName, b: ClientName): string =>
      clients.includes(a) && clients.includes(b) ? formatRatio(ratio(p, w.name, a, b)) : '—';
    console.log(
      `| ${label(p)} | ${present.map(([t]) => formatRatio(rs[t]!)).join(' | ')} | ${verdicts.join(' | ')} | ${side('h2lab-h2', 'h2load-h2')} | ${side('h2lab-h1', 'h2load-h1')} |`,
    );
    summary.push({
      point: p,
      workload: w.name,
      ratios: rs,
      verdicts: Object.fromEntries(cmp.map(([t], i) => [t, verdicts[i]])),
    });
  }
}
if (freshLink) {
  // Same seed within a round: the relay drops the same packet indices for every client, so the
  // round's ratio compares two clients on (nearly) the same losses.
  console.log(
    '\n### paired by round (same link seed): median of per-round time ratios, and rounds the first was faster',
  );
  console.log('| link | workload | pair | median ratio | faster in |');
  console.log('|---|---|---|---|---|');
  const pairs: Array<[ClientName, ClientName]> = [
    ['h2lab-h2', 'h2load-h2'],
    ['h2lab-h1', 'h2load-h1'],
    ['h2lab-h2', 'h2lab-h1'],
    ['h2load-h2', 'h2load-h1'],
    ['h2lab-h2', 'h2lab-h2-64k'],
  ];
  for (const p of points)
    for (const w of workloads)
      for (const [a, b] of pairs) {
        const ra = get(p, w.name, a)?.records ?? [];
        const rb = get(p, w.name, b)?.records ?? [];
        const rs = ra.flatMap((x) => {
          const y = rb.find((z) => z.round === x.round);
          return y ? [x.ms / y.ms] : [];
        });
        if (rs.length === 0) continue;
        console.log(
          `| ${label(p)} | ${w.name} | ${a} / ${b} | ${median(rs).toFixed(2)} | ${rs.filter((r) => r < 1).length} of ${rs.length} |`,
        );
      }
}
const load1 = loadavg();
console.log(
  `\nload average ${load0.map((x) => x.toFixed(2)).join(' ')} at start, ${load1.map((x) => x.toFixed(2)).join(' ')} at end; ${((performance.now() - started) / 60_000).toFixed(1)} min`,
);
console.log(`reproduce: ${command}`);
if (values.json) {
  writeFileSync(
    values.json,
    `${JSON.stringify({ command, loadStart: load0, loadEnd: load1, rateMbit, runs, freshLink, freshWarm, noMetricsSave, seed: seedBase, window: WINDOW, curlStartupMs, cells, summary }, null, 2)}\n`,
  );
}
// The fixture and relay children are gone (closeLink); exit explicitly like the other harnesses.
process.exit(0);

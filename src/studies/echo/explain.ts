/**
 * The echo study's explanations: a paragraph per body from its rows, and the mechanisms behind a
 * result (the client's queue, CPU, the machine, Little's law, handshakes, the windows).
 */
import type { Comparison } from '../../model/index.ts';
import { resolveWindow } from '../../transport/index.ts';
import { accounts, type ClaimDecision, direction, directionText, wouldTell } from '../claims.ts';
import type { Evidence } from '../findings.ts';
import { timesWords } from '../table.ts';
import type { EchoOptions, Variant, WindowName } from './options.ts';
import { bodyLabel, latencyRatio, presetDecision, type Row, throughputRatio } from './rows.ts';

/** "2.10× lower latency" / "1.30× higher latency" from an h1/h2 latency ratio. */
const latencyWords = (x: number) => timesWords(x, 'lower latency', 'higher latency');
/** "1.80× the throughput of" / "2.40× less throughput than" from an h2/h1 throughput ratio. */
const throughputWords = (x: number) => timesWords(x, 'the throughput of', 'less throughput than');

function outcomeClause(c: Comparison | undefined): string {
  if (!c) return 'not measured';
  switch (c.outcome) {
    case 'better':
    case 'worse':
      return 'the runs show the throughput difference';
    case 'no-clear-difference':
      return 'the throughput difference is below the 5% threshold';
    case 'undecided':
      return `the runs cannot tell the throughputs apart yet (${wouldTell(c)})`;
    case 'insufficient':
      return 'too few runs for an interval';
  }
}

/** The explanation of one body size, from its rows. */
export function explainBody(
  body: number,
  rows: Row[],
  windows: WindowName[],
  top: number,
  o: EchoOptions,
): string {
  const parts: string[] = [];
  const at = (v: Variant, w: WindowName) =>
    rows.find((r) => r.variant === v && r.window === w && r.concurrency === top);
  // The preset of the row-by-row findings (the report's libraries' 64 KiB), so the two agree.
  const w0 = reportWindow(windows);
  const one = at('one', w0);
  const tr = one && throughputRatio(one);
  const lr = one && latencyRatio(one);
  if (!one || tr === undefined || lr === undefined)
    return `${bodyLabel(body)}: the comparison at concurrency ${top} did not finish, so it says nothing.`;
  parts.push(
    `${bodyLabel(body)} bodies at concurrency ${top} (windows "${w0}"): one HTTP/2 session had ${latencyWords(lr)} and ${throughputWords(tr)} the HTTP/1.1 pool; ${outcomeClause(one.throughput)}.`,
  );
  const q = one.h1.clientQueueMs;
  const h1conns = o.h1Connections === 'concurrency' ? top : Math.min(o.h1Connections, top);
  const mean = one.h1.latencyMeanMs;
  if (q !== undefined && mean !== undefined) {
    // The client queue is a mean wait: set against the mean latency, not the median.
    const queued = `HTTP/1.1 had ${h1conns} connections for ${top} requests in flight and its requests waited ${q.toFixed(2)} ms on average in the client for one (of a ${mean.toFixed(2)} ms mean latency)`;
    const latency = one.latency ? direction(one.latency) : 'undecided';
    parts.push(
      q <= 0.25 * mean
        ? `HTTP/1.1 had a connection for nearly every request in flight (${h1conns}; ${q.toFixed(2)} ms waiting in the client on average), so no client-side queue explains a difference.`
        : latency === 'below'
          ? `${queued}: that queue is the latency HTTP/2's streams avoid.`
          : latency === 'undecided'
            ? `${queued}; whether HTTP/2's streams turned that queue into lower latency the runs do not decide (${one.latency ? wouldTell(one.latency) : 'no latency comparison'}).`
            : `${queued}, yet the runs decided HTTP/2's latency ${latency === 'same' ? 'the same' : 'higher'}: its streams did not turn that queue into lower latency here.`,
    );
  }
  const ind = at('independent', w0);
  const sh = at('shared', w0);
  const ti = ind && throughputRatio(ind);
  const ts = sh && throughputRatio(sh);
  if (ti !== undefined && ts !== undefined) {
    parts.push(
      `The shared pool of ${o.h2Sessions} sessions reached ${ts.toFixed(2)}× HTTP/1.1's throughput (up to ${sh!.h2.peakStreams ?? '?'} stream${sh!.h2.peakStreams === 1 ? '' : 's'} on a session) and the independent sessions (${ind!.h2.sessions ?? '?'} of them, up to ${ind!.h2.peakStreams ?? '?'} stream${ind!.h2.peakStreams === 1 ? '' : 's'} each) ${ti.toFixed(2)}×, against ${tr.toFixed(2)}× for one session${ti > tr * 1.05 ? ': spreading the requests over connections helped' : ti < tr * 0.95 ? ': more connections cost more than they gave here' : ': the number of connections made little difference here'}.`,
    );
  }
  if (windows.length > 1) {
    const byWindow = windows
      .map((w) => ({ w, r: at('one', w) }))
      .filter((x): x is { w: WindowName; r: Row } => x.r?.throughput !== undefined);
    if (byWindow.length > 1) {
      const list = byWindow
        .map(
          ({ w, r }) =>
            `${w} ${throughputRatio(r)!.toFixed(2)}× (stalled ${r.h2.stalledShare !== undefined ? `${(r.h2.stalledShare * 100).toFixed(1)}%` : '?'} of session time, ${r.h2.connectionStalls !== undefined ? Math.round(r.h2.connectionStalls) : '?'} connection-window stalls)`,
        )
        .join(', ');
      parts.push(
        `One session's throughput against HTTP/1.1 by window preset: ${list}. ${windowVerdict(byWindow.map((x) => x.r))}`,
      );
    }
  }
  return parts.join(' ');
}

/**
 * What the window presets did to one session's result: flow control decides only where a preset's
 * windows stalled the server and compare's decision rule, over the runs of the least and the most
 * stalled preset ({@link presetDecision}), shows the throughput following the stalls.
 */
function windowVerdict(rows: Row[]): string {
  const stalled = (r: Row) => r.h2.stalledShare ?? 0;
  const most = rows.reduce((a, b) => (stalled(b) > stalled(a) ? b : a));
  const least = rows.reduce((a, b) => (stalled(b) < stalled(a) ? b : a));
  const ratios = rows.map((r) => throughputRatio(r)!);
  const spread = Math.round((Math.max(...ratios) / Math.min(...ratios) - 1) * 100);
  if (stalled(most) <= 0.05)
    return `No preset's windows held the server for more than ${(stalled(most) * 100).toFixed(1)}% of session time, so flow control does not explain the ${spread}% between presets.`;
  const gain = throughputRatio(least)! / throughputRatio(most)!;
  const change = `${Math.abs((gain - 1) * 100).toFixed(0)}% ${gain >= 1 ? 'more' : 'less'}`;
  const pair = `"${least.window}" (${(stalled(least) * 100).toFixed(1)}% stalled) against "${most.window}" (${(stalled(most) * 100).toFixed(1)}%)`;
  const d = presetDecision(most, least);
  if (!d)
    return `The windows stalled the server (${pair}) and the larger ones gave ${change} throughput; this result kept no runs of the presets to decide whether that is a difference.`;
  const decided = presetWords(d);
  // A preset that hardly stalled yet was decided no better than the most stalled one says the
  // stalls were not the limit, whatever another preset gained.
  const unstalledSame = rows.find((r) => {
    if (r === most || stalled(r) > 0.05) return false;
    const x = presetDecision(most, r);
    return x !== undefined && (direction(x) === 'same' || direction(x) === 'below');
  });
  if (unstalledSame)
    return `"${unstalledSame.window}" hardly stalled (${(stalled(unstalledSame) * 100).toFixed(1)}%) yet gave ${throughputRatio(unstalledSame)!.toFixed(2)}×, decided no better than "${most.window}" with ${(stalled(most) * 100).toFixed(1)}% stalled (${throughputRatio(most)!.toFixed(2)}×): flow control does not explain the difference between presets (${pair}: ${decided}).`;
  switch (direction(d)) {
    case 'above':
      return `Larger windows gave ${change} throughput, ${pair}, ${decided}: flow control decides part of this result.`;
    case 'undecided':
      return `Larger windows gave ${change} throughput, ${pair}, ${decided}: the direction of flow control, not yet a result.`;
    case 'below':
      return `The windows stalled the server (${pair}), and the larger ones gave ${change} throughput, ${decided}: flow control does not explain that.`;
    case 'same': {
      const connStalls = Math.round(most.h2.connectionStalls ?? 0);
      const why =
        connStalls === 0
          ? "while one stream waited for credit the others' data kept the connection busy"
          : `the connection's own window stalled too (${connStalls} times in "${most.window}"), so the stalls held every stream at once, and still the throughput did not fall`;
      return `The windows stalled the server (${pair}) without costing throughput (${change}, ${decided}): ${why}, so flow control is not what limits one session here.`;
    }
  }
}

/** A decision between two presets in words: "decided by the runs (…)", "the same (…)", "undecided (…)". */
function presetWords(d: ClaimDecision): string {
  return directionText(d, {
    above: (x) => `decided higher by the runs, ${x}`,
    below: (x) => `decided lower by the runs, ${x}`,
    same: 'the same by the runs',
    undecided: 'undecided by the runs',
  });
}

// --- row by row against the report ----------------------------------------------------------

/** The window preset that stands for the report's libraries' defaults (64 KiB), else the first. */
export function reportWindow(windows: readonly WindowName[]): WindowName {
  return windows.includes('node') ? 'node' : windows[0]!;
}

/**
 * The mechanisms this run can show for one variant's ratio against HTTP/1.1, each with its numbers:
 * callers queueing in the client for a connection; the client's and the server's CPU per request and
 * their event loops (a loop busy in both runs bounds the throughput, which then follows its CPU per
 * request); for latency, Little's law (with the same requests always in flight, latency follows
 * throughput); the handshakes each run paid; and (1 MiB) what the window presets changed and the
 * congestion windows. Returns the sentences and whether they account for the ratio measured.
 */
export function mechanisms(
  r: Row,
  metric: 'latency' | 'throughput',
  rows: readonly Row[],
  o: EchoOptions,
  machine: Machine,
  ev: Evidence,
): { text: string[]; accounts: boolean } {
  const text: string[] = [];
  const queue = queueMechanism(r, metric, o, ev);
  if (queue.text) text.push(queue.text);
  const cpu = cpuMechanism(r, machine, ev);
  text.push(...cpu.text);
  let accounts = queue.accounts;
  if (metric === 'throughput') accounts ||= cpu.accounts;
  else {
    const little = littleMechanism(r, ev, cpu.accounts);
    if (little.text) text.push(little.text);
    accounts ||= little.accounts;
  }
  const hs = handshakeMechanism(r, ev);
  if (hs) text.push(hs);
  if (r.body >= 64 * 1024) text.push(...windowMechanisms(r, rows, ev));
  return { text, accounts };
}

/** Callers waiting in the client for a connection: accounts for a latency gap it mostly covers. */
function queueMechanism(
  r: Row,
  metric: 'latency' | 'throughput',
  o: EchoOptions,
  ev: Evidence,
): { text?: string; accounts: boolean } {
  const h1conns =
    o.h1Connections === 'concurrency' ? r.concurrency : Math.min(o.h1Connections, r.concurrency);
  const q1 = r.h1.clientQueueMs;
  const q2 = r.h2.clientQueueMs;
  const l1 = r.h1.latencyP50Ms;
  const l2 = r.h2.latencyP50Ms;
  if (q1 === undefined || q2 === undefined || l1 === undefined || l2 === undefined)
    return { accounts: false };
  // The client queue accounts for a latency gap when removing it leaves at most half the gap.
  const gap = Math.abs(l1 - l2) > 0.1 * Math.max(l1, l2);
  const accounts = metric === 'latency' && gap && Math.abs(l1 - q1 - (l2 - q2)) <= 0.5 * Math.abs(l1 - l2);
  return {
    text: `callers waited in the client ${ev.ms('h1QueueMs', q1)} for one of HTTP/1.1's ${ev.n('h1Connections', h1conns)} connections and ${ev.ms('h2QueueMs', q2)} for HTTP/2 (median latencies ${ev.ms('h1LatencyMs', l1)} and ${ev.ms('h2LatencyMs', l2)})`,
    accounts,
  };
}

/** A loop is the bottleneck when it was at least this busy in both runs. */
const BUSY_LOOP = 0.8;

/** The machine the comparisons ran on: its cores and its lowest 1-minute load average around them. */
export interface Machine {
  cpus: number;
  loadAverage: number;
}

/**
 * The machine's cores were the limit: its load average at least its cores all along (every runnable
 * thread waited for one), or the process (client and fixture threads) kept 80% of the cores it can
 * use (two threads: at most two) busy in both runs.
 */
export function machineBusy(m: Machine, cores: ReadonlyArray<number | undefined>): boolean {
  return m.loadAverage >= m.cpus || cores.every((u) => u !== undefined && u >= 0.8 * Math.min(m.cpus, 2));
}

/**
 * The client's and the server's CPU per request, told apart, and their event loops. A loop busy in
 * both runs bounds the throughput: the ratio then follows that side's CPU per request (within 20%).
 * Without the server's own figures (an older run), the process's CPU as before: CPU-bound when the
 * process kept a core busy in both runs.
 */
function cpuMechanism(r: Row, m: Machine, ev: Evidence): { text: string[]; accounts: boolean } {
  const tr = throughputRatio(r);
  const [a, b] = [r.h1, r.h2];
  if (
    a.serverCpuMsPerRequest === undefined ||
    b.serverCpuMsPerRequest === undefined ||
    a.clientCpuMsPerRequest === undefined ||
    b.clientCpuMsPerRequest === undefined
  )
    return processCpuMechanism(r, ev);
  const text = [
    `per request over the whole run (warm-up and handshakes included) h2lab's client used ${ev.n('h1ClientCpuUs', a.clientCpuMsPerRequest * 1000)} µs of CPU over HTTP/1.1 and ${ev.n('h2ClientCpuUs', b.clientCpuMsPerRequest * 1000)} µs over HTTP/2, the fixture server's thread ${ev.n('h1ServerCpuUs', a.serverCpuMsPerRequest * 1000)} µs and ${ev.n('h2ServerCpuUs', b.serverCpuMsPerRequest * 1000)} µs; the server's event loop was busy ${ev.pct('h1ServerElu', a.serverElu ?? Number.NaN)} and ${ev.pct('h2ServerElu', b.serverElu ?? Number.NaN)} of the runs, the client's ${ev.pct('h1ClientElu', a.clientElu ?? Number.NaN)} and ${ev.pct('h2ClientElu', b.clientElu ?? Number.NaN)}`,
  ];
  const sides = [
    {
      key: 'server',
      label: "the server's event loop",
      busy: [a.serverElu, b.serverElu],
      cost: [a.serverCpuMsPerRequest, b.serverCpuMsPerRequest],
    },
    {
      key: 'client',
      label: "the client's event loop",
      busy: [a.clientElu, b.clientElu],
      cost: [a.clientCpuMsPerRequest, b.clientCpuMsPerRequest],
    },
  ];
  const busy = sides.filter((x) => x.busy.every((u) => u !== undefined && u >= BUSY_LOOP));
  if (tr === undefined) return { text, accounts: false };
  for (const x of busy) {
    const predicted = x.cost[0]! / x.cost[1]!;
    if (Math.abs(tr / predicted - 1) <= 0.2) {
      ev.set('bottleneck', x.key).set('busyLoop', BUSY_LOOP);
      text.push(
        `${x.label} was the bottleneck (at least ${ev.pct('busyLoop', BUSY_LOOP)} busy in both runs), so throughput follows CPU per request on its side: ${ev.x('cpuPredictedRatio', predicted)} predicted, ${ev.x('throughputRatio', tr)} measured`,
      );
      return { text, accounts: true };
    }
  }
  const machine = machineMechanism(r, m, tr, ev);
  if (machine.text) text.push(machine.text);
  if (machine.accounts) return { text, accounts: true };
  if (busy.length > 0) {
    const x = busy[0]!;
    text.push(
      `${x.label} was busy in both runs, yet its CPU per request predicts ${ev.x('busyPredictedRatio', x.cost[0]! / x.cost[1]!)} against ${ev.x('throughputRatio', tr)} measured`,
    );
  } else
    text.push(
      machine.text
        ? `neither event loop was ${ev.pct('busyLoop', BUSY_LOOP)} busy in both runs`
        : `neither event loop was ${ev.pct('busyLoop', BUSY_LOOP)} busy in both runs and the machine had cores to spare (1-minute load average ${ev.d2('loadAverage', m.loadAverage)} on ${ev.n('cpus', m.cpus)} cores, the process at ${ev.d2('h1Cores', r.h1.cpu ?? Number.NaN)} and ${ev.d2('h2Cores', r.h2.cpu ?? Number.NaN)} cores), so no side's CPU bounded the throughput`,
    );
  return { text, accounts: false };
}

/**
 * When the machine's cores were the limit, throughput = cores used ÷ CPU per request over the
 * measured period: with both sides using about the same cores (within 20%), the ratio follows the
 * process's (client + server) CPU per request (within 20%). On a busy machine whose process kept different cores busy on the two sides, CPU per request
 * alone does not give the ratio (throughput = cores ÷ CPU per request on each side).
 */
function machineMechanism(
  r: Row,
  m: Machine,
  tr: number,
  ev: Evidence,
): { text?: string; accounts: boolean } {
  const [a, b] = [r.h1, r.h2];
  if (!machineBusy(m, [a.cpu, b.cpu]) || a.cpu === undefined || b.cpu === undefined)
    return { accounts: false };
  // The process's CPU over the measured period (client and the fixture's thread): the period the
  // throughput is measured over, without the warm-up's handshakes that the per-side figures include.
  const t1 = a.cpuMsPerRequest ?? Number.NaN;
  const t2 = b.cpuMsPerRequest ?? Number.NaN;
  const predicted = t1 / t2;
  const sameCores = Math.abs(b.cpu / a.cpu - 1) <= 0.2;
  const load = `1-minute load average ${ev.d2('loadAverage', m.loadAverage)} on ${ev.n('cpus', m.cpus)} cores; the process kept ${ev.d2('h1Cores', a.cpu)} and ${ev.d2('h2Cores', b.cpu)} cores busy`;
  const costs = `client + server CPU per request in the measured period ${ev.n('h1TotalCpuUs', t1 * 1000)} µs against ${ev.n('h2TotalCpuUs', t2 * 1000)} µs`;
  if (sameCores && Number.isFinite(predicted) && Math.abs(tr / predicted - 1) <= 0.2) {
    ev.set('bottleneck', 'machine');
    return {
      text: `the machine's cores were the limit (${load}), so throughput follows CPU per request, ${costs}: ${ev.x('cpuPredictedRatio', predicted)} predicted, ${ev.x('throughputRatio', tr)} measured`,
      accounts: true,
    };
  }
  return {
    text: `the machine was busy (${load}), but ${costs} predict ${ev.x('machinePredictedRatio', predicted)} against ${ev.x('throughputRatio', tr)} measured${sameCores ? '' : ': the two sides did not keep the same cores busy, so CPU per request alone does not give the ratio'}`,
    accounts: false,
  };
}

/** The process's CPU (client and fixture together), for runs without the server's own figures. */
function processCpuMechanism(r: Row, ev: Evidence): { text: string[]; accounts: boolean } {
  const c1 = r.h1.cpuMsPerRequest;
  const c2 = r.h2.cpuMsPerRequest;
  const u1 = r.h1.cpu;
  const u2 = r.h2.cpu;
  if (c1 === undefined || c2 === undefined || u1 === undefined || u2 === undefined)
    return { text: [], accounts: false };
  const text = [
    `the process (h2lab's client and the fixture in one process) used ${ev.d2('h1Cores', u1)} and ${ev.d2('h2Cores', u2)} of a core, ${ev.ms('h1CpuMsPerRequest', c1)} and ${ev.ms('h2CpuMsPerRequest', c2)} of CPU a request`,
  ];
  const tr = throughputRatio(r);
  if (Math.min(u1, u2) >= 0.8 && tr !== undefined && Math.abs(tr / (c1 / c2) - 1) <= 0.2) {
    text.push(
      `CPU-bound, so throughput follows CPU per request: ${ev.x('cpuPredictedRatio', c1 / c2)} predicted, ${ev.x('throughputRatio', tr)} measured`,
    );
    return { text, accounts: true };
  }
  return { text, accounts: false };
}

/** How close the means (and medians) must come to Little's law's prediction. */
export const LITTLE_TOLERANCE = 0.2;

/**
 * Little's law: with the same number of requests always in flight on both sides (a closed loop),
 * mean latency is that number ÷ throughput, so latency h1/h2 follows throughput h2/h1. It accounts for
 * the latency ratio when the means follow it (within 20%, the same side of 1) and the medians too and the throughput ratio is itself
 * accounted for.
 */
function littleMechanism(
  r: Row,
  ev: Evidence,
  throughputAccounted: boolean,
): { text?: string; accounts: boolean } {
  const tr = throughputRatio(r);
  const lr = latencyRatio(r);
  const m1 = r.h1.latencyMeanMs;
  const m2 = r.h2.latencyMeanMs;
  if (tr === undefined || lr === undefined || m1 === undefined || m2 === undefined)
    return { accounts: false };
  // Little's law ties the means; the finding's ratio is of medians, so both must follow it.
  const meansFollow = accounts(tr, m1 / m2, { tolerance: LITTLE_TOLERANCE, ratio: true });
  const mediansFollow = accounts(tr, lr, { tolerance: LITTLE_TOLERANCE, ratio: true });
  const head = `with ${ev.n('inFlight', r.concurrency)} requests always in flight, mean latency is that number ÷ throughput (Little's law): the throughput ratio predicts ${ev.x('littlePredicted', tr)} for latency h1/h2, the means gave ${ev.x('meanLatencyRatio', m1 / m2)} and the medians ${ev.x('medianLatencyRatio', lr)}`;
  if (!meansFollow || !mediansFollow)
    return {
      text: `${head}: ${
        meansFollow
          ? 'the means follow throughput and the medians do not, so the two latency distributions differ in shape'
          : `the means do not follow within ${ev.pct('littleTolerance', LITTLE_TOLERANCE)}, so Little’s law does not tie these latencies to throughput here`
      }`,
      accounts: false,
    };
  return {
    text: `${head}: latency follows throughput${throughputAccounted ? '' : ', whose own ratio this run does not account for'}`,
    accounts: throughputAccounted,
  };
}

/** Connections each run opened and their mTLS handshakes, when the two sides opened different numbers. */
function handshakeMechanism(r: Row, ev: Evidence): string | undefined {
  const o1 = r.h1.opened;
  const o2 = r.h2.opened;
  if (o1 === undefined || o2 === undefined || o1 === o2) return undefined;
  const t = (x: number | undefined, k: string) =>
    x === undefined ? '' : ` (handshake median ${ev.ms(k, x)})`;
  return `each run opened ${ev.n('h1Opened', o1)} mTLS connection(s) for HTTP/1.1${t(r.h1.tlsP50Ms, 'h1TlsMs')} and ${ev.n('h2Opened', o2)} for HTTP/2${t(r.h2.tlsP50Ms, 'h2TlsMs')} before its measured period; their CPU is in the whole-run figures, not in the measured period's`;
}

/** 1 MiB: what the window presets changed for this variant, and the server's congestion windows. */
function windowMechanisms(r: Row, rows: readonly Row[], ev: Evidence): string[] {
  const text: string[] = [];
  const at = (w: WindowName) =>
    rows.find(
      (x) =>
        x.body === r.body && x.variant === r.variant && x.window === w && x.concurrency === r.concurrency,
    );
  const node = at('node');
  const max = at('max');
  const rn = node && throughputRatio(node);
  const rm = max && throughputRatio(max);
  if (rn !== undefined && rm !== undefined) {
    const d = presetDecision(node!, max!);
    if (d) ev.set('presetOutcome', d.outcome);
    const verdict = !d
      ? 'this result kept no runs of the presets to decide between them'
      : direction(d) === 'same'
        ? 'the runs decided them the same, so flow control did not decide this result'
        : direction(d) === 'above'
          ? 'the runs decided max higher, so flow control decides part of it'
          : direction(d) === 'below'
            ? 'the runs decided max lower: larger windows did worse, which flow control does not explain'
            : `the runs do not decide between them (${wouldTell(d, ev, 'preset')})`;
    text.push(
      `the largest windows (max, ${ev.pct('maxStalled', max!.h2.stalledShare ?? Number.NaN)} of session time stalled) gave ${ev.x('maxRatio', rm)} against ${ev.x('nodeRatio', rn)} with node's ${ev.n('nodeWindowKiB', resolveWindow('node').streamWindowBytes / 1024)} KiB windows (${ev.pct('nodeStalled', node!.h2.stalledShare ?? Number.NaN)} stalled): ${verdict}`,
    );
  }
  if (r.h1.cwndBytes !== undefined && r.h2.cwndBytes !== undefined)
    text.push(
      `the server's congestion windows summed ${ev.n('h1CwndKiB', r.h1.cwndBytes / 1024)} KiB over HTTP/1.1's connections against ${ev.n('h2CwndKiB', r.h2.cwndBytes / 1024)} KiB over HTTP/2's at the runs' end`,
    );
  return text;
}

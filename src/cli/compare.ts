/**
 * `h2lab compare [URL]`: the main job. Maps flags onto the compare options, shows a progress bar with
 * an ETA over the runs, writes results.json after every run (so Ctrl-C or a crash leaves a valid
 * file), then report.md / report.html, and prints the table and the verdict.
 */
import { join } from 'node:path';
import { type Command, Option } from 'commander';
import type { Cell } from '../compare/index.ts';
import {
  COMPARE_DEFAULTS,
  type CompareOptionsInput,
  MAX_COMPARE_WORKLOADS,
  runComparison,
  sizeWorkload,
  writeResultsAtomic,
} from '../compare/index.ts';
import {
  checkOutputPath,
  INPUT_FILE_CAPS,
  invalidOption,
  parseBitRate,
  parseBytes,
  parseDurationMs,
  parseFraction,
  parseInteger,
  parseList,
  readOptionText,
  writeFileAtomic,
} from '../core/index.ts';
import type { ComparePlan, CompareResult, WorkloadInput } from '../model/index.ts';
import { CONGESTION_CONTROLS } from '../net/index.ts';
import { loadHtmlAssets } from '../report/index.ts';
import {
  comparePlanLengthMs,
  planCompareShards,
  runComparePlanLocally,
  startClockServer,
} from '../shard/index.ts';
import { findStrategy, POOL_POLICIES, type PoolPolicy, strategyNames } from '../transport/index.ts';
import { checkCompareOutputs, writeCompareOutputs } from './compare-output.ts';
import {
  addRequestFlags,
  collect,
  parseRateList,
  type RequestFlags,
  rateOption,
  requestOptionsFromFlags,
} from './load-flags.ts';
import { addNetOption, parseNet } from './net-options.ts';
import { untilDoneOrStopped } from './output.ts';
import { addPlanFlags, type PlanFlags, planInputFromFlags } from './plan.ts';
import { progressBar } from './progress.ts';
import { writeRenderedReports } from './report-files.ts';
import { addConfigFlag, flagsWithConfig } from './schema-flags.ts';

interface CompareFlags extends Partial<RequestFlags>, PlanFlags {
  protocols?: string;
  baseline?: string;
  concurrency?: string;
  sizes?: string;
  paths?: string;
  urls?: string;
  bodySize?: string;
  burst?: string;
  burstHandshakes?: string;
  duration?: string;
  requests?: string;
  runs?: string;
  warmupRuns?: string;
  seed?: string;
  minEffect?: string;
  h1Connections?: string;
  h2Sessions?: string;
  h2PoolPolicy?: string;
  workers?: string;
  window?: string;
  net?: string;
  rtt?: string;
  jitter?: string;
  loss?: string;
  bandwidth?: string;
  cc?: string;
  initcwnd?: string;
  queue?: string;
  slowStartAfterIdle?: boolean;
  netBackend?: string;
  ca?: string;
  cert?: string;
  key?: string;
  insecure?: boolean;
  metricsUrl?: string;
  rate?: string;
  expect?: string[];
  expectUndecided?: string;
  out: string;
  json?: string;
  csv?: string;
  quiet?: boolean;
  brief?: boolean;
  slotGap?: string;
  planOut?: string;
}

function pathWorkload(path: string, i: number, bodySizeBytes?: number): WorkloadInput {
  const id = `path-${i + 1}`;
  return {
    id,
    label: path,
    paths: [path],
    ...(bodySizeBytes !== undefined ? { method: 'POST' as const, bodySizeBytes } : {}),
  };
}

/**
 * A list that becomes one workload an entry: each entry once (a workload twice is the same cells
 * measured twice), and no more than {@link MAX_COMPARE_WORKLOADS} — every workload is crossed with
 * every level, strategy and run, and the report holds each (2,000 URLs made 90,000 runs and a
 * 328 MB report.md, issue #26).
 */
function checkWorkloadList(option: string, list: readonly string[]): void {
  const seen = new Map<string, number>();
  for (const x of list) seen.set(x, (seen.get(x) ?? 0) + 1);
  const twice = [...seen].filter(([, n]) => n > 1);
  if (twice.length > 0) {
    const [x, n] = twice[0]!;
    throw invalidOption(
      option,
      `${list.length.toLocaleString('en-US')} entries`,
      `${x} is listed ${n.toLocaleString('en-US')} times (${seen.size.toLocaleString('en-US')} distinct of ${list.length.toLocaleString('en-US')}): each entry is one workload, so list each once`,
    );
  }
  if (list.length > MAX_COMPARE_WORKLOADS)
    throw invalidOption(
      option,
      `${list.length.toLocaleString('en-US')} entries`,
      `compare makes one workload of each, crossed with every level, strategy and run: give at most ${MAX_COMPARE_WORKLOADS} (the ones you decide on), or measure many paths in turn as one load with h2lab bench URL --urls FILE`,
    );
}

/** Flags → options. Exported for tests. */
export function compareOptionsFromFlags(url: string | undefined, f: CompareFlags): CompareOptionsInput {
  const o: CompareOptionsInput = {};
  if (url) o.url = url;
  if (f.protocols) {
    const names = strategyNames();
    o.protocols = parseList(f.protocols).map((p) => {
      if (!findStrategy(p))
        throw invalidOption(
          '--protocols',
          f.protocols,
          `use a list of ${names.join(', ')}, e.g. ${names.slice(0, 2).join(',')}`,
        );
      return p;
    });
  }
  if (f.baseline) {
    if (!findStrategy(f.baseline))
      throw invalidOption('--baseline', f.baseline, `use one of ${strategyNames().join(', ')}`);
    o.baseline = f.baseline;
  }
  if (f.concurrency)
    o.concurrency = parseList(f.concurrency).map((c) => parseInteger(c, '--concurrency', 1, 10_000));
  if (f.rate) {
    // Open loop replaces the closed loop's axis: a cell per rate, as a cell per concurrency.
    if (f.concurrency)
      throw invalidOption(
        '--rate',
        f.rate,
        `--rate replaces --concurrency ${f.concurrency} (open loop: the schedule, not the client, sets what is in flight); give one of them`,
      );
    o.rateRps = parseRateList(f.rate);
  }
  Object.assign(o, requestOptionsFromFlags({ ...f, header: f.header ?? [] }));
  if (f.expect && f.expect.length > 0) o.expect = f.expect;
  if (f.expectUndecided) o.expectUndecided = f.expectUndecided as 'pass' | 'fail';
  const bodySizeBytes =
    f.bodySize !== undefined ? parseBytes(f.bodySize, '--body-size', INPUT_FILE_CAPS.body) : undefined;
  const given = [f.sizes, f.paths, f.urls].filter((x) => x !== undefined).length;
  if (given > 1)
    throw invalidOption(
      '--sizes/--paths/--urls',
      [f.sizes, f.paths, f.urls].filter(Boolean).join(' '),
      'give only one of them',
    );
  if (f.sizes) {
    o.workloads = parseList(f.sizes).map((s) => ({
      ...sizeWorkload(parseBytes(s, '--sizes')),
      ...(bodySizeBytes !== undefined ? { method: 'POST' as const, bodySizeBytes } : {}),
    }));
  } else if (f.paths) {
    const list = parseList(f.paths);
    checkWorkloadList('--paths', list);
    o.workloads = list.map((p, i) => pathWorkload(p, i, bodySizeBytes));
  } else if (f.urls) {
    let list = parseList(f.urls);
    if (list.length === 1 && !/^https?:/.test(list[0]!)) {
      // A file of URLs, one a line.
      list = readOptionText(list[0]!, '--urls', { kind: 'urls' })
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !l.startsWith('#'));
    }
    checkWorkloadList('--urls', list);
    o.workloads = list.map((u, i) => pathWorkload(u, i, bodySizeBytes));
    if (!o.url && list[0]) o.url = new URL(list[0]).origin + '/';
  } else if (bodySizeBytes !== undefined) {
    if (!url)
      throw invalidOption(
        '--body-size',
        f.bodySize,
        'uploads need a target: give a URL (or --paths /echo with the fixture server)',
      );
    o.workloads = [pathWorkload(new URL(url).pathname, 0, bodySizeBytes)];
  }
  if (f.burst) o.burst = parseList(f.burst).map((n) => parseInteger(n, '--burst', 1, 100_000));
  if (f.burstHandshakes) o.burstHandshakes = f.burstHandshakes as 'include' | 'exclude';
  if (f.duration) o.durationMs = parseDurationMs(f.duration, '--duration', 's');
  if (f.requests) o.requests = parseInteger(f.requests, '--requests', 1);
  if (f.runs) o.runs = parseInteger(f.runs, '--runs', 2, 1000);
  if (f.warmupRuns) o.warmupRuns = parseInteger(f.warmupRuns, '--warmup-runs', 0, 100);
  if (f.seed) o.seed = parseInteger(f.seed, '--seed');
  if (f.minEffect) o.minEffect = parseFraction(f.minEffect, '--min-effect');
  if (f.h1Connections) {
    const v = f.h1Connections.replace(/^=/, '');
    const list = v === 'concurrency' ? [] : parseList(v);
    o.h1Connections =
      v === 'concurrency'
        ? 'concurrency'
        : list.map((x) => {
            if (!/^\d+$/.test(x))
              throw invalidOption(
                '--h1-connections',
                f.h1Connections,
                'use a number (e.g. 6), one per --concurrency value (e.g. 1,6,16), or concurrency',
              );
            return parseInteger(x, '--h1-connections', 1, 10_000);
          });
    if (Array.isArray(o.h1Connections) && o.h1Connections.length === 1) o.h1Connections = o.h1Connections[0]!;
  }
  if (f.h2Sessions) o.h2PoolSessions = parseInteger(f.h2Sessions, '--h2-sessions', 1, 10_000);
  if (f.h2PoolPolicy) o.h2PoolPolicy = f.h2PoolPolicy as PoolPolicy;
  if (f.workers) o.workers = parseInteger(f.workers, '--workers', 1, 64);
  if (f.window) o.window = f.window as 'node' | 'browser' | 'max';
  // Behind a link the embedded fixture server runs in the link's server namespace.
  if (f.net) o.net = parseNet(f.net, true);
  const links: NonNullable<CompareOptionsInput['links']> = {};
  if (f.rtt) links.rttMs = parseList(f.rtt).map((x) => parseDurationMs(x, '--rtt'));
  if (f.jitter) links.jitterMs = parseList(f.jitter).map((x) => parseDurationMs(x, '--jitter'));
  if (f.loss) links.loss = parseList(f.loss).map((x) => parseFraction(x, '--loss'));
  if (f.bandwidth) links.rateBitsPerSec = parseList(f.bandwidth).map((x) => parseBitRate(x, '--bandwidth'));
  if (f.cc) {
    links.congestionControl = parseList(f.cc).map((x) => {
      if (!(CONGESTION_CONTROLS as readonly string[]).includes(x))
        throw invalidOption('--cc', f.cc, `use a list of ${CONGESTION_CONTROLS.join(', ')}, e.g. cubic,bbr`);
      return x as (typeof CONGESTION_CONTROLS)[number];
    });
  }
  if (f.initcwnd) links.initialCwnd = parseInteger(f.initcwnd, '--initcwnd', 1, 1000);
  if (f.queue) links.queueBytes = parseBytes(f.queue, '--queue');
  if (f.slowStartAfterIdle === false) links.slowStartAfterIdle = false;
  if (f.netBackend) links.backend = f.netBackend as 'auto' | 'relay' | 'netem';
  if (Object.keys(links).length > 0) o.links = links;
  if (f.ca || f.cert || f.key || f.insecure) {
    o.tls = {
      ...(f.ca ? { ca: f.ca } : {}),
      ...(f.cert ? { cert: f.cert } : {}),
      ...(f.key ? { key: f.key } : {}),
      ...(f.insecure ? { insecure: true } : {}),
    };
  }
  if (f.metricsUrl) o.metricsUrl = f.metricsUrl;
  return o;
}

/** Compare's use of the progress bar: runs as the unit, the cell in progress as the label. */
function progress(stream: NodeJS.WriteStream) {
  const bar = progressBar(stream);
  return {
    runStart(cell: Cell, index: number, total: number, done: number) {
      bar.update(
        done,
        total,
        'runs',
        `${cell.protocol} ${cell.workload.rateRps ? `${cell.concurrency} req/s` : `c=${cell.concurrency}`} run ${index} · ${cell.workload.label}`,
      );
    },
    cellEnd: bar.line,
    clear: bar.clear,
  };
}

export function register(program: Command): void {
  const cmd = program
    .command('compare')
    .argument('[url]', 'target base URL (default: start the embedded fixture server on free ports)')
    .option('--protocols <list>', `strategies to compare (default ${COMPARE_DEFAULTS.protocols.join(',')})`)
    .option(
      '--baseline <strategy>',
      `strategy the others are measured against (default ${COMPARE_DEFAULTS.baseline})`,
    )
    .option(
      '--concurrency <list>',
      `requests in flight, one cell per value (default ${COMPARE_DEFAULTS.concurrency.join(',')})`,
    )
    .option(
      '--sizes <list>',
      'response sizes, one workload each, from the fixture server (/bytes/N), e.g. 1KiB,1MiB',
    )
    .option('--paths <list>', 'paths on the target, one workload each')
    .option('--urls <list|file>', 'URLs (comma-separated or a file, one a line), one workload each')
    .option('--body-size <size>', 'upload a body of this size with each request (POST)')
    .option(
      '--burst <list>',
      'make each workload a burst: N requests at once per run, compared on the time until the last ends; one cell per N (replaces --concurrency for it)',
    )
    .addOption(
      new Option(
        '--burst-handshakes <when>',
        'burst: open connections inside the timed period (include, default) or before it',
      ).choices(['include', 'exclude']),
    )
    .option('--duration <time>', `measured time of each run (default ${COMPARE_DEFAULTS.durationMs}ms)`)
    .option('--requests <n>', 'requests per run instead of a duration')
    .option('--runs <n>', `runs per cell; the first is warm-up (default ${COMPARE_DEFAULTS.runs})`)
    .option(
      '--warmup-runs <n>',
      `runs per cell excluded from statistics (default ${COMPARE_DEFAULTS.warmupRuns})`,
    )
    .option('--seed <n>', `seed of every random choice (default ${COMPARE_DEFAULTS.seed})`)
    .option('--min-effect <fraction>', 'smallest difference called a difference (default 5%)')
    .option(
      '--h1-connections <n|list|concurrency>',
      `HTTP/1.1 connections per cell (default ${COMPARE_DEFAULTS.h1Connections}, a browser's per-origin limit; =concurrency: as many as requests in flight; a list: one per --concurrency value)`,
    )
    .option(
      '--h2-sessions <n>',
      `sessions of the h2-pool strategy (default ${COMPARE_DEFAULTS.h2PoolSessions})`,
    )
    .addOption(
      new Option(
        '--h2-pool-policy <name>',
        `how h2-pool picks a session (default ${COMPARE_DEFAULTS.h2PoolPolicy}; first-free: an idle one, else open one; lease: one stream per session at a time)`,
      ).choices(POOL_POLICIES),
    )
    .option('--workers <n>', 'load generator threads per run, when one saturates (default 1)')
    .addOption(
      new Option(
        '--window <preset>',
        'HTTP/2 flow-control windows: browser (Chromium: 6 MiB stream, 15 MiB connection; default), node (64 KiB), max',
      ).choices(['node', 'browser', 'max']),
    );
  addRequestFlags(cmd).addOption(rateOption(true));
  addNetOption(cmd, true)
    .option('--rtt <list>', 'emulated link: round-trip delays, one link each, e.g. 20ms,200ms (root)')
    .option('--jitter <list>', 'emulated link: one-way delay jitter (± each, ≤ rtt/2), e.g. 5ms')
    .option('--loss <list>', 'emulated link: packet loss each way, one link each, e.g. 0,1%,2%')
    .option('--bandwidth <list>', 'emulated link: bottleneck rates, one link each, e.g. 10mbit,50mbit')
    .option(
      '--cc <list>',
      `TCP congestion control on both ends of every link, one link each: ${CONGESTION_CONTROLS.join(', ')}`,
    )
    .option('--initcwnd <segments>', 'initial congestion window on every link (default 10)')
    .option('--queue <size>', 'bottleneck queue per direction on every link (default one BDP)')
    .option('--no-slow-start-after-idle', 'tcp_slow_start_after_idle=0 in the server namespace of every link')
    .addOption(new Option('--net-backend <name>', 'emulation backend').choices(['auto', 'relay', 'netem']))
    .option('--ca <file>', 'CA certificate (PEM) that signed the server certificate')
    .option('--cert <file>', 'client certificate (PEM) for mTLS')
    .option('--key <file>', 'client key (PEM) for mTLS')
    .option('-k, --insecure', 'accept any server certificate (do not verify it)')
    .option(
      '--metrics-url <url>',
      "an h2lab fixture server's /metrics to read around each run (default: the embedded server's)",
    )
    .option(
      '--expect <condition>',
      'CI gate, repeatable: e.g. h2<=h1:p99@64 or "h2 not worse than h1 on p99 at c=64"; exit 1 when one fails',
      collect,
      [],
    )
    .addOption(
      new Option(
        '--expect-undecided <outcome>',
        'whether a condition the runs cannot decide fails (default pass)',
      ).choices(['pass', 'fail']),
    )
    .option('--out <dir>', 'where results.json, report.md and report.html go', 'h2lab-report')
    .option('--json <file>', 'also write results.json here; - for stdout (the table goes to stderr)')
    .option('--csv <file>', 'one row per cell (workload, level, net, strategy); - for stdout')
    .option('-q, --quiet', 'no progress, no table')
    .option(
      '--brief',
      'print the answer alone (what to decide, for which clients, why); the files are complete',
    );
  addPlanFlags(cmd, true)
    .option(
      '--slot-gap <time>',
      'with --shards: time between one run’s end and the next run’s start, for the last responses and the next connections (default 1s)',
    )
    .option(
      '--plan-out <file>',
      'with --shards: write the plan (for h2lab k8s run or h2lab shard local) instead of running it here',
    );
  addConfigFlag(cmd).action(async (url: string | undefined, _flags: CompareFlags, self: Command) => {
    const flags = flagsWithConfig<CompareFlags>(self);
    const input = compareOptionsFromFlags(url, flags);
    if (flags.shards !== undefined) {
      await shardedCompare(input, flags);
      return;
    }
    const planOnly = (
      [
        'planOut',
        'slotGap',
        'startIn',
        'startAt',
        'startGrace',
        'clockUrl',
        'clockSamples',
        'runId',
        'maxSkew',
      ] as const
    ).find((k) => flags[k] !== undefined);
    if (planOnly) {
      const flag = `--${planOnly.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
      throw invalidOption(
        flag,
        String(flags[planOnly]),
        'it applies to a comparison split into shards: add --shards N',
      );
    }
    const out = flags.out;
    if (flags.json === '-' && flags.csv === '-')
      throw invalidOption('--csv', '-', '--json - already writes to stdout: give --csv a file');
    // Before the first run: a comparison takes minutes, its output must have somewhere to go.
    checkOutputPath(out, '--out', 'dir');
    if (flags.json && flags.json !== '-') checkOutputPath(flags.json, '--json', 'file');
    if (flags.csv && flags.csv !== '-') checkOutputPath(flags.csv, '--csv', 'file');
    const resultsPath = join(out, 'results.json');
    const bar = progress(process.stderr);
    const assets = loadHtmlAssets();
    let finishedCells = 0;
    let writeFailure: string | undefined;
    const onUpdate = (r: CompareResult) => {
      // A write failing mid-run (disk full, directory removed) must not stop the runs: warn once,
      // and the end writes the result to a fallback file.
      try {
        writeResultsAtomic(resultsPath, r);
        const finished = r.cells.filter((c) => c.status !== 'pending' && c.status !== 'running').length;
        if (finished !== finishedCells && r.status === 'running') {
          // Reports follow the results cell by cell, so a killed run leaves them too.
          finishedCells = finished;
          writeRenderedReports(out, r, assets);
        }
      } catch (err) {
        if (writeFailure !== undefined) return;
        writeFailure = (err as NodeJS.ErrnoException).code ?? String(err);
        bar.clear();
        process.stderr.write(
          `h2lab compare: --out ${out}: writing failed (${writeFailure}); the runs go on, and the result is written to a fallback file at the end\n`,
        );
      }
    };
    const c = await runComparison(input, { onUpdate });
    if (!flags.quiet) {
      process.stderr.write(
        `h2lab compare: ${c.target.url}${c.target.embedded ? ' (embedded fixture server)' : ''} → ${resultsPath}\n`,
      );
      let doneRuns = 0;
      c.events.on('run-start', ({ cell, run, total }) => bar.runStart(cell, run + 1, total, doneRuns));
      const told = new Set<string>();
      c.events.on('run-end', ({ cell, status, done }) => {
        doneRuns = done;
        if ((status === 'not-offered' || status === 'failed') && !told.has(cell.id)) {
          told.add(cell.id);
          bar.cellEnd(`  ${cell.id}: ${status === 'failed' ? 'failed' : 'not offered by the server'}`);
        }
      });
    }
    let result: CompareResult;
    try {
      result = await untilDoneOrStopped(
        c.done,
        () => c.stop(),
        (m) => bar.cellEnd(m),
        'h2lab compare: stopping after the run in progress; finished runs are kept',
      );
    } finally {
      bar.clear();
    }
    writeCompareOutputs(result, flags, input.expectUndecided, assets);
  });
}

/**
 * `compare --shards N`: the comparison as a plan of fixed time slots, every run split over N shards.
 * With --plan-out the plan is written for a cluster (h2lab k8s run); else the shards run here, as
 * processes, against a reference clock on loopback, and their merged result is written as compare's.
 */
async function shardedCompare(input: CompareOptionsInput, flags: CompareFlags): Promise<void> {
  const base = {
    ...planInputFromFlags(flags),
    ...(flags.slotGap ? { slotGapMs: parseDurationMs(flags.slotGap, '--slot-gap', 's') } : {}),
  };
  const say = (m: string): void => {
    if (!flags.quiet) process.stderr.write(`${m}\n`);
  };
  const describe = (p: ComparePlan): string =>
    `${p.shards} shards, ${p.slots.length} runs of ${p.cells.length} cells in slots of ${formatSeconds(p.slotMs)} (${formatSeconds(comparePlanLengthMs(p))} in all)`;
  if (flags.planOut) {
    checkOutputPath(flags.planOut, '--plan-out', 'file');
    const plan = planCompareShards(input, base);
    writeFileAtomic(flags.planOut, `${JSON.stringify(plan, null, 2)}\n`);
    say(
      `h2lab compare: plan ${plan.runId} → ${flags.planOut}: ${describe(plan)}, start ${new Date(plan.startAtEpochMs).toISOString()}, hash ${plan.hash.slice(0, 12)}…\n` +
        `  run it: h2lab k8s run --plan ${flags.planOut} --image IMAGE   (or here: h2lab shard local --plan ${flags.planOut})`,
    );
    return;
  }
  for (const [key, flag] of [
    ['startIn', '--start-in'],
    ['startAt', '--start-at'],
  ] as const) {
    if (flags[key] !== undefined) {
      throw invalidOption(
        flag,
        flags[key],
        'on this machine the start is set once every shard process is ready; it applies to a plan written with --plan-out',
      );
    }
  }
  checkCompareOutputs(flags);
  // Every refusal before a process starts.
  const checked = planCompareShards(input, base);
  const clock = base.clockUrl ? undefined : await startClockServer({ host: '127.0.0.1', port: 0 });
  const bar = progressBar(process.stderr);
  let timer: NodeJS.Timeout | undefined;
  try {
    say(`h2lab compare: ${checked.compare.url} from ${describe(checked)}, as processes on this machine`);
    const controller = new AbortController();
    const run = runComparePlanLocally(
      (ready) => {
        const plan = planCompareShards(input, {
          ...base,
          startAtEpochMs: ready + 1500,
          ...(clock ? { clockUrl: clock.url } : {}),
        });
        if (!flags.quiet) {
          // The slots are fixed: the run in progress follows from the time.
          timer = setInterval(() => {
            const k = Math.floor((Date.now() - plan.startAtEpochMs) / plan.slotMs);
            const slot = plan.slots[Math.min(Math.max(k, 0), plan.slots.length - 1)]!;
            const cell = plan.cells[slot.cell]!;
            bar.update(
              Math.max(0, Math.min(k, plan.slots.length)),
              plan.slots.length,
              'runs',
              `${cell.id} run ${slot.round + 1}`,
            );
          }, 500);
        }
        return plan;
      },
      checked.shards,
      { signal: controller.signal },
    );
    const done = await untilDoneOrStopped(
      run,
      () => controller.abort(),
      (m) => bar.line(m),
      'h2lab compare: stopping every shard; the runs they finished are merged',
    );
    clearInterval(timer);
    bar.clear();
    done.exitCodes.forEach((code, i) => {
      if (code !== 0 && done.stderr[i]) say(`shard ${i} (exit ${code}): ${done.stderr[i]!.trim()}`);
    });
    writeCompareOutputs(done.result, flags, input.expectUndecided);
  } finally {
    clearInterval(timer);
    bar.clear();
    await clock?.close();
  }
}

const formatSeconds = (ms: number): string =>
  ms >= 120_000 ? `${(ms / 60_000).toFixed(1)} min` : `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;

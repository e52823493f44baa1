/**
 * What `h2lab compare` does once its flags are parsed (src/cli/compare.ts): run the comparison here or
 * as shards, show progress, write results.json after every run and the reports. Loaded by the
 * command's action, so that `compare --help` loads none of it.
 */
import { join } from 'node:path';
import type { Cell, CompareOptionsInput } from '../compare/index.ts';
import { finishCompareResult, runComparison, writeResultsAtomic } from '../compare/index.ts';
import { checkOutputPath, invalidOption, parseDurationMs, writeFileAtomic } from '../core/index.ts';
import type { ComparePlan, CompareResult } from '../model/index.ts';
import { loadHtmlAssets } from '../report/index.ts';
import {
  comparePlanLengthMs,
  planCompareShards,
  runComparePlanLocally,
  startClockServer,
} from '../shard/index.ts';
import type { CompareFlags } from './compare.ts';
import { checkCompareOutputs, writeCompareOutputs } from './compare-output.ts';
import { captureRequestFromFlags } from './net-options.ts';
import { untilDoneOrStopped } from './output.ts';
import { planInputFromFlags } from './plan-flags.ts';
import { progressBar } from './progress.ts';
import { writeRenderedReports } from './report-files.ts';

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

/** Runs the comparison the parsed flags describe (`input`: their options), and writes its outputs. */
export async function runCompareCommand(input: CompareOptionsInput, flags: CompareFlags): Promise<void> {
  if (flags.shards !== undefined) {
    const dir = (flags as { capture?: string }).capture;
    if (dir !== undefined)
      throw invalidOption('--capture', dir, 'capture runs on one machine: give it without --shards');
    if (input.budgetMs !== undefined)
      throw invalidOption(
        '--budget',
        `${input.budgetMs / 1000}s`,
        'the extra runs follow the runs before them on one machine: give it without --shards',
      );
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
  let latest: CompareResult | undefined;
  const onUpdate = (r: CompareResult) => {
    latest = r;
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
  // Before the first run, as --out: a capture directory that cannot be written refuses now.
  const capture = captureRequestFromFlags(flags as unknown as Record<string, unknown>, true);
  const all = (flags as { captureAll?: boolean }).captureAll === true;
  const c = await runComparison(input, { onUpdate, ...(capture ? { capture: { ...capture, all } } : {}) });
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
      () => c.finish(),
      (m) => bar.cellEnd(m),
      'h2lab compare: stopping after the run in progress, which ends at its own --duration or --requests; it and the finished runs are kept',
      () => {
        // The second Ctrl-C: the runs finished so far, marked interrupted, before the exit.
        if (!latest) return undefined;
        const r = structuredClone(latest);
        finishCompareResult(r, r.runsPerCell, true);
        writeResultsAtomic(resultsPath, r);
        writeRenderedReports(out, r, assets);
        return `wrote ${resultsPath} (status "interrupted", the runs finished so far), report.md and report.html`;
      },
    );
  } finally {
    bar.clear();
  }
  writeCompareOutputs(result, flags, input.expectUndecided, assets);
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

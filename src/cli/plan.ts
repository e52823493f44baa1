/**
 * `h2lab plan [URL] --shards N …`: one load run split into a plan (JSON) every shard runs (the command
 * is plan-command.ts, which loads this file when it runs).
 * `h2lab shard run --plan FILE`: one shard, its result as chunk lines on stdout and its digest in a
 * termination message; `h2lab shard local --plan FILE`: every shard as a process here, merged.
 * `h2lab clock serve`: the reference clock a plan's shards measure their offset against.
 */
import { type Command, Option } from 'commander';
import { ERROR_CODES, type ErrorCode, H2labError, parseInteger, writeFileAtomic } from '../core/index.ts';
import type {
  AnyPlan,
  AnyShardResult,
  CompareShardResult,
  MergedResult,
  ShardPlan,
  ShardResult,
} from '../model/index.ts';
import { renderRunText } from '../report/index.ts';
import {
  type MergeOptions,
  mergeCompareShards,
  mergeShards,
  planShards,
  readPlanFile,
  renderMergedText,
  runAndEmitShard,
  runComparePlanLocally,
  runPlanLocally,
  shardError,
  startClockServer,
} from '../shard/index.ts';
import { type BenchFlags, toLoadOptions } from './bench.ts';
import { CSV_FLAG, JSON_FLAG, OUT_FLAG, PLAN_FLAG, QUIET_FLAG } from './common-flags.ts';
import { type CompareOutputFlags, checkCompareOutputs, writeCompareOutputs } from './compare-output.ts';
import { optionOf } from './flags.ts';
import { exitWithError, untilDoneOrStopped } from './output.ts';
import { type PlanFlags, planInputFromFlags } from './plan-flags.ts';

/** The plan from parsed flags. */
export function planFromFlags(
  url: string | undefined,
  f: BenchFlags & PlanFlags,
  now = Date.now(),
): ShardPlan {
  return planShards(toLoadOptions(url, f), planInputFromFlags(f, now));
}

/** Prints a merged result (table, shards, warnings) and writes its JSON when asked. */
export function printMerged(m: MergedResult, json: string | undefined, quiet = false): void {
  const text = `${renderRunText(m.result)}\n${renderMergedText(m)}`;
  const body = `${JSON.stringify(m, null, 2)}\n`;
  if (!quiet) (json === '-' ? process.stderr : process.stdout).write(text);
  if (json === '-') process.stdout.write(body);
  else if (json) writeFileAtomic(json, body);
}

/** Ends the process with the merged result's error (a shard's), when it has one. */
export function exitOnMergedError(m: MergedResult): void {
  const e = m.result.error;
  if (!e) return;
  const code = e.code as ErrorCode;
  exitWithError(
    new H2labError(code in ERROR_CODES ? code : 'H2LAB_ERR_INTERNAL', e.message, e.details ?? {}),
  );
}

/** The output flags of the commands that collect a plan's shards (shard local, k8s run, merge). */
export type CollectedFlags = Partial<CompareOutputFlags> & { json?: string; quiet?: boolean };

/** Adds what a comparison's plan writes besides --json and --quiet: the reports' directory and CSV. */
export function addCompareOutputFlags(cmd: Command): Command {
  return cmd
    .addOption(
      optionOf({
        of: OUT_FLAG,
        arg: 'dir',
        description: 'a comparison’s plan: where results.json, report.md and report.html go',
        defaultText: 'h2lab-report',
      }),
    )
    .addOption(
      optionOf({ of: CSV_FLAG, description: 'a comparison’s plan: one row per cell; - for stdout' }),
    );
}

/** Before any shard runs: a comparison's outputs must have somewhere to go. */
export function checkCollectedOutputs(plan: AnyPlan, f: CollectedFlags): void {
  if (plan.kind === 'h2lab.compare-plan') checkCompareOutputs({ ...f, out: f.out ?? 'h2lab-report' });
  else refuseCompareOutputs(f);
}

/** --out and --csv belong to a comparison's result: refused for a load run's. */
export function refuseCompareOutputs(f: CollectedFlags): void {
  if (f.out === undefined && f.csv === undefined) return;
  const option = f.out !== undefined ? '--out' : '--csv';
  throw new H2labError(
    'H2LAB_ERR_INVALID_OPTION',
    `${option} applies to a comparison's shards; these are a load run's (the merged result goes to --json)`,
    { option },
  );
}

/**
 * The shards of a plan, merged and written: a load run's as its table, the shards and --json; a
 * comparison's as compare writes its result (table, verdict, results.json and the reports).
 */
export function outputShards(
  plan: AnyPlan,
  results: AnyShardResult[],
  f: CollectedFlags,
  merge: MergeOptions = {},
): void {
  const kind = plan.kind === 'h2lab.plan' ? 'h2lab.shard' : 'h2lab.compare-shard';
  const other = results.find((r) => r.kind !== kind || r.planHash !== plan.hash);
  if (other) {
    throw new H2labError(
      'H2LAB_ERR_SHARD_MISMATCH',
      `shard ${other.index} (run ${other.runId}, plan ${other.planHash.slice(0, 12)}…) did not run this plan (run ${plan.runId}, ${plan.hash.slice(0, 12)}…, ${plan.kind === 'h2lab.plan' ? "a load run's" : "a comparison's"}): give the plan the shards ran`,
      { planHash: plan.hash, shardPlanHash: other.planHash },
    );
  }
  if (plan.kind === 'h2lab.plan') {
    const m = mergeShards(results as ShardResult[], { maxSkewMs: plan.maxSkewMs, ...merge });
    printMerged(m, f.json, f.quiet);
    exitOnMergedError(m);
    return;
  }
  const result = mergeCompareShards(plan, results as CompareShardResult[], merge);
  const undecided = (plan.compare as { expectUndecided?: 'pass' | 'fail' }).expectUndecided;
  writeCompareOutputs(result, { ...f, out: f.out ?? 'h2lab-report' }, undecided);
}

/** `h2lab shard run|local`, loaded by its entry in src/cli/commands.ts. */
export function registerShard(program: Command): void {
  const shard = program.command('shard').description('Run the shards of a plan');
  shard
    .command('run')
    .description('Run one shard: chunk lines on stdout, a digest in --termination-log')
    .addOption(optionOf({ of: PLAN_FLAG, required: true }))
    .option('--index <n>', 'the shard (default: $JOB_COMPLETION_INDEX, set by an Indexed Job)')
    .option('--termination-log <file>', 'write the digest here (Kubernetes: /dev/termination-log)')
    .addOption(
      optionOf({
        of: OUT_FLAG,
        arg: 'file',
        description: 'also write the whole shard result as JSON (for h2lab merge)',
      }),
    )
    .action(async (f: { plan: string; index?: string; terminationLog?: string; out?: string }) => {
      const p = readPlanFile(f.plan);
      const raw = f.index ?? process.env.JOB_COMPLETION_INDEX;
      if (raw === undefined) {
        throw new H2labError(
          'H2LAB_ERR_INVALID_OPTION',
          '--index is missing: pass --index N, or run inside an Indexed Job (it sets JOB_COMPLETION_INDEX)',
          { option: '--index' },
        );
      }
      const index = parseInteger(raw, '--index', 0);
      // SIGTERM (the Job's deadline, a deleted pod): stop, and still emit what was measured.
      const { result, exitCode } = await runAndEmitShard(
        p,
        index,
        {
          ...(f.terminationLog ? { terminationLog: f.terminationLog } : {}),
          ...(f.out ? { out: f.out } : {}),
        },
        {
          onRun: (run) => {
            process.once('SIGTERM', () => run.stop());
            process.once('SIGINT', () => run.stop());
          },
        },
      );
      const error = shardError(result);
      if (error) process.stderr.write(`h2lab: ${error.code}: ${error.message}\n`);
      process.exit(exitCode);
    });
  addCompareOutputFlags(
    shard
      .command('local')
      .description('Run every shard of a plan as a process on this machine, then merge them')
      .addOption(
        optionOf({
          of: PLAN_FLAG,
          required: true,
          description: 'the plan (h2lab plan, or h2lab compare --shards N --plan-out)',
        }),
      )
      .addOption(optionOf({ of: JSON_FLAG, description: 'write the merged result (JSON); - for stdout' }))
      .addOption(optionOf(QUIET_FLAG)),
  ).action(async (f: { plan: string } & CollectedFlags) => {
    const p = readPlanFile(f.plan);
    checkCollectedOutputs(p, f);
    const late = Date.now() - p.startAtEpochMs;
    if (late > p.startGraceMs) {
      throw new H2labError(
        'H2LAB_ERR_INVALID_OPTION',
        `--plan ${f.plan} started ${Math.round(late / 1000)} s ago: every shard would miss it; write the plan again (its --start-in counts from when it is written)`,
        { option: '--plan', startAtEpochMs: p.startAtEpochMs },
      );
    }
    const controller = new AbortController();
    const say = (m: string): void => {
      if (!f.quiet) process.stderr.write(`${m}\n`);
    };
    const run = await untilDoneOrStopped<{ shards: AnyShardResult[] }>(
      p.kind === 'h2lab.plan'
        ? runPlanLocally(p, p.shards, { signal: controller.signal })
        : runComparePlanLocally(p, p.shards, { signal: controller.signal }),
      () => controller.abort(),
      say,
      'h2lab shard local: stopping every shard; what they measured is merged',
    );
    outputShards(p, run.shards, f);
  });
}

/** `h2lab clock serve`, loaded by its entry in src/cli/commands.ts. */
export function registerClock(program: Command): void {
  program
    .command('clock')
    .description('The reference clock of a plan')
    .command('serve')
    .description('Answer every GET with {"epochMs": n}, this machine’s clock (h2lab plan --clock-url)')
    .addOption(new Option('--host <host>', 'address to listen on').default('0.0.0.0'))
    .addOption(new Option('--port <n>', 'port (0: a free one)').default('7070'))
    .action(async (f: { host: string; port: string }) => {
      const c = await startClockServer({ host: f.host, port: parseInteger(f.port, '--port', 0, 65535) });
      process.stdout.write(`listening ${c.url}\n`);
      const stop = (): void => {
        void c.close().then(() => process.exit(0));
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
}

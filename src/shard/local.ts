/**
 * A plan run on this machine: one child process per shard, each emitting chunk lines on its stdout
 * and a digest file, read back through the same {@link ShardCollector} and merge as a cluster's pods.
 * It is how the sharded path is tested without a cluster, and a way to use more cores than
 * `--workers` threads share with one event loop's process.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { nodeArgv } from '../core/index.ts';
import type {
  AnyPlan,
  AnyShardResult,
  ComparePlan,
  CompareResult,
  CompareShardResult,
  MergedResult,
  ShardPlan,
  ShardResult,
} from '../model/index.ts';
import { READY_LINE, ShardCollector } from './chunks.ts';
import { mergeCompareShards } from './compare-merge.ts';
import { type MergeOptions, mergeShards } from './merge.ts';

/** What the children of a local run left: their results, exit statuses and stderr, by index. */
interface LocalShards<P extends AnyPlan, R extends AnyShardResult> {
  /** The plan they ran (the one the plan function returned). */
  plan: P;
  shards: R[];
  /** Exit status of each child, by index. */
  exitCodes: number[];
  /** What the children wrote on stderr, by index. */
  stderr: string[];
}

/** What a local run of a load run's plan produced. */
interface LocalRun extends LocalShards<ShardPlan, ShardResult> {
  merged: MergedResult;
}

/** What a local run of a comparison's plan produced. */
interface LocalCompareRun extends LocalShards<ComparePlan, CompareShardResult> {
  result: CompareResult;
}

/**
 * Runs every shard of a plan as a child process of this machine and merges them. `plan` may be a
 * function of the time when every child has loaded and is ready (ms since the epoch), so the start can
 * be set close after it: `(ready) => planShards(o, { shards: 3, startAtEpochMs: ready + 1500 })`.
 * Rejects with the collector's error (H2LAB_ERR_SHARD_MISSING / _DUPLICATE / _CORRUPT) when a shard
 * left no usable output.
 * @example const { merged } = await runPlanLocally((t) => planShards(opts, { shards: 3, startAtEpochMs: t + 1500 }), 3);
 */
export async function runPlanLocally(
  plan: ShardPlan | ((readyEpochMs: number) => ShardPlan),
  shards: number = typeof plan === 'function' ? Number.NaN : plan.shards,
  opts: MergeOptions & { signal?: AbortSignal } = {},
): Promise<LocalRun> {
  const run = await runShardsLocally(plan, shards, opts.signal);
  const results = run.shards as ShardResult[];
  return {
    ...run,
    shards: results,
    merged: mergeShards(results, { maxSkewMs: run.plan.maxSkewMs, ...opts }),
  };
}

/**
 * Runs every shard of a comparison's plan as a child process of this machine and merges them into
 * the comparison's result; as {@link runPlanLocally}, `plan` may be a function of the ready time.
 * @example const { result } = await runComparePlanLocally((t) => planCompareShards(opts, { shards: 2, startAtEpochMs: t + 1500 }), 2);
 */
export async function runComparePlanLocally(
  plan: ComparePlan | ((readyEpochMs: number) => ComparePlan),
  shards: number = typeof plan === 'function' ? Number.NaN : plan.shards,
  opts: MergeOptions & { signal?: AbortSignal } = {},
): Promise<LocalCompareRun> {
  const run = await runShardsLocally(plan, shards, opts.signal);
  const results = run.shards as CompareShardResult[];
  const { signal: _signal, ...merge } = opts;
  return {
    ...run,
    shards: results,
    result: mergeCompareShards(run.plan, results, { ...merge, local: { cpus: os.availableParallelism() } }),
  };
}

/** The children of a local run and the collection of their output (either kind of plan). */
async function runShardsLocally<P extends AnyPlan>(
  plan: P | ((readyEpochMs: number) => P),
  shards: number,
  signal?: AbortSignal,
): Promise<LocalShards<P, AnyShardResult>> {
  if (!(shards >= 1)) throw new Error('runPlanLocally: the shard count is needed with a plan function');
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-plan-'));
  try {
    const [node, ...args] = nodeArgv('shard/entry');
    const stderr: string[] = Array.from({ length: shards }, () => '');
    const lines: string[][] = Array.from({ length: shards }, () => []);
    let ready = 0;
    let onAllReady: () => void = () => {};
    const allReady = new Promise<void>((r) => {
      onAllReady = r;
    });
    const children = Array.from({ length: shards }, (_, i) => {
      const child = spawn(node!, [...args, String(i), join(dir, `digest-${i}.json`)], {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      createInterface({ input: child.stdout }).on('line', (l) => lines[i]!.push(l));
      createInterface({ input: child.stderr }).on('line', (l) => {
        if (l === READY_LINE) {
          if (++ready === shards) onAllReady();
        } else stderr[i] += `${l}\n`;
      });
      // A child gone before its plan was written: its exit status tells, not an EPIPE.
      child.stdin.on('error', () => {});
      const exit = new Promise<number>((resolve) => {
        child.on('error', (e) => {
          stderr[i] += `${e.message}\n`;
          resolve(1);
        });
        child.on('close', (code) => resolve(code ?? 1));
      });
      return { child, exit };
    });
    // A child that dies before it is ready must not leave the others waiting for their plan.
    const exited = Promise.all(children.map((c) => c.exit));
    await Promise.race([allReady, exited]);
    // Aborted (Ctrl-C): every child stops its run and still emits what it measured.
    const stopAll = () => {
      for (const c of children) c.child.kill('SIGTERM');
    };
    signal?.addEventListener('abort', stopAll, { once: true });
    let p: P;
    try {
      p = typeof plan === 'function' ? plan(Date.now()) : plan;
    } catch (err) {
      for (const c of children) c.child.kill('SIGKILL');
      await exited;
      throw err;
    }
    const text = JSON.stringify(p);
    for (const c of children) c.child.stdin.end(text);
    const exitCodes = await exited.finally(() => signal?.removeEventListener('abort', stopAll));
    const collector = new ShardCollector(p.runId, p.shards);
    for (const l of lines.flat()) collector.addLine(l);
    for (let i = 0; i < p.shards; i++) {
      let text: string | undefined;
      try {
        text = readFileSync(join(dir, `digest-${i}.json`), 'utf8');
      } catch {
        text = undefined; // The collector names the shard.
      }
      if (text !== undefined) collector.addDigest(text, `shard ${i}'s digest`);
    }
    return { plan: p, shards: collector.results(), exitCodes, stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A plan run on this machine: one child process per shard, each emitting chunk lines on its stdout
 * and a digest file, read back through the same {@link ShardCollector} and merge as a cluster's pods.
 * It is how the sharded path is tested without a cluster, and a way to use more cores than
 * `--workers` threads share with one event loop's process.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { nodeArgv } from '../core/index.ts';
import type { MergedResult, ShardPlan, ShardResult } from '../model/index.ts';
import { ShardCollector } from './chunks.ts';
import { type MergeOptions, mergeShards } from './merge.ts';

/** What a local run of a plan produced. */
export interface LocalRun {
  merged: MergedResult;
  shards: ShardResult[];
  /** Exit status of each child, by index. */
  exitCodes: number[];
  /** What the children wrote on stderr, by index. */
  stderr: string[];
}

/**
 * Runs every shard of `plan` as a child process of this machine and merges them. Rejects with the
 * collector's error (H2LAB_ERR_SHARD_MISSING / _DUPLICATE / _CORRUPT) when a shard left no usable output.
 * @example const { merged } = await runPlanLocally(planShards(opts, { shards: 3, startAtEpochMs: Date.now() + 5000 }));
 */
export async function runPlanLocally(plan: ShardPlan, opts: MergeOptions = {}): Promise<LocalRun> {
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-plan-'));
  try {
    const planPath = join(dir, 'plan.json');
    writeFileSync(planPath, JSON.stringify(plan));
    const collector = new ShardCollector(plan.runId, plan.shards);
    const [node, ...args] = nodeArgv('shard/entry');
    const stderr: string[] = plan.shardOptions.map(() => '');
    const exitCodes = await Promise.all(
      plan.shardOptions.map(
        (_, i) =>
          new Promise<number>((resolve, reject) => {
            const child = spawn(node!, [...args, planPath, String(i), join(dir, `digest-${i}.json`)], {
              stdio: ['ignore', 'pipe', 'pipe'],
            });
            createInterface({ input: child.stdout }).on('line', (l) => collector.addLine(l));
            child.stderr.on('data', (d: Buffer) => {
              stderr[i] += d.toString();
            });
            child.on('error', reject);
            child.on('close', (code) => resolve(code ?? 1));
          }),
      ),
    );
    for (let i = 0; i < plan.shards; i++) {
      let text: string | undefined;
      try {
        text = readFileSync(join(dir, `digest-${i}.json`), 'utf8');
      } catch {
        text = undefined; // The collector names the shard.
      }
      if (text !== undefined) collector.addDigest(text, `shard ${i}'s digest`);
    }
    const shards = collector.results();
    return { merged: mergeShards(shards, { maxSkewMs: plan.maxSkewMs, ...opts }), shards, exitCodes, stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

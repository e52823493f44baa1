/**
 * A plan run on this machine: one child process per shard, each emitting chunk lines on its stdout
 * and a digest file, read back through the same {@link ShardCollector} and merge as a cluster's pods.
 * It is how the sharded path is tested without a cluster, and a way to use more cores than
 * `--workers` threads share with one event loop's process.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { nodeArgv } from '../core/index.ts';
import type { MergedResult, ShardPlan, ShardResult } from '../model/index.ts';
import { READY_LINE, ShardCollector } from './chunks.ts';
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
  opts: MergeOptions = {},
): Promise<LocalRun> {
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
    const p = typeof plan === 'function' ? plan(Date.now()) : plan;
    const text = JSON.stringify(p);
    for (const c of children) c.child.stdin.end(text);
    const exitCodes = await exited;
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
    const results = collector.results();
    return {
      merged: mergeShards(results, { maxSkewMs: p.maxSkewMs, ...opts }),
      shards: results,
      exitCodes,
      stderr,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

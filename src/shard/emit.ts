/**
 * A shard as a process: run it, write its chunk lines on stdout and its digest where Kubernetes reads a
 * termination message (`--termination-log`, /dev/termination-log in a pod). The CLI (`h2lab shard run`)
 * and the local runner's child processes both come through here, so both paths emit the same bytes.
 */
import { writeFileSync } from 'node:fs';
import { ERROR_CODES, type ErrorCode, H2labError, writeFileAtomic } from '../core/index.ts';
import type { AnyPlan, AnyShardResult } from '../model/index.ts';
import { DIGEST_MAX_BYTES, encodeShardOutput } from './chunks.ts';
import { runCompareShard } from './compare-run.ts';
import { runShard, type ShardDeps } from './run.ts';

/** Where a shard's output goes besides stdout. */
interface EmitOptions {
  /** The digest is written here (a termination message: at most 4096 bytes). */
  terminationLog?: string;
  /** The whole shard result as JSON, for `h2lab merge` by hand. */
  out?: string;
  /** Where chunk lines go; default process.stdout. */
  write?: (line: string) => Promise<void>;
}

function writeStdout(line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(`${line}\n`, (err) => (err ? reject(err) : resolve()));
  });
}

/**
 * Runs shard `index` and emits its output. Resolves with the result and the exit status the process
 * should end with (0, or the code's: 3 for a missed start, 1 for a failed run).
 */
export async function runAndEmitShard(
  plan: AnyPlan,
  index: number,
  o: EmitOptions = {},
  deps: ShardDeps = {},
): Promise<{ result: AnyShardResult; exitCode: number }> {
  const result =
    plan.kind === 'h2lab.plan' ? await runShard(plan, index, deps) : await runCompareShard(plan, index, deps);
  const { lines, digest } = encodeShardOutput(result);
  const write = o.write ?? writeStdout;
  for (const line of lines) await write(line);
  const text = JSON.stringify(digest);
  if (Buffer.byteLength(text) > DIGEST_MAX_BYTES) {
    throw new H2labError(
      'H2LAB_ERR_INTERNAL',
      `the shard digest is ${Buffer.byteLength(text)} bytes, above 4096`,
      {},
    );
  }
  // The kubelet reads the file after the container ends; a plain write is what it expects.
  if (o.terminationLog) writeFileSync(o.terminationLog, text);
  if (o.out) writeFileAtomic(o.out, `${JSON.stringify(result, null, 2)}\n`);
  const code = shardError(result)?.code as ErrorCode | undefined;
  const exitCode = code === undefined ? 0 : code in ERROR_CODES ? ERROR_CODES[code].exit : 1;
  return { result, exitCode };
}

/** A shard's error: its run's, or for a comparison's shard why it stopped early. */
export function shardError(r: AnyShardResult): { code: string; message: string } | undefined {
  return r.kind === 'h2lab.shard' ? r.result.error : r.stopped;
}

/**
 * `h2lab merge shard-*.json`: the shard results of one plan (written by `h2lab shard run --out`, or
 * collected by `h2lab k8s run`) as one exact result, each shard beside it. A comparison's shards need
 * their plan (`--plan`), which holds the matrix and the run order they are merged in.
 */
import type { Command } from 'commander';
import { H2labError, readFlag, readOptionText } from '../core/index.ts';
import { type AnyShardResult, anyShardResultSchema, type ShardResult } from '../model/index.ts';
import { mergeShards, readPlanFile } from '../shard/index.ts';
import { JSON_FLAG, MAX_SKEW_FLAG, PLAN_FLAG, QUIET_FLAG } from './common-flags.ts';
import { optionOf } from './flags.ts';
import {
  addCompareOutputFlags,
  type CollectedFlags,
  checkCollectedOutputs,
  exitOnMergedError,
  outputShards,
  printMerged,
  refuseCompareOutputs,
} from './plan.ts';

function readShard(path: string): AnyShardResult {
  const text = readOptionText(path, 'merge', { kind: 'result' });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new H2labError(
      'H2LAB_ERR_RESULT_FILE',
      `${path} cannot be read as JSON (${(err as Error).message}): give files written by h2lab shard run --out`,
      { path },
    );
  }
  const r = anyShardResultSchema.safeParse(value);
  if (!r.success) {
    throw new H2labError(
      'H2LAB_ERR_RESULT_FILE',
      `${path} is not an h2lab shard result (${r.error.issues[0]?.path.join('.')}: ${r.error.issues[0]?.message}): give files written by h2lab shard run --out`,
      { path },
    );
  }
  return r.data;
}

/**
 * A shard whose bytes are damaged, found while merging files the user named: that file is bad input
 * (H2LAB_ERR_RESULT_FILE, exit 2, naming it), as an unreadable or invalid one is.
 */
function withDamagedFileNamed<T>(files: readonly string[], shards: readonly AnyShardResult[], f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (!(err instanceof H2labError) || err.code !== 'H2LAB_ERR_SHARD_CORRUPT') throw err;
    const at = shards.findIndex((s) => s.index === err.details.index);
    const path = files[at] ?? files.join(', ');
    throw new H2labError(
      'H2LAB_ERR_RESULT_FILE',
      `${path}: ${err.message.replace(/: the file was damaged; .*$/, '')}: the file was damaged (edited or cut); give that shard's output again (its --out file or its log)`,
      { path, ...err.details },
    );
  }
}

export function register(program: Command): void {
  addCompareOutputFlags(
    program
      .command('merge')
      .description('Merge the shard results of one plan exactly (counts, HdrHistograms), shards beside it')
      .argument('<files...>', 'shard results (h2lab shard run --out)')
      .addOption(
        optionOf({
          of: PLAN_FLAG,
          description: 'the plan the shards ran (needed for a comparison’s shards)',
        }),
      )
      .addOption(optionOf({ of: MAX_SKEW_FLAG, description: 'warn when shards started further apart' }))
      .option(
        '--slow-factor <x>',
        'name a shard whose median latency is this many times the others’ (default 2)',
      )
      .addOption(optionOf({ of: JSON_FLAG, description: 'write the merged result (JSON); - for stdout' }))
      .addOption(optionOf(QUIET_FLAG)),
  ).action(
    (files: string[], f: CollectedFlags & { plan?: string; maxSkew?: string; slowFactor?: string }) => {
      const plan = f.plan ? readPlanFile(f.plan) : undefined;
      if (plan) checkCollectedOutputs(plan, f);
      const shards = files.map(readShard);
      const slow = f.slowFactor === undefined ? undefined : Number(f.slowFactor);
      if (slow !== undefined && !(slow > 1)) {
        throw new H2labError(
          'H2LAB_ERR_INVALID_OPTION',
          `--slow-factor ${f.slowFactor} is not valid: use a number above 1, e.g. 2`,
          {
            option: '--slow-factor',
            value: f.slowFactor,
          },
        );
      }
      const merge = {
        ...(f.maxSkew ? { maxSkewMs: readFlag(MAX_SKEW_FLAG, f.maxSkew) as number } : {}),
        ...(slow !== undefined ? { slowFactor: slow } : {}),
      };
      if (plan) {
        withDamagedFileNamed(files, shards, () => outputShards(plan, shards, f, merge));
        return;
      }
      const compared = shards.find((s) => s.kind === 'h2lab.compare-shard');
      if (compared) {
        throw new H2labError(
          'H2LAB_ERR_INVALID_OPTION',
          `shard ${compared.index} of run ${compared.runId} is a comparison's: give its plan with --plan FILE (it holds the matrix the runs are merged into)`,
          { option: '--plan' },
        );
      }
      refuseCompareOutputs(f);
      const m = withDamagedFileNamed(files, shards, () => mergeShards(shards as ShardResult[], merge));
      printMerged(m, f.json, f.quiet);
      exitOnMergedError(m);
    },
  );
}

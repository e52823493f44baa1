/**
 * `h2lab merge shard-*.json`: the shard results of one plan (written by `h2lab shard run --out`, or
 * collected by `h2lab k8s run`) as one exact result, each shard beside it.
 */
import type { Command } from 'commander';
import { H2labError, parseDurationMs, readOptionText } from '../core/index.ts';
import { type ShardResult, shardResultSchema } from '../model/index.ts';
import { mergeShards } from '../shard/index.ts';
import { exitOnMergedError, printMerged } from './plan.ts';

function readShard(path: string): ShardResult {
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
  const r = shardResultSchema.safeParse(value);
  if (!r.success) {
    throw new H2labError(
      'H2LAB_ERR_RESULT_FILE',
      `${path} is not an h2lab shard result (${r.error.issues[0]?.path.join('.')}: ${r.error.issues[0]?.message}): give files written by h2lab shard run --out`,
      { path },
    );
  }
  return r.data;
}

export function register(program: Command): void {
  program
    .command('merge')
    .description('Merge the shard results of one plan exactly (counts, HdrHistograms), shards beside it')
    .argument('<files...>', 'shard results (h2lab shard run --out)')
    .option('--max-skew <time>', 'warn when shards started further apart (default 10ms)')
    .option(
      '--slow-factor <x>',
      'name a shard whose median latency is this many times the others’ (default 2)',
    )
    .option('--json <file>', 'write the merged result (JSON); - for stdout')
    .option('-q, --quiet', 'print nothing but errors')
    .action(
      (files: string[], f: { maxSkew?: string; slowFactor?: string; json?: string; quiet?: boolean }) => {
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
        const m = mergeShards(shards, {
          ...(f.maxSkew ? { maxSkewMs: parseDurationMs(f.maxSkew, '--max-skew', 'ms') } : {}),
          ...(slow !== undefined ? { slowFactor: slow } : {}),
        });
        printMerged(m, f.json, f.quiet);
        exitOnMergedError(m);
      },
    );
}

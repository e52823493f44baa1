/**
 * A child process of the local runner (src/shard/local.ts): `entry INDEX DIGEST_FILE`, the plan on
 * stdin. It says `h2lab-shard-ready` on stderr once its modules are loaded, so the runner can set the
 * start after every child is ready (a child started through tsx on a busy machine takes seconds), then
 * runs its shard and emits exactly what `h2lab shard run` emits in a pod.
 */
import { isH2labError } from '../core/index.ts';
import { READY_LINE } from './chunks.ts';
import { runAndEmitShard, shardError } from './emit.ts';
import { checkPlan } from './plan.ts';

const [index, digestPath] = process.argv.slice(2);
try {
  process.stderr.write(`${READY_LINE}\n`);
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  const plan = checkPlan(JSON.parse(Buffer.concat(chunks).toString('utf8')), 'the plan on stdin');
  const { result, exitCode } = await runAndEmitShard(
    plan,
    Number(index),
    { terminationLog: digestPath! },
    {
      // The runner's stop (or Ctrl-C on the terminal): end the run, still emit what was measured.
      onRun: (run) => {
        process.once('SIGTERM', () => run.stop());
        process.once('SIGINT', () => run.stop());
      },
    },
  );
  const error = shardError(result);
  if (error) process.stderr.write(`${error.code}: ${error.message}\n`);
  process.exit(exitCode);
} catch (err) {
  process.stderr.write(
    `${isH2labError(err) ? `${err.code}: ${err.message}` : String((err as Error).stack)}\n`,
  );
  process.exit(isH2labError(err) ? err.exitCode : 1);
}

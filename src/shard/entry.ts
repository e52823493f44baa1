/**
 * A child process of the local runner (src/shard/local.ts): `entry PLAN INDEX DIGEST_FILE` runs one
 * shard and emits exactly what `h2lab shard run` emits in a pod.
 */
import { isH2labError } from '../core/index.ts';
import { runAndEmitShard } from './emit.ts';
import { readPlanFile } from './plan.ts';

const [planPath, index, digestPath] = process.argv.slice(2);
try {
  const plan = readPlanFile(planPath!);
  const { exitCode } = await runAndEmitShard(plan, Number(index), { terminationLog: digestPath! });
  process.exit(exitCode);
} catch (err) {
  process.stderr.write(
    `${isH2labError(err) ? `${err.code}: ${err.message}` : String((err as Error).stack)}\n`,
  );
  process.exit(isH2labError(err) ? err.exitCode : 1);
}

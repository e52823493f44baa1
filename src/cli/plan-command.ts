/**
 * `h2lab plan [URL] --shards N …`: one load run split into a plan (JSON) every shard runs. Its flags
 * are the load run's and the plan's, light to load; the planner loads when the command runs (issue
 * 29). The shards' commands (`shard`, `clock`) and what they share are plan.ts.
 */
import type { Command } from 'commander';
import { writeFileAtomic } from '../core/index.ts';
import { addLoadFlags, type BenchFlags } from './bench.ts';
import { OUT_FLAG } from './common-flags.ts';
import { optionOf } from './flags.ts';
import { addPlanFlags, type PlanFlags } from './plan-flags.ts';

export function register(program: Command): void {
  const plan = addPlanFlags(
    addLoadFlags(
      program
        .command('plan')
        .description(
          'Split one load run into shards for many load machines (JSON plan on stdout or --out); a comparison: h2lab compare --shards N --plan-out FILE',
        )
        .argument('[url]', 'target URL every shard drives'),
    ),
  ).addOption(
    optionOf({ of: OUT_FLAG, arg: 'file', description: 'write the plan here', defaultText: 'stdout' }),
  );
  plan.action(async (url: string | undefined, f: BenchFlags & PlanFlags & { out?: string }) => {
    // The planner (src/shard) loads when the command runs, not with its flags.
    const { planFromFlags } = await import('./plan.ts');
    const p = planFromFlags(url, f);
    const text = `${JSON.stringify(p, null, 2)}\n`;
    if (f.out) writeFileAtomic(f.out, text);
    else process.stdout.write(text);
    process.stderr.write(
      `h2lab plan: run ${p.runId}, ${p.shards} shards (${p.split.mode} loop), start ${new Date(p.startAtEpochMs).toISOString()}, hash ${p.hash.slice(0, 12)}…\n`,
    );
  });
}

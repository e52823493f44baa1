/**
 * `h2lab k8s render|run|clean`: a plan (h2lab plan) as an Indexed Job and a ConfigMap; applied with
 * kubectl, waited for, every shard collected from its pod's log and termination message, merged; and
 * a run's objects removed.
 */
import type { Command } from 'commander';
import { H2labError, parseDurationMs, readFlag, TIMEOUT_FLAG, writeFileAtomic } from '../core/index.ts';
import {
  cleanRun,
  collectRun,
  type KubectlOptions,
  kubectl,
  type ManifestOptions,
  renderManifests,
  renderYaml,
  waitForJob,
} from '../k8s/index.ts';
import { readPlanFile } from '../shard/index.ts';
import {
  CONTEXT_FLAG,
  JSON_FLAG,
  KUBECTL_FLAG,
  NAMESPACE_FLAG,
  OUT_FLAG,
  PLAN_FLAG,
  QUIET_FLAG,
  RUN_ID_FLAG,
} from './common-flags.ts';
import { optionOf } from './flags.ts';
import { addCompareOutputFlags, type CollectedFlags, checkCollectedOutputs, outputShards } from './plan.ts';

interface K8sFlags {
  plan: string;
  image: string;
  command?: string;
  namespace?: string;
  context?: string;
  kubectl?: string;
  activeDeadline?: string;
  ttl?: string;
  cpu?: string;
  memory?: string;
}

function renderOptions(f: K8sFlags): ManifestOptions {
  const o: ManifestOptions = { image: f.image, nowEpochMs: Date.now() };
  if (f.command) o.command = f.command.split(/\s+/).filter(Boolean);
  if (f.namespace) o.namespace = f.namespace;
  if (f.activeDeadline) {
    o.activeDeadlineSeconds = Math.ceil(parseDurationMs(f.activeDeadline, '--active-deadline', 's') / 1000);
  }
  if (f.ttl) o.ttlSecondsAfterFinished = Math.ceil(parseDurationMs(f.ttl, '--ttl', 's') / 1000);
  if (f.cpu || f.memory) {
    const r = { ...(f.cpu ? { cpu: f.cpu } : {}), ...(f.memory ? { memory: f.memory } : {}) };
    // Requests equal to limits: a load generator that is throttled measures itself.
    o.resources = { requests: r, limits: r };
  }
  return o;
}

const kubectlOptions = (f: { context?: string; namespace?: string; kubectl?: string }): KubectlOptions => ({
  ...(f.kubectl ? { kubectl: f.kubectl } : {}),
  ...(f.context ? { context: f.context } : {}),
  ...(f.namespace ? { namespace: f.namespace } : {}),
});

function withRenderFlags(cmd: Command): Command {
  return cmd
    .addOption(optionOf({ of: PLAN_FLAG, required: true }))
    .requiredOption('--image <image>', 'container image with h2lab in it')
    .option('--command <words>', 'how h2lab is started in the image (default: h2lab)')
    .addOption(optionOf(NAMESPACE_FLAG))
    .option(
      '--active-deadline <time>',
      'stop the Job after this long (default: until the start + the run + 5m)',
    )
    .option('--ttl <time>', 'keep the finished Job and its logs this long (default 1h)')
    .option('--cpu <q>', 'CPU request = limit per shard, e.g. 2')
    .option('--memory <q>', 'memory request = limit per shard, e.g. 1Gi');
}

export function register(program: Command): void {
  const k8s = program.command('k8s').description('Run a plan as a Kubernetes Indexed Job');
  withRenderFlags(k8s.command('render').description('Write the Job and ConfigMap of a plan (YAML)'))
    .addOption(
      optionOf({ of: OUT_FLAG, arg: 'file', description: 'write the manifests here', defaultText: 'stdout' }),
    )
    .action((f: K8sFlags & { out?: string }) => {
      const plan = readPlanFile(f.plan);
      const yaml = renderYaml(renderManifests(plan, renderOptions(f)));
      if (f.out) writeFileAtomic(f.out, yaml);
      else process.stdout.write(yaml);
    });
  addCompareOutputFlags(
    withRenderFlags(
      k8s.command('run').description('Apply a plan, wait for its Job, collect every shard, merge'),
    ),
  )
    .addOption(optionOf(CONTEXT_FLAG))
    .addOption(optionOf(KUBECTL_FLAG))
    .addOption(
      optionOf({
        of: TIMEOUT_FLAG,
        description: 'give up waiting after this long',
        defaultText: 'the Job’s deadline + 1m',
      }),
    )
    .addOption(optionOf({ of: JSON_FLAG, description: 'write the merged result (JSON); - for stdout' }))
    .addOption(optionOf(QUIET_FLAG))
    .action(async (f: K8sFlags & CollectedFlags & { timeout?: string }) => {
      const plan = readPlanFile(f.plan);
      checkCollectedOutputs(plan, f);
      const ro = renderOptions(f);
      const leftMs = plan.startAtEpochMs - Date.now();
      if (leftMs < 10_000) {
        throw new H2labError(
          'H2LAB_ERR_INVALID_OPTION',
          `--plan ${f.plan} starts ${leftMs < 0 ? `${Math.round(-leftMs / 1000)} s ago` : `in ${Math.round(leftMs / 1000)} s`}: too soon for pods to be scheduled; write the plan again with a larger --start-in (e.g. 2m) right before k8s run`,
          { option: '--plan', startAtEpochMs: plan.startAtEpochMs },
        );
      }
      const objects = renderManifests(plan, ro);
      const k = kubectlOptions(f);
      const say = (s: string): void => {
        if (!f.quiet) process.stderr.write(`h2lab k8s: ${s}\n`);
      };
      say((await kubectl(['apply', '-f', '-'], k, renderYaml(objects))).trim());
      const job = objects[1] as { spec: { activeDeadlineSeconds: number } };
      const timeoutMs = f.timeout
        ? (readFlag(TIMEOUT_FLAG, f.timeout) as number)
        : (job.spec.activeDeadlineSeconds + 60) * 1000;
      let last = '';
      const end = await waitForJob(plan, k, {
        timeoutMs,
        onStatus: (s) => {
          const line = `${s.active} active, ${s.succeeded} succeeded, ${s.failed} failed of ${plan.shards}`;
          if (line !== last) say(line);
          last = line;
        },
      });
      say(`job ${end.toLowerCase()}; collecting ${plan.shards} shards`);
      const shards = await collectRun(plan, k);
      say(
        `objects kept for ${ro.ttlSecondsAfterFinished ?? 3600} s; h2lab k8s clean --run-id ${plan.runId} removes them now`,
      );
      outputShards(plan, shards, f);
    });
  k8s
    .command('clean')
    .description('Delete the Job, pods and ConfigMap of a run')
    .addOption(optionOf({ of: RUN_ID_FLAG, description: 'the run (its label h2lab.dev/run-id)' }))
    .addOption(optionOf({ of: PLAN_FLAG, description: 'or the plan whose run to delete' }))
    .addOption(optionOf(NAMESPACE_FLAG))
    .addOption(optionOf(CONTEXT_FLAG))
    .addOption(optionOf(KUBECTL_FLAG))
    .action(
      async (f: {
        runId?: string;
        plan?: string;
        namespace?: string;
        context?: string;
        kubectl?: string;
      }) => {
        const runId = f.runId ?? (f.plan ? readPlanFile(f.plan).runId : undefined);
        if (!runId) {
          throw new H2labError('H2LAB_ERR_INVALID_OPTION', 'k8s clean needs --run-id ID or --plan FILE', {
            option: '--run-id',
          });
        }
        process.stdout.write(await cleanRun(runId, kubectlOptions(f)));
      },
    );
}

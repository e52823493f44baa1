/**
 * `h2lab k8s run` and `clean` through kubectl, the client the user already has configured (contexts,
 * credentials, proxies): apply the rendered objects, poll the Job until it completes or fails, read each
 * pod's log and termination message into the shard collector, delete a run's objects by its label.
 */
import { spawn } from 'node:child_process';
import { H2labError } from '../core/index.ts';
import type { AnyPlan, AnyShardResult } from '../model/index.ts';
import { ShardCollector } from '../shard/index.ts';
import { CONTAINER, objectName, RUN_LABEL } from './render.ts';

/** How kubectl is called. */
export interface KubectlOptions {
  /** The executable. Default `kubectl`. */
  kubectl?: string;
  /** `--context`. */
  context?: string;
  /** `--namespace`. */
  namespace?: string;
}

/** Runs kubectl; resolves with its stdout. Throws H2LAB_ERR_KUBECTL quoting the command and its stderr. */
export function kubectl(args: string[], k: KubectlOptions = {}, input?: string): Promise<string> {
  const bin = k.kubectl ?? 'kubectl';
  const full = [
    ...(k.context ? ['--context', k.context] : []),
    ...(k.namespace ? ['--namespace', k.namespace] : []),
    ...args,
  ];
  const shown = `${bin} ${full.join(' ')}`;
  return new Promise((resolve, reject) => {
    const child = spawn(bin, full, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.on('error', (e: NodeJS.ErrnoException) => {
      reject(
        new H2labError(
          'H2LAB_ERR_KUBECTL',
          e.code === 'ENOENT'
            ? `${bin} was not found (not on the PATH, or no such file): install kubectl (Debian: apt-get install kubernetes-client) or pass --kubectl PATH`
            : `${shown} could not start: ${e.message}`,
          { command: shown },
        ),
      );
    });
    child.on('close', (code) => {
      if (code === 0) resolve(out);
      else
        reject(
          new H2labError(
            'H2LAB_ERR_KUBECTL',
            `${shown} failed (exit ${code}): ${err.trim().slice(0, 2000)}`,
            {
              command: shown,
              exit: code,
            },
          ),
        );
    });
    child.stdin.end(input ?? '');
  });
}

/** The part of a Pod that collection reads. */
interface Pod {
  metadata: { name: string; annotations?: Record<string, string> };
  status?: {
    containerStatuses?: Array<{
      name: string;
      state?: { terminated?: { message?: string; exitCode?: number } };
    }>;
  };
}

/** Job conditions a run ends with. */
type JobEnd = 'Complete' | 'Failed';

/**
 * Polls the run's Job until its Complete or Failed condition is true; `onStatus` sees each poll's
 * counts. Throws H2LAB_ERR_KUBECTL after `timeoutMs`.
 */
export async function waitForJob(
  plan: AnyPlan,
  k: KubectlOptions,
  o: {
    timeoutMs: number;
    pollMs?: number;
    onStatus?: (s: { active: number; succeeded: number; failed: number }) => void;
  },
): Promise<JobEnd> {
  const until = Date.now() + o.timeoutMs;
  for (;;) {
    const job = JSON.parse(await kubectl(['get', 'job', objectName(plan), '-o', 'json'], k)) as {
      status?: {
        active?: number;
        succeeded?: number;
        failed?: number;
        conditions?: Array<{ type: string; status: string }>;
      };
    };
    const s = job.status ?? {};
    o.onStatus?.({ active: s.active ?? 0, succeeded: s.succeeded ?? 0, failed: s.failed ?? 0 });
    const end = s.conditions?.find(
      (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
    );
    if (end) return end.type as JobEnd;
    if (Date.now() > until) {
      throw new H2labError(
        'H2LAB_ERR_KUBECTL',
        `job ${objectName(plan)} neither completed nor failed within ${Math.round(o.timeoutMs / 1000)} s: see kubectl describe job ${objectName(plan)}; h2lab k8s clean --run-id ${plan.runId} removes it`,
        { job: objectName(plan) },
      );
    }
    await new Promise((r) => setTimeout(r, o.pollMs ?? 2000));
  }
}

/**
 * Feeds every pod's log and termination message into a collector: a replaced pod's output counts
 * too, so a second pod for one index is named as a duplicate rather than silently preferred.
 */
export function collectFromPods(plan: AnyPlan, pods: Pod[], logs: Map<string, string>): AnyShardResult[] {
  const c = new ShardCollector(plan.runId, plan.shards);
  for (const pod of pods) {
    const log = logs.get(pod.metadata.name);
    if (log !== undefined) c.addText(log);
    const term = pod.status?.containerStatuses?.find((s) => s.name === CONTAINER)?.state?.terminated?.message;
    const index = pod.metadata.annotations?.['batch.kubernetes.io/job-completion-index'] ?? '?';
    if (term) c.addDigest(term, `pod ${pod.metadata.name} (index ${index})'s termination message`);
  }
  return c.results();
}

/** Reads the run's pods, their logs and termination messages, and collects the shards. */
export async function collectRun(plan: AnyPlan, k: KubectlOptions): Promise<AnyShardResult[]> {
  const list = JSON.parse(
    await kubectl(['get', 'pods', '-l', `${RUN_LABEL}=${plan.runId}`, '-o', 'json'], k),
  ) as {
    items: Pod[];
  };
  const logs = new Map<string, string>();
  for (const pod of list.items) {
    try {
      logs.set(
        pod.metadata.name,
        await kubectl(['logs', pod.metadata.name, '-c', CONTAINER, '--tail=-1'], k),
      );
    } catch {
      // A pod that never started has no log; the collector names its shard.
    }
  }
  return collectFromPods(plan, list.items, logs);
}

/** Deletes every object of a run (its Job, the Job's pods, its ConfigMap). */
export function cleanRun(runId: string, k: KubectlOptions): Promise<string> {
  return kubectl(
    ['delete', 'job,configmap', '-l', `${RUN_LABEL}=${runId}`, '--ignore-not-found', '--cascade=background'],
    k,
  );
}

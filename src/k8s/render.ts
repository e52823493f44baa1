/**
 * A plan as Kubernetes objects, rendered rather than hand-written: one Indexed Job whose pod i runs
 * shard i (the Job controller sets JOB_COMPLETION_INDEX), and a ConfigMap holding the plan.
 *
 * Every field that decides how a failure ends is set, not left to defaults:
 * - `completionMode: Indexed`, `parallelism = completions = N`: N pods at once, one per index;
 * - `backoffLimitPerIndex: 0` and `maxFailedIndexes: 0`: a shard is never retried (a retry would miss
 *   the start and send its arrivals late) and one failed shard fails the Job;
 * - `podReplacementPolicy: Failed`: no second pod for an index while the first is still terminating, so
 *   two pods never send the same arrivals;
 * - `podFailurePolicy` fails the whole Job on the missed-start exit status (H2LAB_ERR_SHARD_MISSED_START);
 * - `restartPolicy: Never` (required by the two policies above), `activeDeadlineSeconds` (a stuck run
 *   ends), `ttlSecondsAfterFinished` (the objects go away, after the logs could be read);
 * - the termination message is the shard's digest, read from a file the kubelet keeps (≤ 4096 bytes).
 * k6-operator, by contrast, creates one plain Job per runner and starts them one after the other from a
 * starter pod; here no coordinator starts anything: the shards wait for the plan's start time.
 */
import type * as Yaml from 'yaml';
import { ERROR_CODES, H2labError, lazyModule } from '../core/index.ts';
import type { AnyPlan } from '../model/index.ts';

const yaml = lazyModule<typeof Yaml>('yaml');

/** The label every object of a run carries, with the run id as its value. */
export const RUN_LABEL = 'h2lab.dev/run-id';
/** The shard container's name (the pod failure policy names it). */
export const CONTAINER = 'shard';
/** What Kubernetes keeps in one ConfigMap, bytes (its data and binaryData together). */
const CONFIGMAP_MAX_BYTES = 1_048_576;
/** Where the plan is mounted in a shard's pod. */
const PLAN_MOUNT = '/etc/h2lab';

/** What rendering needs besides the plan. */
export interface ManifestOptions {
  /** The container image: h2lab and a supported Node.js (22 or 24) in it. */
  image: string;
  /** The command that runs h2lab in that image. Default `['h2lab']`. */
  command?: string[];
  /** Namespace of the objects; default: none written (kubectl's current one). */
  namespace?: string;
  /** Seconds after the Job's start before it is stopped. Default: see {@link defaultDeadlineSeconds}. */
  activeDeadlineSeconds?: number;
  /** Seconds the finished Job (and its pods' logs) are kept. Default 3600. */
  ttlSecondsAfterFinished?: number;
  /** When the manifests are rendered, ms since the epoch (the deadline counts from it). */
  nowEpochMs: number;
  /** Container resources, e.g. `{ requests: { cpu: '1' }, limits: { memory: '512Mi' } }`. */
  resources?: Record<string, Record<string, string>>;
}

/** Defaults of {@link ManifestOptions}. */
const RENDER_DEFAULTS = Object.freeze({
  command: ['h2lab'],
  /** s: long enough to read every shard's log after the run, short enough not to pile up. */
  ttlSecondsAfterFinished: 3600,
  /** s: beyond the run's own length: pod start, connection set-up, the last responses, the result. */
  deadlineMarginSeconds: 300,
  /** s: a closed-loop run bounded only by a request count has no length known in advance. */
  unboundedRunSeconds: 3600,
});

/**
 * Seconds from now until the run should be over: until the start, then warm-up plus the measured
 * period (or the requests at the rate) — for a comparison, every slot — plus a margin.
 */
function defaultDeadlineSeconds(plan: AnyPlan, nowEpochMs: number): number {
  let runMs: number;
  if (plan.kind === 'h2lab.compare-plan') {
    runMs = plan.slots.length * plan.slotMs;
  } else {
    const o = plan.options as { durationMs?: number; warmupMs?: number; requests?: number; rateRps?: number };
    runMs =
      (o.warmupMs ?? 0) +
      (o.durationMs ??
        (o.requests !== undefined && o.rateRps !== undefined
          ? (o.requests / o.rateRps) * 1000
          : o.requests !== undefined
            ? RENDER_DEFAULTS.unboundedRunSeconds * 1000
            : 10_000));
  }
  const toStart = Math.max(0, plan.startAtEpochMs - nowEpochMs);
  return Math.ceil((toStart + runMs) / 1000) + RENDER_DEFAULTS.deadlineMarginSeconds;
}

/** The name of a run's Job and ConfigMap. */
export function objectName(plan: AnyPlan): string {
  return `h2lab-${plan.runId}`;
}

/** The ConfigMap and the Job of a plan, as plain objects in apply order. */
export function renderManifests(
  plan: AnyPlan,
  o: ManifestOptions,
): [Record<string, unknown>, Record<string, unknown>] {
  if (!o.image || /\s/.test(o.image)) {
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `--image ${JSON.stringify(o.image)} is not valid: name the container image with h2lab in it, e.g. registry.example/h2lab:0.1.0`,
      { option: '--image', value: o.image },
    );
  }
  const name = objectName(plan);
  const labels = {
    'app.kubernetes.io/name': 'h2lab',
    'app.kubernetes.io/component': 'shard',
    [RUN_LABEL]: plan.runId,
  };
  const metadata = { name, ...(o.namespace ? { namespace: o.namespace } : {}), labels };
  const planText = `${JSON.stringify(plan, null, 2)}\n`;
  const bytes = Buffer.byteLength(planText);
  if (bytes > CONFIGMAP_MAX_BYTES) {
    throw new H2labError(
      'H2LAB_ERR_PLAN_TOO_LARGE',
      `the plan of run ${plan.runId} is ${(bytes / 1_048_576).toFixed(2)} MiB, more than the 1 MiB a ConfigMap holds: plan fewer shards${plan.kind === 'h2lab.compare-plan' ? ', or fewer cells or runs' : ''}`,
      { bytes, limit: CONFIGMAP_MAX_BYTES },
    );
  }
  const configMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { ...metadata, annotations: { 'h2lab.dev/plan-hash': plan.hash } },
    data: { 'plan.json': planText },
  };
  const missedStart = ERROR_CODES.H2LAB_ERR_SHARD_MISSED_START.exit;
  const job = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { ...metadata, annotations: { 'h2lab.dev/plan-hash': plan.hash } },
    spec: {
      completionMode: 'Indexed',
      completions: plan.shards,
      parallelism: plan.shards,
      backoffLimitPerIndex: 0,
      maxFailedIndexes: 0,
      podReplacementPolicy: 'Failed',
      podFailurePolicy: {
        rules: [
          {
            action: 'FailJob',
            onExitCodes: { containerName: CONTAINER, operator: 'In', values: [missedStart] },
          },
        ],
      },
      activeDeadlineSeconds: o.activeDeadlineSeconds ?? defaultDeadlineSeconds(plan, o.nowEpochMs),
      ttlSecondsAfterFinished: o.ttlSecondsAfterFinished ?? RENDER_DEFAULTS.ttlSecondsAfterFinished,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          // Load from many hosts: prefer one shard per node (not required: a small cluster still runs).
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                {
                  weight: 100,
                  podAffinityTerm: {
                    topologyKey: 'kubernetes.io/hostname',
                    labelSelector: { matchLabels: { [RUN_LABEL]: plan.runId } },
                  },
                },
              ],
            },
          },
          containers: [
            {
              name: CONTAINER,
              image: o.image,
              command: o.command ?? RENDER_DEFAULTS.command,
              args: [
                'shard',
                'run',
                '--plan',
                `${PLAN_MOUNT}/plan.json`,
                '--termination-log',
                '/dev/termination-log',
              ],
              terminationMessagePath: '/dev/termination-log',
              terminationMessagePolicy: 'File',
              ...(o.resources ? { resources: o.resources } : {}),
              volumeMounts: [{ name: 'plan', mountPath: PLAN_MOUNT, readOnly: true }],
            },
          ],
          volumes: [{ name: 'plan', configMap: { name } }],
        },
      },
    },
  };
  return [configMap, job];
}

/** Objects as one YAML stream (`---` between documents), as `kubectl apply -f` reads it. */
export function renderYaml(objects: Array<Record<string, unknown>>): string {
  return objects
    .map((o) => yaml().stringify(o, { lineWidth: 0, aliasDuplicateObjects: false }))
    .join('---\n');
}

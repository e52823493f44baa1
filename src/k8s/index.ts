/**
 * A plan on Kubernetes: the Indexed Job and ConfigMap rendered from it, and the kubectl steps that
 * apply them, wait, collect every shard and clean up (docs/kubernetes.md).
 */
export {
  cleanRun,
  collectFromPods,
  collectRun,
  type JobEnd,
  type KubectlOptions,
  kubectl,
  waitForJob,
} from './kubectl.ts';
export {
  CONTAINER,
  defaultDeadlineSeconds,
  type ManifestOptions,
  objectName,
  PLAN_MOUNT,
  RENDER_DEFAULTS,
  RUN_LABEL,
  renderManifests,
  renderYaml,
} from './render.ts';

/**
 * A plan on Kubernetes: the Indexed Job and ConfigMap rendered from it, and the kubectl steps that
 * apply them, wait, collect every shard and clean up (docs/kubernetes.md).
 */
export {
  cleanRun,
  collectFromPods,
  collectRun,
  type KubectlOptions,
  kubectl,
  waitForJob,
} from './kubectl.ts';
export { type ManifestOptions, renderManifests, renderYaml } from './render.ts';

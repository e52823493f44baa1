/**
 * `k8s` in the package's API (`import { k8s } from 'h2lab'`): a plan's Indexed Job and ConfigMap as
 * objects and as YAML (docs/kubernetes.md). The folder's face (src/k8s/index.ts) also runs kubectl
 * for the CLI; only these are the package's promise (docs/api.md).
 */
export { renderManifests, renderYaml } from './k8s/index.ts';

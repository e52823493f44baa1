/** `h2lab shard run|local`: defined with the plan it runs (src/cli/plan.ts). */
export { registerShard as register } from './plan.ts';

/** `h2lab clock serve`: the reference clock of a plan (src/cli/plan.ts). */
export { registerClock as register } from './plan.ts';

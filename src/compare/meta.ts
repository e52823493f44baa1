/**
 * The comparison's light face (docs/design.md, "Start-up: what a command's help loads"): its flags,
 * their defaults and the workloads `--sizes` makes, loading no schema, no zod and no engine. A
 * command's flags import this; what runs a comparison imports src/compare/index.ts.
 */
export * from './flags.ts';
export * from './workloads.ts';

/**
 * The load engine's light face (docs/design.md, "Start-up: what a command's help loads"): the flags of
 * a load run and their defaults, loading no zod, no schema and no transport. A command's `register()`
 * imports this; its action imports src/load/index.ts when it runs.
 */
export * from './flags.ts';

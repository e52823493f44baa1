/**
 * h2lab's shared vocabulary, schema first: what a request yields (Sample), what a run, a comparison,
 * a browser measurement and a probe produce, and the options stored in them. Each is a zod schema with
 * its TypeScript type inferred from it, and a `parse…` function for a value read back from JSON. Every
 * other folder imports it; it imports nothing of h2lab (test/structure.test.ts holds that).
 */
export * from './browser.ts';
export * from './browser-options.ts';
export * from './compare.ts';
export * from './map-session.ts';
export * from './page.ts';
export * from './probe.ts';
export * from './run.ts';
export * from './sample.ts';
export * from './schemas.ts';
export * from './shard.ts';
export * from './study.ts';

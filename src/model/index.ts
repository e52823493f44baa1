/**
 * h2lab's shared vocabulary, schema first: what a request yields (Sample), what a run, a comparison,
 * a browser measurement and a probe produce, and the options stored in them. Every other folder
 * imports it; it imports nothing of h2lab (test/structure.test.ts holds that).
 */
export * from './browser.ts';
export * from './browser-options.ts';
export * from './browser-schema.ts';
export * from './compare.ts';
export * from './probe.ts';
export * from './run.ts';
export * from './run-schema.ts';
export * from './sample.ts';

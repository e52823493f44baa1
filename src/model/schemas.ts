/**
 * Every JSON Schema h2lab publishes, by file name under docs/: `scripts/gen-schemas.ts` writes them
 * (`npm run schema`) and test/model/schemas.test.ts fails when a published file is stale.
 */
import { browserResultJsonSchema } from './browser.ts';
import { compareResultJsonSchema } from './compare.ts';
import { pageResultJsonSchema } from './page.ts';
import { probeResultJsonSchema } from './probe.ts';
import { runResultJsonSchema } from './run.ts';
import { sampleJsonSchema } from './sample.ts';
import { mergedResultJsonSchema } from './shard.ts';
import { studyResultJsonSchema } from './study.ts';

/** The published JSON Schemas (draft 2020-12), keyed by their file name in docs/. */
export function publishedJsonSchemas(): Record<string, Record<string, unknown>> {
  return {
    'run-result.schema.json': runResultJsonSchema(),
    'sample.schema.json': sampleJsonSchema(),
    'compare-result.schema.json': compareResultJsonSchema(),
    'browser-result.schema.json': browserResultJsonSchema(),
    'page-result.schema.json': pageResultJsonSchema(),
    'probe-result.schema.json': probeResultJsonSchema(),
    'study-result.schema.json': studyResultJsonSchema(),
    'merged-result.schema.json': mergedResultJsonSchema(),
  };
}

// Writes docs/run-result.schema.json and docs/sample.schema.json from the zod mirrors in
// src/model/run-schema.ts.
// Usage: npm run schema   (test/report/run-schema.test.ts fails when a file is stale)
import { writeFileSync } from 'node:fs';
import { runResultJsonSchema, sampleJsonSchema } from '../src/model/run-schema.ts';

writeFileSync('docs/run-result.schema.json', `${JSON.stringify(runResultJsonSchema(), null, 2)}\n`);
writeFileSync('docs/sample.schema.json', `${JSON.stringify(sampleJsonSchema(), null, 2)}\n`);

// Writes docs/compare-result.schema.json from the zod schema in src/report/compare-model.ts.
// Usage: npm run schema   (test/report/schema.test.ts fails when the file is stale)
import { writeFileSync } from 'node:fs';
import { compareResultJsonSchema } from '../src/report/compare-model.ts';

writeFileSync('docs/compare-result.schema.json', `${JSON.stringify(compareResultJsonSchema(), null, 2)}\n`);

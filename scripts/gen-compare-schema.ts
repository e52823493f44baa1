// Writes docs/compare-result.schema.json from the zod schema in src/model/compare.ts.
// Usage: npm run schema   (test/report/schema.test.ts fails when the file is stale)
import { writeFileSync } from 'node:fs';
import { compareResultJsonSchema } from '../src/model/compare.ts';

writeFileSync('docs/compare-result.schema.json', `${JSON.stringify(compareResultJsonSchema(), null, 2)}\n`);

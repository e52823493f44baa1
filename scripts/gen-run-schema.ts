// Writes docs/run-result.schema.json from the zod mirror in src/report/run-schema.ts.
// Usage: npm run schema   (test/report/run-schema.test.ts fails when the file is stale)
import { writeFileSync } from 'node:fs';
import { runResultJsonSchema } from '../src/report/run-schema.ts';

writeFileSync('docs/run-result.schema.json', `${JSON.stringify(runResultJsonSchema(), null, 2)}\n`);

// Writes docs/browser-result.schema.json from the zod schema in src/model/browser-schema.ts.
// Usage: npm run schema   (test/browser/cli.test.ts fails when the file is stale)
import { writeFileSync } from 'node:fs';
import { browserResultJsonSchema } from '../src/model/browser-schema.ts';

writeFileSync('docs/browser-result.schema.json', `${JSON.stringify(browserResultJsonSchema(), null, 2)}\n`);

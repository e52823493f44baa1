// Writes every published JSON Schema into docs/ from the zod schemas in src/model/ (the model is the
// one source; see publishedJsonSchemas()). Usage: npm run schema   (test/model/schemas.test.ts fails
// when a file is stale)
import { writeFileSync } from 'node:fs';
import { publishedJsonSchemas } from '../src/model/index.ts';

for (const [file, schema] of Object.entries(publishedJsonSchemas())) {
  writeFileSync(`docs/${file}`, `${JSON.stringify(schema, null, 2)}\n`);
}

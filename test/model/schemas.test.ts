// Every published JSON Schema in docs/ is the one generated from the model's zod schemas
// (`npm run schema` writes them; scripts/gen-schemas.ts), and the list of published files is complete.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { publishedJsonSchemas } from '../../src/model/index.ts';

const schemas = publishedJsonSchemas();

for (const [file, schema] of Object.entries(schemas)) {
  test(`docs/${file} is the generated one (npm run schema)`, () => {
    const published = JSON.parse(readFileSync(`docs/${file}`, 'utf8'));
    assert.deepEqual(published, JSON.parse(JSON.stringify(schema)));
  });
}

test('every docs/*.schema.json is generated from the model', () => {
  const files = readdirSync('docs').filter((f) => f.endsWith('.schema.json'));
  assert.deepEqual(files.sort(), Object.keys(schemas).sort());
});

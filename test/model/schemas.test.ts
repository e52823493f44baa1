// Every published JSON Schema in docs/ is the one generated from the model's zod schemas
// (`npm run schema` writes them; scripts/gen-schemas.ts), and the list of published files is complete.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { type CancelRun, cancelRunSchema, publishedJsonSchemas } from '../../src/model/index.ts';

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

test('a NaN kept in memory (an abort that never ran) is written as null, published as null and parsed back to NaN', () => {
  const run: CancelRun = {
    target: 'https',
    serverMode: 'honour',
    count: 10,
    requestedAbortMs: 60,
    actualAbortMs: Number.NaN,
    issueLoopMs: 1.5,
    browserCanceled: 0,
    browserFailures: {},
    completedBeforeAbort: 10,
    baselineMs: 21,
    wantedMs: 22,
    index: 0,
  };
  const json = JSON.parse(JSON.stringify(run));
  assert.equal(json.actualAbortMs, null);
  assert.ok(Number.isNaN(cancelRunSchema.parse(json).actualAbortMs));
  assert.equal(cancelRunSchema.parse({ ...json, actualAbortMs: 61.2 }).actualAbortMs, 61.2);
  assert.equal(cancelRunSchema.safeParse({ ...json, actualAbortMs: 'never' }).success, false);
  const published = schemas['browser-result.schema.json'] as {
    properties: { cancel: { items: { properties: { actualAbortMs: { type: unknown } } } } };
  };
  assert.deepEqual(published.properties.cancel.items.properties.actualAbortMs.type, ['number', 'null']);
});

// Every error code that appears in the source is documented in docs/errors.md, and every code in the
// registry is used somewhere (a documented code that nothing throws is a lie in the docs).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ERROR_CODES } from '../src/core/errors.ts';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : /\.(ts|mjs|js)$/.test(n) ? [p] : [];
  });
}

test('every H2LAB_ERR_* code in src/ is in the registry and documented in docs/errors.md', () => {
  const doc = readFileSync('docs/errors.md', 'utf8');
  const used = new Set<string>();
  for (const f of sources('src')) {
    for (const m of readFileSync(f, 'utf8').matchAll(/H2LAB_ERR_[A-Z0-9_]+/g)) used.add(m[0]);
  }
  const registry = new Set(Object.keys(ERROR_CODES));
  const notRegistered = [...used].filter((c) => !registry.has(c));
  assert.deepEqual(notRegistered, [], 'codes used in src/ but missing from ERROR_CODES in src/errors.ts');
  const undocumented = [...registry].filter((c) => !new RegExp(`\\b${c}\\b`).test(doc));
  assert.deepEqual(undocumented, [], 'codes missing from docs/errors.md');
});

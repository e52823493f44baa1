// A module exports only what another module takes (docs/design.md, "Names: one per concept"): an
// export no code outside its file uses, and that the package's API does not offer, is surface a
// reader has to learn for nothing. scripts/unused-exports.ts finds them with the TypeScript checker
// (`--fix` removes them); `npm run lint` runs this file.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { removeExports, unusedExports } from '../scripts/unused-exports.ts';

test('no module of src/ exports a name nobody takes', () => {
  assert.deepEqual(
    unusedExports().map((u) => `${u.file}: ${u.name}`),
    [],
    'drop the export (node --import tsx scripts/unused-exports.ts --fix), or use it',
  );
});

test('the check can fail: an export nobody takes is found, through a face, and removed', () => {
  const root = mkdtempSync(join(tmpdir(), 'h2lab-exports-'));
  try {
    const files: Record<string, string> = {
      'tsconfig.json': JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          allowImportingTsExtensions: true,
          noEmit: true,
          strict: true,
        },
        include: ['src'],
      }),
      'src/index.ts': "export { offered } from './a/index.ts';",
      'src/a/index.ts': "export { offered, taken, unwanted } from './x.ts';\nexport { lazy } from './y.ts';",
      'src/a/x.ts':
        'export const offered = 1;\nexport const taken = 2;\nexport const unwanted = 3;\nexport const local = 4;\nexport const viaTest = local;',
      'src/a/y.ts': 'export function lazy(): number { return 5; }\nexport const loose = 6;',
      'src/b/use.ts':
        "import { taken } from '../a/index.ts';\nexport const run = async (): Promise<number> => taken + (await import('../a/y.ts')).lazy();",
      'src/c.test.ts':
        "import { viaTest } from './a/x.ts';\nimport { run } from './b/use.ts';\nvoid [viaTest, run];",
    };
    for (const [f, text] of Object.entries(files)) {
      mkdirSync(join(root, f, '..'), { recursive: true });
      writeFileSync(join(root, f), text);
    }
    const found = unusedExports(root);
    assert.deepEqual(
      found.map((u) => `${u.file}: ${u.name}`),
      [
        'src/a/index.ts: lazy',
        'src/a/index.ts: unwanted',
        'src/a/x.ts: local',
        'src/a/x.ts: unwanted',
        'src/a/y.ts: loose',
      ],
    );
    const fixed = removeExports(found, root);
    assert.equal(fixed.get(join(root, 'src/a/index.ts')), "export { offered, taken } from './x.ts';");
    assert.match(
      fixed.get(join(root, 'src/a/x.ts'))!,
      /^export const offered = 1;\nexport const taken = 2;\nconst unwanted = 3;\nconst local = 4;/,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

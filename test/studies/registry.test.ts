// The studies' registry (src/studies/registry.ts): `h2lab study --help` reads each study's descriptor
// without loading it, and a study runs as what `loadStudy` loads. The two must be the same study:
// the loaded one is built from its descriptor (same name, words and flag declarations), so the help
// describes the flags the run reads.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findStudy, listStudies, loadStudy, registerStudy, type Study } from '../../src/studies/index.ts';

test('every listed study loads as the study its descriptor describes', async () => {
  const names = listStudies().map((d) => d.name);
  assert.deepEqual(names, ['chunks', 'echo', 'proxy', 'tiles']);
  for (const d of listStudies()) {
    assert.equal(findStudy(d.name), d, `findStudy('${d.name}') is the listed descriptor`);
    const study = await loadStudy(d.name);
    assert.ok(study, `${d.name} loads`);
    for (const key of ['name', 'title', 'source', 'question'] as const) assert.equal(study[key], d[key], key);
    // The same declarations, not copies: what the help printed is what the run reads.
    assert.equal(study.flags, d.flags, `${d.name}: the flags are the descriptor's`);
    assert.equal(typeof study.run, 'function', `${d.name}: it runs`);
    assert.equal(typeof study.resolve, 'function', `${d.name}: it resolves its options`);
  }
  assert.equal(findStudy('nope'), undefined);
  assert.equal(await loadStudy('nope'), undefined);
});

test('a study registered whole is listed, found and loaded as itself; a taken name is refused', async () => {
  const mine: Study = {
    name: 'registry-test',
    title: 'A study of the registry',
    source: 'report 999 (a test)',
    question: 'Is a study registered at run time found?',
    async run() {},
  };
  registerStudy(mine);
  assert.equal(listStudies().at(-1), mine);
  assert.equal(findStudy('registry-test'), mine);
  assert.equal(await loadStudy('registry-test'), mine);
  assert.throws(() => registerStudy({ ...mine }), /study registry-test is registered twice/);
  assert.throws(() => registerStudy({ ...mine, name: 'chunks' }), /study chunks is registered twice/);
});

// docs/api.md shows one runnable example per entry of the public API. The examples are files in
// examples/ (type-checked by `npm run lint` with `h2lab` mapped to src/index.ts, as a user's project
// would import the package); this test holds the page and the files together, checks that every
// value the package exports is documented, and runs every example as a user would.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import * as api from '../../src/index.ts';
import { chromiumMissing } from '../browser/helpers.ts';
import { netSkipReason } from '../net/helpers.ts';

const page = readFileSync('docs/api.md', 'utf8');
const examples = readdirSync('examples')
  .filter((f) => f.endsWith('.ts'))
  .sort();

/** What each example must print on its last line, and why it may be skipped here. */
const EXPECT: Record<string, { last: RegExp; skip?: () => string | undefined }> = {
  'serve-and-load.ts': { last: /^ok \d+ of \d+ over h2$/ },
  'probe.ts': { last: /^alpn: h2$/ },
  'compare.ts': { last: /^bulk: (use|depends|undecided|any|not-compared)\b/ },
  'link.ts': { last: /^link 100 ms RTT: p50 \d+\.\d ms$/, skip: netSkipReason },
  'browser.ts': { last: /^targets: /, skip: chromiumMissing },
  'strategies.ts': { last: /^h1, h2, h2-pool, h3, h3-pool$/ },
  'target.ts': { last: /^server answered \d+ tile requests$/ },
  'model.ts': {
    last: /^browser-result\.schema\.json, compare-result\.schema\.json, merged-result\.schema\.json, page-result\.schema\.json, probe-result\.schema\.json, run-result\.schema\.json, sample\.schema\.json, study-result\.schema\.json$/,
  },
};

test('every example is shown in docs/api.md exactly as the file reads', () => {
  assert.ok(examples.length >= 8, 'examples/ holds the API examples');
  for (const f of examples) {
    const body = readFileSync(`examples/${f}`, 'utf8').trimEnd();
    assert.ok(page.includes(`\`\`\`ts\n${body}\n\`\`\``), `docs/api.md must show examples/${f} verbatim`);
    assert.ok(EXPECT[f], `examples/${f} needs an expected output in this test`);
  }
});

/** The package's runtime names, a namespace's members as `shard.planShards`. */
const NAMESPACES: Record<string, object> = { shard: api.shard, k8s: api.k8s };
const runtimeNames = [
  ...Object.keys(api).filter((name) => !(name in NAMESPACES)),
  ...Object.entries(NAMESPACES).flatMap(([ns, members]) =>
    Object.keys(members).map((name) => `${ns}.${name}`),
  ),
];

test('every value the package exports is named in docs/api.md', () => {
  const missing = runtimeNames.filter((name) => !new RegExp(`\\b${name.replace('.', '\\.')}\\b`).test(page));
  assert.deepEqual(missing, []);
});

test('the package exports one render and its plumbing under namespaces: few flat names', () => {
  const flat = Object.keys(api);
  assert.deepEqual(
    flat.filter((name) => /^render/.test(name)),
    ['render', 'renderFormatsOf'],
    'one render(result, format) for every kind of result, not one function per kind and format',
  );
  for (const ns of Object.keys(NAMESPACES)) assert.ok(flat.includes(ns), `the namespace ${ns} is exported`);
  assert.ok(
    flat.length <= 60,
    `the flat API has ${flat.length} runtime names (83 before one render and the namespaces)`,
  );
});

for (const f of examples) {
  const e = EXPECT[f];
  const reason = e?.skip?.();
  test(`examples/${f} runs and prints what docs/api.md says`, { skip: reason }, () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', `examples/${f}`], {
      encoding: 'utf8',
      timeout: 180_000,
    });
    assert.equal(r.status, 0, `exit ${r.status}\n${r.stderr}`);
    const last = r.stdout.trimEnd().split('\n').at(-1) ?? '';
    assert.match(last, e!.last);
  });
}

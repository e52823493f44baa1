// `h2lab --help` and a light command load only what they need: the command named on the command line
// is loaded, the others are listed by their summary (loading them all cost 1.3–4 s before any output).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const hook = fileURLToPath(new URL('../helpers/trace-imports.mjs', import.meta.url));

function loaded(args: string[]): {
  status: number | null;
  files: string[];
  required: string[];
  stdout: string;
} {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--import', hook, 'src/cli/main.ts', ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
  });
  const files = r.stderr
    .split('\n')
    .filter((l) => l.startsWith('import: '))
    .map((l) => l.slice('import: '.length));
  const required = r.stderr
    .split('\n')
    .filter((l) => l.startsWith('require: '))
    .map((l) => l.slice('require: '.length));
  return { status: r.status, files, required, stdout: r.stdout };
}

test('h2lab --help lists every command and loads none of them', () => {
  const r = loaded(['--help']);
  assert.equal(r.status, 0);
  for (const name of ['compare', 'study', 'serve', 'bench', 'report', 'net', 'browser', 'probe', 'certs'])
    assert.match(r.stdout, new RegExp(`^  ${name} `, 'm'), name);
  const heavy = r.files.filter((f) =>
    /playwright|\/src\/(load|compare|studies|browser|transport|h2)\//.test(f),
  );
  assert.deepEqual(heavy, [], 'modules loaded for --help');
});

test('h2lab certs --help loads certs, not the load engine or Playwright', () => {
  const r = loaded(['certs', '--help']);
  assert.equal(r.status, 0);
  assert.match(r.stdout, /--out/);
  assert.ok(r.files.some((f) => f.endsWith('/src/cli/certs.ts')));
  const heavy = r.files.filter((f) => /playwright|\/src\/(load|compare|studies|browser)\//.test(f));
  assert.deepEqual(heavy, []);
});

// Issue 29: `bench --help` and `compare --help` spent 0.3 s evaluating the X.509 stack, the histogram
// package and the YAML parser, none of which a help text (or most runs) uses.
for (const command of ['bench', 'compare']) {
  test(`h2lab ${command} --help loads no X.509, histogram or YAML package`, () => {
    const r = loaded([command, '--help']);
    assert.equal(r.status, 0, `${command} --help exit status`);
    assert.match(r.stdout, /--protocol|--concurrency/, `${command} --help printed its flags`);
    const heavy = [
      ...r.files.filter((f) => /@peculiar|hdr-histogram|\/yaml\//.test(f)),
      ...r.required.filter((n) => /@peculiar|hdr-histogram|^yaml$|^pako$/.test(n)),
    ];
    assert.deepEqual(heavy, [], `packages loaded for ${command} --help`);
  });
}

test('h2lab bench --help loads neither the fixture server nor the report renderers', () => {
  const r = loaded(['bench', '--help']);
  assert.equal(r.status, 0, 'bench --help exit status');
  const heavy = r.files.filter((f) => /\/src\/(server|report)\//.test(f));
  assert.deepEqual(heavy, [], 'modules loaded for bench --help');
});

// Issue 29, the second step: a command's `register()` loads the light faces (src/*/meta.ts) that
// declare its flags, and its action loads the engine. What a help text must not load: zod (95 files),
// any strategy's implementation (the registry reads their descriptors), the model's schemas, the
// comparison engine, the link's implementation. A later static import of any of them fails here.
for (const command of ['bench', 'compare', 'plan']) {
  test(`h2lab ${command} --help loads the flags' declarations only: no zod, strategies, schemas or engine`, () => {
    const r = loaded([command, '--help']);
    assert.equal(r.status, 0, `${command} --help exit status`);
    assert.match(r.stdout, /--protocol|--concurrency/, `${command} --help printed its flags`);
    const heavy = r.files.filter(
      (f) =>
        /\/node_modules\/zod\//.test(f) ||
        /\/src\/transport\/(strategies\/|index\.ts|h[123]-|pool\.ts|connect\.ts)/.test(f) ||
        (/\/src\/model\//.test(f) && !f.endsWith('/src/model/meta.ts')) ||
        /\/src\/(compare|load|net)\/index\.ts/.test(f) ||
        /\/src\/compare\/(engine|run|analyze|inference|options)\.ts/.test(f) ||
        /\/src\/net\/(link|netns|relay|gateway|profiles)\.ts/.test(f),
    );
    assert.deepEqual(heavy, [], `modules loaded for ${command} --help`);
    // The check sees what it is meant to: the light faces are there.
    assert.ok(
      r.files.some((f) => f.endsWith('/src/transport/meta.ts')),
      'the registry was loaded',
    );
  });
}

test('h2lab report --help loads no zod, no comparison analysis and no renderer', () => {
  const r = loaded(['report', '--help']);
  assert.equal(r.status, 0, 'report --help exit status');
  assert.match(r.stdout, /--min-effect/, 'report --help printed its flags');
  const heavy = r.files.filter(
    (f) =>
      /\/node_modules\/zod\//.test(f) || /\/src\/(compare\/index|report\/)|\/src\/model\/(?!meta)/.test(f),
  );
  assert.deepEqual(heavy, [], 'modules loaded for report --help');
});

test('h2lab net run --help loads the link flags only: no zod, no link', () => {
  const r = loaded(['net', 'run', '--help']);
  assert.equal(r.status, 0, 'net run --help exit status');
  assert.match(r.stdout, /--rtt/, 'net run --help printed the link flags');
  const heavy = r.files.filter(
    (f) =>
      /\/node_modules\/zod\//.test(f) || /\/src\/net\/(index|link|netns|relay|gateway|profiles)\.ts/.test(f),
  );
  assert.deepEqual(heavy, [], 'modules loaded for net run --help');
  assert.ok(
    r.files.some((f) => f.endsWith('/src/net/meta.ts')),
    'the light face was loaded',
  );
});

// Issue 29, the studies: `h2lab study --help` and `h2lab study NAME --help` loaded every study's file
// (src/studies/registry.ts imported them) and through them the comparison and load engines,
// Playwright, the renderers and zod: 1.2 s from dist/ to print text. The help reads the studies'
// descriptors (src/studies/meta.ts); a study's file loads when it runs.
const STUDY_HELP_HEAVY: Array<[string, RegExp]> = [
  [
    'a study implementation or the harness',
    /\/src\/studies\/(?!((meta|registry|descriptors|describe|flags)|\w+\/descriptor)\.ts$)/,
  ],
  ["the study command's run", /\/src\/cli\/study-run\.ts$/],
  ['the load engine', /\/src\/load\/(?!(meta|flags)\.ts$)/],
  ['the comparison engine, a link or a transport', /\/src\/(compare|net|transport)\/index\.ts$/],
  ['browser code', /playwright|\/src\/browser\/(?!(meta|flags)\.ts$)/],
  ['report code', /\/src\/report\//],
  ['zod', /\/node_modules\/zod\//],
];
for (const args of [
  ['study', '--help'],
  ['study', 'chunks', '--help'],
]) {
  test(`h2lab ${args.join(' ')} loads the studies' descriptors only: no study, engine, browser or report code`, () => {
    const r = loaded(args);
    assert.equal(r.status, 0, `${args.join(' ')} exit status`);
    assert.match(
      r.stdout,
      args.length === 2 ? /^ {2}tiles \[options\]/m : /--rtt <list>/,
      'the help was printed',
    );
    const heavy = r.files.flatMap((f) =>
      STUDY_HELP_HEAVY.filter(([, re]) => re.test(f)).map(([what]) => `${what}: ${f}`),
    );
    assert.deepEqual(heavy, [], `modules loaded for ${args.join(' ')}`);
    // The check sees what it is meant to: the descriptors are there.
    assert.ok(
      r.files.some((f) => f.endsWith('/src/studies/echo/descriptor.ts')),
      'the descriptors were loaded',
    );
  });
}

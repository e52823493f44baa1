// One meaning per exported name (docs/design.md, "Names: one per concept"): no two modules of src/
// declare an exported type, interface, class, function or constant of the same name. A face that
// re-exports a name (`export { x } from`, or `export { x }` of an import) declares nothing, so a name
// travels through faces without counting twice. Read with the TypeScript parser, not a regex, so a
// name in a comment or a string is not a declaration.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : n.endsWith('.ts') ? [p] : [];
  });
}

const isExported = (s: ts.Statement): boolean =>
  ts.canHaveModifiers(s) && (ts.getModifiers(s) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);

/** The names a module declares and exports (re-exports left out). */
function declaredExports(text: string, file = 'x.ts'): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const imported = new Set<string>();
  const names: string[] = [];
  for (const s of sf.statements) {
    if (ts.isImportDeclaration(s)) {
      const c = s.importClause;
      if (c?.name) imported.add(c.name.text);
      const b = c?.namedBindings;
      if (b && ts.isNamedImports(b)) for (const e of b.elements) imported.add(e.name.text);
      if (b && ts.isNamespaceImport(b)) imported.add(b.name.text);
    }
  }
  for (const s of sf.statements) {
    if (ts.isExportDeclaration(s)) {
      if (s.moduleSpecifier || !s.exportClause || !ts.isNamedExports(s.exportClause)) continue;
      for (const e of s.exportClause.elements) {
        if (!imported.has((e.propertyName ?? e.name).text)) names.push(e.name.text);
      }
      continue;
    }
    if (!isExported(s)) continue;
    if (ts.isVariableStatement(s)) {
      for (const d of s.declarationList.declarations) if (ts.isIdentifier(d.name)) names.push(d.name.text);
    } else if (
      (ts.isFunctionDeclaration(s) ||
        ts.isClassDeclaration(s) ||
        ts.isInterfaceDeclaration(s) ||
        ts.isTypeAliasDeclaration(s) ||
        ts.isEnumDeclaration(s)) &&
      s.name
    ) {
      names.push(s.name.text);
    }
  }
  return [...new Set(names)];
}

/**
 * Names that are one role filled by many modules of the same kind, each found by convention rather
 * than imported beside another: every module that declares one must match its pattern.
 * - `register`: a command's module, which src/cli/commands.ts loads by its name and asks to add the
 *   command to the program.
 * - `resolve`: a study's options resolver (`resolve(given, quick)`), which its study hands to
 *   `defineStudy`; no study imports another's.
 */
const ROLES: Record<string, RegExp> = {
  register: /^src\/cli\/[\w-]+\.ts$/,
  resolve: /^src\/studies\/[\w-]+\/options\.ts$/,
};

/** Each name declared by more than one module, with the modules; the role names left out. */
function namesWithTwoMeanings(modules: ReadonlyMap<string, string>): Map<string, string[]> {
  const byName = new Map<string, string[]>();
  for (const [file, text] of modules) {
    for (const n of declaredExports(text, file)) byName.set(n, [...(byName.get(n) ?? []), file]);
  }
  const twice = new Map<string, string[]>();
  for (const [n, files] of byName) {
    if (files.length < 2) continue;
    const role = ROLES[n];
    if (role && files.every((f) => role.test(f))) continue;
    twice.set(n, files.sort());
  }
  return twice;
}

test('no exported name is declared by two modules of src/', () => {
  const modules = new Map(
    sources('src').map((f) => [relative('.', f).split('\\').join('/'), readFileSync(f, 'utf8')] as const),
  );
  const twice = Object.fromEntries(namesWithTwoMeanings(modules));
  assert.deepEqual(
    twice,
    {},
    'a name with two meanings: rename one (say whose it is: ResultContext, RoundContext), or declare it once and import it',
  );
});

test('the name check can fail: a second declaration is found, a re-export and a role are not', () => {
  const twice = namesWithTwoMeanings(
    new Map([
      ['src/a/x.ts', 'export interface Outcome { a: 1 }\nexport const register = 1;\nconst local = 1;'],
      ['src/b/y.ts', "export type Outcome = 'better';\nexport function register() {}\nconst local = 2;"],
      [
        'src/b/index.ts',
        "export { type Outcome } from './y.ts';\nimport { register } from './y.ts';\nexport { register };",
      ],
      ['src/cli/bench.ts', 'export function register() {}'],
      ['src/cli/serve.ts', 'export function register() {}'],
      ['src/studies/echo/options.ts', 'export function resolve() {}'],
      ['src/studies/tiles/options.ts', '// export function resolve() {}\nexport function resolve() {}'],
    ]),
  );
  assert.deepEqual(Object.fromEntries(twice), {
    Outcome: ['src/a/x.ts', 'src/b/y.ts'],
    register: ['src/a/x.ts', 'src/b/y.ts', 'src/cli/bench.ts', 'src/cli/serve.ts'],
  });
});

// One concept per file name (docs/design.md, "Names: one per concept"): a basename shared by two files
// of src/ must be one of the per-layer concepts design.md's table lists, row by row with its meaning.
/** The basenames design.md's per-layer table names (the backquoted `x.ts` of each row's first cell). */
function perLayerBasenames(design: string): Set<string> {
  const names = new Set<string>();
  const table = design.split('| file names | the one concept, in each folder that has one |')[1] ?? '';
  for (const line of table.split('\n').slice(1)) {
    if (!line.startsWith('|')) break;
    const first = line.split('|')[1] ?? '';
    for (const m of first.matchAll(/`([\w.-]+\.ts)`/g)) names.add(m[1]!);
  }
  return names;
}

/** Each basename held by more than one file and not allowed, with its files. */
function sharedBasenames(files: readonly string[], allowed: ReadonlySet<string>): Map<string, string[]> {
  const byName = new Map<string, string[]>();
  for (const f of files) byName.set(basename(f), [...(byName.get(basename(f)) ?? []), f]);
  return new Map([...byName].filter(([n, fs]) => fs.length > 1 && !allowed.has(n)));
}

test('no two files of src/ share a basename that design.md does not list as one concept per layer', () => {
  const allowed = perLayerBasenames(readFileSync('docs/design.md', 'utf8'));
  assert.ok(
    allowed.has('index.ts') && allowed.size < 50,
    `design.md's per-layer table read: ${[...allowed]}`,
  );
  const files = sources('src').map((f) => relative('.', f).split('\\').join('/'));
  assert.deepEqual(
    Object.fromEntries(sharedBasenames(files, allowed)),
    {},
    "a basename with two meanings: rename one (say whose it is: tiles-page.ts, backend-pool.ts), or add the one concept to design.md's per-layer table",
  );
});

test('the basename check can fail: a shared name is found, a listed one is not', () => {
  const allowed = perLayerBasenames(
    'x\n| file names | the one concept, in each folder that has one |\n|---|---|\n| `index.ts` | a face |\n\n| `pool.ts` | not the table |',
  );
  assert.deepEqual([...allowed], ['index.ts']);
  const shared = sharedBasenames(
    ['src/a/pool.ts', 'src/b/pool.ts', 'src/a/index.ts', 'src/b/index.ts', 'src/c/one.ts'],
    allowed,
  );
  assert.deepEqual(Object.fromEntries(shared), { 'pool.ts': ['src/a/pool.ts', 'src/b/pool.ts'] });
});

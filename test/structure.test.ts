// The shape of src/ (docs/design.md, "Folders and their faces"): every folder is entered through its
// index.ts, src/model and src/core import nothing above them, and neither files nor folders import
// each other in a cycle. Imports are read from the sources, type-only ones included: a type cycle is
// still a knot a reader has to untie.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';

const SRC = resolve('src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : n.endsWith('.ts') ? [p] : [];
  });
}

/** The folder of a file under src/ (`(root)` for src/index.ts). */
function folderOf(file: string): string {
  const parts = relative(SRC, file).split(sep);
  return parts.length > 1 ? parts[0]! : '(root)';
}

/**
 * Relative imports and re-exports of every source file, resolved to absolute paths; with `runtime`,
 * only those that load a module when the file loads (`import type`/`export type` left out).
 */
function importGraph(runtime = false): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const f of sources(SRC)) {
    const text = readFileSync(f, 'utf8');
    const targets = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b([^;]*?)\bfrom\s*'(\.{1,2}\/[^']+)'/g)]
      .filter((m) => !runtime || !/^\s*type\b/.test(m[1]!))
      .map((m) => resolve(dirname(f), m[2]!));
    graph.set(f, targets);
  }
  return graph;
}

/** One cycle of `graph` as a list of nodes, or undefined. */
function findCycle<T>(graph: Map<T, T[]>): T[] | undefined {
  const state = new Map<T, 'open' | 'done'>();
  const stack: T[] = [];
  const visit = (n: T): T[] | undefined => {
    state.set(n, 'open');
    stack.push(n);
    for (const m of graph.get(n) ?? []) {
      if (state.get(m) === 'open') return [...stack.slice(stack.indexOf(m)), m];
      if (!state.has(m)) {
        const c = visit(m);
        if (c) return c;
      }
    }
    stack.pop();
    state.set(n, 'done');
    return undefined;
  };
  for (const n of graph.keys()) {
    if (!state.has(n)) {
      const c = visit(n);
      if (c) return c;
    }
  }
  return undefined;
}

const graph = importGraph();
const rel = (f: string) => relative(process.cwd(), f);

/**
 * A folder's faces: its index.ts, and for a few folders a light face, meta.ts at the folder's top
 * (docs/design.md, "Start-up: what a command's help loads"): what a command's flags need, loading none
 * of the folder's implementation.
 */
function isFace(t: string): boolean {
  if (t.endsWith(`${sep}index.ts`)) return true;
  return t.endsWith(`${sep}meta.ts`) && relative(SRC, t).split(sep).length === 2;
}

test('a folder is entered only through its index.ts (or its light face, meta.ts)', () => {
  const deep: string[] = [];
  for (const [f, targets] of graph) {
    for (const t of targets) {
      if (folderOf(t) !== folderOf(f) && folderOf(t) !== '(root)' && !isFace(t)) {
        deep.push(`${rel(f)} -> ${rel(t)}`);
      }
    }
  }
  assert.deepEqual(deep, [], 'import the folder (its index.ts), not a file inside it');
});

test("a light face (meta.ts) enters other folders only through their light faces or src/core's", () => {
  const loads = importGraph(true);
  const heavy: string[] = [];
  // Within its folder a face may import any file; what those files load across folders counts too.
  // src/h3's index is its binding's loader, which loads the binding only when called.
  const reach = (file: string, seen: Set<string>): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const t of loads.get(file) ?? []) if (folderOf(t) === folderOf(file)) reach(t, seen);
  };
  for (const f of graph.keys()) {
    if (!f.endsWith(`${sep}meta.ts`) || relative(SRC, f).split(sep).length !== 2) continue;
    const seen = new Set<string>();
    reach(f, seen);
    for (const g of seen) {
      for (const t of loads.get(g) ?? []) {
        const to = folderOf(t);
        if (to === folderOf(f) || to === 'core' || to === 'h3' || t.endsWith(`${sep}meta.ts`)) continue;
        heavy.push(`${rel(g)} -> ${rel(t)}`);
      }
    }
  }
  assert.deepEqual(heavy, [], 'a light face that enters a folder through its index.ts loads all of it');
});

/** Which folders each folder may import (docs/design.md, "Folders and their faces"). */
const MAY_IMPORT: Record<string, string[]> = {
  model: [],
  core: [],
  tls: ['core', 'model'],
  h2: ['core', 'model'],
  h3: ['core', 'model'],
  net: ['core', 'model'],
  server: ['core', 'model', 'tls', 'net', 'h3'],
  transport: ['core', 'model', 'h2', 'net', 'h3'],
  load: ['core', 'model', 'tls', 'h2', 'net', 'server', 'transport', 'report'],
  report: ['core', 'model', 'transport'],
  compare: ['core', 'model', 'net', 'server', 'transport', 'load', 'report'],
  browser: ['core', 'model', 'net', 'server', 'tls'],
  probe: ['core', 'model', 'h2', 'tls', 'h3', 'report'],
  page: ['core', 'model', 'tls', 'net', 'server', 'h3', 'compare', 'browser', 'report'],
  studies: [
    'core',
    'model',
    'tls',
    'net',
    'server',
    'transport',
    'load',
    'compare',
    'browser',
    'probe',
    'report',
  ],
  shard: ['core', 'model', 'load', 'transport', 'compare', 'server', 'report'],
  k8s: ['core', 'model', 'shard'],
};

test('each folder imports only the folders design.md allows it', () => {
  const bad: string[] = [];
  for (const [f, targets] of graph) {
    const folder = folderOf(f);
    if (folder === 'cli' || folder === '(root)') continue; // the commands and the package's API
    const allowed = MAY_IMPORT[folder];
    if (!allowed) {
      bad.push(`${rel(f)}: the folder ${folder}/ has no row in docs/design.md and MAY_IMPORT`);
      continue;
    }
    for (const t of targets) {
      const to = folderOf(t);
      if (to !== folderOf(f) && !allowed.includes(to)) bad.push(`${rel(f)} -> ${rel(t)}`);
    }
  }
  assert.deepEqual(
    bad,
    [],
    'a new dependency between folders: add it to docs/design.md and MAY_IMPORT, or move the code',
  );
});

test('src/model imports nothing of h2lab, src/core nothing but itself and the package manifest', () => {
  const bad: string[] = [];
  for (const [f, targets] of graph) {
    const folder = folderOf(f);
    if (folder !== 'model' && folder !== 'core') continue;
    for (const t of targets) if (folderOf(t) !== folder) bad.push(`${rel(f)} -> ${rel(t)}`);
  }
  assert.deepEqual(bad, []);
});

test('no import cycle between files', () => {
  const cycle = findCycle(graph);
  assert.equal(cycle?.map(rel).join(' -> '), undefined);
});

test('no import cycle between folders', () => {
  const folders = new Map<string, string[]>();
  for (const [f, targets] of graph) {
    const a = folderOf(f);
    const out = folders.get(a) ?? [];
    for (const t of targets) if (folderOf(t) !== a && !out.includes(folderOf(t))) out.push(folderOf(t));
    folders.set(a, out);
  }
  assert.equal(findCycle(folders)?.join(' -> '), undefined);
});

test('the checks above can fail: a known cycle and a deep import are found', () => {
  const g = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a']],
  ]);
  assert.deepEqual(findCycle(g), ['a', 'b', 'c', 'a']);
  assert.equal(findCycle(new Map([['a', ['b']]])), undefined);
});

// A study grows by files of its own folder, each one concern (docs/design.md, "Add a study"): a study file
// over 500 lines is a concern that wants a file of its own.
const STUDY_FILE_MAX_LINES = 500;
test(`no file of src/studies over ${STUDY_FILE_MAX_LINES} lines, and every study a folder`, () => {
  const studies = sources(join(SRC, 'studies'));
  const long = studies
    .map((f) => [rel(f), readFileSync(f, 'utf8').split('\n').length] as const)
    .filter(([, n]) => n > STUDY_FILE_MAX_LINES);
  assert.deepEqual(long, [], 'split the file by concern inside its study folder');
  const folders = readdirSync(join(SRC, 'studies')).filter((n) =>
    statSync(join(SRC, 'studies', n)).isDirectory(),
  );
  assert.ok(folders.length >= 4, `the studies' folders: ${folders.join(', ')}`);
  for (const d of folders)
    for (const f of ['descriptor.ts', 'index.ts', 'run.ts'])
      assert.ok(studies.includes(join(SRC, 'studies', d, f)), `src/studies/${d}/${f}`);
});

// docs/design.md cannot drift from the code: every path it names exists, every code symbol it puts
// in backticks is declared by some module, and its may-import table is MAY_IMPORT.
const DESIGN = readFileSync('docs/design.md', 'utf8');

/** Paths the doc names: repository-relative, or relative to src/ (`load/flags.ts`). */
function namedPaths(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(
    /(?<![\w./<-])((?:[\w.-]+\/)+[\w.-]*\.(?:ts|mjs|js|md|json|jsonc|cc|gyp))\b/g,
  )) {
    found.add(m[1]!);
  }
  for (const m of text.matchAll(/`((?:src|test|docs|scripts|bench|native)\/[\w./-]*)`/g)) found.add(m[1]!);
  return [...found];
}

function pathExists(p: string): boolean {
  return [p, join('src', p)].some((q) => {
    try {
      statSync(q);
      return true;
    } catch {
      return false;
    }
  });
}

/** The .ts and .mjs files under a folder. */
function scripts(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? scripts(p) : /\.(ts|mjs)$/.test(n) ? [p] : [];
  });
}

/**
 * Every name declared at the top of a module of src/, the test helpers, the scripts and the benches,
 * exported or not (a module exports only what another takes: test/exports.test.ts), and every name
 * they export.
 */
function declaredNames(): Set<string> {
  const names = new Set<string>();
  const files = ['src', 'test/helpers', 'scripts', 'bench'].flatMap(scripts);
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    const decl =
      /^(?:export\s+)?(?:declare\s+)?(?:default\s+)?(?:async\s+)?(?:abstract\s+)?(?:const|let|function\*?|class|type|interface|enum)\s+(\w+)/gm;
    for (const m of text.matchAll(decl)) names.add(m[1]!);
    for (const m of text.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)) {
      for (const part of m[1]!.split(',')) {
        const name = part
          .trim()
          .split(/\s+as\s+/)
          .pop()
          ?.replace(/^type\s+/, '');
        if (name) names.add(name);
      }
    }
  }
  return names;
}

/**
 * Backticked code symbols: a PascalCase name, an UPPER_SNAKE constant, or a call `name(…)`. Names of
 * the protocols, the kernel and the environment in the same spelling are not h2lab's symbols.
 */
const NOT_SYMBOLS = new Set([
  'SETTINGS_MAX_CONCURRENT_STREAMS',
  'REFUSED_STREAM',
  'TCP_NODELAY',
  'H2LAB_HOME',
]);
function namedSymbols(text: string): string[] {
  const found = new Set<string>();
  for (const span of text.matchAll(/`([^`\n]+)`/g)) {
    const s = span[1]!;
    if (/^--|^-\w$/.test(s)) continue; // a flag
    const whole = /^([A-Za-z_]\w*)(?:\(.*\))?$/.exec(s);
    const candidates = whole ? [whole[1]!] : [...s.matchAll(/(?<![.\w])([A-Za-z_]\w*)\(/g)].map((m) => m[1]!);
    for (const c of candidates) {
      const isCall = s.includes(`${c}(`);
      const pascal = /^[A-Z][a-z0-9]+[A-Z]\w*$|^[A-Z][a-z]+[a-z0-9]*$/.test(c) && /[a-z]/.test(c);
      const constant = /^[A-Z][A-Z0-9]*_[A-Z0-9_]+$/.test(c);
      if ((isCall || pascal || constant) && !NOT_SYMBOLS.has(c) && !c.startsWith('H2LAB_ERR_')) found.add(c);
    }
  }
  return [...found];
}

test('every path docs/design.md names exists', () => {
  const missing = namedPaths(DESIGN).filter((p) => !pathExists(p));
  assert.deepEqual(missing, [], 'docs/design.md names a path that does not exist: fix the doc');
});

test('every code symbol docs/design.md puts in backticks is declared by a module', () => {
  const exported = declaredNames();
  const missing = namedSymbols(DESIGN).filter((s) => !exported.has(s));
  assert.deepEqual(missing, [], 'docs/design.md names a symbol no module declares: fix the doc');
});

test("docs/design.md's may-import table is MAY_IMPORT", () => {
  const folders = Object.keys(MAY_IMPORT);
  const table: Record<string, string[]> = {};
  for (const m of DESIGN.matchAll(/^\| `(\w+)\/` \|[^|]*\| ([^|]*) \|$/gm)) {
    const may = m[2]!.replace(/\([^)]*\)/g, '');
    table[m[1]!] = folders.filter((f) => new RegExp(`\\b${f}\\b`).test(may)).sort();
  }
  for (const f of folders) assert.deepEqual(table[f], [...MAY_IMPORT[f]!].sort(), `the row of ${f}/`);
});

test('the doc checks can fail: a missing path and an unexported symbol are found', () => {
  assert.deepEqual(
    namedPaths('see `src/nowhere/x.ts` and load/flags.ts').filter((p) => !pathExists(p)),
    ['src/nowhere/x.ts'],
  );
  const exported = declaredNames();
  assert.deepEqual(
    namedSymbols('`NoSuchThing`, `runLoad(o)`, `toRunResult`, `h1`, `--rtt`').filter((s) => !exported.has(s)),
    ['NoSuchThing'],
  );
});

// A comment that cites a section of a page of docs/ (`docs/performance.md, "Studies (src/studies)"`)
// names a heading of that page, or the start of one of its bold paragraphs, so a moved section
// cannot leave its citations behind.
const CITATION = /(?:docs\/)?([\w-]+)\.md,\s*"([^"]+)"/g;

/** The citations in a source text that name no heading or bold paragraph of their page. */
function staleCitations(text: string, page: (name: string) => string | undefined): string[] {
  const flat = text.replace(/\n\s*(?:\/\/|\*|#)?\s*/g, ' ');
  const stale: string[] = [];
  for (const m of flat.matchAll(CITATION)) {
    const doc = page(m[1]!);
    if (doc === undefined) continue; // not a page of docs/ (a README elsewhere)
    const cited = m[2]!;
    const found = doc
      .split('\n')
      .some(
        (l) =>
          (/^#+\s/.test(l) && l.replace(/^#+\s+/, '').startsWith(cited)) ||
          (l.replace(/^\s*(?:[-*]\s+)?\*\*/, '').startsWith(cited) && /^\s*(?:[-*]\s+)?\*\*/.test(l)),
      );
    if (!found) stale.push(`${m[1]}.md, "${cited}"`);
  }
  return stale;
}

const docPage = (name: string): string | undefined => {
  try {
    return readFileSync(`docs/${name}.md`, 'utf8');
  } catch {
    return undefined;
  }
};

test('every section of docs/ a comment cites is a heading or a bold paragraph there', () => {
  const stale = ['src', 'test', 'bench', 'scripts']
    .flatMap(scripts)
    .flatMap((f) => staleCitations(readFileSync(f, 'utf8'), docPage).map((c) => `${f}: ${c}`));
  assert.deepEqual(
    stale,
    [],
    'cite the heading as the page has it (a section may have moved to another page)',
  );
});

test('the citation check can fail: a moved section is found, a split line and a bold paragraph are not', () => {
  const page = (n: string) =>
    n === 'p' ? '# P\n## Studies (src/studies)\n- **A bold claim.** text\n' : undefined;
  assert.deepEqual(
    staleCitations(
      '// docs/p.md, "Studies"\n// (docs/p.md, "Studies\n// (src/studies)"; p.md, "A bold claim")',
      page,
    ),
    [],
  );
  assert.deepEqual(staleCitations('/* (docs/p.md, "Fixture server") docs/other.md, "x" */', page), [
    'p.md, "Fixture server"',
  ]);
});

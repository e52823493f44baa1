/**
 * Exports of src/ that no other module takes: an exported declaration, or a face's re-export, that
 * no code outside its own file uses and the package's API (src/index.ts and its two namespaces) does
 * not offer. A use is an identifier in code of src/, test/, bench/, scripts/ or examples/ that
 * resolves to the export, through every face on the way; an import or re-export alone is not one, so
 * a face's re-export that nobody takes is found, and then the name it re-exports. Read with the
 * TypeScript checker, so `import type`, namespace members and destructured dynamic imports count.
 *
 * Run: `node --import tsx scripts/unused-exports.ts` (prints `file: name` lines, exits 1 when any);
 * test/exports.test.ts holds the same check with its allow-list.
 */
import { relative, resolve } from 'node:path';
import ts from 'typescript';

/** One export nobody takes: its module (repository-relative) and its name. */
export interface UnusedExport {
  file: string;
  name: string;
}

/** The package's API: what these modules export is offered to users, so it is used by definition. */
const API_MODULES = ['src/index.ts', 'src/index-shard.ts', 'src/index-k8s.ts'];

function programOf(root: string): ts.Program {
  const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} };
  const cfg = ts.getParsedCommandLineOfConfigFile(resolve(root, 'tsconfig.json'), {}, host);
  if (!cfg) throw new Error('tsconfig.json: unreadable');
  return ts.createProgram(cfg.fileNames, cfg.options);
}

/** Every symbol an alias passes through on the way to its declaration, the alias included. */
function aliasChain(checker: ts.TypeChecker, s: ts.Symbol): ts.Symbol[] {
  const chain = [s];
  let cur = s;
  while (cur.flags & ts.SymbolFlags.Alias) {
    const next = checker.getImmediateAliasedSymbol(cur);
    if (!next || chain.includes(next)) break;
    chain.push(next);
    cur = next;
  }
  return chain;
}

/** Whether `node` is part of an import or export declaration (not a use). */
function inModuleSyntax(node: ts.Node): boolean {
  for (let n: ts.Node | undefined = node.parent; n; n = n.parent) {
    if (ts.isImportDeclaration(n) || ts.isExportDeclaration(n) || ts.isImportEqualsDeclaration(n))
      return true;
    if (ts.isStatement(n) || ts.isSourceFile(n)) return false;
  }
  return false;
}

/** The unused exports of the modules under `root`/src. */
export function unusedExports(root = '.'): UnusedExport[] {
  const program = programOf(root);
  const checker = program.getTypeChecker();
  const rel = (f: string) => relative(resolve(root), f).split('\\').join('/');
  const used = new Set<ts.Symbol>();
  const mark = (s: ts.Symbol | undefined, from: ts.SourceFile) => {
    if (!s) return;
    for (const c of aliasChain(checker, s)) {
      if ((c.declarations ?? []).some((d) => d.getSourceFile() !== from)) used.add(c);
    }
  };
  /**
   * `import('./x.ts')`: what is read from the module is found where it is read (`m.a`, `{ a }`),
   * except where the promise is handed on; then the type it is handed on as names what is taken
   * (commands.ts: `{ register }`), and with no such type every export counts.
   */
  const dynamicImport = (call: ts.CallExpression, sf: ts.SourceFile): void => {
    const arg = call.arguments[0];
    const mod = arg && checker.getSymbolAtLocation(arg);
    if (!mod) return;
    let top: ts.Node = call;
    while (ts.isAwaitExpression(top.parent) || ts.isParenthesizedExpression(top.parent)) top = top.parent;
    const readHere =
      ts.isPropertyAccessExpression(top.parent) ||
      (ts.isVariableDeclaration(top.parent) && ts.isObjectBindingPattern(top.parent.name));
    if (readHere) return;
    const handedAs = checker.getContextualType(call);
    const props = handedAs ? checker.getAwaitedType(handedAs)?.getProperties() : undefined;
    for (const e of checker.getExportsOfModule(mod)) {
      if (!props || props.some((p) => p.name === e.name)) mark(e, sf);
    }
  };
  for (const sf of program.getSourceFiles()) {
    if (sf.isDeclarationFile || rel(sf.fileName).startsWith('node_modules/')) continue;
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        dynamicImport(node, sf);
      }
      if (ts.isIdentifier(node) && !inModuleSyntax(node)) {
        mark(checker.getSymbolAtLocation(node), sf);
        // `{ lease }`: the name is a property, its value the import.
        if (ts.isShorthandPropertyAssignment(node.parent)) {
          mark(checker.getShorthandAssignmentValueSymbol(node.parent), sf);
        }
        // `const { a } = await import('./x.ts')`: the property is the module's export.
        const p = node.parent;
        if (
          ts.isBindingElement(p) &&
          ts.isObjectBindingPattern(p.parent) &&
          (p.propertyName ?? p.name) === node
        ) {
          mark(checker.getTypeAtLocation(p.parent).getProperty(node.text), sf);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  for (const api of API_MODULES) {
    const sf = program.getSourceFile(resolve(root, api));
    const mod = sf && checker.getSymbolAtLocation(sf);
    if (!sf || !mod) continue;
    for (const e of checker.getExportsOfModule(mod)) {
      for (const c of aliasChain(checker, e)) used.add(c);
      // A namespace (`export * as shard`) offers every export of its module.
      const target = aliasChain(checker, e).at(-1)!;
      if (target.flags & ts.SymbolFlags.ValueModule) {
        for (const m of checker.getExportsOfModule(target))
          for (const c of aliasChain(checker, m)) used.add(c);
      }
    }
  }
  const unused: UnusedExport[] = [];
  for (const sf of program.getSourceFiles()) {
    const file = rel(sf.fileName);
    if (!file.startsWith('src/') || API_MODULES.includes(file)) continue;
    const mod = checker.getSymbolAtLocation(sf);
    if (!mod) continue;
    for (const e of checker.getExportsOfModule(mod)) {
      if (!used.has(e)) unused.push({ file, name: e.name });
    }
  }
  return unused.sort((a, b) => a.file.localeCompare(b.file) || a.name.localeCompare(b.name));
}

/**
 * The edits that stop exporting `found`: a re-export's name leaves its list (the list goes when
 * empty), a declaration loses its `export`. A declaration nothing uses any more stays for the
 * linter to name; a variable statement that declares several names keeps its `export` when any is used.
 */
export function removeExports(found: readonly UnusedExport[], root = '.'): Map<string, string> {
  const program = programOf(root);
  const checker = program.getTypeChecker();
  const out = new Map<string, string>();
  const byFile = new Map<string, UnusedExport[]>();
  for (const u of found) byFile.set(u.file, [...(byFile.get(u.file) ?? []), u]);
  for (const [file, list] of byFile) {
    const sf = program.getSourceFile(resolve(root, file));
    const mod = sf && checker.getSymbolAtLocation(sf);
    if (!sf || !mod) continue;
    const names = new Set(list.map((u) => u.name));
    const edits: Array<[number, number, string]> = [];
    for (const e of checker.getExportsOfModule(mod)) {
      if (!names.has(e.name)) continue;
      for (const d of e.declarations ?? []) {
        if (d.getSourceFile() !== sf) continue;
        if (ts.isExportSpecifier(d)) {
          const keep = d.parent.elements.filter((x) => !names.has(x.name.text));
          if (keep.length === 0) edits.push([d.parent.parent.getFullStart(), d.parent.parent.getEnd(), '']);
          else
            edits.push([
              d.parent.getStart(sf),
              d.parent.getEnd(),
              `{ ${keep.map((x) => x.getText(sf)).join(', ')} }`,
            ]);
          continue;
        }
        const stmt = ts.isVariableDeclaration(d) ? d.parent.parent : d;
        if (ts.isVariableStatement(stmt)) {
          const decls = stmt.declarationList.declarations;
          if (decls.some((x) => !ts.isIdentifier(x.name) || !names.has(x.name.text))) continue;
        }
        const mods = ts.canHaveModifiers(stmt) ? (ts.getModifiers(stmt) ?? []) : [];
        const exp = mods.find((m) => m.kind === ts.SyntaxKind.ExportKeyword);
        if (exp) edits.push([exp.getStart(sf), exp.getEnd() + 1, '']);
      }
    }
    const unique = [...new Map(edits.map((c) => [`${c[0]}:${c[1]}`, c])).values()].sort(
      (x, y) => y[0] - x[0],
    );
    let text = sf.text;
    for (const [a, b, r] of unique) text = text.slice(0, a) + r + text.slice(b);
    out.set(resolve(root, file), text);
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const found = unusedExports();
  for (const u of found) console.log(`${u.file}: ${u.name}`);
  if (process.argv.includes('--fix')) {
    const { writeFileSync } = await import('node:fs');
    for (const [file, text] of removeExports(found)) writeFileSync(file, text);
  } else process.exitCode = found.length > 0 ? 1 : 0;
}

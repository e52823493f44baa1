#!/usr/bin/env node
// Runs the compiled CLI in an installed package. In a checkout it runs the compiled copy only when
// `dist/` is at least as new as every source (the rule of src/core/launch.ts, which cannot be used
// here: it is TypeScript), else the sources through tsx, so an old build never hides an edit.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const compiled = join(root, 'dist/cli/main.js');
const sources = join(root, 'src');

function newestMtimeMs(dir) {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtimeMs(p) : statSync(p).mtimeMs);
  }
  return newest;
}

const useCompiled =
  existsSync(compiled) && (!existsSync(sources) || statSync(compiled).mtimeMs >= newestMtimeMs(sources));
if (useCompiled) {
  const { main } = await import(pathToFileURL(compiled).href);
  await main();
} else {
  await import('tsx/esm');
  const { main } = await import(pathToFileURL(join(sources, 'cli/main.ts')).href);
  await main();
}

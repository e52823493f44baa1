/**
 * How h2lab starts Node children that run its own code (the link's relay; src/server's fixture
 * target in a namespace): from `dist/` when it is built and not older than the sources (plain Node starts in a
 * fraction of the time tsx needs, which a link pays on every start), else the TypeScript sources
 * through tsx.
 */
import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let newestSourceMs: number | undefined;

function newestMtimeMs(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtimeMs(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * The argv (`node`, loader flags, file) that runs the module `relPath` of `src/` (e.g.
 * `net/relay-process`), preferring a fresh compiled copy.
 */
export function nodeEntry(relPath: string): string[] {
  const here = fileURLToPath(import.meta.url);
  const fromSources = here.endsWith('.ts');
  const srcRoot = dirname(dirname(here)); // …/src (or …/dist when running compiled)
  if (!fromSources) return [process.execPath, join(srcRoot, `${relPath}.js`)];
  const compiled = join(dirname(srcRoot), 'dist', `${relPath}.js`);
  try {
    newestSourceMs ??= newestMtimeMs(srcRoot);
    if (statSync(compiled).mtimeMs >= newestSourceMs) return [process.execPath, compiled];
  } catch {
    // Not built: run the sources.
  }
  return [process.execPath, '--import', import.meta.resolve('tsx'), join(srcRoot, `${relPath}.ts`)];
}

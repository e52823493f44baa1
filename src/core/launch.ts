/**
 * How h2lab runs its own modules in another thread or process (load workers, the fixture target in a
 * thread or inside a namespace, the link relay), one rule for all: the compiled copy in
 * `dist/` when it is built and not older than any source (plain Node starts in a fraction of the time
 * tsx needs, which a link or a worker pays on every start), else the TypeScript source through tsx.
 * Running from `dist/` already, the compiled sibling is the only choice.
 *
 * `bin/h2lab.js` makes the same choice for the CLI itself before any TypeScript can load, and so cannot
 * use this module.
 */
import type { ChildProcess, Serializable } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/** Where one of h2lab's modules runs from. */
interface ModuleEntry {
  /** Absolute path of the file to run. */
  path: string;
  /** True for a `.ts` source, which needs tsx's hooks. */
  typescript: boolean;
}

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
 * The file that runs module `relPath` of `src/` (no extension, e.g. `net/relay-process`), preferring
 * a fresh compiled copy.
 *
 * @example h2labModule('load/worker-entry').typescript // false once `npm run build` is fresh
 */
function h2labModule(relPath: string): ModuleEntry {
  const here = fileURLToPath(import.meta.url);
  const root = dirname(dirname(here)); // …/src, or …/dist when running compiled
  if (!here.endsWith('.ts')) return { path: join(root, `${relPath}.js`), typescript: false };
  const compiled = join(dirname(root), 'dist', `${relPath}.js`);
  try {
    newestSourceMs ??= newestMtimeMs(root);
    if (statSync(compiled).mtimeMs >= newestSourceMs) return { path: compiled, typescript: false };
  } catch {
    // Not built: run the sources.
  }
  return { path: join(root, `${relPath}.ts`), typescript: true };
}

/**
 * The argv (`node`, loader flags, file) of a child process running module `relPath` of `src/`.
 *
 * @example const [node, ...args] = nodeArgv('net/relay-process'); spawn(node!, args);
 */
export function nodeArgv(relPath: string): string[] {
  const m = h2labModule(relPath);
  return m.typescript
    ? [process.execPath, '--import', import.meta.resolve('tsx'), m.path]
    : [process.execPath, m.path];
}

/**
 * Starts module `relPath` of `src/` in a worker thread with `workerData`. A `.ts` module is loaded
 * through tsx's ESM hooks, registered inside the worker first: Node 20 does not pass `--import`
 * hooks on to workers.
 */
export function startThread(relPath: string, workerData: unknown): Worker {
  const m = h2labModule(relPath);
  const url = pathToFileURL(m.path);
  if (!m.typescript) return new Worker(url, { workerData });
  const api = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(boot, { eval: true, workerData });
}

/**
 * Asks a child process started with an IPC channel to stop (`message` over the channel) and waits
 * until it exits; SIGKILL after `graceMs`, or at once when the channel is gone. Returns at once for a
 * child that already exited.
 */
export async function stopChildProcess(
  c: ChildProcess,
  message: Serializable,
  graceMs = 3000,
): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => c.kill('SIGKILL'), graceMs);
    c.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    try {
      c.send(message);
    } catch {
      c.kill('SIGKILL');
    }
  });
}

/**
 * Starting a worker thread on one of h2lab's modules, from the TypeScript sources (through tsx, as
 * `npm start` and the tests run) or from the built JavaScript in dist/.
 */
import { Worker } from 'node:worker_threads';

/**
 * Starts `moduleUrl` in a worker thread with `workerData`. A `.ts` module is loaded through tsx's
 * ESM hooks, registered inside the worker first (Node 20 does not pass `--import` hooks on to workers).
 */
export function startThread(moduleUrl: URL, workerData: unknown): Worker {
  if (!moduleUrl.pathname.endsWith('.ts')) return new Worker(moduleUrl, { workerData });
  const api = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(moduleUrl.href)}); });`;
  return new Worker(boot, { eval: true, workerData });
}

/**
 * The URL of the module `name` beside the module whose `import.meta.url` is `here`, with the
 * extension this build runs (.ts or .js).
 *
 * @example startThread(siblingModule('worker-entry', import.meta.url), input)
 */
export function siblingModule(name: string, here: string): URL {
  const ext = here.endsWith('.ts') ? '.ts' : '.js';
  return new URL(`./${name}${ext}`, here);
}

/**
 * A dependency loaded on its first use instead of at start-up. Evaluating a package costs time every
 * command pays before its first line of output (`h2lab bench --help` spent 90 ms in hdr-histogram-js
 * and pako, 45 ms in yaml; issue 29); a command that never records a histogram or reads a YAML file
 * should not pay it. Synchronous (`require`), so callers keep synchronous signatures; the packages
 * named here ship CommonJS for Node.
 */
import { createRequire } from 'node:module';

const requireHere = createRequire(import.meta.url);

/**
 * A getter for the package `name`, loaded and cached on the first call. Type it with a type-only
 * import: `import type * as Yaml from 'yaml'; const yaml = lazyModule<typeof Yaml>('yaml');`.
 *
 * @example const yaml = lazyModule<typeof Yaml>('yaml'); yaml().parse('a: 1');
 */
export function lazyModule<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= requireHere(name) as T;
    return loaded;
  };
}

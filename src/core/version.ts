import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';

const require = createRequire(import.meta.url);
/** h2lab's version, from package.json. */
export const VERSION: string = (require('../../package.json') as { version: string }).version;

/**
 * What every result records about the machine that measured it. `cpus` is what this process may run
 * on (its CPU affinity), not every CPU the machine lists.
 */
export function hostFacts(): { h2labVersion: string; node: string; platform: string; cpus: number } {
  return {
    h2labVersion: VERSION,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpus: availableParallelism(),
  };
}

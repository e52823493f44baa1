import { createRequire } from 'node:module';
import { cpus as availableCpusList } from 'node:os';

const availableCpus = () => availableCpusList().length;

const require = createRequire(import.meta.url);
/** h2lab's version, from package.json. */
export const VERSION: string = (require('../../package.json') as { version: string }).version;

/** What every result records about the machine that measured it. */
export function hostFacts(): { h2labVersion: string; node: string; platform: string; cpus: number } {
  return {
    h2labVersion: VERSION,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpus: availableCpus(),
  };
}

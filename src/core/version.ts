import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
/** h2lab's version, from package.json. */
export const VERSION: string = (require('../../package.json') as { version: string }).version;

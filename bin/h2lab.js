#!/usr/bin/env node
// Runs the compiled CLI when present (installed package), else the TypeScript sources through tsx
// (a fresh clone before `npm run build`).
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const compiled = `${root}dist/cli/main.js`;
if (existsSync(compiled)) {
  const { main } = await import(pathToFileURL(compiled).href);
  await main();
} else {
  await import('tsx/esm');
  const { main } = await import(pathToFileURL(`${root}src/cli/main.ts`).href);
  await main();
}

// Writes docs/options.md, every flag of every command, from the command definitions (the same words
// as --help; see renderOptionsReference). Usage: npm run docs:options   (test/docs/options.test.ts
// fails when the page is stale)
import { writeFileSync } from 'node:fs';
import { renderOptionsReference } from '../src/cli/help.ts';
import { buildProgram } from '../src/cli/main.ts';

writeFileSync('docs/options.md', renderOptionsReference(await buildProgram()));

// A module hook that prints every module URL the process resolves to stderr, one "import: URL" line
// each (test/cli/lazy-commands.test.ts reads them to see what a command line loaded).
import { register } from 'node:module';

register(
  `data:text/javascript,${encodeURIComponent(`
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  process.stderr.write('import: ' + r.url + '\\n');
  return r;
}`)}`,
  import.meta.url,
);

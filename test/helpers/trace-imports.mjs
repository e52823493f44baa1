// A module hook that prints every module URL the process resolves to stderr, one "import: URL" line
// each, and every package a CommonJS `require` loads by name, one "require: NAME" line each (src/core's
// lazyModule loads packages that way); test/cli/lazy-commands.test.ts reads them to see what a command
// line loaded.
import { createRequire, register } from 'node:module';

register(
  `data:text/javascript,${encodeURIComponent(`
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  process.stderr.write('import: ' + r.url + '\\n');
  return r;
}`)}`,
  import.meta.url,
);

const Module = createRequire(import.meta.url)('node:module');
const load = Module._load;
Module._load = function traced(request, ...rest) {
  if (!request.startsWith('.') && !request.startsWith('/') && !request.startsWith('node:')) {
    process.stderr.write(`require: ${request}\n`);
  }
  return load.call(this, request, ...rest);
};

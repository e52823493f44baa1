// A module hook that prints every module URL the process resolves to stderr, one "import: URL" line
// each, and every package a CommonJS `require` loads by name, one "require: NAME" line each (src/core's
// lazyModule loads packages that way); test/cli/lazy-commands.test.ts reads them to see what a command
// line loaded.
import * as nodeModule from 'node:module';

const { createRequire, register, registerHooks } = nodeModule;

if (typeof registerHooks === 'function') {
  // Node 22.15+ and 24: a synchronous hook on the loading thread. There an asynchronous `register`
  // hook saw none of the sources tsx loads (Node 24.22.3 printed no line at all).
  registerHooks({
    resolve(specifier, context, next) {
      const r = next(specifier, context);
      process.stderr.write(`import: ${r.url}\n`);
      return r;
    },
  });
} else {
  register(
    `data:text/javascript,${encodeURIComponent(`
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  process.stderr.write('import: ' + r.url + '\\n');
  return r;
}`)}`,
    import.meta.url,
  );
}

const Module = createRequire(import.meta.url)('node:module');
const load = Module._load;
Module._load = function traced(request, ...rest) {
  if (!request.startsWith('.') && !request.startsWith('/') && !request.startsWith('node:')) {
    process.stderr.write(`require: ${request}\n`);
  }
  return load.call(this, request, ...rest);
};

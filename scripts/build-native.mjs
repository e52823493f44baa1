#!/usr/bin/env node
// The package's `install` script: builds h2lab's native addon (native/: TUN devices and fd plumbing
// for the packet relay of `h2lab net`, and the TCP_INFO reading behind every run's
// `connections.tcp`) into native/build. It never fails the install: without a compiler or Node
// headers the rest of h2lab works, runs carry no TCP facts, and the first `h2lab net` tries the build
// again into a per-user cache and, failing, exits 2 with H2LAB_ERR_NET_UNAVAILABLE naming what to
// install. The build itself is src/net/native-build.ts: the compiled copy in an installed package,
// the sources through tsx in a clone (a devDependency, installed before this runs).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const compiled = join(root, 'dist/net/native-build.js');
const say = (text) => process.stderr.write(`h2lab: ${text}\n`);
let mod;
try {
  if (existsSync(compiled)) {
    mod = await import(pathToFileURL(compiled).href);
  } else {
    await import('tsx/esm');
    mod = await import(pathToFileURL(join(root, 'src/net/native-build.ts')).href);
  }
} catch (err) {
  // A clone installed without devDependencies has neither dist/ nor tsx: `h2lab net` builds later.
  say(`native addon not built now (${err.message.split('\n')[0]}); \`h2lab net\` builds it on first use`);
  process.exit(0);
}
const native = join(root, 'native');
const b = mod.buildNativeAddon(native);
if (b.ok) say(`native addon built (${b.path})`);
else {
  say(`native addon not built (${b.reason}; log: ${b.log})`);
  say(`\`h2lab net\` will try again on first use; it needs ${mod.BUILD_NEEDS}`);
}

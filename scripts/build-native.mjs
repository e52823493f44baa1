#!/usr/bin/env node
// Builds h2lab's small native addon (native/: TUN device and fd plumbing for the packet relay of
// `h2lab net`, and the TCP_INFO reading behind every run's `connections.tcp`). Runs as the package's
// `install` script. It never fails the install: without a compiler or Node headers the rest of h2lab
// works, runs carry no TCP facts, and `h2lab net` exits 2 with H2LAB_ERR_NET_UNAVAILABLE naming what
// is missing (the build log is kept in native/build.log).
// Linux only (TUN devices and network namespaces).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const native = join(root, 'native');
const log = join(native, 'build.log');

function say(text) {
  process.stderr.write(`h2lab: ${text}\n`);
}

if (process.platform !== 'linux') {
  say('native addon skipped: network emulation needs Linux');
  process.exit(0);
}

// node-gyp: the copy npm runs scripts with, else npm's bundled one next to this node, else a local one.
function findNodeGyp() {
  const candidates = [process.env.npm_config_node_gyp];
  const prefix = resolve(dirname(process.execPath), '..');
  candidates.push(join(prefix, 'lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js'));
  try {
    candidates.push(createRequire(import.meta.url).resolve('node-gyp/bin/node-gyp.js'));
  } catch {}
  return candidates.find((p) => p && existsSync(p));
}

const gyp = findNodeGyp();
if (!gyp) {
  say('native addon not built: node-gyp not found (it ships with npm); `h2lab net` will be unavailable');
  process.exit(0);
}

const args = [gyp, 'rebuild', '--directory', native];
// node-gyp cannot download headers on a machine without internet access: build against the headers
// of the running Node when they are installed beside it (Debian: /usr/include/node).
const prefix = resolve(dirname(process.execPath), '..');
if (!process.env.npm_config_nodedir && existsSync(join(prefix, 'include/node/node_api.h'))) {
  args.push(`--nodedir=${prefix}`);
}
const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
mkdirSync(native, { recursive: true });
writeFileSync(log, `${r.stdout ?? ''}\n${r.stderr ?? ''}`);
if (r.status === 0 && existsSync(join(native, 'build/Release/h2lab_net.node'))) {
  say('native addon built (native/build/Release/h2lab_net.node)');
} else {
  say(
    `native addon not built (see native/build.log): ${(r.stderr || r.error?.message || '').trim().split('\n').slice(-3).join(' | ')}`,
  );
  say(
    '`h2lab net` will exit 2 with H2LAB_ERR_NET_UNAVAILABLE and runs will carry no TCP_INFO facts; install g++, make and python3, then run `npm run build:native`',
  );
}

/**
 * Building h2lab's native addon (native/: TUN devices, fd plumbing, TCP_INFO) with node-gyp: at
 * install time into the package (`scripts/build-native.mjs`), or on first use of `h2lab net` into a
 * per-user cache when the package has none that loads — a global install whose install script did
 * not run, or a Node of another ABI than the one that installed it. The package never ships a build.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/** The addon's path below a directory holding `binding.gyp`. */
export const ADDON_RELATIVE = 'build/Release/h2lab_net.node';

/** What to install when the build fails, in words a user can act on. */
export const BUILD_NEEDS =
  'a C++ compiler, make and python3 (Debian: apt-get install g++ make python3) and the headers of this Node (beside it, or internet access for node-gyp to fetch them)';

/**
 * The per-user directory the addon is built into on first use: one per platform, architecture and
 * Node ABI (`process.versions.modules`), so a second Node version gets its own build.
 */
export function nativeCacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'h2lab', 'native', `${process.platform}-${process.arch}-abi${process.versions.modules}`);
}

/** node-gyp: the copy npm runs scripts with, else npm's bundled one next to this node, else a local one. */
function findNodeGyp(): string | undefined {
  const prefix = resolve(dirname(process.execPath), '..');
  const candidates = [
    process.env.npm_config_node_gyp,
    join(prefix, 'lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js'),
  ];
  try {
    candidates.push(createRequire(import.meta.url).resolve('node-gyp/bin/node-gyp.js'));
  } catch {}
  return candidates.find((p): p is string => !!p && existsSync(p));
}

/** The outcome of a build: the addon's path, or why there is none (the log is in `dir/build.log`). */
type NativeBuild = { ok: true; path: string } | { ok: false; reason: string; log: string };

/**
 * Builds the addon from the sources in `sourceDir` (binding.gyp, *.cc, *.h) inside `dir` (the same
 * directory, or a fresh one the sources are copied into). Synchronous: it runs once, before a link.
 *
 * @example const b = buildNativeAddon(join(pkg, 'native'), nativeCacheDir()); if (b.ok) require(b.path);
 */
export function buildNativeAddon(sourceDir: string, dir: string = sourceDir): NativeBuild {
  const log = join(dir, 'build.log');
  if (process.platform !== 'linux') return { ok: false, reason: 'network emulation needs Linux', log };
  mkdirSync(dir, { recursive: true });
  if (resolve(dir) !== resolve(sourceDir)) {
    for (const f of readdirSync(sourceDir)) {
      if (f === 'binding.gyp' || f.endsWith('.cc') || f.endsWith('.h'))
        copyFileSync(join(sourceDir, f), join(dir, f));
    }
  }
  const gyp = findNodeGyp();
  if (!gyp) return { ok: false, reason: 'node-gyp not found (it ships with npm)', log };
  const args = [gyp, 'rebuild', '--directory', dir];
  // node-gyp cannot download headers on a machine without internet access: build against the headers
  // of the running Node when they are installed beside it (Debian: /usr/include/node).
  const prefix = resolve(dirname(process.execPath), '..');
  if (!process.env.npm_config_nodedir && existsSync(join(prefix, 'include/node/node_api.h'))) {
    args.push(`--nodedir=${prefix}`);
  }
  const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
  writeFileSync(log, `${r.stdout ?? ''}\n${r.stderr ?? ''}`);
  const path = join(dir, ADDON_RELATIVE);
  if (r.status === 0 && existsSync(path)) return { ok: true, path };
  const tail = (r.stderr || r.error?.message || '').trim().split('\n').slice(-3).join(' | ');
  return { ok: false, reason: tail || `node-gyp exited ${r.status}`, log };
}

#!/usr/bin/env node
// The package's `postinstall` script: puts the HTTP/3 binding (@currentspace/http3) into the
// package's own node_modules, so `npm ci` in a clone and `npm install -g h2lab-….tgz` both bring h3.
// It is not an npm dependency at all: the package declares per-platform optional packages that are
// not on the registry (their binaries ship inside the main package), so npm can never lock it and
// `npm ci` refuses the lockfile; and it declares node >= 24 although it runs on Node 20, which npm 11
// skips silently (docs/performance.md,
// "HTTP/3 (src/h3, strategies h3 and h3-pool, the fixture's QUIC listener)").
// The pin is package.json's `h3Binding` (package, version, integrity): this fetches exactly that
// version with `npm pack`, checks the tarball against the integrity, and unpacks it. Nothing happens
// when it is there already.
//
// It never fails an install: without a registry (or with a tarball that does not match) it prints
// one line saying why and exits 0; h2lab then runs without h3 (not offered, with the reason) and the
// h3 tests skip with it. Run by hand (`node scripts/install-h3.mjs`, which H2LAB_ERR_H3_UNAVAILABLE
// names with its full path), a failure exits 1.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const say = (text) => process.stderr.write(`h2lab: ${text}\n`);
const inLifecycle = process.env.npm_lifecycle_event === 'postinstall';

/**
 * The nested npm: the one running this lifecycle when there is one (npm_execpath), else npm on PATH.
 * npm exports its whole configuration to lifecycle scripts as npm_config_* variables, and the nested
 * npm reads them: the flags override those that would change what `pack` does or prints (`--json`,
 * `--dry-run`, `--global` and `--prefix` of a global install, workspaces); the rest is kept on
 * purpose, since the registry, cache, proxy, CA and offline settings are how it must fetch.
 */
function npmPack(spec, dest) {
  const cli = process.env.npm_execpath;
  const [cmd, pre] = cli && /npm-cli\.[cm]?js$/.test(cli) ? [process.execPath, [cli]] : ['npm', []];
  const out = execFileSync(
    cmd,
    [
      ...pre,
      'pack',
      spec,
      '--pack-destination',
      dest,
      '--json',
      '--dry-run=false',
      '--global=false',
      '--workspaces=false',
      '--ignore-scripts',
      '--loglevel=error',
    ],
    { cwd: dest, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const [info] = JSON.parse(out.slice(out.indexOf('[')));
  return join(dest, info.filename);
}

function install() {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const { package: NAME, version, integrity } = pkg.h3Binding ?? {};
  if (!NAME || !version) throw new Error('package.json has no h3Binding { package, version, integrity }');
  const dest = join(root, 'node_modules', NAME);
  const installed = join(dest, 'package.json');
  if (existsSync(installed) && JSON.parse(readFileSync(installed, 'utf8')).version === version) {
    return `${NAME}@${version} is installed`;
  }
  const [algo, want] = String(integrity ?? '').split('-');
  if (!want) throw new Error(`package.json's h3Binding records no integrity for ${NAME}`);
  const tmp = mkdtempSync(join(tmpdir(), 'h2lab-h3-'));
  try {
    const tgz = npmPack(`${NAME}@${version}`, tmp);
    const got = createHash(algo).update(readFileSync(tgz)).digest('base64');
    if (got !== want)
      throw new Error(`${algo} of ${NAME}@${version}'s tarball is ${got}, not the pinned ${want}`);
    rmSync(dest, { recursive: true, force: true });
    mkdirSync(dest, { recursive: true });
    execFileSync('tar', ['xzf', tgz, '-C', dest, '--strip-components=1']);
    return `${NAME}@${version} unpacked into ${dest} (${algo} integrity checked)`;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Why `npm pack` failed, in npm's words: its error code and the first line that says what failed. */
function npmReason(stderr) {
  const said = stderr
    .split('\n')
    .filter((l) => l.startsWith('npm error '))
    .map((l) => l.slice('npm error '.length).replace(/^(network|notarget) /, ''));
  const code = said.find((l) => l.startsWith('code '))?.slice('code '.length);
  const what = said
    .find((l) => l.trim() && !/^(code|syscall|errno|A complete log)\b|^\s/.test(l))
    ?.replace(/^FetchError: /, '');
  return [code, what].filter(Boolean).join(': ');
}

try {
  say(install());
} catch (err) {
  const why = npmReason(String(err.stderr ?? '')) || String(err.message).split('\n')[0];
  say(
    `HTTP/3 binding not installed (${why}); h3 is not offered until \`node ${join(root, 'scripts', 'install-h3.mjs')}\` succeeds`,
  );
  process.exit(inLifecycle ? 0 : 1);
}

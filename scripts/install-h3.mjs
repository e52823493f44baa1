#!/usr/bin/env node
// Puts the HTTP/3 binding (@currentspace/http3) into node_modules. It is not an npm dependency at
// all: the package declares per-platform optional packages that are not on the registry (their
// binaries ship inside the main package), so npm can never lock it and `npm ci` refuses the
// lockfile; and it declares node >= 24 although it runs on Node 20, which npm 11 skips silently
// (docs/design.md, "HTTP/3"). The pin is package.json's `h3Binding` (package, version, integrity):
// this fetches exactly that version with `npm pack`, checks the tarball against the integrity, and
// unpacks it. Nothing happens when it is there already. h2lab runs without it (h3 is not offered).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const { package: NAME, version, integrity } = pkg.h3Binding ?? {};
if (!NAME || !version) throw new Error('package.json has no h3Binding { package, version, integrity }');
const dest = join(root, 'node_modules', NAME);
const installed = join(dest, 'package.json');
if (existsSync(installed) && JSON.parse(readFileSync(installed, 'utf8')).version === version) {
  console.log(`${NAME}@${version} is installed`);
  process.exit(0);
}
const tmp = mkdtempSync(join(tmpdir(), 'h2lab-h3-'));
try {
  const out = execFileSync('npm', ['pack', `${NAME}@${version}`, '--pack-destination', tmp, '--silent'], {
    cwd: tmp,
    encoding: 'utf8',
  });
  const tgz = join(tmp, out.trim().split('\n').pop());
  const [algo, want] = String(integrity ?? '').split('-');
  if (!want) throw new Error(`package.json's h3Binding records no integrity for ${NAME}`);
  const got = createHash(algo).update(readFileSync(tgz)).digest('base64');
  if (got !== want)
    throw new Error(`${tgz}: ${algo} ${got} is not package.json's h3Binding integrity ${want}`);
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest, { recursive: true });
  execFileSync('tar', ['xzf', tgz, '-C', dest, '--strip-components=1']);
  console.log(`${NAME}@${version} unpacked into node_modules (integrity checked)`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

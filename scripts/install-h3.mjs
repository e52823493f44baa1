#!/usr/bin/env node
// Puts the HTTP/3 binding (@currentspace/http3, an optionalDependency) into node_modules when npm
// did not: npm 11 marks an optional package whose `engines` does not match as inert and skips it
// silently, and this one declares node >= 24 although it runs on Node 20 (docs/design.md, "HTTP/3").
// It fetches the exact version package.json pins with `npm pack`, checks the tarball against the
// integrity package-lock.json recorded, and unpacks it. Nothing happens when it is there already.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const NAME = '@currentspace/http3';
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const version = pkg.optionalDependencies?.[NAME];
if (!version) throw new Error(`package.json has no optionalDependencies entry for ${NAME}`);
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
const integrity = lock.packages?.[`node_modules/${NAME}`]?.integrity;
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
  if (!want) throw new Error(`package-lock.json records no integrity for ${NAME}`);
  const got = createHash(algo).update(readFileSync(tgz)).digest('base64');
  if (got !== want) throw new Error(`${tgz}: ${algo} ${got} is not package-lock.json's ${want}`);
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest, { recursive: true });
  execFileSync('tar', ['xzf', tgz, '-C', dest, '--strip-components=1']);
  console.log(`${NAME}@${version} unpacked into node_modules (integrity checked)`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

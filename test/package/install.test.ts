// The package as a user gets it: `npm pack` of a copy of this checkout, installed globally into a
// temporary prefix with a clean HOME (no ~/.cache/h2lab, no dev certificates), then the installed
// `h2lab` runs serve, bench (over h3 too: its install fetched the binding), compare and net check,
// and a TypeScript program type-checks and runs against the installed API. What the tarball must not carry is checked too: tsx, source maps, a
// native build from the packing machine.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function sh(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
) {
  const r = spawnSync(cmd, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    encoding: 'utf8',
    timeout: opts.timeoutMs ?? 240_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', error: r.error };
}

/** The installed package, as the checks below use it. */
interface Installed {
  tmp: string;
  env: NodeJS.ProcessEnv;
  home: string;
  /** The installed `h2lab` executable and the installed package's directory. */
  bin: string;
  pkgDir: string;
  /** `npm install -g`'s output. */
  install: ReturnType<typeof sh>;
  /** Runs the installed `h2lab` in an empty working directory. */
  run(args: string[], timeoutMs?: number): ReturnType<typeof sh>;
}

/**
 * A copy of the checkout (tracked and new files, as git sees them), so the build and the pack write
 * nothing into the working tree the other tests run from.
 */
function copyCheckout(tmp: string): string {
  const copy = join(tmp, 'src-copy');
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], {
    cwd: repo,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((f) => f && existsSync(join(repo, f)));
  for (const f of files) {
    mkdirSync(dirname(join(copy, f)), { recursive: true });
    cpSync(join(repo, f), join(copy, f));
  }
  symlinkSync(join(repo, 'node_modules'), join(copy, 'node_modules'));
  return copy;
}

/** npm's environment with a clean HOME: npm's download cache and global config kept, h2lab's cache empty. */
function cleanHomeEnv(tmp: string): { env: NodeJS.ProcessEnv; home: string } {
  const cache = sh('npm', ['config', 'get', 'cache']).stdout.trim();
  // `--prefix` moves npm's global config file along with it: keep this machine's (a proxy's CA,
  // say), as a user's global install would read it.
  const globalconfig = sh('npm', ['config', 'get', 'globalconfig']).stdout.trim();
  const home = join(tmp, 'home');
  mkdirSync(home);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    // npm's download cache is kept (no network needed for what `npm ci` fetched); h2lab's own
    // cache (~/.cache/h2lab: dev certificates, a first-use addon build) starts empty.
    npm_config_cache: cache,
    npm_config_globalconfig: globalconfig,
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
  for (const k of ['XDG_CACHE_HOME', 'XDG_CONFIG_HOME', 'npm_config_userconfig', 'npm_config_prefix'])
    delete env[k];
  return { env, home };
}

/** `npm pack` of the copy, and what the tarball must and must not carry. */
function packAndCheck(
  copy: string,
  tmp: string,
  env: NodeJS.ProcessEnv,
): { filename: string; paths: string[] } {
  const pack = sh('npm', ['pack', '--pack-destination', tmp, '--json'], { cwd: copy, env });
  assert.equal(pack.code, 0, pack.stderr.slice(-3000));
  const info = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  const paths = info[0]!.files.map((f) => f.path);
  assert.ok(paths.includes('LICENSE'), 'a LICENSE');
  assert.ok(
    paths.includes('dist/cli/main.js') && paths.includes('dist/index.d.ts'),
    'compiled JavaScript and types',
  );
  assert.deepEqual(
    paths.filter((p) => p.endsWith('.map')),
    [],
    'no source maps (they would point at sources the package does not carry)',
  );
  assert.deepEqual(
    paths.filter((p) => p.startsWith('native/build') || p.endsWith('.node')),
    [],
    'no native build from this machine',
  );
  assert.ok(
    paths.includes('native/binding.gyp') && paths.includes('native/h2lab_net.cc'),
    'the addon sources',
  );
  assert.ok(
    paths.includes('scripts/build-native.mjs') && paths.includes('scripts/install-h3.mjs'),
    'the install scripts (native addon, HTTP/3 binding)',
  );
  assert.ok(!paths.some((p) => p.startsWith('src/') || p.startsWith('test/')), 'no sources or tests');
  const manifest = JSON.parse(
    sh('tar', ['xzOf', join(tmp, info[0]!.filename), 'package/package.json']).stdout,
  );
  assert.equal(manifest.dependencies.tsx, undefined, 'tsx is not a runtime dependency');
  return { filename: info[0]!.filename, paths };
}

/** `npm install -g` of the tarball into a temporary prefix. */
function installGlobally(tmp: string, filename: string, env: NodeJS.ProcessEnv, home: string): Installed {
  const prefix = join(tmp, 'prefix');
  const install = sh('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', join(tmp, filename)], {
    cwd: tmp,
    env,
    timeoutMs: 480_000,
  });
  assert.equal(install.code, 0, install.stderr.slice(-3000));
  const bin = join(prefix, 'bin', 'h2lab');
  const pkgDir = join(prefix, 'lib', 'node_modules', 'h2lab');
  assert.ok(!existsSync(join(pkgDir, 'node_modules', 'tsx')), 'tsx not installed with it');
  const work = join(tmp, 'work');
  mkdirSync(work);
  const run = (args: string[], timeoutMs = 120_000) => sh(bin, args, { cwd: work, env, timeoutMs });
  return { tmp, env, home, bin, pkgDir, install, run };
}

/** serve: the listening lines, then a request, then SIGTERM. */
async function checkServe(i: Installed): Promise<void> {
  const serve = spawn(i.bin, ['serve', '--port', '0', '--tls-port', '0'], {
    cwd: join(i.tmp, 'work'),
    env: i.env,
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`serve did not listen: ${out}`)), 60_000);
      serve.stdout.on('data', (c: Buffer) => {
        out += c;
        const m = /listening (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      serve.once('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
    });
    const res = await fetch(`${url}/bytes/10`);
    assert.equal(res.status, 200);
    assert.equal((await res.arrayBuffer()).byteLength, 10);
  } finally {
    serve.kill('SIGTERM');
  }
}

/**
 * HTTP/3: the package's postinstall fetched the pinned binding into its own node_modules (from npm's
 * cache here, where this checkout's `npm ci` put it), and the installed h2lab speaks h3. Where this
 * checkout has no binding either (no registry at its `npm ci`), there is none to get.
 */
function checkH3(i: Installed, t: TestContext): void {
  const h3 = existsSync(join(repo, 'node_modules', '@currentspace', 'http3', 'package.json'));
  if (h3) {
    assert.ok(
      existsSync(join(i.pkgDir, 'node_modules', '@currentspace', 'http3', 'package.json')),
      `the install fetched the HTTP/3 binding: ${i.install.stdout.slice(-1500)}${i.install.stderr.slice(-1500)}`,
    );
    const benchH3 = i.run(['bench', '--protocol', 'h3', '-d', '1s', '--json', '-', '-q']);
    assert.equal(benchH3.code, 0, benchH3.stderr.slice(-2000));
    const r = JSON.parse(benchH3.stdout);
    assert.ok(r.counts.ok > 0 && r.options.protocol === 'h3', 'an h3 bench completed requests');
  } else t.diagnostic('h3 not checked: this checkout has no HTTP/3 binding (its npm ci had no registry)');
}

/**
 * net check loads the addon: built by the install script when npm ran it, else on this first use into
 * the clean HOME's cache. Either way it must load (when this machine can build it at all).
 */
function checkNetCheck(i: Installed, t: TestContext): void {
  const net = i.run(['net', 'check'], 300_000);
  assert.equal(net.code, 0, net.stderr);
  const canBuild = sh('sh', ['-c', 'command -v g++ && command -v make && command -v python3']).code === 0;
  if (process.platform === 'linux' && canBuild) {
    assert.match(net.stdout, /relay backend +available \(native addon loaded\)/, net.stdout + net.stderr);
    const built = existsSync(join(i.pkgDir, 'native', 'build', 'Release', 'h2lab_net.node'));
    const cached = existsSync(join(i.home, '.cache', 'h2lab', 'native'));
    assert.ok(built || cached, 'built at install or into the cache on first use');
    t.diagnostic(
      built ? 'addon built by the install script' : 'addon built on first use into ~/.cache/h2lab/native',
    );
  }
}

/** The API from the installed package: a TypeScript program type-checks against its types and runs. */
function checkApi(i: Installed): void {
  const { tmp, pkgDir, env } = i;
  const app = join(tmp, 'app');
  mkdirSync(join(app, 'node_modules'), { recursive: true });
  symlinkSync(pkgDir, join(app, 'node_modules', 'h2lab'));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: true,
        outDir: 'out',
        types: [],
      },
      include: ['main.ts'],
    }),
  );
  writeFileSync(
    join(app, 'main.ts'),
    [
      "import { runLoad, startServer, type RunResult } from 'h2lab';",
      "const srv = await startServer({ host: '127.0.0.1', port: 0, tls: false });",
      "const run: RunResult = await runLoad({ url: srv.plainUrl + '/bytes/100', protocol: 'h1', requests: 50 }).done;",
      'await srv.close();',
      'console.log(JSON.stringify({ ok: run.counts.ok }));',
      '',
    ].join('\n'),
  );
  const tsc = sh(process.execPath, [join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], {
    env,
  });
  assert.equal(tsc.code, 0, tsc.stdout + tsc.stderr);
  const out = sh(process.execPath, [join(app, 'out', 'main.js')], { cwd: app, env });
  assert.equal(out.code, 0, out.stderr);
  assert.equal(JSON.parse(out.stdout).ok, 50);
}

test('npm pack → global install on a clean HOME: the installed h2lab and its API work', {
  timeout: 900_000,
}, async (t) => {
  if (spawnSync('git', ['--version']).status !== 0) return t.skip('git is not installed');
  const npm = sh('npm', ['--version']);
  if (npm.code !== 0) return t.skip('npm is not on PATH');
  const tmp = mkdtempSync(join(tmpdir(), 'h2lab-pkg-'));
  try {
    const copy = copyCheckout(tmp);
    const { env, home } = cleanHomeEnv(tmp);
    const { filename, paths } = packAndCheck(copy, tmp, env);
    const i = installGlobally(tmp, filename, env, home);
    const help = i.run(['--help']);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /Usage: h2lab/);

    await checkServe(i);
    const bench = i.run(['bench', '-d', '1s', '--json', '-', '-q']);
    assert.equal(bench.code, 0, bench.stderr.slice(-2000));
    assert.ok(JSON.parse(bench.stdout).counts.ok > 0, 'bench completed requests');

    checkH3(i, t);
    const compare = i.run(
      ['compare', '--runs', '3', '--duration', '200ms', '--concurrency', '1', '--json', '-', '-q'],
      300_000,
    );
    assert.equal(compare.code, 0, compare.stderr.slice(-2000));
    assert.equal(JSON.parse(compare.stdout).kind, 'h2lab.compare');

    checkNetCheck(i, t);
    checkApi(i);
    t.diagnostic(
      `tarball ${filename}: ${paths.length} files; installed in ${readdirSync(join(i.pkgDir, 'node_modules')).length} top-level dependencies`,
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

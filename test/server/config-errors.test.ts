// Bad configuration exits 2 with a message that names the problem, and leaves nothing listening.
// A valid --config file is read with the flags' names and units.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildProgram } from '../../src/cli/main.ts';
import { H2labError } from '../../src/core/errors.ts';
import { type TestCerts, testCerts } from '../helpers/certs.ts';
import { h2lab, h2labServe } from '../helpers/cli.ts';
import { testHome } from '../helpers/fixture.ts';

const home = testHome();
// Two certificate sets: `a` for the files given, `b` for a key of another set.
let a: string;
let b: string;
const sets: TestCerts[] = [];
let blocker: Server;
let usedPort = 0;
let freePort = 0;

before(async () => {
  sets.push(await testCerts(), await testCerts());
  a = sets[0]!.dir;
  b = sets[1]!.dir;
  writeFileSync(join(home, 'garbage.pem'), 'this is not PEM\n');
  blocker = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => blocker.once('listening', r));
  usedPort = (blocker.address() as { port: number }).port;
  const probe = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => probe.once('listening', r));
  freePort = (probe.address() as { port: number }).port;
  await new Promise((r) => probe.close(r));
});
after(() => {
  blocker.close();
  for (const s of sets) s.cleanup();
});

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
}

const cases: Array<{ name: string; args: () => string[]; code: RegExp; names: RegExp }> = [
  {
    name: '--cert without --key',
    args: () => ['--cert', join(a, 'server.pem')],
    code: /H2LAB_ERR_TLS_KEY_MISSING/,
    names: /--key/,
  },
  {
    name: '--key without --cert',
    args: () => ['--key', join(a, 'server-key.pem')],
    code: /H2LAB_ERR_TLS_CERT_MISSING/,
    names: /--cert/,
  },
  {
    name: 'unreadable certificate file',
    args: () => ['--cert', join(home, 'missing.pem'), '--key', join(a, 'server-key.pem')],
    code: /H2LAB_ERR_FILE_UNREADABLE/,
    names: /--cert .*missing\.pem.*ENOENT/,
  },
  {
    name: 'certificate file that is not PEM',
    args: () => ['--cert', join(home, 'garbage.pem'), '--key', join(a, 'server-key.pem')],
    code: /H2LAB_ERR_TLS_BAD_PEM/,
    names: /--cert .*garbage\.pem/,
  },
  {
    name: 'key that does not belong to the certificate',
    args: () => ['--cert', join(a, 'server.pem'), '--key', join(b, 'server-key.pem')],
    code: /H2LAB_ERR_TLS_KEY_MISMATCH/,
    names: /--key .* does not belong to --cert/,
  },
  {
    name: 'port out of range',
    args: () => ['--port', '70000'],
    code: /H2LAB_ERR_INVALID_OPTION/,
    names: /--port 70000/,
  },
  {
    name: 'port that is not a number',
    args: () => ['--port', 'http'],
    code: /H2LAB_ERR_INVALID_OPTION/,
    names: /--port "http"/,
  },
  {
    name: 'bad duration',
    args: () => ['--tile-ms', 'soon'],
    code: /H2LAB_ERR_INVALID_OPTION/,
    names: /--tile-ms "soon"/,
  },
  { name: 'unknown option', args: () => ['--turbo'], code: /H2LAB_ERR_USAGE/, names: /--turbo/ },
  {
    name: 'no listener',
    args: () => ['--no-plain', '--no-tls'],
    code: /H2LAB_ERR_NO_LISTENER/,
    names: /--no-plain and --no-tls/,
  },
  {
    name: 'plain port in use',
    args: () => ['--port', String(usedPort), '--no-tls'],
    code: /H2LAB_ERR_PORT_IN_USE/,
    names: /--port \d+: the port is already in use/,
  },
  {
    name: 'config file with an unknown key',
    args: () => {
      const f = join(home, 'bad.yaml');
      writeFileSync(f, 'port: 0\nturbo: true\n');
      return ['--config', f];
    },
    code: /H2LAB_ERR_CONFIG_FILE/,
    names: /unknown key "turbo"/,
  },
  {
    name: 'config file with a bad value',
    args: () => {
      const f = join(home, 'badval.yaml');
      writeFileSync(f, 'tile-ms: soon\n');
      return ['--config', f];
    },
    code: /H2LAB_ERR_CONFIG_FILE/,
    names: /key "tile-ms".*--tile-ms "soon"/,
  },
];

// In process (fast): the same parse → validate → start path the CLI action runs, up to the error.
describe('h2lab serve: bad configuration is refused with a code and a message that names the problem', () => {
  for (const c of cases) {
    test(c.name, async () => {
      const argv = ['node', 'h2lab', 'serve', '--port', '0', '--tls-port', '0', ...c.args()];
      const err = await (await buildProgram()).parseAsync(argv).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof Error, 'must fail');
      const text =
        err instanceof H2labError ? `${err.code}: ${err.message}` : `H2LAB_ERR_USAGE: ${err.message}`;
      if (err instanceof H2labError) assert.equal(err.exitCode, 2);
      else assert.equal((err as { code?: string }).code, 'commander.unknownOption');
      assert.match(text, c.code);
      assert.match(text, c.names);
    });
  }
});

// As a user runs it: exit status 2, one line on stderr, nothing listening afterwards.
describe('h2lab serve as a process', () => {
  test('--cert without --key: exit 2, one line, no listening line', async () => {
    const r = await h2lab(['serve', '--port', '0', '--cert', join(a, 'server.pem')], { timeoutMs: 60_000 });
    assert.equal(r.code, 2, `exit ${r.code}: ${r.stderr}`);
    assert.match(r.stderr, /^h2lab: H2LAB_ERR_TLS_KEY_MISSING: --cert .* without --key/);
    assert.equal(r.stderr.trim().split('\n').length, 1, 'one line');
    assert.equal(r.stdout, '');
  });

  test('TLS port in use after the plain port opened: exits 2 and the plain port is closed again', async () => {
    const r = await h2lab(['serve', '--port', String(freePort), '--tls-port', String(usedPort)], {
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`H2LAB_ERR_PORT_IN_USE: --tls-port ${usedPort}`));
    assert.ok(await refused(freePort), `nothing may be left listening on ${freePort}`);
  });
});

test('--config YAML uses the long flag names and units; a flag overrides the file', async () => {
  const f = join(home, 'ok.yaml');
  writeFileSync(f, 'port: 0\ntls: false\ntile-ms: 15ms\npool: 3\nmax-concurrent-streams: 7\n');
  const srv = await h2labServe(['--config', f, '--pool', '2'], { tls: false });
  try {
    assert.equal(srv.lines.length, 1, srv.lines.join('\n'));
    assert.match(srv.lines[0]!, /^listening http:\/\/127\.0\.0\.1:\d+ \(http\/1\.1, h2c\)$/);
    const o = (await (await fetch(`${srv.plainUrl}/options`)).json()) as Record<string, unknown>;
    assert.equal(o.poolSize, 2, 'the flag wins over the file');
    assert.equal(o.tileMs, 15, 'tile-ms 15ms from the file');
    assert.equal(o.maxConcurrentStreams, 7);
    assert.equal(o.tls, false);
  } finally {
    await srv.stop();
  }
});

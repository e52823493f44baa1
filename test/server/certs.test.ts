// `h2lab certs` writes a set that openssl accepts: chain verifies, SANs present, client cert has
// clientAuth, keys are 0600, and existing files are not overwritten without --force.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildProgram } from '../../src/cli/main.ts';
import { isH2labError } from '../../src/core/errors.ts';
import { writeCertificates } from '../../src/tls/index.ts';
import { h2lab } from '../helpers/cli.ts';
import { testHome } from '../helpers/fixture.ts';
import { have, run } from '../helpers/peers.ts';

const home = testHome();
const out = join(home, 'set');

test('h2lab certs writes six files, keys 0600', async () => {
  const r = await h2lab(['certs', '--out', out, '--hosts', 'localhost,127.0.0.1,::1,lab.example']);
  assert.equal(r.code, 0, r.stderr);
  for (const f of ['ca.pem', 'ca-key.pem', 'server.pem', 'server-key.pem', 'client.pem', 'client-key.pem']) {
    const mode = statSync(join(out, f)).mode & 0o777;
    assert.equal(mode, f.endsWith('-key.pem') ? 0o600 : 0o644, `${f} mode ${mode.toString(8)}`);
  }
});

test('openssl verifies the chain, sees the SANs and the usages', {
  skip: have('openssl', 'version') ? false : 'openssl is not installed',
}, async () => {
  const v = await run('openssl', [
    'verify',
    '-CAfile',
    join(out, 'ca.pem'),
    join(out, 'server.pem'),
    join(out, 'client.pem'),
  ]);
  assert.equal(v.code, 0, v.stdout + v.stderr);
  const s = await run('openssl', ['x509', '-in', join(out, 'server.pem'), '-noout', '-text']);
  assert.match(
    s.stdout,
    /DNS:localhost, IP Address:127\.0\.0\.1, IP Address:0:0:0:0:0:0:0:1, DNS:lab\.example/,
  );
  assert.match(s.stdout, /TLS Web Server Authentication/);
  const c = await run('openssl', ['x509', '-in', join(out, 'client.pem'), '-noout', '-text']);
  assert.match(c.stdout, /TLS Web Client Authentication/);
  const k = await run('sh', [
    '-c',
    `openssl x509 -in ${join(out, 'server.pem')} -pubkey -noout; openssl pkey -in ${join(out, 'server-key.pem')} -pubout`,
  ]);
  const keys = k.stdout.split('-----END PUBLIC KEY-----').filter((x) => x.trim());
  assert.equal(keys[0]?.trim(), keys[1]?.trim(), 'server-key.pem belongs to server.pem');
});

test('refuses to overwrite without --force (exit 2, names the option), overwrites with it', async () => {
  await assert.rejects(writeCertificates({ out }), (e: unknown) => {
    assert.ok(isH2labError(e, 'H2LAB_ERR_CERTS_EXIST'));
    assert.equal(e.exitCode, 2);
    assert.match(e.message, /--out .* --force/);
    return true;
  });
  const before = readFileSync(join(out, 'ca.pem'), 'utf8');
  await writeCertificates({ out, force: true });
  assert.notEqual(readFileSync(join(out, 'ca.pem'), 'utf8'), before, 'a new CA was written');
});

test('bad --hosts and missing --out are usage errors', async () => {
  await assert.rejects(
    writeCertificates({ out: join(home, 'x'), hosts: 'not a host' }),
    /--hosts "not a host" is not valid/,
  );
  const err = await (await buildProgram()).parseAsync(['node', 'h2lab', 'certs']).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(isH2labError(err, 'H2LAB_ERR_USAGE'));
  assert.match(err.message, /--out/);
});

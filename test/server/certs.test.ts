// `h2lab certs` writes a set that openssl accepts: chain verifies, SANs present, client cert has
// clientAuth, keys are 0600, and existing files are not overwritten without --force.
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { h2lab, have, run, tempHome } from './helpers.ts';

const home = tempHome();
after(() => home.cleanup());
const out = join(home.dir, 'set');

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
  const r = await h2lab(['certs', '--out', out]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /H2LAB_ERR_CERTS_EXIST: --out .* --force/);
  const f = await h2lab(['certs', '--out', out, '--force']);
  assert.equal(f.code, 0, f.stderr);
});

test('bad --hosts and missing --out are usage errors', async () => {
  const bad = await h2lab(['certs', '--out', join(home.dir, 'x'), '--hosts', 'not a host']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /H2LAB_ERR_INVALID_OPTION: --hosts "not a host"/);
  const none = await h2lab(['certs']);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /--out/);
});

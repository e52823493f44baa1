// mTLS on the TLS port, judged by curl: with `require`, no client certificate or one from another CA
// is refused during the handshake; the right one gets 200. With `request`, no certificate is fine but
// a wrong one is still refused.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { generateCertificates, writeCertificateSet } from '../../src/tls/index.ts';
import { curl, have, tempHome } from './helpers.ts';

const home = tempHome();
const good = join(home.dir, 'good');
const other = join(home.dir, 'other');

before(async () => {
  writeCertificateSet(good, await generateCertificates());
  writeCertificateSet(other, await generateCertificates());
});
after(() => home.cleanup());

const skip = have('curl') ? false : 'curl is not installed';
for (const mode of ['require', 'request'] as const) {
  describe(`--client-auth ${mode}`, { skip }, () => {
    let srv: RunningServer;
    before(async () => {
      srv = await startServer({
        plain: false,
        tlsPort: 0,
        cert: join(good, 'server.pem'),
        key: join(good, 'server-key.pem'),
        ca: join(good, 'ca.pem'),
        clientAuth: mode,
      });
    });
    after(() => srv.close(200));
    const base = () => ['--cacert', join(good, 'ca.pem'), `${srv.tlsUrl}/healthz`];

    for (const proto of [[], ['--http1.1']]) {
      const label = proto.length ? 'HTTP/1.1' : 'h2';
      test(`${label}: the right client certificate gets 200`, async () => {
        const r = await curl([
          ...proto,
          '--cert',
          join(good, 'client.pem'),
          '--key',
          join(good, 'client-key.pem'),
          ...base(),
        ]);
        assert.equal(r.status, 200, r.run.stderr);
        assert.equal(r.body, 'ok\n');
      });
      test(`${label}: a certificate from another CA is refused`, async () => {
        const r = await curl([
          ...proto,
          '--cert',
          join(other, 'client.pem'),
          '--key',
          join(other, 'client-key.pem'),
          ...base(),
        ]);
        assert.notEqual(r.run.code, 0, 'curl must fail');
        assert.equal(r.status, 0);
      });
      test(`${label}: no client certificate is ${mode === 'require' ? 'refused' : 'accepted'}`, async () => {
        const r = await curl([...proto, ...base()]);
        if (mode === 'require') {
          assert.notEqual(r.run.code, 0, 'curl must fail');
          assert.equal(r.status, 0);
        } else assert.equal(r.status, 200, r.run.stderr);
      });
    }
  });
}

test('--client-auth without --ca is refused before listening', async () => {
  await assert.rejects(
    startServer({ plain: false, tlsPort: 0, clientAuth: 'require' }),
    /--client-auth "require" is not valid: mTLS needs --ca/,
  );
});

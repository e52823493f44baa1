// mTLS on the TLS port, judged by curl: with `require`, no client certificate or one from another CA
// is refused during the handshake; the right one gets 200. With `request`, no certificate is fine but
// a wrong one is still refused.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RunningServer } from '../../src/server/index.ts';
import { type TestCerts, testCerts } from '../helpers/certs.ts';
import { startFixture } from '../helpers/fixture.ts';
import { curl, have } from '../helpers/peers.ts';

let good: TestCerts;
let other: TestCerts;

before(async () => {
  good = await testCerts();
  other = await testCerts();
});
after(() => {
  good.cleanup();
  other.cleanup();
});

const skip = have('curl') ? false : 'curl is not installed';
for (const mode of ['require', 'request'] as const) {
  describe(`--client-auth ${mode}`, { skip }, () => {
    let srv: RunningServer;
    before(async () => {
      srv = await startFixture({
        plain: false,
        cert: good.path.serverPem,
        key: good.path.serverKeyPem,
        ca: good.path.caPem,
        clientAuth: mode,
      });
    });
    after(() => srv.close(200));
    const base = () => ['--cacert', good.path.caPem, `${srv.tlsUrl}/healthz`];

    for (const proto of [[], ['--http1.1']]) {
      const label = proto.length ? 'HTTP/1.1' : 'h2';
      test(`${label}: the right client certificate gets 200`, async () => {
        const r = await curl([
          ...proto,
          '--cert',
          good.path.clientPem,
          '--key',
          good.path.clientKeyPem,
          ...base(),
        ]);
        assert.equal(r.status, 200, r.run.stderr);
        assert.equal(r.body, 'ok\n');
      });
      test(`${label}: a certificate from another CA is refused`, async () => {
        const r = await curl([
          ...proto,
          '--cert',
          other.path.clientPem,
          '--key',
          other.path.clientKeyPem,
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
    startFixture({ plain: false, clientAuth: 'require' }),
    /--client-auth "require" is not valid: mTLS needs --ca/,
  );
});

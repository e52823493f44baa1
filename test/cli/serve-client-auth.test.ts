/**
 * `serve --client-auth require` with the plain port open says so: mTLS guards the TLS port only.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testCerts } from '../helpers/certs.ts';
import { h2labServe } from '../helpers/cli.ts';

test('serve --client-auth require warns on stderr that the plain port takes anyone; --no-plain does not', async () => {
  const certs = await testCerts();
  try {
    const both = await h2labServe([
      '--port',
      '0',
      '--tls-port',
      '0',
      '--client-auth',
      'require',
      '--ca',
      certs.path.caPem,
    ]);
    const r = await both.stop();
    assert.match(
      r.stderr,
      /warning: --client-auth require applies to https:\/\/\S+ only; http:\/\/\S+ serves clients without a certificate \(pass --no-plain/,
    );
    const tlsOnly = await h2labServe([
      '--no-plain',
      '--tls-port',
      '0',
      '--client-auth',
      'require',
      '--ca',
      certs.path.caPem,
    ]);
    const r2 = await tlsOnly.stop();
    assert.doesNotMatch(r2.stderr, /warning/);
  } finally {
    certs.cleanup();
  }
});

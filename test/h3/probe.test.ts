// probe: whether a server offers HTTP/3 — its Alt-Svc and a real QUIC handshake to the port it names.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadBinding } from '../../src/h3/index.ts';
import { probe, renderProbeText } from '../../src/probe/index.ts';
import { altSvcH3Port } from '../../src/probe/quic.ts';
import { startFixture } from '../helpers/fixture.ts';

const skip = await loadBinding().then(
  () => undefined,
  (err: Error) => err.message,
);

test('Alt-Svc h3 ports: the same host only', () => {
  assert.equal(altSvcH3Port('h3=":8443"; ma=86400'), 8443);
  assert.equal(altSvcH3Port('h2=":443", h3=":4433"'), 4433);
  assert.equal(altSvcH3Port('h3="other.example:443"'), undefined);
  assert.equal(altSvcH3Port('clear'), undefined);
});

test('a fixture serving h3: Alt-Svc names it and the QUIC handshake chooses h3', { skip }, async () => {
  const srv = await startFixture({ h3: true });
  try {
    const r = await probe(`${srv.tlsUrl}/`, { ca: srv.caFile!, timeoutMs: 2000 });
    assert.deepEqual(r.protocols.altSvc?.protocols, ['h3']);
    assert.equal(r.protocols.h3?.supported, true, r.protocols.h3?.detail);
    assert.match(r.protocols.h3!.detail, /from Alt-Svc/);
    assert.match(renderProbeText(r), /h3 \(QUIC\)/);
  } finally {
    await srv.close();
  }
});

test('a fixture without h3: no Alt-Svc, and no QUIC answer on the URL port', { skip }, async () => {
  const srv = await startFixture();
  try {
    const r = await probe(`${srv.tlsUrl}/`, { ca: srv.caFile!, timeoutMs: 800 });
    assert.equal(r.protocols.altSvc, null);
    assert.equal(r.protocols.h3?.supported, false, r.protocols.h3?.detail);
  } finally {
    await srv.close();
  }
});

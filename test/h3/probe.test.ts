// probe: whether a server offers HTTP/3 — its Alt-Svc and a real QUIC handshake to the port it names.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { probe, renderProbeText } from '../../src/probe/index.ts';
import {
  altSvcH3Port,
  parseNgtcp2TransportParameters,
  quicTransportParameters,
} from '../../src/probe/quic.ts';
import { startFixture } from '../helpers/fixture.ts';
import { have } from '../helpers/peers.ts';
import { h3SkipReason } from './helpers.ts';

const skip = await h3SkipReason();

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

const noNgtcp2 = have('gtlsclient', '--help') ? undefined : 'ngtcp2-client (gtlsclient) is not installed';

test("the server's QUIC transport parameters, read by ngtcp2's client: the stream limit is the server's --max-concurrent-streams", {
  skip: skip ?? noNgtcp2,
}, async () => {
  const srv = await startFixture({ h3: true, maxConcurrentStreams: 77 });
  try {
    const r = await probe(`${srv.tlsUrl}/`, { ca: srv.caFile!, timeoutMs: 2000 });
    assert.equal(r.protocols.h3?.supported, true, r.protocols.h3?.detail);
    const tp = r.quic?.transportParameters;
    assert.ok(tp, r.quic?.via);
    assert.equal(tp.initial_max_streams_bidi, 77);
    assert.equal(typeof tp.initial_max_data, 'number');
    assert.match(r.quic!.via, /gtlsclient/);
    const text = renderProbeText(r);
    assert.match(text, /QUIC transport parameters sent by the server/);
    assert.match(text, /initial_max_streams_bidi\s+77/);
    // The fixture's HTTP/2 stream window is 64 KiB, its QUIC one far larger: said, with both numbers.
    const f = r.findings.find((x) => x.id === 'h2-h3-window-asymmetry');
    assert.ok(f, r.findings.map((x) => x.id).join());
    assert.match(f.text, /64\.0 KiB over HTTP\/2/);
  } finally {
    await srv.close();
  }
});

test("without ngtcp2's client the parameters are null with how to get them; its log lines parse", async () => {
  const r = await quicTransportParameters('127.0.0.1', 9, '/', 500, 'h2lab-no-such-gtlsclient');
  assert.equal(r.transportParameters, null);
  assert.match(r.via, /not installed \(Debian\/Ubuntu: apt-get install ngtcp2-client\)/);
  assert.deepEqual(
    parseNgtcp2TransportParameters(
      'I00000003 0x41 cry remote transport_parameters initial_max_streams_bidi=250\nI00000003 0x41 cry remote transport_parameters initial_source_connection_id=0xca0c\nI0 0x41 cry local transport_parameters initial_max_data=1\n',
    ),
    { initial_max_streams_bidi: 250, initial_source_connection_id: '0xca0c' },
  );
});

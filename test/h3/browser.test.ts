// Chromium over HTTP/3 to the fixture: the h3 target's Chromium forces QUIC to the TLS origin
// (--origin-to-force-quic-on, the certificate pinned by SPKI) and CDP reports h3 for every request,
// while the https:// target's Chromium (QUIC off) stays on h2; the server counts each as it came.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { measureBrowser } from '../../src/browser/index.ts';
import { chromiumMissing } from '../browser/helpers.ts';
import { startFixture } from '../helpers/fixture.ts';
import { h3SkipReason } from './helpers.ts';

test('browser: the h3 target negotiates h3 on every request, the h2 target h2', async (t) => {
  const skip = chromiumMissing() ?? (await h3SkipReason());
  if (skip) return t.skip(skip);
  const srv = await startFixture({ h3: true, poolSize: 1000, tileMs: 20, maxConcurrentStreams: 1000 });
  try {
    const r = await measureBrowser({
      origins: [srv.tlsUrl!],
      count: 20,
      runs: 2,
      cancel: false,
      control: false,
      h3: true,
      trustCert: [srv.caFile!],
    });
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    const s = Object.fromEntries(r.burst.summaries.map((x) => [x.target, x]));
    assert.deepEqual(Object.keys(s).sort(), ['https', 'https-h3']);
    // Every request CDP saw a protocol for is h3, none fell back to TCP. The failures allowed are a QUIC
    // connection closing under its requests, first of all Chromium's QUIC_PACKET_TOO_LARGE: on loopback (MTU 65536) the server probes the path MTU with
    // datagrams up to 16383 bytes and Chromium, which takes 1472 at most, closes one connection in
    // three to five under load (seen with a packet capture on lo). Then the result must say so.
    // What the runs saw, before any assertion: a failure then comes with its numbers.
    t.diagnostic(
      JSON.stringify({
        runs: r.burst.runs.map((x) => [x.target, x.index, x.stats.protocols]),
        warnings: r.warnings,
        tiles: srv.metrics().requests.tiles,
        cancel: srv.metrics().cancellations.h3,
        conns: srv.metrics().connections.total.quic,
        page: srv.metrics().requests.page,
      }),
    );
    const h3s = s['https-h3']!;
    assert.deepEqual(Object.keys(h3s.protocols), ['h3'], 'CDP: h3 only');
    // A clean-clone CI run at load also had 7 of 20 end in net::ERR_CONNECTION_CLOSED (the QUIC
    // connection closed under them, its cause not in CDP's text): allowed too, never silently — the
    // result must name every failure with its count.
    const failures = Object.entries(h3s.failures);
    for (const [k] of failures)
      assert.match(k, /QUIC_PACKET_TOO_LARGE|^net::ERR_CONNECTION_CLOSED$/, JSON.stringify(h3s.failures));
    const closed = failures.reduce((a, [, n]) => a + n, 0);
    assert.equal(h3s.protocols.h3! + closed, 20, `h3 ${h3s.protocols.h3}, closed under ${closed}`);
    assert.ok(h3s.protocols.h3! > 0, 'some requests completed over h3');
    for (const [k, n] of failures)
      assert.ok(
        r.warnings.some((w) => w.includes('requests failed') && w.includes(`${k} ×${n}`)),
        r.warnings.join('\n'),
      );
    if (failures.some(([k]) => k.includes('QUIC_PACKET_TOO_LARGE')))
      assert.ok(
        r.warnings.some((w) => w.includes('QUIC_PACKET_TOO_LARGE') && w.includes('loopback')),
        r.warnings.join('\n'),
      );
    assert.deepEqual(s.https!.protocols, { h2: 20 });
    const target = r.targets.find((x) => x.id === 'https-h3')!;
    assert.equal(target.quic, new URL(srv.tlsUrl!).host);
    // The server ran at least every request Chromium completed over h3 (discarded run included). It may
    // have run more: a request on a connection Chromium closed is sent again on a new one.
    const completed = r.burst.runs
      .filter((x) => x.target === 'https-h3')
      .reduce((a, x) => a + x.requests.filter((q) => q.status === 200 && q.failed === undefined).length, 0);
    const h3 = srv.metrics().requests.tiles.h3;
    assert.ok(h3 >= completed, `the server saw ${h3} tile requests over h3, Chromium completed ${completed}`);
    assert.ok(!r.warnings.some((w) => /expected h3/.test(w)), r.warnings.join('\n'));
  } finally {
    await srv.close();
  }
});

// Chromium over HTTP/3 to the fixture: the h3 target's Chromium forces QUIC to the TLS origin
// (--origin-to-force-quic-on, the certificate pinned by SPKI) and CDP reports h3 for every request,
// while the https:// target's Chromium (QUIC off) stays on h2; the server counts each as it came.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { measureBrowser } from '../../src/browser/index.ts';
import { loadBinding } from '../../src/h3/index.ts';
import { chromiumMissing } from '../browser/helpers.ts';
import { startFixture } from '../helpers/fixture.ts';

test('browser: the h3 target negotiates h3 on every request, the h2 target h2', async (t) => {
  const skip =
    chromiumMissing() ??
    (await loadBinding().then(
      () => undefined,
      (err: Error) => err.message,
    ));
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
      trustCertPem: [srv.certPem],
    });
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    const s = Object.fromEntries(r.burst.summaries.map((x) => [x.target, x]));
    assert.deepEqual(Object.keys(s).sort(), ['https', 'https-h3']);
    // Every request CDP saw a protocol for is h3, none fell back to TCP. At load 15 on 2 cores one run
    // of five here had 18 of 20 with a protocol: Chromium had opened three QUIC connections (see the
    // server count below); why two had no protocol in CDP's record is not found yet.
    assert.deepEqual(Object.keys(s['https-h3']!.protocols), ['h3'], 'CDP: h3 only');
    assert.ok(s['https-h3']!.protocols.h3! >= 18, `h3 on ${s['https-h3']!.protocols.h3} of 20`);
    assert.deepEqual(s.https!.protocols, { h2: 20 });
    const target = r.targets.find((x) => x.id === 'https-h3')!;
    assert.equal(target.quic, new URL(srv.tlsUrl!).host);
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
    const repeated = r.warnings.filter((w) => w.includes('was repeated')).length;
    // At least every request CDP saw. In 2 of 5 runs here the server counted more (57, 60 for 40):
    // each time Chromium had opened a second QUIC connection and sent requests again on it without
    // telling CDP (43 with 2 connections in one run). Not explained yet, so not hidden.
    const h3 = srv.metrics().requests.tiles.h3;
    assert.ok(h3 >= 40 + 20 * repeated, `the server saw ${h3} tile requests over h3`);
    assert.ok(!r.warnings.some((w) => /expected h3/.test(w)), r.warnings.join('\n'));
  } finally {
    await srv.close();
  }
});

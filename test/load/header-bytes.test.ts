/**
 * The bytes of response headers, a measured fact added through the run's tally: against
 * Debian's nginx, h2lab's per-response figure must equal what two referees no one here wrote report for
 * the same response — curl's `%{size_header}` for HTTP/1.1 (the head as text) and the length of
 * nghttp's received HEADERS frame for HTTP/2 (the HPACK-encoded block). nginx encodes the same fields
 * on every response without referring to its dynamic table, so every response has that one size.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runLoad } from '../../src/load/index.ts';
import { freePort, haveNginx, startNginx } from '../helpers/nginx.ts';
import { have, run } from '../helpers/peers.ts';

const missing = !haveNginx()
  ? 'nginx is not installed (apt-get install nginx)'
  : !have('curl')
    ? 'curl is not installed (apt-get install curl)'
    : !have('nghttp')
      ? 'nghttp is not installed (apt-get install nghttp2-client)'
      : false;

test('response header bytes: h1 = curl’s size_header, h2 = nghttp’s HEADERS length, per response, exactly', {
  skip: missing,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-header-bytes-'));
  const [h1Port, h2Port] = [await freePort(), await freePort()];
  const nginx = await startNginx(
    dir,
    `server { listen 127.0.0.1:${h1Port}; listen 127.0.0.1:${h2Port} http2; location / { return 200 "ok\\n"; } }`,
    [h1Port, h2Port],
  );
  try {
    const curled = await run('curl', [
      '-sS',
      '-o',
      '/dev/null',
      '-w',
      '%{size_header}',
      `http://127.0.0.1:${h1Port}/`,
    ]);
    assert.equal(curled.code, 0, curled.stderr);
    const h1Head = Number(curled.stdout);
    const nghttp = await run('nghttp', ['-nv', `http://127.0.0.1:${h2Port}/`]);
    assert.equal(nghttp.code, 0, nghttp.stderr);
    const h2Block = Number(/recv HEADERS frame <length=(\d+)/.exec(nghttp.stdout)?.[1]);
    assert.ok(h1Head > 100 && h2Block > 0, `referees read ${h1Head} and ${h2Block} bytes`);

    for (const [protocol, port, each] of [
      ['h1', h1Port, h1Head],
      ['h2', h2Port, h2Block],
    ] as const) {
      const r = await runLoad({ url: `http://127.0.0.1:${port}/`, protocol, requests: 300, concurrency: 4 })
        .done;
      assert.equal(r.error, undefined, JSON.stringify(r.error));
      assert.deepEqual(
        r.responseHeaders,
        { responses: 300, bytes: 300 * each },
        `${protocol}: ${each} bytes per response, as the referee read`,
      );
    }
    // node:http2 does not show the header block's bytes: the fact is absent, not zero.
    const node = await runLoad({
      url: `http://127.0.0.1:${h2Port}/`,
      protocol: 'h2',
      h2Client: 'node',
      requests: 20,
    }).done;
    assert.equal(node.error, undefined, JSON.stringify(node.error));
    assert.equal(node.responseHeaders, undefined, 'absent where the client cannot see it');
  } finally {
    await nginx.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

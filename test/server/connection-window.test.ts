/**
 * --connection-window-size: the fixture raises its HTTP/2 connection receive window with a
 * WINDOW_UPDATE on stream 0 (RFC 9113 §6.9.2), so a client sees that much upload credit; the default
 * stays RFC 9113's 65,535 bytes.
 */
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { test } from 'node:test';
import { startFixture } from '../helpers/fixture.ts';

async function creditSeen(opts: { connectionWindowSizeBytes?: number }): Promise<number> {
  const srv = await startFixture({ tls: false, ...opts });
  const s = http2.connect(srv.plainUrl!);
  s.on('error', () => {});
  try {
    await new Promise<void>((resolve, reject) => {
      const q = s.request({ ':path': '/healthz' });
      q.on('error', reject);
      q.resume();
      q.on('end', () => resolve());
    });
    return s.state.remoteWindowSize ?? -1;
  } finally {
    s.destroy();
    await srv.close();
  }
}

test('the connection window the server grants: 65,535 by default, the option raises it', async () => {
  assert.equal(await creditSeen({}), 65_535);
  assert.equal(await creditSeen({ connectionWindowSizeBytes: 16 * 1024 * 1024 }), 16 * 1024 * 1024);
});

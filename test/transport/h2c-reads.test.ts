// Issue 29: over h2c, h2lab's HTTP/2 client reads into one buffer per connection (net.Socket's
// `onread`) that the next read overwrites. A frame split across two reads must survive that: 1 MiB
// responses on one session (16 KiB DATA frames, reads of up to 64 KiB) end mid-frame again and again,
// and every byte the server sent must be counted, with no connection error.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runLoad } from '../../src/load/index.ts';
import { startTestServer } from '../helpers/servers.ts';

test('h2c: 1 MiB responses read through the reused buffer arrive whole', async () => {
  const server = await startTestServer('h2c');
  try {
    const r = await runLoad({
      url: `${server.url}/bytes/1048576`,
      protocol: 'h2',
      requests: 40,
      concurrency: 8,
      window: 'max',
    }).done;
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.equal(r.counts.ok, 40, JSON.stringify(r.counts));
    assert.equal(r.throughput.bytesIn, 40 * 1048576, 'every body byte counted');
    assert.equal(server.seen.bytesOut, r.throughput.bytesIn, 'the client counted what the server sent');
  } finally {
    await server.close();
  }
});

/**
 * The fixture's HTTP/2 session memory fits the receive windows it advertises: 32 uploads of 1 MiB
 * echoed on one session with a 6 MiB stream and 15 MiB connection window all complete. Under Node's
 * 10 MB default the session stopped reading its socket after about 10 responses and never resumed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runLoad } from '../../src/load/index.ts';
import { multiplexedStrategy, resolveWindow } from '../../src/transport/index.ts';
import { startFixture } from '../helpers/fixture.ts';

test('an echo of 1 MiB uploads on one session with browser-sized windows does not stall', async () => {
  const w = resolveWindow('browser');
  const srv = await startFixture({
    initialWindowSizeBytes: w.streamWindowBytes,
    connectionWindowSizeBytes: w.connectionWindowBytes,
  });
  const one = multiplexedStrategy('one');
  assert.ok(one);
  try {
    const r = await runLoad({
      protocol: one.name,
      url: `${srv.tlsUrl}/echo`,
      ca: srv.caFile,
      method: 'POST',
      bodySizeBytes: 1 << 20,
      window: 'browser',
      concurrency: 32,
      requests: 96,
      warmupMs: 0,
      timeoutMs: 20_000,
    }).done;
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.equal(r.counts.ok, 96, `${r.counts.ok} of 96 echoed: the session stalled`);
  } finally {
    await srv.close();
  }
});

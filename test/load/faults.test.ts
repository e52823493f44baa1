/**
 * The load client under faults (issue 17): every request it issues is accounted for, in the class
 * that says what went wrong, over real loopback sockets.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runLoad } from '../../src/load/index.ts';
import { startMisbehaving } from '../helpers/misbehaving.ts';

test('short-body: an HTTP/2 response shorter than its content-length is a protocol failure, not a 200', async () => {
  const s = await startMisbehaving('short-body');
  try {
    // node:http2's nghttp2 checks content-length itself and resets the stream (PROTOCOL_ERROR), which
    // reaches h2lab as a reset: a failure too, in a coarser class.
    for (const [protocol, h2Client, cls] of [
      ['h2', 'h2lab', 'protocol'],
      ['h2-pool', 'h2lab', 'protocol'],
      ['h2', 'node', 'reset'],
    ] as const) {
      const r = await runLoad({
        url: `${s.url}/`,
        protocol,
        h2Client,
        requests: 30,
        concurrency: 3,
        maxErrorRate: 1,
      }).done;
      const label = `${protocol}/${h2Client}: ${JSON.stringify(r.counts)}`;
      assert.equal(r.counts.total, 30, label);
      assert.equal(r.counts.ok, 0, label);
      assert.deepEqual(r.counts.byFailure, { [cls]: 30 }, label);
    }
  } finally {
    await s.close();
  }
});

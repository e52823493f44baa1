/**
 * Flow-control stall accounting of h2lab's own HTTP/2 client (src/h2/flow-stalls.ts) against
 * node:http2's server (nghttp2) over loopback: a window smaller than a response stalls the server at
 * each limit, a window larger than it never does, and a server that pauses by itself with credit in
 * hand is not counted as stalled.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { get, serve, session } from './helpers.ts';

const MiB = 1024 * 1024;

/** A server answering GET /N with N bytes, written in one go (it sends as fast as credit allows). */
function bulk() {
  return serve((stream, headers) => {
    const n = Number(String(headers[':path']).slice(1));
    stream.respond({ ':status': 200 });
    stream.end(Buffer.alloc(n, 0x61));
  });
}

test('a 64 KiB window stalls a 1 MiB response at its limits; the data that waited is counted', async () => {
  const srv = await bulk();
  const s = await session(srv.port, { streamWindowBytes: 65_535, connectionWindowBytes: 65_535, rttMs: 0.1 });
  try {
    const got = await get(s, srv.port, `/${MiB}`);
    assert.equal(got.bytes, MiB);
    const f = s.flowStalls();
    console.log(`# 64 KiB windows, 1 MiB: ${JSON.stringify(f)}`);
    // One window per limit: about 1 MiB / 32 KiB credit steps, on the stream and the connection.
    assert.ok(f.streamStalls + f.connectionStalls >= 8, `stalls ${f.streamStalls}+${f.connectionStalls}`);
    assert.ok(f.stalledMs > 0);
    assert.ok(f.stalledMs <= f.connectionStalledMs + f.streamStalledMs + 1e-9, 'the union exceeds its parts');
    assert.ok(f.bytesAfterStall > 0 && f.bytesAfterStall <= MiB, `bytesAfterStall ${f.bytesAfterStall}`);
  } finally {
    s.close();
    await srv.close();
  }
});

test('browser-sized windows (6 MiB / 15 MiB) never stall a 1 MiB response', async () => {
  const srv = await bulk();
  const s = await session(srv.port, {
    streamWindowBytes: 6 * MiB,
    connectionWindowBytes: 15 * MiB,
    rttMs: 0.1,
  });
  try {
    for (let i = 0; i < 4; i++) assert.equal((await get(s, srv.port, `/${MiB}`)).bytes, MiB);
    const f = s.flowStalls();
    assert.deepEqual(
      [f.connectionStalls, f.streamStalls, f.stalledMs, f.bytesAfterStall],
      [0, 0, 0, 0],
      JSON.stringify(f),
    );
  } finally {
    s.close();
    await srv.close();
  }
});

test('a server that pauses with credit in hand is not stalled; one that exhausts the window is, for no longer than two RTTs after the credit', async () => {
  // The stream's limit is 64 KiB; the server sends exactly that, then pauses 300 ms by itself.
  const srv = await serve((stream) => {
    stream.respond({ ':status': 200 });
    stream.write(Buffer.alloc(65_535, 0x61));
    setTimeout(() => stream.end(Buffer.alloc(1000, 0x62)), 300);
  });
  const s = await session(srv.port, {
    streamWindowBytes: 65_535,
    connectionWindowBytes: 15 * MiB,
    rttMs: 0.1,
  });
  try {
    const got = await get(s, srv.port, '/');
    assert.equal(got.bytes, 66_535);
    const f = s.flowStalls();
    console.log(`# 64 KiB sent then a 300 ms pause: ${JSON.stringify(f)}`);
    // The window was exhausted (one stream stall), but credit reached the server within a round trip:
    // the 300 ms the server then idled are not charged to flow control.
    assert.equal(f.connectionStalls, 0);
    assert.ok(f.streamStalls <= 1);
    assert.ok(f.stalledMs < 50, `stalled ${f.stalledMs} ms of a pause the server chose`);
  } finally {
    s.close();
    await srv.close();
  }
});

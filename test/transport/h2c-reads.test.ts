// Issue 29: over cleartext, h2lab's HTTP/2 and HTTP/1.1 clients read into one buffer shared by the
// thread's sockets (net.Socket's `onread`, src/transport/connect.ts) that the next read overwrites. A frame split across two reads must survive that: 1 MiB
// responses on one session (16 KiB DATA frames, reads of up to 64 KiB) end mid-frame again and again,
// and every byte the server sent must be counted, with no connection error.
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import net, { type AddressInfo } from 'node:net';
import { test } from 'node:test';
import { runLoad } from '../../src/load/index.ts';
import { baselineStrategy } from '../../src/transport/index.ts';
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

// Header blocks larger than a frame (HEADERS + CONTINUATION) on 16 streams at once: reads end inside
// header frames, whose bytes the session must copy before the next read overwrites the buffer.
test('h2c: header blocks split over frames and reads decode whole on every stream', async () => {
  const big: Record<string, string> = {};
  for (let i = 0; i < 40; i++) big[`x-pad-${i}`] = String(i % 10).repeat(500);
  const server = http2.createServer((_req, res) => {
    res.writeHead(200, { ...big, 'content-length': '5' });
    res.end('hello');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  try {
    const r = await runLoad({
      url: `http://127.0.0.1:${port}/`,
      protocol: 'h2',
      requests: 200,
      concurrency: 16,
    }).done;
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.equal(r.counts.ok, 200, JSON.stringify(r.counts));
    assert.equal(r.throughput.bytesIn, 200 * 5);
    // HPACK indexes the 40 fields after the first response, so blocks shrink; none may be lost.
    assert.equal(r.responseHeaders?.responses, 200);
  } finally {
    server.close();
  }
});

// HTTP/1.1 over cleartext reads into the same shared buffer: six connections whose responses arrive in
// pieces (the head split mid-line, a chunked body split mid-size) interleave their reads, and each
// connection must keep its partial head apart from the others'.
test('HTTP/1.1: responses in pieces on six connections read through the shared buffer arrive whole', async () => {
  const head = 'HTTP/1.1 200 OK\r\nserver: pieces\r\ntransfer-encoding: chunked\r\nx-pad: ';
  const pieces = [head, `${'p'.repeat(300)}\r\n\r\n`, '1', '0\r\n0123456789abcdef\r\n', '0\r\n\r\n'];
  let requests = 0;
  let sockets = 0;
  const server = net.createServer((socket) => {
    sockets++;
    socket.setNoDelay(true);
    let buffered = '';
    socket.on('data', (b) => {
      buffered += b.toString('latin1');
      while (buffered.includes('\r\n\r\n')) {
        buffered = buffered.slice(buffered.indexOf('\r\n\r\n') + 4);
        requests++;
        // One piece after the other, each a little later: timers of different delays can fire out
        // of order on a busy loop, and pieces out of order would be the server's fault.
        const next = (i: number): void => {
          if (i >= pieces.length || !socket.writable) return;
          socket.write(pieces[i]!);
          setTimeout(() => next(i + 1), 2);
        };
        next(0);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  try {
    const r = await runLoad({
      url: `http://127.0.0.1:${port}/`,
      protocol: baselineStrategy().name,
      connections: 6,
      concurrency: 6,
      requests: 120,
    }).done;
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.equal(r.counts.ok, 120, JSON.stringify(r.counts));
    assert.equal(requests, 120, 'the server answered each request once');
    assert.equal(r.throughput.bytesIn, 120 * 16, 'every chunk byte counted');
    assert.equal(sockets, 6, 'no connection was dropped as out of step');
  } finally {
    server.close();
  }
});

/**
 * The response head's fields that frame the body and decide reuse (RFC 9112 §6.3, §9.3), read from
 * bytes in one pass (src/transport/h1-pool.ts, scanHead): Transfer-Encoding ending in chunked in any
 * case and with trailing space, Content-Length, and Connection's close / keep-alive among other
 * tokens, HTTP/1.0's default of closing. A raw TCP server on port 0 answers every request on a
 * connection and counts the connections, so reuse is seen from the server's side.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { createTransport } from '../../src/transport/index.ts';

const replies: Record<string, string> = {
  '/chunked': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, CHUNKED \t\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
  '/close': 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: Upgrade, Close\r\n\r\nok',
  '/h10-ka': 'HTTP/1.0 200 OK\r\nCONNECTION: Keep-Alive\r\nContent-Length: 3\r\n\r\nabc',
  '/h10': 'HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nabc',
  '/te-not-last': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nxyz',
};

let server: net.Server;
let port = 0;
let connections = 0;

before(async () => {
  server = net.createServer((s) => {
    connections++;
    s.on('error', () => {});
    let pending = '';
    s.on('data', (d) => {
      pending += d.toString('latin1');
      for (let end = pending.indexOf('\r\n\r\n'); end >= 0; end = pending.indexOf('\r\n\r\n')) {
        const path = /^GET (\S+)/.exec(pending)?.[1] ?? '';
        pending = pending.slice(end + 4);
        const reply = replies[path] ?? 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n';
        // A response framed by the close of the connection is ended by it.
        if (path === '/te-not-last') s.end(reply);
        else s.write(reply);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as net.AddressInfo).port;
});
after(() => server.close());

async function twice(path: string): Promise<{ bytes: number[]; connections: number }> {
  const tr = createTransport('h1', { url: `http://127.0.0.1:${port}/`, connections: 1 });
  const before = connections;
  try {
    const bytes: number[] = [];
    for (let seq = 0; seq < 2; seq++) {
      const t = performance.now();
      const s = await tr.request({ method: 'GET', path }, { seq, intendedMs: t, queuedMs: t });
      assert.equal(s.error, undefined, JSON.stringify(s));
      assert.equal(s.status, 200);
      bytes.push(s.bytesIn);
    }
    return { bytes, connections: connections - before };
  } finally {
    await tr.close();
  }
}

test('Transfer-Encoding ending in chunked (any case, trailing space): the body is dechunked, the connection reused', async () => {
  assert.deepEqual(await twice('/chunked'), { bytes: [5, 5], connections: 1 });
});

test('Connection: close among other tokens, in any case: a new connection for the next request', async () => {
  assert.deepEqual(await twice('/close'), { bytes: [2, 2], connections: 2 });
});

test('HTTP/1.0 closes unless it says keep-alive (in any case)', async () => {
  assert.deepEqual(await twice('/h10-ka'), { bytes: [3, 3], connections: 1 });
  assert.deepEqual(await twice('/h10'), { bytes: [3, 3], connections: 2 });
});

test('chunked not last: the body runs to the close of the connection (RFC 9112 §6.3)', async () => {
  assert.deepEqual(await twice('/te-not-last'), { bytes: [3, 3], connections: 2 });
});

/**
 * One failure taxonomy across clients: a response that breaks HTTP/1.1's framing
 * — a status line that is not one, a head larger than the client accepts — is the server breaking the
 * protocol, `protocol` as for HTTP/2 (a malformed response, an oversized header block), not `other`.
 * Raw TCP servers on port 0 send the bytes.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { createTransport } from '../../src/transport/index.ts';

let server: net.Server;
let port = 0;
const replies: Record<string, string> = {
  '/bad-status': 'HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n',
  '/huge-head': `HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(70 * 1024)}\r\nContent-Length: 0\r\n\r\n`,
  '/ok': 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
};

before(async () => {
  server = net.createServer((s) => {
    s.on('error', () => {});
    s.once('data', (d) => {
      const path = /^GET (\S+)/.exec(d.toString('latin1'))?.[1] ?? '';
      s.end(replies[path] ?? 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as net.AddressInfo).port;
});
after(() => server.close());

for (const [path, detail] of [
  ['/bad-status', /malformed status line/],
  ['/huge-head', /response head larger than 65536 bytes/],
] as const) {
  test(`HTTP/1.1 ${path}: the request fails as protocol, named`, async () => {
    const tr = createTransport('h1', { url: `http://127.0.0.1:${port}/`, connections: 1 });
    try {
      const t = performance.now();
      const s = await tr.request({ method: 'GET', path }, { seq: 0, intendedMs: t, queuedMs: t });
      assert.equal(s.error, 'protocol', JSON.stringify(s));
      assert.match(s.errorDetail ?? '', detail);
      const ok = await tr.request({ method: 'GET', path: '/ok' }, { seq: 1, intendedMs: t, queuedMs: t });
      assert.equal(ok.status, 200, 'the next request gets a connection of its own and its response');
    } finally {
      await tr.close();
    }
  });
}

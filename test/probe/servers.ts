// Stand-in servers for the probe tests on loopback port 0 (test/helpers/servers.ts's listen): shared
// routes, a churning HTTP/1.1 server and one that upgrades to h2c.
import http from 'node:http';
import http2 from 'node:http2';
import type net from 'node:net';
import { listen, type Running } from '../helpers/servers.ts';

/**
 * Routes shared by the stand-in servers: `/` small text, `/text` 8 KiB of text (compressible),
 * `/stream` 8 × 64 KiB written 25 ms apart, `/spooled` 128 KiB written at once after 300 ms.
 */
export function routes(
  req: http.IncomingMessage | http2.Http2ServerRequest,
  res: http.ServerResponse | http2.Http2ServerResponse,
): void {
  const r = res as http.ServerResponse;
  switch (req.url) {
    case '/stream': {
      r.setHeader('content-type', 'application/octet-stream');
      let n = 0;
      const tick = () => {
        if (r.destroyed) return;
        r.write(Buffer.alloc(64 * 1024, 1));
        if (++n === 8) r.end();
        else setTimeout(tick, 25);
      };
      tick();
      return;
    }
    case '/spooled':
      r.setHeader('content-type', 'application/octet-stream');
      setTimeout(() => r.end(Buffer.alloc(128 * 1024, 2)), 300);
      return;
    case '/text':
      r.setHeader('content-type', 'text/plain');
      r.end('h2lab '.repeat(1400));
      return;
    default:
      r.setHeader('content-type', 'text/plain');
      r.end('hello\n');
  }
}

/** HTTP/1.1 server that closes every connection after one response (a churning server). */
export function churningServer(): Promise<Running> {
  return listen(
    http.createServer((req, res) => {
      res.shouldKeepAlive = false;
      routes(req, res);
    }),
  );
}

/**
 * HTTP/1.1 server that upgrades `Upgrade: h2c` requests (RFC 7540 §3.2): answers 101 and hands the
 * socket to a real HTTP/2 server (Node's nghttp2), which then reads the client preface.
 */
export async function upgradingServer(): Promise<Running> {
  const h2 = http2.createServer({ settings: { maxConcurrentStreams: 64 } }, routes);
  const server = http.createServer(routes);
  server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket) => {
    if (String(req.headers.upgrade).toLowerCase() !== 'h2c') {
      socket.destroy();
      return;
    }
    socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n');
    h2.emit('connection', socket);
  });
  return listen(server);
}

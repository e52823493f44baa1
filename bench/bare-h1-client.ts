// The floor of an HTTP/1.1 client in Node on this machine: node:net keep-alive connections, one
// request at a time each, reading into one shared buffer — nothing recorded, nothing checked but the
// Content-Length that ends a response. bench/load-vs-reference.ts --cpu runs it beside h2load --h1
// and h2lab -p h1 (suite h1), so h2lab's own cost per request is told apart from Node's.
// Usage: node --import tsx bench/bare-h1-client.ts URL REQUESTS [CONNECTIONS=6]
import net from 'node:net';

const [url, requests, connections = '6'] = process.argv.slice(2);
if (!url || !requests) {
  console.error('usage: bare-h1-client.ts URL REQUESTS [CONNECTIONS]');
  process.exit(2);
}
const u = new URL(url);
const total = Number(requests);
const request = Buffer.from(
  `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUser-Agent: bare-h1\r\nAccept: */*\r\n\r\n`,
  'latin1',
);
const shared = Buffer.allocUnsafe(64 * 1024);
let sent = 0;
let done = 0;

function connection(): void {
  let head = Buffer.alloc(0);
  let remaining = -1;
  const next = () => {
    if (sent < total) {
      sent++;
      socket.write(request);
    } else if (done === total) process.exit(0);
  };
  const socket = net.connect({
    host: u.hostname,
    port: Number(u.port || 80),
    onread: {
      buffer: shared,
      callback(n: number, b: Uint8Array): boolean {
        let i = 0;
        if (remaining < 0) {
          const bytes = head.length
            ? Buffer.concat([head, b.subarray(0, n)])
            : Buffer.from(b.buffer, b.byteOffset, n);
          const end = bytes.indexOf('\r\n\r\n');
          if (end < 0) {
            head = Buffer.from(bytes);
            return true;
          }
          const m = /\r\ncontent-length:\s*(\d+)/i.exec(bytes.toString('latin1', 0, end));
          if (!m) throw new Error('a response without Content-Length');
          remaining = Number(m[1]);
          head = Buffer.alloc(0);
          i = end + 4 - (bytes.length - n);
        }
        remaining -= n - i;
        if (remaining <= 0) {
          remaining = -1;
          done++;
          next();
        }
        return true;
      },
    },
  });
  socket.setNoDelay(true);
  socket.on('connect', next);
  socket.on('error', (err) => {
    console.error(err.message);
    process.exit(1);
  });
}

for (let k = 0; k < Number(connections); k++) connection();

// A raw h2c server that floods the client, for measuring h2lab's HTTP/2 client against it (the
// figures of docs/reliability.md, "A server cannot flood the HTTP/2 client"). After the client's
// preface it sends an empty SETTINGS; on each connection's first HEADERS it pours one kind of frame
// without end, waiting for `drain`, for at most 60 s per connection. Loopback only; prints its port.
// Usage: node --import tsx bench/flooding-h2-server.ts continuation|settings|ping|empty-data [PORT]
//   then: h2lab bench http://127.0.0.1:PORT/x -p h2 -d 15s --timeout 5s (under /usr/bin/time -v)
import net, { type AddressInfo } from 'node:net';
import { encodeHeaderBlock } from '../src/h2/hpack.ts';
import { CLIENT_PREFACE, encodeFrame, FrameReader, FrameType } from '../src/h2/index.ts';

const END_HEADERS = 0x4;
const kind = process.argv[2] ?? 'continuation';
const LIMIT_MS = 60_000;
const status = encodeHeaderBlock([[':status', '200']]);

/** What the connection's first stream gets, then the frame poured after it. */
const floods: Record<string, (sid: number) => [Buffer, Buffer]> = {
  continuation: (sid) => [
    encodeFrame(FrameType.HEADERS, 0, sid, status),
    encodeFrame(FrameType.CONTINUATION, 0, sid),
  ],
  settings: () => [Buffer.alloc(0), encodeFrame(FrameType.SETTINGS, 0, 0)],
  ping: () => [Buffer.alloc(0), encodeFrame(FrameType.PING, 0, 0, Buffer.alloc(8))],
  'empty-data': (sid) => [
    encodeFrame(FrameType.HEADERS, END_HEADERS, sid, status),
    encodeFrame(FrameType.DATA, 0, sid),
  ],
};
const make = floods[kind];
if (!make) {
  console.error(`unknown flood ${kind}: one of ${Object.keys(floods).join(', ')}`);
  process.exit(2);
}

const server = net.createServer((c) => {
  c.on('error', () => {});
  const t0 = performance.now();
  const reader = new FrameReader(1 << 20);
  let rest: Buffer | undefined = Buffer.alloc(0);
  let started = false;
  c.on('data', (chunk: Buffer) => {
    if (rest) {
      rest = Buffer.concat([rest, chunk]);
      if (rest.length < CLIENT_PREFACE.length) return;
      c.write(encodeFrame(FrameType.SETTINGS, 0, 0));
      chunk = rest.subarray(CLIENT_PREFACE.length);
      rest = undefined;
    }
    try {
      for (const f of reader.push(chunk)) {
        if (f.type !== FrameType.HEADERS || started) continue;
        started = true;
        const [first, frame] = make(f.streamId);
        c.write(first);
        const batch = Buffer.concat(Array.from({ length: 512 }, () => frame));
        const pour = (): void => {
          while (!c.destroyed && performance.now() - t0 < LIMIT_MS) {
            if (!c.write(batch)) return void c.once('drain', pour);
          }
          c.destroy();
        };
        pour();
      }
    } catch {
      c.destroy();
    }
  });
});
server.listen(Number(process.argv[3] ?? 0), '127.0.0.1', () => {
  console.log((server.address() as AddressInfo).port);
});

// Hostile peers against a fixture server, the numbers of docs/reliability.md: the same attacks as
// test/hostile/, larger, with one line per case. Pass another checkout's src/server/index.ts to
// measure it (the "before" column); options it does not know are left out.
// Usage: node --import tsx bench/hostile.ts [path/to/src/server/index.ts]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  bombBlock,
  connectPeer,
  END_HEADERS,
  END_STREAM,
  encodeFrame,
  FrameType,
  flood,
  healthzHandlers,
  hpackIndexedLiteral,
  openFds,
  type Peer,
  ping,
  plainPort,
  preface,
  priority,
  requestHeaders,
  rstStream,
  settingsAck,
  tlsPort,
  until,
  within,
} from '../test/hostile/attacker.ts';

const modulePath = resolve(process.argv[2] ?? 'src/server/index.ts');
const mod = (await import(pathToFileURL(modulePath).href)) as typeof import('../src/server/index.ts');
const known = new Set(Object.keys(mod.ServerOptionsSchema.shape));
const want: Record<string, unknown> = {
  port: 0,
  tlsPort: 0,
  prefaceTimeoutMs: 1000,
  headersTimeoutMs: 1000,
  requestTimeoutMs: 2000,
};
const srv = await mod.startServer(Object.fromEntries(Object.entries(want).filter(([k]) => known.has(k))));
const port = plainPort(srv);
const line = (name: string, s: string) => console.log(`${name.padEnd(44)} ${s}`);
const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
const fmt = (ms: number) => (Number.isNaN(ms) ? 'not closed' : `closed at ${ms.toFixed(0)} ms`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
console.log(`server: ${modulePath}; options ${JSON.stringify(want)} (unknown ones dropped)`);

async function rapidReset(streams: number): Promise<Peer> {
  const peer = await connectPeer({ port });
  await peer.write(Buffer.concat([preface(), settingsAck()]));
  const h = requestHeaders();
  await flood(peer, (i) => Buffer.concat([h(2 * i + 1), rstStream(2 * i + 1)]), streams, 5000);
  return peer;
}

{
  const h0 = healthzHandlers(srv);
  const peer = await rapidReset(5000);
  const ms = await within(peer.closed, 5000, Number.NaN);
  line(
    'rapid reset, 1 conn × 5000',
    `GOAWAY ${peer.goaway?.code ?? '-'} last ${peer.goaway?.lastStreamId ?? '-'} at ${peer.goaway?.atMs.toFixed(0) ?? '-'} ms, ${fmt(ms)}, handlers ${healthzHandlers(srv) - h0}`,
  );
  peer.destroy();
}
{
  const h0 = healthzHandlers(srv);
  const rss0 = process.memoryUsage().rss;
  const peers = await Promise.all(Array.from({ length: 50 }, () => rapidReset(1500)));
  const t0 = performance.now();
  await until(() => peers.every((p) => p.isClosed()), 10_000);
  const open = peers.filter((p) => !p.isClosed()).length;
  line(
    'rapid reset, 50 conns × 1500',
    `handlers ${healthzHandlers(srv) - h0}, RSS +${mib(process.memoryUsage().rss - rss0)}, ${open} of 50 open ${(performance.now() - t0).toFixed(0)} ms after the last write`,
  );
  for (const p of peers) p.destroy();
}
{
  const fds = openFds();
  const peers = await Promise.all(Array.from({ length: 200 }, () => connectPeer({ port })));
  const bad = preface(Array.from({ length: 40 }, (_, i) => [3, 100 + i] as const));
  await Promise.all(peers.map((p) => p.write(bad)));
  await until(() => peers.every((p) => p.goaway), 3000);
  for (const p of peers) p.socket.end();
  await sleep(1500);
  line('nghttp2 GOAWAY (40 SETTINGS), 200 leave', `fds ${fds} → ${openFds()} 1.5 s after they left`);
  for (const p of peers) p.destroy();
}
{
  const peer = await connectPeer({ port });
  await peer.write(preface(Array.from({ length: 40 }, (_, i) => [3, 100 + i] as const)));
  await flood(peer, (i) => ping(i), 1_000_000, 5000, 1000, 2);
  const ms = await within(peer.closed, 1000, Number.NaN);
  line(
    'nghttp2 GOAWAY, attacker stays (PINGs 5 s)',
    `GOAWAY at ${peer.goaway?.atMs.toFixed(0)} ms, ${fmt(ms)}`,
  );
  peer.destroy();
}
{
  const peers = await Promise.all(
    Array.from({ length: 100 }, () => connectPeer({ port: tlsPort(srv), raw: true })),
  );
  await sleep(3000);
  line(
    'TLS port, 100 silent TCP (timeout 1 s)',
    `${peers.filter((p) => !p.isClosed()).length} of 100 open after 3 s`,
  );
  for (const p of peers) p.destroy();
}
{
  const peer = await connectPeer({ port, raw: true });
  await peer.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n');
  const end = performance.now() + 4000;
  while (!peer.isClosed() && performance.now() < end) {
    await peer.write('a');
    await sleep(100);
  }
  line(
    'HTTP/1.1 body dripped 1 B / 100 ms',
    peer.isClosed() ? `closed at ${(await peer.closed).toFixed(0)} ms` : 'open after 4 s',
  );
  peer.destroy();
}
{
  const peer = await connectPeer({ port });
  await peer.write(Buffer.concat([preface(), settingsAck()]));
  const ms = await within(peer.closed, 3000, Number.NaN);
  line('h2 SETTINGS then silence (timeout 1 s)', `GOAWAY ${peer.goaway?.code ?? '-'}, ${fmt(ms)}`);
  peer.destroy();
}
{
  const peer = await connectPeer({ port });
  await peer.write(Buffer.concat([preface(), settingsAck()]));
  const sent = await flood(peer, (i) => priority(2 * i + 3), 500_000, 5000, 1000);
  const ms = await within(peer.closed, 1000, Number.NaN);
  line('PRIORITY flood 500k', `${sent} sent, GOAWAY ${peer.goaway?.code ?? '-'}, ${fmt(ms)}`);
  peer.destroy();
}
{
  const peer = await connectPeer({ port });
  await peer.write(Buffer.concat([preface(), settingsAck()]));
  const insert = hpackIndexedLiteral('x-bomb', 'a'.repeat(4000));
  const sent = await flood(
    peer,
    (i) =>
      encodeFrame(
        FrameType.HEADERS,
        END_STREAM | END_HEADERS,
        2 * i + 1,
        bombBlock(10, i === 0 ? insert : undefined),
      ),
    2000,
    5000,
    100,
    5,
  );
  const ms = await within(peer.closed, 1000, Number.NaN);
  line(
    'HPACK bomb 2000 streams × 40 KB',
    `${sent} sent, ${peer.rstReceived} RST, GOAWAY ${peer.goaway?.code ?? '-'}, ${fmt(ms)}`,
  );
  peer.destroy();
}
for (const [name, raw] of [
  [
    'TE: identity, chunked',
    'POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\n',
  ],
  ['duplicate Host', 'GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n'],
] as const) {
  const peer = await connectPeer({ port, raw: true });
  let got = '';
  peer.socket.on('data', (d: Buffer) => {
    got += d.toString('latin1');
  });
  await peer.write(raw);
  await within(peer.closed, 1000, 0);
  line(
    `HTTP/1.1 ${name}`,
    `${/^HTTP\/1\.1 \d{3}/.exec(got)?.[0] ?? 'no answer'}, ${peer.isClosed() ? 'closed' : 'kept open'}`,
  );
  peer.destroy();
}
if ('guardCounts' in srv) console.log(`guard: ${JSON.stringify(srv.guardCounts())}`);
await srv.close(200);

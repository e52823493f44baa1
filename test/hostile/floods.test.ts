// Control-frame floods (RFC 9113 §10.5): SETTINGS, PING, PRIORITY, empty DATA, WINDOW_UPDATE. Each
// is bounded in count and time. The server must stay up, end the floods it can see within 1 s and
// leave no socket behind once the attacker goes. nginx runs the same floods as the reference.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { RunningServer } from '../../src/server/index.ts';
import { startFixture } from '../helpers/fixture.ts';
import {
  Code,
  connectPeer,
  END_HEADERS,
  encodeFrame,
  FrameType,
  fdsBackTo,
  flood,
  normalRequestOk,
  openFds,
  ping,
  plainPort,
  preface,
  priority,
  requestHeaders,
  settingsAck,
  startNginxH2,
  windowUpdate,
  within,
} from './attacker.ts';

let srv: RunningServer;
let ng: Awaited<ReturnType<typeof startNginxH2>>;
before(async () => {
  srv = await startFixture({ tls: false });
  ng = await startNginxH2();
});
after(async () => {
  await srv.close(200);
  await ng?.stop();
});

interface Flood {
  name: string;
  /** Frames sent after the preface (the first may open a stream). */
  setup?: () => Buffer;
  unit: (i: number) => Buffer;
  count: number;
  /** Do not read while flooding: ACK floods only build up when the peer does not read (§10.5). */
  noRead?: boolean;
  /** What the fixture server does: closes (with this GOAWAY code when one is seen) or keeps it. */
  expect: { closes: true; code?: number } | { closes: false };
}

const FLOODS: Flood[] = [
  {
    name: 'SETTINGS flood',
    unit: () => encodeFrame(FrameType.SETTINGS, 0, 0),
    count: 100_000,
    noRead: true,
    expect: { closes: true },
  },
  { name: 'PING flood', unit: (i) => ping(i), count: 100_000, noRead: true, expect: { closes: true } },
  {
    name: 'PRIORITY flood',
    unit: (i) => priority(2 * i + 3),
    count: 100_000,
    expect: { closes: true, code: Code.ENHANCE_YOUR_CALM },
  },
  {
    name: 'empty DATA flood',
    setup: () => requestHeaders()(1, '/echo', END_HEADERS),
    unit: () => encodeFrame(FrameType.DATA, 0, 1),
    count: 100_000,
    expect: { closes: true },
  },
  // Node 20 reports no WINDOW_UPDATE to JavaScript and nghttp2 does not limit them: kept (as nginx).
  { name: 'WINDOW_UPDATE flood', unit: () => windowUpdate(0, 1), count: 100_000, expect: { closes: false } },
];

async function run(port: number, f: Flood) {
  const peer = await connectPeer({ port, noRead: f.noRead });
  await peer.write(Buffer.concat([preface(), settingsAck(), f.setup?.() ?? Buffer.alloc(0)]));
  const t0 = performance.now();
  const sent = await flood(peer, f.unit, f.count, 2000, 1000);
  const floodMs = performance.now() - t0;
  if (f.noRead) peer.socket.resume();
  const closedMs = await within(peer.closed, f.expect.closes ? 1500 : 300, Number.NaN);
  return { peer, sent, floodMs, closedMs };
}

for (const f of FLOODS) {
  test(`${f.name}: ${f.expect.closes ? 'closed within 1 s' : 'kept, the server stays up'}, no socket left`, async (t) => {
    const fds = openFds();
    const rss0 = process.memoryUsage().rss;
    const attack = run(plainPort(srv), f);
    assert.ok(await normalRequestOk(srv), 'a normal request during the flood');
    const { peer, sent, floodMs, closedMs } = await attack;
    const rssMiB = (process.memoryUsage().rss - rss0) / 2 ** 20;
    t.diagnostic(
      `h2lab: sent ${sent} frames in ${floodMs.toFixed(0)} ms; GOAWAY ${peer.goaway?.code ?? '-'} at ${peer.goaway?.atMs.toFixed(0) ?? '-'} ms; closed at ${Number.isNaN(closedMs) ? 'never (kept)' : `${closedMs.toFixed(0)} ms`}; RSS ${rssMiB.toFixed(1)} MiB; guard ${JSON.stringify(srv.guardCounts().enhanceYourCalm)}`,
    );
    if (f.expect.closes) {
      assert.ok(!Number.isNaN(closedMs), 'the server closed the connection');
      // The kernel takes the whole bounded flood in a few ms; the close is timed from connect.
      assert.ok(closedMs < floodMs + 1000, `closed at ${closedMs} ms, the flood took ${floodMs} ms`);
      if (f.expect.code !== undefined) assert.equal(peer.goaway?.code, f.expect.code);
    }
    peer.destroy();
    assert.ok(await normalRequestOk(srv), 'a normal request after the flood');
    assert.ok((await fdsBackTo(fds)) <= fds + 2, 'no fd left');
    if (ng) {
      const r = await run(ng.port, f);
      r.peer.destroy();
      t.diagnostic(
        `nginx: sent ${r.sent} frames in ${r.floodMs.toFixed(0)} ms; GOAWAY ${r.peer.goaway?.code ?? '-'} at ${r.peer.goaway?.atMs.toFixed(0) ?? '-'} ms; closed at ${Number.isNaN(r.closedMs) ? 'never (kept)' : `${r.closedMs.toFixed(0)} ms`}`,
      );
    }
  });
}

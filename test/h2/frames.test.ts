// The frame codec against itself (round trips, property-based) and against a real HTTP/2 server:
// Node's http2 (nghttp2) and what its SETTINGS frame really carries.
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  decodeGoaway,
  decodeSettingsPayload,
  decodeWindowUpdate,
  encodeFrame,
  encodeSettingsPayload,
  FrameReader,
} from '../../src/h2/frames.ts';
import { exchangePreface } from '../../src/probe/h2.ts';
import { connectTcp, Inbox } from '../../src/probe/wire.ts';

test('frames split at any byte boundary decode to the frames encoded', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          type: fc.integer({ min: 0, max: 255 }),
          flags: fc.integer({ min: 0, max: 255 }),
          streamId: fc.integer({ min: 0, max: 0x7fffffff }),
          payload: fc.uint8Array({ maxLength: 300 }),
        }),
        { maxLength: 8 },
      ),
      fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 20 }),
      (frames, cuts) => {
        const wire = Buffer.concat(
          frames.map((f) => encodeFrame(f.type, f.flags, f.streamId, Buffer.from(f.payload))),
        );
        const reader = new FrameReader();
        const got = [];
        let off = 0;
        let i = 0;
        while (off < wire.length) {
          const n = cuts[i++ % cuts.length]!;
          got.push(...reader.push(wire.subarray(off, off + n)));
          off += n;
        }
        assert.equal(reader.pendingBytes, 0);
        assert.deepEqual(
          got.map((f) => [f.type, f.flags, f.streamId, [...f.payload]]),
          frames.map((f) => [f.type, f.flags, f.streamId, [...f.payload]]),
        );
      },
    ),
  );
});

test('SETTINGS payloads round-trip, keep order and duplicates, and name unknown ids', () => {
  const payload = encodeSettingsPayload([
    [3, 100],
    [4, 1 << 20],
    [3, 50],
    [0x99, 7],
  ]);
  assert.deepEqual(decodeSettingsPayload(payload), [
    { id: 3, name: 'MAX_CONCURRENT_STREAMS', value: 100 },
    { id: 4, name: 'INITIAL_WINDOW_SIZE', value: 1 << 20 },
    { id: 3, name: 'MAX_CONCURRENT_STREAMS', value: 50 },
    { id: 0x99, name: 'UNKNOWN_0x99', value: 7 },
  ]);
  assert.throws(() => decodeSettingsPayload(Buffer.alloc(7)), /multiple of 6/);
});

test('WINDOW_UPDATE ignores the reserved bit; GOAWAY carries its debug text', () => {
  assert.equal(decodeWindowUpdate(Buffer.from([0xff, 0xff, 0xff, 0xff])), 0x7fffffff);
  const g = Buffer.alloc(8 + 3);
  g.writeUInt32BE(5, 0);
  g.writeUInt32BE(0xb, 4);
  g.write('bye', 8);
  assert.deepEqual(decodeGoaway(g), { lastStreamId: 5, errorCode: 0xb, debug: 'bye' });
});

test('a frame header announcing more than the maximum frame size is refused (e.g. "HTTP/1.1 400" read as a frame)', () => {
  assert.throws(() => new FrameReader().push(Buffer.from('HTTP/1.1 400 Bad Request\r\n')), /exceeds/);
});

test('against node:http2 the reader sees exactly the settings the server sent, and a connection WINDOW_UPDATE only when one is sent', async (t) => {
  for (const [label, settings, connWindow] of [
    ['defaults', {}, undefined],
    ['explicit', { maxConcurrentStreams: 7, initialWindowSize: 1 << 20, maxHeaderListSize: 8192 }, 1 << 24],
  ] as const) {
    await t.test(label, async () => {
      const server = http2.createServer({ settings });
      server.on('session', (s) => {
        if (connWindow) s.setLocalWindowSize(connWindow);
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      try {
        const { port } = server.address() as AddressInfo;
        const socket = await connectTcp({ host: '127.0.0.1', port }, 2000);
        const pre = await exchangePreface(socket, new Inbox(socket), performance.now() + 5000);
        socket.destroy();
        const sent = Object.fromEntries(pre.settings.map((s) => [s.name, s.value]));
        if (label === 'defaults') {
          // Node 20 sends no parameter it was not given (server-notes.md): "not sent" must stay absent.
          assert.equal(sent.MAX_CONCURRENT_STREAMS, undefined);
          assert.equal(sent.INITIAL_WINDOW_SIZE, undefined);
          assert.equal(pre.connectionWindowIncrementBytes, 0);
        } else {
          assert.equal(sent.MAX_CONCURRENT_STREAMS, 7);
          assert.equal(sent.INITIAL_WINDOW_SIZE, 1 << 20);
          assert.equal(sent.MAX_HEADER_LIST_SIZE, 8192);
          assert.equal(pre.connectionWindowIncrementBytes, (1 << 24) - 65_535);
        }
        assert.equal(pre.frames[0], 'SETTINGS');
        assert.ok(pre.settingsAcked, 'the server acknowledged our SETTINGS');
        assert.ok(pre.pingRttMs >= 0 && pre.pingRttMs < 5000);
      } finally {
        server.close();
      }
    });
  }
});

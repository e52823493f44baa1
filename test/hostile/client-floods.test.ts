// h2lab's own HTTP/2 client against hostile servers: raw frames from a net.Server on loopback port 0
// that answer a request with a flood — empty CONTINUATION frames after a HEADERS without END_HEADERS,
// a header block that never ends, SETTINGS, PING, empty DATA, empty frames of an unknown type. Each
// connection must end with GOAWAY ENHANCE_YOUR_CALM after a bounded budget, every request must be
// counted as a failure with its reason, and the process's memory must stay bounded.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { encodeHeaderBlock } from '../../src/h2/hpack.ts';
import { CLIENT_PREFACE, encodeFrame, FrameReader, FrameType } from '../../src/h2/index.ts';
import { runLoad } from '../../src/load/index.ts';
import { get, session } from '../h2/helpers.ts';
import { Code, END_HEADERS, until } from './attacker.ts';

const PING_PAYLOAD = Buffer.alloc(8, 0x70);
const STATUS_200 = encodeHeaderBlock([[':status', '200']]);

interface Flood {
  /** What the server answers the first request of a connection with, once. */
  first: (sid: number) => Buffer;
  /** One frame of the flood that follows it; none: the server goes silent. */
  frame?: (sid: number) => Buffer;
}

const FLOODS: Record<string, Flood> = {
  'empty CONTINUATION frames after a HEADERS without END_HEADERS': {
    first: (sid) => encodeFrame(FrameType.HEADERS, 0, sid, STATUS_200),
    frame: (sid) => encodeFrame(FrameType.CONTINUATION, 0, sid),
  },
  'SETTINGS frames': {
    first: () => Buffer.alloc(0),
    frame: () => encodeFrame(FrameType.SETTINGS, 0, 0),
  },
  'PING frames': {
    first: () => Buffer.alloc(0),
    frame: () => encodeFrame(FrameType.PING, 0, 0, PING_PAYLOAD),
  },
  'empty DATA frames': {
    first: (sid) => encodeFrame(FrameType.HEADERS, END_HEADERS, sid, STATUS_200),
    frame: (sid) => encodeFrame(FrameType.DATA, 0, sid),
  },
  'empty frames of an unknown type': {
    first: () => Buffer.alloc(0),
    frame: () => encodeFrame(0xfa, 0, 0),
  },
};

interface Hostile {
  url: string;
  /** GOAWAY codes the client sent, one per connection that got one. */
  goaways: number[];
  connections: number;
  /** Frames of the flood written, all connections. */
  written: number;
  close(): Promise<void>;
}

/**
 * A raw h2c server: SETTINGS after the client's preface, then on the client's first HEADERS the
 * flood's `first` bytes and its frames, in batches that wait for `drain`, until the client closes or
 * `limitMs` passes (each connection's loop is bounded in time).
 */
async function startHostile(flood: Flood, limitMs: number): Promise<Hostile> {
  const state = { goaways: [] as number[], connections: 0, written: 0 };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((c) => {
    state.connections++;
    sockets.add(c);
    c.on('close', () => sockets.delete(c));
    c.on('error', () => {});
    const reader = new FrameReader(1 << 20);
    let buf: Buffer = Buffer.alloc(0);
    let preface = true;
    let started = false;
    const t0 = performance.now();
    const pour = (sid: number): void => {
      const frame = flood.frame?.(sid);
      if (!frame) return;
      const batch = Buffer.concat(Array.from({ length: 512 }, () => frame));
      const more = (): void => {
        while (!c.destroyed && performance.now() - t0 < limitMs) {
          state.written += 512;
          if (!c.write(batch)) return void c.once('drain', more);
        }
        c.destroy();
      };
      more();
    };
    c.on('data', (chunk: Buffer) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      if (preface) {
        if (buf.length < CLIENT_PREFACE.length) return;
        preface = false;
        c.write(encodeFrame(FrameType.SETTINGS, 0, 0));
        buf = buf.subarray(CLIENT_PREFACE.length);
      }
      try {
        for (const f of reader.push(buf)) {
          if (f.type === FrameType.GOAWAY) state.goaways.push(f.payload.readUInt32BE(4));
          if (f.type === FrameType.HEADERS && !started) {
            started = true;
            c.write(flood.first(f.streamId));
            pour(f.streamId);
          }
        }
      } catch {
        c.destroy();
      }
      buf = Buffer.alloc(0);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get goaways() {
      return state.goaways;
    },
    get connections() {
      return state.connections;
    },
    get written() {
      return state.written;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** Runs `fn` while sampling RSS and heap every 20 ms; returns the largest growth of each, MiB. */
async function peakGrowth<T>(fn: () => Promise<T>): Promise<{ value: T; rssMiB: number; heapMiB: number }> {
  const m0 = process.memoryUsage();
  let rss = m0.rss;
  let heap = m0.heapUsed;
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    rss = Math.max(rss, m.rss);
    heap = Math.max(heap, m.heapUsed);
  }, 20);
  try {
    const value = await fn();
    return { value, rssMiB: (rss - m0.rss) / 2 ** 20, heapMiB: (heap - m0.heapUsed) / 2 ** 20 };
  } finally {
    clearInterval(timer);
  }
}

const REQUESTS = 6;

for (const [name, flood] of Object.entries(FLOODS)) {
  test(`a server answering with ${name}: each connection ends with ENHANCE_YOUR_CALM, every request fails as protocol, memory bounded`, async (t) => {
    const srv = await startHostile(flood, 8000);
    const dir = mkdtempSync(join(tmpdir(), 'h2lab-client-floods-'));
    const samplesFile = join(dir, 'samples.ndjson');
    try {
      const t0 = performance.now();
      const {
        value: r,
        rssMiB,
        heapMiB,
      } = await peakGrowth(
        () =>
          runLoad({
            url: `${srv.url}/x`,
            protocol: 'h2',
            requests: REQUESTS,
            concurrency: 1,
            timeoutMs: 3000,
            maxErrorRate: 1,
            samplesFile,
          }).done,
      );
      const ms = performance.now() - t0;
      const samples = readFileSync(samplesFile, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { errorDetail?: string });
      const details = [...new Set(samples.map((s) => s.errorDetail))];
      t.diagnostic(
        `${JSON.stringify(r.counts.byFailure)} in ${ms.toFixed(0)} ms over ${srv.connections} connections; ${srv.written} frames written; GOAWAY ${srv.goaways.join(',')}; RSS +${rssMiB.toFixed(1)} MiB, heap +${heapMiB.toFixed(1)} MiB; ${details.join(' | ')}`,
      );
      assert.equal(r.counts.total, REQUESTS);
      assert.deepEqual(r.counts.byFailure, { protocol: REQUESTS }, details.join(' | '));
      for (const d of details) assert.match(d ?? '', /^ENHANCE_YOUR_CALM: /);
      assert.ok(srv.goaways.length >= 1, 'the client said why it closed');
      for (const code of srv.goaways) assert.equal(code, Code.ENHANCE_YOUR_CALM);
      assert.ok(rssMiB < 64, `RSS grew ${rssMiB.toFixed(1)} MiB`);
      assert.ok(heapMiB < 32, `heap grew ${heapMiB.toFixed(1)} MiB`);
    } finally {
      await srv.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('a header block that never ends (HEADERS without END_HEADERS, then silence): the request times out and its connection ends with it', async (t) => {
  const silent = await startHostile(
    { first: (sid) => encodeFrame(FrameType.HEADERS, 0, sid, STATUS_200) },
    8000,
  );
  try {
    const r = await runLoad({
      url: `${silent.url}/x`,
      protocol: 'h2',
      requests: 3,
      concurrency: 1,
      timeoutMs: 300,
      maxErrorRate: 1,
    }).done;
    t.diagnostic(
      `${JSON.stringify(r.counts.byFailure)}; ${silent.connections} connections; GOAWAY ${silent.goaways}`,
    );
    assert.deepEqual(r.counts.byFailure, { timeout: 3 });
    // The connection is useless while a block is open (no other frame may come): it is not kept.
    assert.deepEqual(silent.goaways, [
      Code.ENHANCE_YOUR_CALM,
      Code.ENHANCE_YOUR_CALM,
      Code.ENHANCE_YOUR_CALM,
    ]);
  } finally {
    await silent.close();
  }
});

test('a header block that stays open past headerBlockTimeoutMs ends the connection, with no request timeout to do it', async () => {
  const silent = await startHostile(
    { first: (sid) => encodeFrame(FrameType.HEADERS, 0, sid, STATUS_200) },
    8000,
  );
  const port = Number(new URL(silent.url).port);
  const s = await session(port, { headerBlockTimeoutMs: 200 });
  try {
    const t0 = performance.now();
    const g = await get(s, port, '/x');
    const ms = performance.now() - t0;
    assert.equal(g.reason, 'protocol');
    assert.equal(g.code, Code.ENHANCE_YOUR_CALM);
    assert.ok(ms >= 190 && ms < 5000, `${ms.toFixed(0)} ms`);
    await until(() => silent.goaways.length > 0, 2000);
    assert.deepEqual(silent.goaways, [Code.ENHANCE_YOUR_CALM]);
  } finally {
    s.close();
    await silent.close();
  }
});

/**
 * h2lab's own HTTP/2 client session against real peers: node:http2's server (nghttp2) doing the less
 * common things a server may do — PING, padding, 1xx, trailers, header blocks split over
 * CONTINUATION, windows that force WINDOW_UPDATEs — and nginx under load, counted by its access log.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { encodeHeaderBlock } from '../../src/h2/hpack.ts';
import { CLIENT_PREFACE, encodeFrame, FLAG_ACK, FrameReader, FrameType } from '../../src/h2/index.ts';
import { H2ClientSession } from '../../src/h2/session.ts';
import { createTransport } from '../../src/transport/index.ts';
import { freePort, haveNginx, type Nginx, startNginx } from '../helpers/nginx.ts';
import { get, serve, session } from './helpers.ts';

test('answers the server PING with the same payload (RFC 9113 §6.7)', async () => {
  const srv = await serve((stream) => {
    stream.respond({ ':status': 200 });
    stream.end();
  });
  const s = await session(srv.port);
  try {
    await get(s, srv.port, '/');
    const payload = Buffer.from('h2labPNG');
    const echoed = await new Promise<Buffer>((resolve, reject) => {
      srv.sessions[0]!.ping(payload, (err, _ms, p) => (err ? reject(err) : resolve(p)));
    });
    assert.deepEqual(echoed, payload);
  } finally {
    s.close();
    await srv.close();
  }
});

test('padded HEADERS and DATA frames: padding is not counted as body', async () => {
  const srv = await serve(
    (stream) => {
      stream.respond({ ':status': 200, 'x-padded': 'yes' });
      stream.end(Buffer.alloc(50_000, 1));
    },
    { paddingStrategy: http2.constants.PADDING_STRATEGY_MAX },
  );
  const s = await session(srv.port);
  try {
    for (let i = 0; i < 3; i++) {
      const g = await get(s, srv.port, '/');
      assert.equal(g.reason, 'end');
      assert.equal(g.status, 200);
      assert.equal(new Map(g.headers).get('x-padded'), 'yes');
      assert.equal(g.bytes, 50_000);
    }
  } finally {
    s.close();
    await srv.close();
  }
});

test('1xx responses are skipped and trailers end the stream', async () => {
  const srv = await serve((stream) => {
    stream.additionalHeaders({ ':status': 103, link: '</a.css>; rel=preload' });
    stream.respond({ ':status': 200 }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'x-checksum': 'abc' }));
    stream.end('hello');
  });
  const s = await session(srv.port);
  try {
    const g = await get(s, srv.port, '/');
    assert.equal(g.reason, 'end');
    assert.equal(g.status, 200, 'the final status, not the 103');
    assert.equal(g.bytes, 5);
  } finally {
    s.close();
    await srv.close();
  }
});

test('a 40 KB response header block arrives as HEADERS + CONTINUATION and decodes whole', async () => {
  const big = 'v'.repeat(40_000);
  const srv = await serve((stream) => {
    stream.respond({ ':status': 200, 'x-big': big, 'x-after': 'tail' });
    stream.end('ok');
  });
  const s = await session(srv.port);
  try {
    const g = await get(s, srv.port, '/');
    assert.equal(g.reason, 'end');
    const m = new Map(g.headers);
    assert.equal(m.get('x-big'), big);
    assert.equal(m.get('x-after'), 'tail');
    // The next response on the same connection still decodes: the HPACK state stayed in sync.
    assert.equal((await get(s, srv.port, '/')).status, 200);
  } finally {
    s.close();
    await srv.close();
  }
});

test('with 64 KiB windows, 20 concurrent 1 MiB downloads complete by WINDOW_UPDATEs', async () => {
  const srv = await serve(
    (stream) => {
      stream.respond({ ':status': 200 });
      stream.end(Buffer.alloc(1 << 20, 7));
      // 20 MiB queued at once exceeds node's 10 MB default session memory (ENHANCE_YOUR_CALM).
    },
    { maxSessionMemory: 100 },
  );
  const s = await session(srv.port);
  try {
    const all = await Promise.all(Array.from({ length: 20 }, () => get(s, srv.port, '/')));
    for (const g of all) {
      assert.equal(g.reason, 'end');
      assert.equal(g.bytes, 1 << 20);
    }
  } finally {
    s.close();
    await srv.close();
  }
});

test('the windows the client claims are the windows the server sees', async () => {
  const srv = await serve((stream) => {
    stream.respond({ ':status': 200 });
    stream.end();
  });
  const s = await session(srv.port, { streamWindowBytes: 6 << 20, connectionWindowBytes: 15 << 20 });
  try {
    await get(s, srv.port, '/');
    const ss = srv.sessions[0]!;
    assert.equal(ss.remoteSettings.initialWindowSize, 6 << 20);
    assert.equal(ss.remoteSettings.enablePush, false);
    assert.equal(ss.state.remoteWindowSize, 15 << 20, "the server's view of the connection window");
  } finally {
    s.close();
    await srv.close();
  }
});

test('an upload larger than every window goes out in full as the server opens them', async () => {
  let received = 0;
  const srv = await serve(
    (stream) => {
      stream.on('data', (c: Buffer) => {
        received += c.length;
      });
      stream.on('end', () => {
        stream.respond({ ':status': 200 });
        stream.end();
      });
    },
    { settings: { initialWindowSize: 4096 } },
  );
  const s = await session(srv.port);
  try {
    const body = new Uint8Array(300_000).fill(3);
    const all = await Promise.all([get(s, srv.port, '/', body), get(s, srv.port, '/', body)]);
    for (const g of all) assert.equal(g.status, 200);
    assert.equal(received, 600_000);
  } finally {
    s.close();
    await srv.close();
  }
});

test('a server that answers the h2c preface in HTTP/1.1 is named, not mistaken for HTTP/2', async () => {
  const server = net.createServer((c) => {
    c.once('data', () => c.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const socket = net.connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port });
  await new Promise((r) => socket.once('connect', r));
  const s = new H2ClientSession(socket, { streamWindowBytes: 65_535, connectionWindowBytes: 65_535 });
  await assert.rejects(s.ready(5000), (e: Error & { kind?: string; statusLine?: string }) => {
    assert.equal(e.kind, 'http1');
    assert.equal(e.statusLine, 'HTTP/1.1 400 Bad Request');
    return true;
  });
  await new Promise((r) => server.close(r));
});

test('a server that answers the preface with something else entirely is a protocol mismatch, not "unreachable"', async () => {
  // Python's http.server answers "PRI * HTTP/2.0" HTTP/0.9-style: an HTML error page, no status line.
  const server = net.createServer((c) => {
    c.once('data', () => c.end('<!DOCTYPE HTML>\n<html><body>Error 505</body></html>\n'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const tr = createTransport('h2', {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: 1,
  });
  try {
    await assert.rejects(tr.open(), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'H2LAB_ERR_PROTOCOL_MISMATCH');
      assert.match(e.message, /not HTTP\/2 .*"<!DOCTYPE HTML>/);
      return true;
    });
  } finally {
    await tr.close();
    await new Promise((r) => server.close(r));
  }
});

/**
 * A raw HTTP/2 server (for what node:http2 will not send): empty SETTINGS and an ACK, then `answer`
 * writes the response frames for stream 1 once the client's HEADERS arrived (with `everyStream`,
 * for every stream; `connection` counts from 1).
 */
async function rawServer(
  answer: (c: net.Socket, streamId: number, connection: number) => void,
  everyStream = false,
): Promise<{ port: number; close: () => Promise<void> }> {
  let connections = 0;
  const server = net.createServer((c) => {
    const connection = ++connections;
    c.on('error', () => {});
    const reader = new FrameReader(1 << 20);
    let preface = true;
    let buf = Buffer.alloc(0);
    c.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (preface) {
        if (buf.length < CLIENT_PREFACE.length) return;
        preface = false;
        c.write(
          Buffer.concat([
            encodeFrame(FrameType.SETTINGS, 0, 0),
            encodeFrame(FrameType.SETTINGS, FLAG_ACK, 0),
          ]),
        );
        buf = buf.subarray(CLIENT_PREFACE.length);
      }
      try {
        for (const f of reader.push(buf)) {
          if (f.type === FrameType.HEADERS && (everyStream || f.streamId === 1))
            answer(c, f.streamId, connection);
        }
      } catch {
        c.destroy(); // what it cannot read ends the connection, as a server would
      }
      buf = Buffer.alloc(0);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const rst = (sid: number, code: number) => {
  const p = Buffer.alloc(4);
  p.writeUInt32BE(code);
  return encodeFrame(FrameType.RST_STREAM, 0, sid, p);
};
const head = (fields: Array<[string, string]>, flags = 0x4) =>
  encodeFrame(FrameType.HEADERS, flags, 1, encodeHeaderBlock(fields));

test("an invalid HPACK block: --h2-client node ends every request and writes its result (it exited 13 with nothing written); h2lab's own client fails them as protocol", async () => {
  // HEADERS whose block is the invalid index 0 (RFC 7541 §6.1): a COMPRESSION_ERROR for any decoder.
  const srv = await rawServer((c) => c.write(encodeFrame(FrameType.HEADERS, 0x5, 1, Buffer.from([0x80]))));
  const { runLoad } = await import('../../src/load/index.ts');
  try {
    for (const [protocol, h2Client] of [
      ['h2', 'node'],
      ['h2-pool', 'node'],
      ['h2', 'h2lab'],
    ] as const) {
      const t0 = performance.now();
      const r = await runLoad({
        url: `http://127.0.0.1:${srv.port}/`,
        protocol,
        h2Client,
        requests: 2,
        concurrency: 1,
        timeoutMs: 500,
        maxErrorRate: 1,
      }).done;
      const label = `${protocol}/${h2Client}: ${JSON.stringify(r.counts)} in ${Math.round(performance.now() - t0)} ms`;
      assert.equal(r.counts.total, 2, label);
      assert.equal(r.counts.ok, 0, label);
      const cls = Object.keys(r.counts.byFailure);
      // h2lab's own decoder names it. node:http2 sends GOAWAY(COMPRESSION_ERROR) and, on Node 20,
      // tells its caller nothing (the request times out and the stuck session is closed); Node 24
      // closes the stream (a reset): either way every request ends.
      if (h2Client === 'node') assert.ok(['timeout', 'reset'].includes(cls[0] ?? ''), label);
      else assert.deepEqual(cls, ['protocol'], label);
      assert.equal(cls.length, 1, label);
      assert.ok(performance.now() - t0 < 10_000, label);
    }
  } finally {
    await srv.close();
  }
});

test('--h2-client node after one invalid header block: the broken session is retired, a new one opened, attempts = streams the server saw', async (t) => {
  // Stream 21 of the first connection gets the invalid index 0 (a COMPRESSION_ERROR); every
  // other stream a 200. node:http2 sends GOAWAY and refuses later streams itself (REFUSED_STREAM,
  // never on the wire): a session that keeps taking requests fails them all without a connection.
  let connections = 0;
  let streams = 0;
  const srv = await rawServer((c, sid, connection) => {
    connections = Math.max(connections, connection);
    streams++;
    const block =
      connection === 1 && sid === 21 ? Buffer.from([0x80]) : encodeHeaderBlock([[':status', '200']]);
    c.write(encodeFrame(FrameType.HEADERS, 0x5, sid, block));
  }, true);
  const { runLoad } = await import('../../src/load/index.ts');
  try {
    const r = await runLoad({
      url: `http://127.0.0.1:${srv.port}/`,
      protocol: 'h2',
      h2Client: 'node',
      requests: 2000,
      concurrency: 4,
      timeoutMs: 1000,
      maxErrorRate: 1,
    }).done;
    const c = r.counts;
    t.diagnostic(`${JSON.stringify(c)}; ${connections} connections, ${streams} streams seen by the server`);
    const failed = c.total - c.ok;
    assert.ok(failed <= 4, `${failed} failed: at most those in flight when the block came`);
    assert.ok(connections >= 2, `${connections} connections: the broken session was replaced`);
    assert.equal(
      (c.attempts ?? c.total) - (c.unprocessed ?? 0),
      streams,
      'attempts = streams the server saw',
    );
  } finally {
    await srv.close();
  }
});

test('RST_STREAM(NO_ERROR) once every byte of the content-length came is a complete response (RFC 9113 §8.1), short of it a reset', async () => {
  for (const [sent, reason] of [
    [5, 'end'],
    [3, 'reset'],
  ] as const) {
    const srv = await rawServer((c) =>
      c.write(
        Buffer.concat([
          head([
            [':status', '200'],
            ['content-length', '5'],
          ]),
          encodeFrame(FrameType.DATA, 0, 1, Buffer.alloc(sent, 0x61)),
          rst(1, 0),
        ]),
      ),
    );
    const s = await session(srv.port);
    try {
      const g = await get(s, srv.port, '/');
      assert.equal(g.status, 200);
      assert.equal(g.bytes, sent);
      assert.equal(g.reason, reason, `${sent} of 5 bytes then RST_STREAM(NO_ERROR)`);
    } finally {
      s.close();
      await srv.close();
    }
  }
});

test('a response header block past 64 KiB (HEADERS + endless CONTINUATION) fails the stream as malformed and ends the connection, bounded', async () => {
  const field = encodeHeaderBlock([['x-big', 'b'.repeat(16_000)]]);
  let written = 0;
  const srv = await rawServer((c) => {
    // 10 MiB of CONTINUATION at most; the client must give up long before.
    c.write(encodeFrame(FrameType.HEADERS, 0, 1, encodeHeaderBlock([[':status', '200']])));
    const more = (): void => {
      while (written < 10 << 20 && !c.destroyed) {
        written += field.length;
        if (!c.write(encodeFrame(FrameType.CONTINUATION, 0, 1, field))) return void c.once('drain', more);
      }
    };
    more();
  });
  const s = await session(srv.port);
  const rss0 = process.memoryUsage().rss;
  try {
    const g = await get(s, srv.port, '/');
    assert.equal(g.reason, 'malformed');
    assert.equal(g.status, -1, 'no response headers delivered');
    assert.ok(written < 10 << 20, `the client closed before the server wrote 10 MiB (${written})`);
    assert.ok(process.memoryUsage().rss - rss0 < 64 << 20);
  } finally {
    s.close();
    await srv.close();
  }
});

describe('against nginx (Debian package)', {
  skip: haveNginx() ? false : 'nginx is not installed (apt-get install nginx)',
}, () => {
  let dir: string;
  let nginx: Nginx | undefined;
  let port = 0;
  let rotating = 0;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'h2lab-h2-nginx-'));
    writeFileSync(join(dir, '1k'), Buffer.alloc(1024, 97), { mode: 0o644 });
    chmodSync(dir, 0o755); // nginx's workers run as an unprivileged user
    port = await freePort();
    rotating = await freePort();
    nginx = await startNginx(
      dir,
      // keepalive_requests: nginx's default (1000) ends a session with GOAWAY; the second server
      // keeps that default.
      `server { listen 127.0.0.1:${port} http2; http2_max_concurrent_streams 64; keepalive_requests 100000;
         access_log ${join(dir, 'access.log')}; location / { root ${dir}; } }
       server { listen 127.0.0.1:${rotating} http2;
         access_log ${join(dir, 'rotating.log')}; location / { root ${dir}; } }`,
      [port, rotating],
    );
  });
  after(async () => {
    await nginx?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('3,000 requests at 150 in flight on one session: every byte counted, the stream cap honoured', async () => {
    const tr = createTransport('h2', { url: `http://127.0.0.1:${port}`, connections: 1 });
    await tr.open();
    const n = 3000;
    const inFlight = 150;
    let next = 0;
    let bytes = 0;
    let ok = 0;
    const worker = async (): Promise<void> => {
      while (next < n) {
        const seq = next++;
        const now = performance.now();
        const sm = await tr.request({ method: 'GET', path: '/1k' }, { seq, intendedMs: now, queuedMs: now });
        assert.equal(sm.error, undefined, sm.errorDetail);
        if (sm.status === 200) ok++;
        bytes += sm.bytesIn;
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
    const st = tr.stats();
    await tr.close();
    assert.equal(ok, n);
    assert.equal(bytes, n * 1024);
    assert.equal(st.opened, 1, 'one session');
    assert.equal(st.serverMaxConcurrentStreams, 64);
    assert.equal(st.peakStreamsPerConnection, 64, 'never more streams than nginx allows');
    assert.ok(st.capHits > 0, 'requests beyond the cap waited in the client');
    // nginx logs a request when it completes; give the last lines a moment.
    await new Promise((r) => setTimeout(r, 200));
    const lines = readFileSync(join(dir, 'access.log'), 'utf8').trim().split('\n');
    assert.equal(lines.length, n, "nginx's access log counts the same requests");
    assert.ok(
      lines.every((l) => l.includes('"GET /1k HTTP/2.0" 200 1024')),
      lines[0],
    );
  });

  test("nginx's default session rotation (GOAWAY after 1,000 requests) costs retries, not failures", async () => {
    const { runLoad } = await import('../../src/load/index.ts');
    const r = await runLoad({
      url: `http://127.0.0.1:${rotating}/1k`,
      protocol: 'h2',
      requests: 2500,
      concurrency: 100,
    }).done;
    assert.equal(r.counts.ok, 2500, JSON.stringify(r.counts));
    // Streams sent after nginx's 1,000th on a session were refused by its GOAWAY (93 in one run).
    assert.ok((r.counts.retried ?? 0) > 0, 'some requests were refused by GOAWAY and retried');
    assert.ok(r.connections.opened >= 3, `${r.connections.opened} sessions for 2,500 requests`);
    await new Promise((res) => setTimeout(res, 200));
    const lines = readFileSync(join(dir, 'rotating.log'), 'utf8').trim().split('\n');
    assert.equal(
      lines.length,
      2500,
      'nginx processed each request once: the retried ones were refused, not served',
    );
  });
});

/**
 * An HTTP/2 session opened by a waiting request (a burst with handshakes timed) sends it right after
 * the preface (RFC 9113 §3.4), not one round trip later when the server's SETTINGS arrive — over TLS
 * and over h2c, as h2load and curl do: against a real server on loopback that holds its SETTINGS back,
 * the request reaches it first. Over h2c a server that answers in HTTP/1.1 then fails those requests
 * `protocol-mismatch`, with the transport's mismatch error to stop the run. A session opened before
 * the run is warm: open() resolves with the SETTINGS in. Requests beyond the provisional stream limit
 * go out when the SETTINGS arrive, and the limit the server announced late is recorded.
 */
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import tls from 'node:tls';
import { PROVISIONAL_STREAMS } from '../../src/transport/h2-wire-conn.ts';
import { createTransport, resolveWindow } from '../../src/transport/index.ts';
import { type TestCerts, testCerts } from '../helpers/certs.ts';

let certs: TestCerts;
before(async () => {
  certs = await testCerts();
});
after(() => certs.cleanup());

const PREFACE_BYTES = 24;
const HOLD_MS = 300;

/**
 * A minimal h2 server: holds its SETTINGS (MAX_CONCURRENT_STREAMS = `limit`) for HOLD_MS, counts the
 * HEADERS frames that came before, and answers every stream `:status 200` once `answerAfter` have come.
 */
async function startHoldingServer(limit: number, answerAfter: number, cleartext = false) {
  const seen = { headersBeforeSettings: 0, headers: 0 };
  const onSocket = (socket: net.Socket): void => {
    let buf = Buffer.alloc(0);
    let prefaceSkipped = false;
    let settingsSent = false;
    const streams: number[] = [];
    const frame = (type: number, flags: number, sid: number, payload: Buffer): Buffer => {
      const h = Buffer.alloc(9);
      h.writeUIntBE(payload.length, 0, 3);
      h[3] = type;
      h[4] = flags;
      h.writeUInt32BE(sid, 5);
      return Buffer.concat([h, payload]);
    };
    const answer = (): void => {
      // HEADERS, END_STREAM | END_HEADERS, HPACK index 8 = ":status 200" (RFC 7541 Appendix A).
      for (const sid of streams.splice(0)) socket.write(frame(0x1, 0x5, sid, Buffer.from([0x88])));
    };
    setTimeout(() => {
      const settings = Buffer.alloc(6);
      settings.writeUInt16BE(0x3, 0);
      settings.writeUInt32BE(limit, 2);
      socket.write(frame(0x4, 0, 0, settings));
      settingsSent = true;
      if (seen.headers >= answerAfter) answer();
    }, HOLD_MS);
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (!prefaceSkipped) {
        if (buf.length < PREFACE_BYTES) return;
        buf = buf.subarray(PREFACE_BYTES);
        prefaceSkipped = true;
      }
      while (buf.length >= 9 && buf.length >= 9 + buf.readUIntBE(0, 3)) {
        const len = buf.readUIntBE(0, 3);
        if (buf[3] === 0x1) {
          seen.headers++;
          if (!settingsSent) seen.headersBeforeSettings++;
          streams.push(buf.readUInt32BE(5) & 0x7fffffff);
        }
        buf = buf.subarray(9 + len);
      }
      if (settingsSent && seen.headers >= answerAfter) answer();
    });
    socket.on('error', () => {});
  };
  const server = cleartext
    ? net.createServer(onSocket)
    : tls.createServer({ key: certs.serverKeyPem, cert: certs.serverPem, ALPNProtocols: ['h2'] }, onSocket);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${cleartext ? 'http' : 'https'}://127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

function transportFor(url: string, connectOnDemand: boolean) {
  return createTransport('h2', {
    url,
    connections: 1,
    window: resolveWindow('browser'),
    tls: { ca: certs.caPem },
    timeoutMs: 3000,
    connectOnDemand,
  });
}

for (const [name, cleartext] of [
  ['h2 over TLS', false],
  ['h2c', true],
] as const) {
  test(`${name}, session opened by a request: the request leaves before the server SETTINGS arrive`, async () => {
    const s = await startHoldingServer(7, 1, cleartext);
    const t = transportFor(s.url, true);
    try {
      await t.open();
      const sample = await t.request({ method: 'GET', path: '/' }, { seq: 0, intendedMs: 0, queuedMs: 0 });
      assert.equal(sample.error, undefined, sample.errorDetail);
      assert.equal(sample.status, 200);
      assert.equal(s.seen.headersBeforeSettings, 1, 'the server saw the request before it sent SETTINGS');
      assert.equal(t.stats().serverMaxConcurrentStreams, 7, 'the late SETTINGS are recorded');
    } finally {
      await t.close();
      await s.close();
    }
  });

  test(`${name}, session opened before the run: open() resolves once the SETTINGS are in`, async () => {
    const s = await startHoldingServer(7, 1, cleartext);
    const t = transportFor(s.url, false);
    try {
      const t0 = performance.now();
      await t.open();
      assert.ok(performance.now() - t0 >= HOLD_MS * 0.9, 'open() waited for the SETTINGS');
      const sample = await t.request({ method: 'GET', path: '/' }, { seq: 0, intendedMs: 0, queuedMs: 0 });
      assert.equal(sample.status, 200);
      assert.equal(s.seen.headersBeforeSettings, 0);
      assert.equal(t.stats().serverMaxConcurrentStreams, 7);
    } finally {
      await t.close();
      await s.close();
    }
  });
}

test('h2 over TLS: requests beyond the provisional limit go out when the SETTINGS arrive, not after a response', async () => {
  const n = PROVISIONAL_STREAMS + 20;
  // The server answers nothing until every request has arrived: a client that held the last 20 until
  // a response came would time out.
  const s = await startHoldingServer(250, n);
  const t = transportFor(s.url, true);
  try {
    await t.open();
    const samples = await Promise.all(
      Array.from({ length: n }, (_, seq) =>
        t.request({ method: 'GET', path: '/' }, { seq, intendedMs: 0, queuedMs: 0 }),
      ),
    );
    assert.deepEqual(
      samples.filter((x) => x.error).map((x) => x.error),
      [],
    );
    assert.equal(s.seen.headersBeforeSettings, PROVISIONAL_STREAMS);
    assert.equal(s.seen.headers, n);
  } finally {
    await t.close();
    await s.close();
  }
});

test('h2c, session opened by requests, server answers in HTTP/1.1: every request fails protocol-mismatch and the transport says why', async () => {
  // What an HTTP/1.1-only server does with the h2c preface ("PRI * HTTP/2.0"): 400, then close.
  const server = net.createServer((socket) => {
    socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n'));
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const t = transportFor(url, true);
  try {
    await t.open();
    const samples = await Promise.all(
      Array.from({ length: 8 }, (_, seq) =>
        t.request({ method: 'GET', path: '/' }, { seq, intendedMs: 0, queuedMs: 0 }),
      ),
    );
    assert.deepEqual(
      samples.map((x) => x.error),
      Array(8).fill('protocol-mismatch'),
    );
    const e = t.mismatch?.();
    assert.equal(e?.code, 'H2LAB_ERR_PROTOCOL_MISMATCH');
    assert.match(
      e.message,
      /requested h2c but the server negotiated http\/1\.1 .*HTTP\/1\.1 400 Bad Request/,
    );
    assert.equal(samples[0]!.errorDetail, e.message);
  } finally {
    await t.close();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

/**
 * Helpers of the h2 tests: a node:http2 server with a stream handler, a connected h2lab client
 * session, and one request on it with everything it received.
 */
import http2 from 'node:http2';
import net, { type AddressInfo } from 'node:net';
import { encodeHeaderBlock } from '../../src/h2/hpack.ts';
import { H2ClientSession, type H2SessionOptions, type StreamEndReason } from '../../src/h2/session.ts';

export interface Got {
  status: number;
  headers: Array<[string, string]>;
  bytes: number;
  reason: StreamEndReason;
  code: number;
}

/** A node:http2 server whose stream handler is `handler`; returns its port and the sessions it saw. */
export async function serve(
  handler: (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void,
  options: http2.ServerOptions = {},
): Promise<{ port: number; sessions: http2.ServerHttp2Session[]; close: () => Promise<void> }> {
  const server = http2.createServer(options);
  const sessions: http2.ServerHttp2Session[] = [];
  server.on('session', (s) => sessions.push(s));
  server.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    handler(stream, headers);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    sessions,
    close: async () => {
      for (const s of sessions) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

export async function session(port: number, opts: Partial<H2SessionOptions> = {}): Promise<H2ClientSession> {
  const socket = net.connect({ host: '127.0.0.1', port });
  await new Promise((r) => socket.once('connect', r));
  const s = new H2ClientSession(socket, {
    streamWindowBytes: 65_535,
    connectionWindowBytes: 65_535,
    collectHeaders: true,
    ...opts,
  });
  await s.ready(5000);
  return s;
}

export function get(s: H2ClientSession, port: number, path: string, body?: Uint8Array): Promise<Got> {
  return new Promise((resolve) => {
    const got: Got = { status: -1, headers: [], bytes: 0, reason: 'end', code: 0 };
    const fields: Array<[string, string]> = [
      [':method', body ? 'POST' : 'GET'],
      [':scheme', 'http'],
      [':authority', `127.0.0.1:${port}`],
      [':path', path],
    ];
    if (body) fields.push(['content-length', String(body.length)]);
    s.request(encodeHeaderBlock(fields), body, {
      onHeaders: (status, headers) => {
        got.status = status;
        got.headers = headers ?? [];
      },
      onData: (n) => {
        got.bytes += n;
      },
      onEnd: (reason, code) => {
        got.reason = reason;
        got.code = code;
        resolve(got);
      },
    });
  });
}

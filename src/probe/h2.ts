/**
 * The HTTP/2 side of the probe over a raw socket: send a client preface and read what the server
 * sends at the start of a connection (RFC 9113 §3.4), with prior knowledge or after an
 * `Upgrade: h2c` (RFC 7540 §3.2; removed from RFC 9113 but still what `curl --http2` tries on http://).
 */
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import {
  CLIENT_PREFACE,
  decodeGoaway,
  decodeSettingsPayload,
  decodeWindowUpdate,
  encodeFrame,
  encodeSettingsPayload,
  FLAG_ACK,
  FrameReader,
  FrameType,
  H2_ERROR_NAMES,
} from '../h2/index.ts';
import type { SettingEntry } from '../model/index.ts';
import { type Inbox, timeoutError } from './wire.ts';

/** What a server sent at the start of an HTTP/2 connection. */
export interface ServerPreface {
  /** The parameters of the server's first SETTINGS frame, in the order sent. Absent ones were not sent. */
  settings: SettingEntry[];
  /** WINDOW_UPDATE increments on stream 0 received before the PING answer, summed; 0 when none was sent. */
  connectionWindowIncrementBytes: number;
  /** True when the server acknowledged the client's SETTINGS (RFC 9113 §6.5.3). */
  settingsAcked: boolean;
  /** PING round trip on the established connection, ms. */
  pingRttMs: number;
  /** Frame types received, in order (names), up to and including the PING ACK. */
  frames: string[];
  /** Set when the server sent GOAWAY instead of (or after) its preface. */
  goaway?: { lastStreamId: number; errorCode: number; errorName: string; debug: string };
}

/** The server answered HTTP/2 with something else. `code` is `PROBE_NOT_H2`. */
function notH2Error(detail: string, statusLine?: string): Error {
  return Object.assign(new Error(detail), { code: 'PROBE_NOT_H2', statusLine });
}

const PING_PAYLOAD = Buffer.from('h2labprb', 'latin1');
const TYPE_NAMES = Object.fromEntries(Object.entries(FrameType).map(([k, v]) => [v, k])) as Record<
  number,
  string
>;

/** Bytes that start an HTTP/1.x response: the peer is not speaking HTTP/2. */
function looksLikeHttp1(b: Buffer): boolean {
  return b.subarray(0, 5).toString('latin1') === 'HTTP/';
}

/**
 * Sends the client preface, an empty SETTINGS frame and a PING, then reads until the PING is answered:
 * a server sends its own SETTINGS first (RFC 9113 §3.4) and usually a connection WINDOW_UPDATE right
 * after, so by the time our PING comes back everything it sends unprompted at startup has arrived.
 * Acknowledges the server's SETTINGS as the protocol requires, and leaves with GOAWAY(NO_ERROR).
 *
 * Rejects with a `PROBE_NOT_H2` error when the server answers in HTTP/1.x or its first frame is not
 * SETTINGS, with a timeout error at the deadline (a `performance.now()` time, ms).
 */
export async function exchangePreface(
  socket: Duplex,
  inbox: Inbox,
  deadlineMs: number,
  opts: { reader?: FrameReader; leaveOpen?: boolean } = {},
): Promise<ServerPreface> {
  socket.write(
    Buffer.concat([
      CLIENT_PREFACE,
      encodeFrame(FrameType.SETTINGS, 0, 0, encodeSettingsPayload([])),
      encodeFrame(FrameType.PING, 0, 0, PING_PAYLOAD),
    ]),
  );
  const pingSentMs = performance.now();
  const reader = opts.reader ?? new FrameReader();
  const out: ServerPreface = {
    settings: [],
    connectionWindowIncrementBytes: 0,
    settingsAcked: false,
    pingRttMs: Number.NaN,
    frames: [],
  };
  let sawSettings = false;
  let first = true;
  for (;;) {
    const chunk = await inbox.next(deadlineMs, 'waiting for the server preface');
    if (chunk === null) {
      if (out.goaway) return out;
      throw Object.assign(
        new Error(
          sawSettings
            ? 'the server closed the connection before answering PING'
            : 'the server closed the connection without sending SETTINGS',
        ),
        { code: sawSettings ? 'ECONNRESET' : 'PROBE_NOT_H2' },
      );
    }
    if (first && looksLikeHttp1(chunk)) {
      const statusLine = chunk.toString('latin1').split('\r\n', 1)[0] ?? '';
      throw notH2Error(`the server answered the HTTP/2 preface in HTTP/1.x: "${statusLine}"`, statusLine);
    }
    let frames: ReturnType<FrameReader['push']>;
    try {
      frames = reader.push(chunk);
    } catch (err) {
      throw notH2Error(`the server's bytes are not HTTP/2 frames (${(err as Error).message})`);
    }
    for (const f of frames) {
      out.frames.push(TYPE_NAMES[f.type] ?? `0x${f.type.toString(16)}`);
      if (first) {
        first = false;
        // RFC 9113 §3.4: the server connection preface is a SETTINGS frame, first.
        if (f.type !== FrameType.SETTINGS && f.type !== FrameType.GOAWAY) {
          throw notH2Error(`the server's first frame is ${out.frames[0]}, not SETTINGS`);
        }
      }
      switch (f.type) {
        case FrameType.SETTINGS:
          if (f.flags & FLAG_ACK) {
            out.settingsAcked = true;
          } else {
            if (!sawSettings) out.settings = decodeSettingsPayload(f.payload);
            sawSettings = true;
            socket.write(encodeFrame(FrameType.SETTINGS, FLAG_ACK, 0));
          }
          break;
        case FrameType.WINDOW_UPDATE:
          if (f.streamId === 0) out.connectionWindowIncrementBytes += decodeWindowUpdate(f.payload);
          break;
        case FrameType.GOAWAY: {
          const g = decodeGoaway(f.payload);
          out.goaway = { ...g, errorName: H2_ERROR_NAMES[g.errorCode] ?? `0x${g.errorCode.toString(16)}` };
          return out;
        }
        case FrameType.PING:
          if (f.flags & FLAG_ACK && f.payload.equals(PING_PAYLOAD)) {
            out.pingRttMs = performance.now() - pingSentMs;
            if (!opts.leaveOpen) socket.write(encodeFrame(FrameType.GOAWAY, 0, 0, Buffer.alloc(8)));
            return out;
          }
          if (!(f.flags & FLAG_ACK)) socket.write(encodeFrame(FrameType.PING, FLAG_ACK, 0, f.payload));
          break;
        default:
          break;
      }
    }
  }
}

/** An HTTP/1.x response head, read from a raw socket. */
interface ResponseHead {
  statusLine: string;
  status: number;
  /** Header names lower-cased; repeated headers joined with ", ". */
  headers: Record<string, string>;
}

/** Largest response head the probe reads, bytes (nginx's default large_client_header_buffers is 8 KiB). */
const MAX_HEAD_BYTES = 64 * 1024;

/**
 * Reads an HTTP/1.x response head (up to the blank line). Bytes past it are put back into the inbox.
 * Rejects when the peer closes first or sends something that is not an HTTP/1.x response.
 */
export async function readResponseHead(inbox: Inbox, deadlineMs: number): Promise<ResponseHead> {
  let buf = Buffer.alloc(0);
  for (;;) {
    const chunk = await inbox.next(deadlineMs, 'waiting for the response head');
    if (chunk === null) {
      throw Object.assign(new Error('the server closed the connection before a complete response head'), {
        code: 'ECONNRESET',
      });
    }
    buf = Buffer.concat([buf, chunk]);
    if (!looksLikeHttp1(buf) && buf.length >= 5) {
      // A SETTINGS frame header (type 4 on stream 0) is how an HTTP/2-only port answers HTTP/1.1.
      const h2 = buf.length >= 9 && buf.readUInt8(3) === FrameType.SETTINGS && buf.readUInt32BE(5) === 0;
      throw Object.assign(
        new Error(
          h2
            ? 'the server answered an HTTP/1.1 request with HTTP/2 frames: this port speaks only HTTP/2 (prior knowledge)'
            : `the server did not answer with an HTTP/1.x response (first bytes ${buf.subarray(0, 8).toString('hex')})`,
        ),
        { code: h2 ? 'PROBE_ONLY_H2' : 'PROBE_NOT_H1' },
      );
    }
    const end = buf.indexOf('\r\n\r\n');
    if (end >= 0) {
      inbox.unshift(buf.subarray(end + 4));
      return parseHead(buf.subarray(0, end).toString('latin1'));
    }
    if (buf.length > MAX_HEAD_BYTES) {
      throw Object.assign(new Error(`response head larger than ${MAX_HEAD_BYTES} bytes`), {
        code: 'PROBE_NOT_H1',
      });
    }
  }
}

function parseHead(text: string): ResponseHead {
  const [statusLine = '', ...lines] = text.split('\r\n');
  const status = Number(/^HTTP\/\d(?:\.\d)?\s+(\d{3})/.exec(statusLine)?.[1] ?? Number.NaN);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  return { statusLine, status, headers };
}

/** What happened when the client asked to upgrade an HTTP/1.1 request to h2c. */
interface UpgradeOutcome {
  /** True when the server answered 101 and then spoke HTTP/2. */
  upgraded: boolean;
  /** The response status line to the upgrade request (`HTTP/1.1 101 Switching Protocols`, or a 200…). */
  statusLine: string;
  status: number;
  /** The server's HTTP/2 preface after a 101. */
  preface?: ServerPreface;
}

/**
 * Sends `GET path` with `Upgrade: h2c` and `HTTP2-Settings` (RFC 7540 §3.2, §3.2.1). A server that
 * does not upgrade answers the request over HTTP/1.1 (most servers: nginx and Node's http2 only do h2c
 * with prior knowledge). After a `101` the client still sends its connection preface; the server's
 * first frame is its SETTINGS.
 */
export async function tryUpgrade(
  socket: Duplex,
  inbox: Inbox,
  authority: string,
  path: string,
  deadlineMs: number,
): Promise<UpgradeOutcome> {
  // The HTTP2-Settings value is the base64url SETTINGS payload (token68, so it cannot be empty).
  const settings = encodeSettingsPayload([[0x2, 0]]).toString('base64url');
  socket.write(
    `GET ${path} HTTP/1.1\r\nHost: ${authority}\r\nUser-Agent: h2lab-probe\r\nAccept: */*\r\n` +
      `Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: ${settings}\r\n\r\n`,
  );
  const head = await readResponseHead(inbox, deadlineMs);
  if (head.status !== 101) return { upgraded: false, statusLine: head.statusLine, status: head.status };
  if (performance.now() > deadlineMs) throw timeoutError('h2c upgrade', 0);
  const preface = await exchangePreface(socket, inbox, deadlineMs);
  return {
    upgraded: !preface.goaway || preface.settings.length > 0,
    statusLine: head.statusLine,
    status: 101,
    preface,
  };
}

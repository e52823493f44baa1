/**
 * HTTP/2 frame constants and a small codec (RFC 9113 §4, §6), shared by the probe and h2lab's own
 * HTTP/2 client (`session.ts`).
 *
 * The probe reads what a server sends at the start of a connection (its SETTINGS, a connection-level
 * WINDOW_UPDATE, GOAWAY, PING ACK) with {@link FrameReader}. Why not `http2.connect` there: Node's
 * `session.remoteSettings` fills every setting the server did not send with its default, so "not
 * sent" and "sent the default" look the same, and a connection-level WINDOW_UPDATE is not surfaced at
 * all. The probe must report what was actually on the wire.
 *
 * The client's hot path parses frames in place instead (no copy per frame); see `session.ts`.
 */
import type { SettingEntry } from '../model/index.ts';

/** The client connection preface (RFC 9113 §3.4), followed by the client's SETTINGS frame. */
export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** Frame types (RFC 9113 §6). */
export const FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

/**
 * RFC 9113 §6.9.2: the initial window of every stream and of the connection, bytes; only
 * WINDOW_UPDATE changes the connection's.
 */
export const DEFAULT_WINDOW_BYTES = 65_535;
/** RFC 9113 §6.9.1: the largest flow-control window, bytes. */
export const MAX_WINDOW_BYTES = 2 ** 31 - 1;
/** RFC 9113 §4.2: SETTINGS_MAX_FRAME_SIZE until a peer raises it, bytes. */
export const DEFAULT_MAX_FRAME_BYTES = 16_384;

/** The ACK flag of SETTINGS and PING frames (RFC 9113 §6.5, §6.7). */
export const FLAG_ACK = 0x1;

/** Length of the fixed frame header (RFC 9113 §4.1), bytes. */
export const FRAME_HEADER_BYTES = 9;

/** Setting identifiers (RFC 9113 §6.5.2; ENABLE_CONNECT_PROTOCOL: RFC 8441; NO_RFC7540_PRIORITIES: RFC 9218). */
export const SETTING_NAMES: Readonly<Record<number, string>> = Object.freeze({
  1: 'HEADER_TABLE_SIZE',
  2: 'ENABLE_PUSH',
  3: 'MAX_CONCURRENT_STREAMS',
  4: 'INITIAL_WINDOW_SIZE',
  5: 'MAX_FRAME_SIZE',
  6: 'MAX_HEADER_LIST_SIZE',
  8: 'ENABLE_CONNECT_PROTOCOL',
  9: 'NO_RFC7540_PRIORITIES',
});

/**
 * The value a peer is assumed to have when it did not send a setting (RFC 9113 §6.5.2).
 * `null` means "unlimited": the protocol sets no initial limit.
 */
export const SETTING_DEFAULTS: Readonly<Record<string, number | null>> = Object.freeze({
  HEADER_TABLE_SIZE: 4096,
  ENABLE_PUSH: 1,
  MAX_CONCURRENT_STREAMS: null,
  INITIAL_WINDOW_SIZE: DEFAULT_WINDOW_BYTES,
  MAX_FRAME_SIZE: DEFAULT_MAX_FRAME_BYTES,
  MAX_HEADER_LIST_SIZE: null,
  ENABLE_CONNECT_PROTOCOL: 0,
  NO_RFC7540_PRIORITIES: 0,
});

/** One decoded frame. `payload` is a view into the reader's buffer copy. */
interface Frame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
}

/** Encodes one frame (RFC 9113 §4.1). */
export function encodeFrame(
  type: number,
  flags: number,
  streamId: number,
  payload: Buffer = Buffer.alloc(0),
): Buffer {
  const header = Buffer.alloc(FRAME_HEADER_BYTES);
  header.writeUIntBE(payload.length, 0, 3);
  header.writeUInt8(type, 3);
  header.writeUInt8(flags, 4);
  header.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([header, payload]);
}

/** Encodes a SETTINGS payload: 6 bytes per parameter (RFC 9113 §6.5.1). */
export function encodeSettingsPayload(settings: ReadonlyArray<readonly [id: number, value: number]>): Buffer {
  const buf = Buffer.alloc(settings.length * 6);
  settings.forEach(([id, value], i) => {
    buf.writeUInt16BE(id, i * 6);
    buf.writeUInt32BE(value, i * 6 + 2);
  });
  return buf;
}

/**
 * Decodes a SETTINGS payload in the order sent (duplicates kept: the last one wins on the wire, but a
 * probe reports what was sent). Throws on a length that is not a multiple of 6 (RFC 9113 §6.5:
 * FRAME_SIZE_ERROR).
 */
export function decodeSettingsPayload(payload: Buffer): SettingEntry[] {
  if (payload.length % 6 !== 0)
    throw new Error(`SETTINGS payload of ${payload.length} bytes is not a multiple of 6`);
  const out: SettingEntry[] = [];
  for (let off = 0; off < payload.length; off += 6) {
    const id = payload.readUInt16BE(off);
    out.push({
      id,
      name: SETTING_NAMES[id] ?? `UNKNOWN_0x${id.toString(16)}`,
      value: payload.readUInt32BE(off + 2),
    });
  }
  return out;
}

/** Decodes a WINDOW_UPDATE payload: the 31-bit increment (RFC 9113 §6.9). */
export function decodeWindowUpdate(payload: Buffer): number {
  if (payload.length !== 4) throw new Error(`WINDOW_UPDATE payload of ${payload.length} bytes (must be 4)`);
  return payload.readUInt32BE(0) & 0x7fffffff;
}

/** Decodes a GOAWAY payload (RFC 9113 §6.8): last stream id, error code, debug data as text. */
export function decodeGoaway(payload: Buffer): { lastStreamId: number; errorCode: number; debug: string } {
  if (payload.length < 8) throw new Error(`GOAWAY payload of ${payload.length} bytes (must be at least 8)`);
  return {
    lastStreamId: payload.readUInt32BE(0) & 0x7fffffff,
    errorCode: payload.readUInt32BE(4),
    debug: payload.subarray(8).toString('utf8'),
  };
}

/** RFC 9113 §7 error code names, for messages. */
export const H2_ERROR_NAMES: Readonly<Record<number, string>> = Object.freeze({
  0: 'NO_ERROR',
  1: 'PROTOCOL_ERROR',
  2: 'INTERNAL_ERROR',
  3: 'FLOW_CONTROL_ERROR',
  4: 'SETTINGS_TIMEOUT',
  5: 'STREAM_CLOSED',
  6: 'FRAME_SIZE_ERROR',
  7: 'REFUSED_STREAM',
  8: 'CANCEL',
  9: 'COMPRESSION_ERROR',
  10: 'CONNECT_ERROR',
  11: 'ENHANCE_YOUR_CALM',
  12: 'INADEQUATE_SECURITY',
  13: 'HTTP_1_1_REQUIRED',
});

/**
 * Splits a byte stream into frames. Feed it chunks as they arrive; it returns the frames completed by
 * each chunk and keeps the remainder. Throws when a frame header announces more than
 * `maxPayloadBytes`, by default {@link DEFAULT_MAX_FRAME_BYTES}: a server may not send more than the
 * client's SETTINGS_MAX_FRAME_SIZE, which the probe leaves at its initial value (RFC 9113 §4.2), so a
 * larger frame is a protocol error or not HTTP/2 at all ("HTTP/1.1 400" read as a frame header).
 *
 * @example
 * const reader = new FrameReader();
 * socket.on('data', (chunk) => { for (const f of reader.push(chunk)) handle(f); });
 */
export class FrameReader {
  private buffered: Buffer = Buffer.alloc(0);

  constructor(private readonly maxPayloadBytes = DEFAULT_MAX_FRAME_BYTES) {}

  /** Bytes received but not yet part of a complete frame. */
  get pendingBytes(): number {
    return this.buffered.length;
  }

  push(chunk: Buffer): Frame[] {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const frames: Frame[] = [];
    let off = 0;
    while (this.buffered.length - off >= FRAME_HEADER_BYTES) {
      const length = this.buffered.readUIntBE(off, 3);
      if (length > this.maxPayloadBytes) {
        throw new Error(
          `frame of ${length} bytes exceeds the ${this.maxPayloadBytes}-byte maximum frame size`,
        );
      }
      if (this.buffered.length - off < FRAME_HEADER_BYTES + length) break;
      frames.push({
        type: this.buffered.readUInt8(off + 3),
        flags: this.buffered.readUInt8(off + 4),
        streamId: this.buffered.readUInt32BE(off + 5) & 0x7fffffff,
        payload: Buffer.from(
          this.buffered.subarray(off + FRAME_HEADER_BYTES, off + FRAME_HEADER_BYTES + length),
        ),
      });
      off += FRAME_HEADER_BYTES + length;
    }
    this.buffered = off === 0 ? this.buffered : Buffer.from(this.buffered.subarray(off));
    return frames;
  }
}

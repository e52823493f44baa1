/**
 * h2lab's own HTTP/2 client session (RFC 9113) on a connected socket: the client side of one
 * connection, built for a load generator.
 *
 * Why not `node:http2`: with it the client, not the server, was the bottleneck — about 0.2× h2load's
 * request rate on one session, with h2lab's own code ~1% of the profile (docs/performance.md). This
 * session does what a load generator needs and nothing else, the way h2load uses nghttp2:
 * - frames are parsed in place from the socket's buffers (no copy per frame);
 * - everything queued while handling one batch of input — new requests, WINDOW_UPDATEs, ACKs — goes
 *   out in one socket write per event-loop turn (`setImmediate`), like nghttp2's send loop;
 * - a request's header block is encoded by the caller, once per distinct request, and reused;
 * - response header blocks are fully HPACK-decoded (the dynamic table must stay in sync), but only
 *   `:status` is materialised unless the caller asks for every field;
 * - response bodies are counted, not kept; receive windows are replenished as data arrives (the client
 *   reads as fast as the network delivers, like a browser's network stack), in WINDOW_UPDATEs of half a
 *   window so the advertised window is what limits the server, not our bookkeeping.
 *
 * Not implemented, deliberately: server push (disabled in SETTINGS, RFC 9113 §8.4), priorities
 * (deprecated, RFC 9113 §5.3).
 */
import type net from 'node:net';
import type { FlowStalls } from '../model/index.ts';
import { CreditLedger, StallBook } from './flow-stalls.ts';
import {
  CLIENT_PREFACE,
  DEFAULT_MAX_FRAME_BYTES,
  DEFAULT_WINDOW_BYTES,
  FLAG_ACK,
  FRAME_HEADER_BYTES,
  FrameType,
  H2_ERROR_NAMES,
  MAX_WINDOW_BYTES,
} from './frames.ts';
import { DEFAULT_HEADER_TABLE_BYTES, HpackDecoder, HpackError } from './hpack.ts';
import { StreamTable } from './stream-table.ts';

/** A peer that announced no SETTINGS_MAX_CONCURRENT_STREAMS allows any number (RFC 9113 §5.1.2). */
export const UNLIMITED_STREAMS = 2 ** 32 - 1;

const F_END_STREAM = 0x1;
const F_END_HEADERS = 0x4;
const F_PADDED = 0x8;
const F_PRIORITY = 0x20;

/** Error codes (RFC 9113 §7). */
export const H2Code = {
  NO_ERROR: 0,
  PROTOCOL_ERROR: 1,
  INTERNAL_ERROR: 2,
  FLOW_CONTROL_ERROR: 3,
  STREAM_CLOSED: 5,
  FRAME_SIZE_ERROR: 6,
  REFUSED_STREAM: 7,
  CANCEL: 8,
  COMPRESSION_ERROR: 9,
  ENHANCE_YOUR_CALM: 11,
} as const;

/**
 * The largest response header block (HEADERS + CONTINUATION, as received: HPACK-encoded) the client
 * takes, bytes: the bound HTTP/1.1's response head has (`MAX_HEAD_BYTES`, h1-pool.ts). Without it a
 * server could grow one block without end (a 1.2 GB block took bench to 2.67 GB of RSS).
 */
const MAX_HEADER_BLOCK_BYTES = 64 * 1024;

/*
 * Budgets against a server that floods the client, taken from nghttp2's defaults so that h2lab's
 * client gives a server what h2load (and node:http2) give it. Past one, the connection ends with
 * GOAWAY ENHANCE_YOUR_CALM (RFC 9113 §10.5) and its streams fail as `protocol`.
 */

/**
 * CONTINUATION frames one header block may take: nghttp2's `max_continuations` default (8). With
 * {@link MAX_HEADER_BLOCK_BYTES} alone a flood of empty CONTINUATION frames is never too large.
 */
const MAX_CONTINUATIONS = 8;

/**
 * How long one header block may stay open, ms. No other frame may come while it is (RFC 9113 §6.10),
 * so the whole connection waits for it; a request that times out meanwhile ends the connection too.
 */
const HEADER_BLOCK_TIMEOUT_MS = 10_000;

/**
 * Frames that cost the client work and carry nothing it asked for — SETTINGS and PING (each needs an
 * ACK), DATA without payload or END_STREAM, PRIORITY and frames of unknown types — draw on one token
 * bucket per connection: {@link GLITCH_BURST} tokens, {@link GLITCH_RATE_PER_S} more each second.
 * nghttp2's glitch limiter and its stream-reset limiter use these numbers (burst 1,000, 33/s, as in
 * the nghttp2 1.61–1.70 that Node 20–24 bundle); node:http2 allows 1,000 invalid frames
 * (`maxSessionInvalidFrames`), and nghttp2 keeps at most 1,000 unsent ACKs (`max_outbound_ack`).
 */
const GLITCH_BURST = 1000;
/** See {@link GLITCH_BURST}. */
const GLITCH_RATE_PER_S = 33;

/** Entries one SETTINGS frame may carry: nghttp2's `max_settings` default (32). */
const MAX_SETTINGS_ENTRIES = 32;

/** How a stream ended. */
export type StreamEndReason =
  /** END_STREAM received: the response is complete. */
  | 'end'
  /** The server reset the stream (RST_STREAM); `code` says why. */
  | 'reset'
  /** GOAWAY named a last stream below this one: the server never processed it (RFC 9113 §6.8). */
  | 'goaway'
  /** The connection ended (closed, failed, or a connection error) before the stream did. */
  | 'connection'
  /** The client cancelled it ({@link H2ClientSession.cancel}). */
  | 'cancel'
  /**
   * The response is malformed (RFC 9113 §8.1.1): its DATA add up to more or less than its
   * content-length. A stream error of type PROTOCOL_ERROR, whatever END_STREAM said.
   */
  | 'malformed'
  /**
   * The client ended the connection for an error the server made on it (RFC 9113 §5.4.1: an invalid
   * HPACK block is COMPRESSION_ERROR, a frame out of place PROTOCOL_ERROR); `code` is the one sent.
   */
  | 'protocol';

/** Receives one stream's events. Called synchronously from the socket's data handler. */
export interface StreamHandler {
  /**
   * Final response headers (1xx responses are skipped). `headers` only with `collectHeaders`;
   * `blockBytes`: the header block's bytes as received (HPACK-encoded, HEADERS and CONTINUATION payloads).
   */
  onHeaders(status: number, headers: Array<[string, string]> | undefined, blockBytes: number): void;
  /** Response body bytes (padding excluded). */
  onData(bytes: number): void;
  /** Called exactly once. `code` is the RST_STREAM or GOAWAY error code where there was one. */
  onEnd(reason: StreamEndReason, code: number, detail: string | undefined): void;
  /**
   * The request was HEAD: the response's content-length describes a body it does not carry
   * (RFC 9110 §9.3.2), so it is not checked.
   */
  readonly bodyless?: boolean;
}

/** One request stream. */
export class H2Stream {
  readonly id: number;
  readonly handler: StreamHandler;
  /** Bytes the server may still send before our next WINDOW_UPDATE. */
  recvUnacked = 0;
  /** Our send window on this stream (request bodies). */
  sendWindow: number;
  body: Uint8Array | undefined;
  bodyOffset = 0;
  gotFinal = false;
  /** The final response's content-length, bytes; -1 when it has none (or need not match). */
  expectedBytes = -1;
  /** Response body bytes received (padding excluded). */
  receivedBytes = 0;
  /** END_STREAM sent. */
  localDone = false;
  /** The credit its receive window gave the server (flow-control stalls, flow-stalls.ts). */
  readonly credit: CreditLedger;

  constructor(id: number, handler: StreamHandler, sendWindow: number, recvWindow: number) {
    this.id = id;
    this.handler = handler;
    this.sendWindow = sendWindow;
    this.credit = new CreditLedger(recvWindow);
  }
}

/** Options of one session. */
export interface H2SessionOptions {
  /** SETTINGS_INITIAL_WINDOW_SIZE we advertise: each stream's receive window, bytes. */
  streamWindowBytes: number;
  /** The connection's receive window, bytes (raised from 65,535 by a WINDOW_UPDATE on stream 0). */
  connectionWindowBytes: number;
  /** Materialise every response header field (tests, probes); default only `:status`. */
  collectHeaders?: boolean;
  /**
   * Clock for flow-control stall times, ms (only differences are used). Default `performance.now()`;
   * not the run's clock, whose origin moves when the run starts after its connections opened.
   */
  now?: () => number;
  /**
   * The connection's round-trip time, ms (its TCP handshake): a window limit counts as a stall only
   * when the next credit was granted less than this long before (flow-stalls.ts). The SETTINGS
   * round trip is measured too and the lower one used.
   */
  rttMs?: number;
  /**
   * Where the socket's bytes come from when it reads into a reused buffer (a cleartext socket with
   * `onread`, src/transport/connect.ts) instead of emitting `data`: the session attaches its reader
   * and copies whatever it keeps past a call. Default: `data` events.
   */
  reads?: { attach(reader: (bytes: Buffer) => void): void };
  /** How long one response header block may stay open, ms; default {@link HEADER_BLOCK_TIMEOUT_MS}. */
  headerBlockTimeoutMs?: number;
  /** Handed every byte the session reads and writes (the frame log, `frame-log.ts`). Default none. */
  frameLog?: { bytes(dir: 'in' | 'out', chunk: Buffer): void };
}

/** Why {@link H2ClientSession.ready} failed. */
export class H2SetupError extends Error {
  /**
   * `http1`: the server answered the preface in HTTP/1.1 (`statusLine` says how); `protocol`: it
   * answered with something that is not HTTP/2 (`statusLine` holds its first bytes).
   */
  readonly kind: 'http1' | 'closed' | 'protocol' | 'timeout';
  readonly statusLine: string | undefined;
  constructor(kind: H2SetupError['kind'], message: string, statusLine?: string) {
    super(message);
    this.kind = kind;
    this.statusLine = statusLine;
  }
}

/** A connection error (RFC 9113 §5.4.1) found while reading the server's frames. */
class ConnError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

const ARENA_BYTES = 64 * 1024;

/**
 * The client side of one HTTP/2 connection. Construct it on a connected socket (TLS with ALPN `h2`,
 * or cleartext for h2c with prior knowledge), await {@link ready}, then {@link request}.
 */
export class H2ClientSession {
  /** The server's SETTINGS_MAX_CONCURRENT_STREAMS, or {@link UNLIMITED_STREAMS}. */
  maxConcurrentStreams = UNLIMITED_STREAMS;
  /** The server's SETTINGS_HEADER_TABLE_SIZE: how large our encoder's dynamic table may be. */
  peerHeaderTableSize = DEFAULT_HEADER_TABLE_BYTES;
  /**
   * Why the server's first bytes were not HTTP/2 (`http1`, `protocol`), set before the session's
   * streams end, so that a stream sent before them can say so.
   */
  setupError: H2SetupError | undefined;
  /** The last stream id of a GOAWAY received, or -1. */
  goawayLastStream = -1;
  /** The error code of the GOAWAY received. */
  goawayCode = -1;
  /** Streams open now (sent and not yet ended). */
  get activeStreams(): number {
    return this.streams.size;
  }
  /** Called on every SETTINGS frame from the server (after it is applied). */
  onSettings: (() => void) | undefined;
  /** Called when a GOAWAY arrives (after streams above its last id have ended). */
  onGoaway: ((lastStreamId: number, code: number, debug: string) => void) | undefined;
  /** Called once when the connection is gone; `error` when it ended badly. */
  onClose: ((error: string | undefined) => void) | undefined;
  /** The socket error that ended the connection, when one did (its `code` tells a TLS alert). */
  socketError: (Error & { code?: string }) | undefined;

  private readonly socket: net.Socket;
  private readonly opts: H2SessionOptions;
  private readonly decoder = new HpackDecoder(DEFAULT_HEADER_TABLE_BYTES);
  private readonly streams = new StreamTable<H2Stream>();
  private nextStreamId = 1;
  private closed = false;
  /** The error code of a connection error the client sent (GOAWAY) for the server's doing, if any. */
  private sentErrorCode: number | undefined;
  private settingsSeen = false;
  private readyWait: { resolve: () => void; reject: (e: H2SetupError) => void } | undefined;

  // Reading.
  private pending: Buffer | undefined;
  /** The first bytes the server sent, kept until its SETTINGS arrive (for a setup error). */
  private firstBytes: string | undefined;
  /** A header block in progress (HEADERS without END_HEADERS, then CONTINUATION). */
  private hbStream = 0;
  private hbFlags = 0;
  private hbParts: Buffer[] = [];
  /** Bytes of the header block in progress, bounded by {@link MAX_HEADER_BLOCK_BYTES}. */
  private hbBytes = 0;
  /** CONTINUATION frames of the header block in progress, bounded by {@link MAX_CONTINUATIONS}. */
  private hbContinuations = 0;
  /** Ends the connection when the header block in progress outlives its time. */
  private hbTimer: NodeJS.Timeout | undefined;
  /** The flood budget's tokens ({@link GLITCH_BURST}) and when it was last refilled, ms. */
  private glitchTokens = GLITCH_BURST;
  private glitchAtMs = 0;
  /** Frames drawn from the flood budget, by kind, for the message that ends the connection. */
  private readonly glitches = new Map<string, number>();
  private connRecvUnacked = 0;
  /** The connection window as the server has it: the RFC's 65,535 or more (it cannot shrink). */
  private readonly connWindow: number;
  private readonly streamWindow: number;
  private readonly connCredit: CreditLedger;
  private readonly stalls: StallBook;
  private readonly now: () => number;
  /** When our SETTINGS left, ms, until its ACK gives a round trip (-1 after). */
  private settingsSentMs: number;

  // Writing.
  private arena = Buffer.allocUnsafe(ARENA_BYTES);
  private arenaStart = 0;
  private arenaPos = 0;
  private out: Buffer[] = [];
  private flushScheduled = false;

  // Sending request bodies (RFC 9113 §6.9).
  private peerInitialWindow = DEFAULT_WINDOW_BYTES;
  private peerMaxFrame = DEFAULT_MAX_FRAME_BYTES;
  private connSendWindow = DEFAULT_WINDOW_BYTES;
  private readonly sending: H2Stream[] = [];

  /** Reads arrive as views of a buffer the next read overwrites (`H2SessionOptions.reads`). */
  private readonly sharedReads: boolean;

  constructor(socket: net.Socket, opts: H2SessionOptions) {
    this.socket = socket;
    this.opts = opts;
    this.streamWindow = Math.min(opts.streamWindowBytes, MAX_WINDOW_BYTES);
    this.connWindow = Math.max(DEFAULT_WINDOW_BYTES, Math.min(opts.connectionWindowBytes, MAX_WINDOW_BYTES));
    this.connCredit = new CreditLedger(this.connWindow);
    this.now = opts.now ?? (() => performance.now());
    this.stalls = new StallBook(this.now, opts.rttMs);
    this.sharedReads = opts.reads !== undefined;
    if (opts.reads) opts.reads.attach((b) => this.onData(b));
    else socket.on('data', (b: Buffer) => this.onData(b));
    socket.on('error', (err: Error & { code?: string }) => {
      this.socketError ??= err;
      this.terminate(`${err.code ? `${err.code}: ` : ''}${err.message}`);
    });
    socket.on('close', () => this.terminate('connection closed by the server'));
    // The preface, our SETTINGS and the connection window (RFC 9113 §3.4, §6.5, §6.9.2).
    this.pushRaw(CLIENT_PREFACE);
    const settings: Array<[number, number]> = [
      [0x2, 0], // ENABLE_PUSH
      [0x4, this.streamWindow], // INITIAL_WINDOW_SIZE
    ];
    let p = this.frameHeader(settings.length * 6, FrameType.SETTINGS, 0, 0);
    for (const [id, v] of settings) {
      this.arena.writeUInt16BE(id, p);
      this.arena.writeUInt32BE(v, p + 2);
      p += 6;
    }
    this.arenaPos = p;
    const extra = this.connWindow - DEFAULT_WINDOW_BYTES;
    if (extra > 0) this.windowUpdate(0, extra);
    this.flush();
    this.settingsSentMs = this.now();
  }

  /**
   * Resolves on the server's first SETTINGS frame (its limits are then known). Rejects with an
   * {@link H2SetupError}: `http1` when the server answered in HTTP/1.1, `closed`, `protocol`, or
   * `timeout` after `timeoutMs`.
   */
  ready(timeoutMs: number): Promise<void> {
    if (this.settingsSeen) return Promise.resolve();
    if (this.closed) return Promise.reject(new H2SetupError('closed', 'connection closed'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.readyWait = undefined;
        reject(new H2SetupError('timeout', `no SETTINGS from the server within ${timeoutMs} ms`));
        this.destroy();
      }, timeoutMs);
      this.readyWait = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
    });
  }

  /** False once no new stream may be opened (GOAWAY received, closed, stream ids exhausted). */
  usable(): boolean {
    return !this.closed && this.goawayLastStream < 0 && this.nextStreamId < 2 ** 31 - 1;
  }

  /**
   * Opens a stream: HEADERS with `block` (an HPACK block, e.g. from encodeHeaderBlock), then `body`
   * as DATA within the send windows. Throws when the session is not {@link usable}.
   */
  request(block: Buffer, body: Uint8Array | undefined, handler: StreamHandler): H2Stream {
    if (!this.usable()) throw new Error(this.closed ? 'session closed' : 'session is going away');
    const id = this.nextStreamId;
    this.nextStreamId += 2;
    const s = new H2Stream(id, handler, this.peerInitialWindow, this.streamWindow);
    this.streams.add(s);
    const hasBody = body !== undefined && body.length > 0;
    this.headers(id, block, hasBody ? 0 : F_END_STREAM);
    if (hasBody) {
      s.body = body;
      this.sending.push(s);
      this.pumpBodies();
    } else {
      s.localDone = true;
    }
    this.scheduleFlush();
    return s;
  }

  /** Resets a stream (RST_STREAM, RFC 9113 §6.4; CANCEL by default, §8.7) and ends it with `cancel`. */
  cancel(s: H2Stream, code: number = H2Code.CANCEL): void {
    if (!this.streams.delete(s.id)) return;
    this.stalls.end(s.credit, 'stream');
    this.dropSending(s);
    if (this.hbStream === s.id && !this.closed) {
      // Its header block is still open: nothing else can arrive on the connection until it ends, so
      // the connection ends first (a request started from onEnd must not land on it).
      this.connectionError(
        H2Code.ENHANCE_YOUR_CALM,
        `header block of stream ${s.id} unfinished when it was cancelled`,
      );
    } else if (!this.closed) {
      this.rstStream(s.id, code);
      this.scheduleFlush();
    }
    s.handler.onEnd('cancel', code, undefined);
  }

  /** Sends GOAWAY(NO_ERROR) and closes the connection; open streams end with `connection`. */
  close(): void {
    if (this.closed) return;
    this.goaway(H2Code.NO_ERROR, '');
    this.flush();
    this.terminate('session closed by the client', true);
  }

  /** Flow-control stalls on this connection so far (flow-stalls.ts). */
  flowStalls(): FlowStalls {
    return this.stalls.snapshot();
  }

  /** Closes the connection at once. */
  destroy(): void {
    this.terminate('session destroyed');
  }

  // ---- reading ------------------------------------------------------------------------------------

  private onData(chunk: Buffer): void {
    this.opts.frameLog?.bytes('in', chunk);
    let buf = chunk;
    if (this.pending) {
      buf = Buffer.concat([this.pending, chunk]);
      this.pending = undefined;
    }
    if (!this.settingsSeen && this.firstBytes === undefined) {
      this.firstBytes = buf.toString('latin1', 0, Math.min(buf.length, 60)).replace(/[^\x20-\x7e]/g, '.');
    }
    if (!this.settingsSeen && buf.length >= 5 && buf.toString('latin1', 0, 5) === 'HTTP/') {
      const line = buf.toString('latin1', 0, Math.min(buf.length, 200)).split('\r\n')[0]!;
      this.setupFailed(new H2SetupError('http1', `the server answered in HTTP/1.1: ${line}`, line));
      return;
    }
    let off = 0;
    const n = buf.length;
    try {
      while (n - off >= FRAME_HEADER_BYTES) {
        const len = (buf[off]! << 16) | (buf[off + 1]! << 8) | buf[off + 2]!;
        if (len > DEFAULT_MAX_FRAME_BYTES) {
          throw new ConnError(
            H2Code.FRAME_SIZE_ERROR,
            `frame of ${len} bytes exceeds our SETTINGS_MAX_FRAME_SIZE of ${DEFAULT_MAX_FRAME_BYTES}`,
          );
        }
        if (n - off < FRAME_HEADER_BYTES + len) break;
        const type = buf[off + 3]!;
        const flags = buf[off + 4]!;
        const sid = buf.readUInt32BE(off + 5) & 0x7fffffff;
        const start = off + FRAME_HEADER_BYTES;
        off = start + len;
        this.frame(type, flags, sid, buf, start, off);
        if (this.closed) return;
      }
    } catch (err) {
      const e = err as Error;
      const code =
        err instanceof ConnError
          ? err.code
          : err instanceof HpackError
            ? H2Code.COMPRESSION_ERROR
            : H2Code.INTERNAL_ERROR;
      this.connectionError(code, e.message);
      return;
    }
    if (off < n) {
      const rest = off === 0 ? buf : buf.subarray(off);
      // A copy when `buf` is the read itself and reads share a buffer; a concat is ours already.
      this.pending = this.sharedReads && buf === chunk ? Buffer.from(rest) : rest;
    }
    if (this.out.length > 0 || this.arenaPos > this.arenaStart) this.scheduleFlush();
  }

  private frame(type: number, flags: number, sid: number, buf: Buffer, start: number, end: number): void {
    if (this.hbStream !== 0 && type !== FrameType.CONTINUATION) {
      throw new ConnError(H2Code.PROTOCOL_ERROR, 'a header block was interrupted by another frame');
    }
    if (!this.settingsSeen && type !== FrameType.SETTINGS) {
      throw new ConnError(H2Code.PROTOCOL_ERROR, 'the server did not start with SETTINGS');
    }
    switch (type) {
      case FrameType.DATA:
        this.onDataFrame(flags, sid, buf, start, end);
        return;
      case FrameType.HEADERS:
        this.onHeadersFrame(flags, sid, buf, start, end);
        return;
      case FrameType.CONTINUATION:
        if (sid !== this.hbStream || this.hbStream === 0)
          throw new ConnError(H2Code.PROTOCOL_ERROR, 'unexpected CONTINUATION');
        this.hbParts.push(Buffer.from(buf.subarray(start, end)));
        this.hbBytes += end - start;
        if (this.hbBytes > MAX_HEADER_BLOCK_BYTES) this.headerBlockTooLarge();
        if (++this.hbContinuations > MAX_CONTINUATIONS && !(flags & F_END_HEADERS)) {
          this.headerBlockTooLarge(
            `response header block in more than ${MAX_CONTINUATIONS} CONTINUATION frames`,
          );
        }
        if (flags & F_END_HEADERS) {
          const block = Buffer.concat(this.hbParts);
          const hsid = this.hbStream;
          this.endHeaderBlock();
          this.headerBlock(hsid, this.hbFlags, block);
        }
        return;
      case FrameType.RST_STREAM: {
        if (end - start !== 4) throw new ConnError(H2Code.FRAME_SIZE_ERROR, 'RST_STREAM of wrong size');
        const s = this.streams.get(sid);
        if (!s) return;
        this.streams.delete(sid);
        this.stalls.end(s.credit, 'stream');
        this.dropSending(s);
        const code = buf.readUInt32BE(start);
        if (
          code === H2Code.NO_ERROR &&
          s.gotFinal &&
          s.expectedBytes >= 0 &&
          s.receivedBytes === s.expectedBytes
        ) {
          // RFC 9113 §8.1: a server may end a stream with RST_STREAM(NO_ERROR) once its response is
          // complete. Here every byte of its content-length came: the response is whole (node:http2
          // does this under load; nghttp2's clients and h2load count it ok). Without a
          // content-length, completeness is not known and it stays a reset.
          this.stalls.end(s.credit, 'stream', true);
          s.handler.onEnd('end', 0, undefined);
          return;
        }
        s.handler.onEnd('reset', code, `RST_STREAM ${H2_ERROR_NAMES[code] ?? code}`);
        return;
      }
      case FrameType.SETTINGS:
        this.onSettingsFrame(flags, sid, buf, start, end);
        return;
      case FrameType.PUSH_PROMISE:
        throw new ConnError(H2Code.PROTOCOL_ERROR, 'PUSH_PROMISE although SETTINGS_ENABLE_PUSH is 0');
      case FrameType.PING:
        if (end - start !== 8 || sid !== 0) throw new ConnError(H2Code.FRAME_SIZE_ERROR, 'malformed PING');
        if (!(flags & FLAG_ACK)) {
          this.glitch('PING');
          const p = this.frameHeader(8, FrameType.PING, FLAG_ACK, 0);
          buf.copy(this.arena, p, start, end);
          this.arenaPos = p + 8;
        }
        return;
      case FrameType.GOAWAY:
        this.onGoawayFrame(buf, start, end);
        return;
      case FrameType.WINDOW_UPDATE: {
        if (end - start !== 4) throw new ConnError(H2Code.FRAME_SIZE_ERROR, 'WINDOW_UPDATE of wrong size');
        const inc = buf.readUInt32BE(start) & 0x7fffffff;
        if (sid === 0) {
          if (inc === 0) throw new ConnError(H2Code.PROTOCOL_ERROR, 'WINDOW_UPDATE of 0 on the connection');
          this.connSendWindow += inc;
          if (this.connSendWindow > MAX_WINDOW_BYTES)
            throw new ConnError(H2Code.FLOW_CONTROL_ERROR, 'connection send window above 2^31-1');
        } else {
          const s = this.streams.get(sid);
          if (!s) return;
          if (inc === 0 || s.sendWindow + inc > MAX_WINDOW_BYTES) {
            this.cancel(s, inc === 0 ? H2Code.PROTOCOL_ERROR : H2Code.FLOW_CONTROL_ERROR);
            return;
          }
          s.sendWindow += inc;
        }
        if (this.sending.length > 0) this.pumpBodies();
        return;
      }
      default:
        // PRIORITY and unknown frame types are ignored (RFC 9113 §5.5, §6.3), within the flood budget.
        this.glitch(type === FrameType.PRIORITY ? 'PRIORITY' : 'unknown-type');
        return;
    }
  }

  private onDataFrame(flags: number, sid: number, buf: Buffer, start: number, end: number): void {
    if (sid === 0) throw new ConnError(H2Code.PROTOCOL_ERROR, 'DATA on stream 0');
    const flowLen = end - start;
    let dataLen = flowLen;
    if (flags & F_PADDED) {
      const pad = buf[start]!;
      dataLen = flowLen - 1 - pad;
      if (dataLen < 0) throw new ConnError(H2Code.PROTOCOL_ERROR, 'DATA padding longer than the frame');
    }
    const endStream = (flags & F_END_STREAM) !== 0;
    if (flowLen === 0 && !endStream) this.glitch('empty DATA');
    // Every DATA frame counts against the connection window, whatever its stream's state (§6.9).
    this.connRecvUnacked += flowLen;
    let connLimit = 0;
    if (this.connRecvUnacked >= this.opts.connectionWindowBytes >>> 1) {
      this.windowUpdate(0, this.connRecvUnacked);
      this.connRecvUnacked = 0;
      connLimit = this.connCredit.received + flowLen + this.connWindow;
    }
    // For the connection, a response that ends is not "nothing waiting" while other streams are open:
    // a burst of small responses ends each window on some stream's last frame.
    const connDone = endStream && this.streams.size <= 1;
    const waited = this.stalls.frame(this.connCredit, 'connection', flowLen, connDone, connLimit, false);
    const s = this.streams.get(sid);
    if (!s) return;
    if (!s.gotFinal) {
      this.streams.delete(sid);
      this.dropSending(s);
      this.rstStream(sid, H2Code.PROTOCOL_ERROR);
      s.handler.onEnd('reset', H2Code.PROTOCOL_ERROR, 'DATA before the response headers');
      return;
    }
    if (dataLen > 0) s.handler.onData(dataLen);
    s.receivedBytes += dataLen;
    if (s.expectedBytes >= 0 && s.receivedBytes > s.expectedBytes) {
      this.malformed(s, endStream, `response body longer than its content-length ${s.expectedBytes}`);
      return;
    }
    if (endStream) {
      this.stalls.frame(s.credit, 'stream', flowLen, true, 0, waited);
      this.endStream(s);
      return;
    }
    s.recvUnacked += flowLen;
    let streamLimit = 0;
    if (s.recvUnacked >= this.opts.streamWindowBytes >>> 1) {
      this.windowUpdate(sid, s.recvUnacked);
      s.recvUnacked = 0;
      streamLimit = s.credit.received + flowLen + this.streamWindow;
    }
    this.stalls.frame(s.credit, 'stream', flowLen, false, streamLimit, waited);
  }

  private onHeadersFrame(flags: number, sid: number, buf: Buffer, start: number, end: number): void {
    if (sid === 0) throw new ConnError(H2Code.PROTOCOL_ERROR, 'HEADERS on stream 0');
    let p = start;
    let stop = end;
    if (flags & F_PADDED) {
      const pad = buf[p++]!;
      stop -= pad;
    }
    if (flags & F_PRIORITY) p += 5;
    if (p > stop) throw new ConnError(H2Code.PROTOCOL_ERROR, 'HEADERS padding longer than the frame');
    if (flags & F_END_HEADERS) {
      this.headerBlock(sid, flags, buf.subarray(p, stop));
    } else {
      this.hbStream = sid;
      this.hbFlags = flags;
      this.hbParts = [Buffer.from(buf.subarray(p, stop))];
      this.hbBytes = stop - p;
      this.hbContinuations = 0;
      const ms = this.opts.headerBlockTimeoutMs ?? HEADER_BLOCK_TIMEOUT_MS;
      this.hbTimer = setTimeout(() => {
        this.hbTimer = undefined;
        this.connectionError(H2Code.ENHANCE_YOUR_CALM, `response header block unfinished after ${ms} ms`);
      }, ms);
      this.hbTimer.unref();
    }
  }

  /** The header block in progress is complete (or abandoned): the connection takes other frames. */
  private endHeaderBlock(): void {
    this.hbStream = 0;
    this.hbParts = [];
    clearTimeout(this.hbTimer);
    this.hbTimer = undefined;
  }

  /**
   * One frame drawn from the flood budget ({@link GLITCH_BURST}); past it, a connection error
   * ENHANCE_YOUR_CALM naming what the server sent.
   */
  private glitch(kind: string): void {
    this.glitches.set(kind, (this.glitches.get(kind) ?? 0) + 1);
    const now = this.now();
    if (this.glitchAtMs > 0) {
      this.glitchTokens = Math.min(
        GLITCH_BURST,
        this.glitchTokens + ((now - this.glitchAtMs) * GLITCH_RATE_PER_S) / 1000,
      );
    }
    this.glitchAtMs = now;
    if (--this.glitchTokens >= 0) return;
    const counts = [...this.glitches].map(([k, n]) => `${n} ${k}`).join(', ');
    throw new ConnError(
      H2Code.ENHANCE_YOUR_CALM,
      `${kind} flood: ${counts} frames, past the budget of ${GLITCH_BURST} plus ${GLITCH_RATE_PER_S}/s`,
    );
  }

  /**
   * A response header block past {@link MAX_HEADER_BLOCK_BYTES}: its stream fails `malformed`
   * (failure class `protocol`). The block cannot be skipped — HPACK state is shared by the whole
   * connection (RFC 7541 §2.2) — so the connection ends too, with ENHANCE_YOUR_CALM (RFC 9113 §10.5.1).
   */
  private headerBlockTooLarge(
    detail = `response header block larger than ${MAX_HEADER_BLOCK_BYTES} bytes`,
  ): never {
    const s = this.streams.get(this.hbStream);
    this.endHeaderBlock();
    if (s) {
      this.streams.delete(s.id);
      this.dropSending(s);
      s.handler.onEnd('malformed', H2Code.ENHANCE_YOUR_CALM, `ENHANCE_YOUR_CALM: ${detail}`);
    }
    throw new ConnError(H2Code.ENHANCE_YOUR_CALM, detail);
  }

  /** A complete header block: decode it (always: HPACK state), then deliver it if the stream lives. */
  private headerBlock(sid: number, flags: number, block: Buffer): void {
    const collect = this.opts.collectHeaders === true;
    const d = this.decoder.decode(block, collect);
    const s = this.streams.get(sid);
    if (!s) return;
    if (!s.gotFinal) {
      if (d.status < 0) {
        this.streams.delete(sid);
        this.rstStream(sid, H2Code.PROTOCOL_ERROR);
        s.handler.onEnd('reset', H2Code.PROTOCOL_ERROR, 'response headers without :status');
        return;
      }
      if (d.status < 200) return; // 1xx: informational, a final response follows (RFC 9110 §15.2).
      s.gotFinal = true;
      s.handler.onHeaders(d.status, d.headers, block.length);
      // 204 and 304 carry no body whatever their content-length says (RFC 9110 §8.6).
      if (d.contentLength !== undefined && !s.handler.bodyless && d.status !== 204 && d.status !== 304) {
        if (d.contentLength < 0) {
          this.malformed(s, (flags & F_END_STREAM) !== 0, 'invalid or conflicting content-length');
          return;
        }
        s.expectedBytes = d.contentLength;
      }
    }
    // A second block is trailers; it must end the stream (RFC 9113 §8.1), the body being complete.
    if (flags & F_END_STREAM) {
      this.stalls.end(s.credit, 'stream', true);
      this.endStream(s);
    }
  }

  private endStream(s: H2Stream): void {
    if (s.expectedBytes >= 0 && s.receivedBytes !== s.expectedBytes) {
      // Not a complete response: a server that ends a stream early must say so with RST_STREAM.
      this.malformed(
        s,
        true,
        `response ended after ${s.receivedBytes} of its content-length ${s.expectedBytes} bytes`,
      );
      return;
    }
    this.streams.delete(s.id);
    if (!s.localDone) {
      // The response is complete before the request body is (RFC 9113 §8.1): stop sending it.
      this.dropSending(s);
      this.rstStream(s.id, H2Code.NO_ERROR);
    }
    s.handler.onEnd('end', 0, undefined);
  }

  /**
   * Ends a stream whose response is malformed as a stream error PROTOCOL_ERROR (RFC 9113 §8.1.1).
   * No RST_STREAM once both sides have ended it: the stream is closed (§5.1).
   */
  private malformed(s: H2Stream, remoteEnded: boolean, detail: string): void {
    this.streams.delete(s.id);
    this.dropSending(s);
    if (!(remoteEnded && s.localDone)) this.rstStream(s.id, H2Code.PROTOCOL_ERROR);
    s.handler.onEnd('malformed', H2Code.PROTOCOL_ERROR, detail);
  }

  private onSettingsFrame(flags: number, sid: number, buf: Buffer, start: number, end: number): void {
    if (sid !== 0) throw new ConnError(H2Code.PROTOCOL_ERROR, 'SETTINGS on a stream');
    if (flags & FLAG_ACK) {
      if (this.settingsSentMs >= 0) {
        this.stalls.observeRtt(this.now() - this.settingsSentMs);
        this.settingsSentMs = -1;
      }
      return;
    }
    if ((end - start) % 6 !== 0) throw new ConnError(H2Code.FRAME_SIZE_ERROR, 'SETTINGS of wrong size');
    if ((end - start) / 6 > MAX_SETTINGS_ENTRIES) {
      throw new ConnError(
        H2Code.ENHANCE_YOUR_CALM,
        `SETTINGS with ${(end - start) / 6} entries, more than ${MAX_SETTINGS_ENTRIES}`,
      );
    }
    if (this.settingsSeen) this.glitch('SETTINGS');
    for (let p = start; p < end; p += 6) {
      const id = buf.readUInt16BE(p);
      const v = buf.readUInt32BE(p + 2);
      switch (id) {
        case 0x3:
          this.maxConcurrentStreams = v;
          break;
        case 0x4: {
          if (v > MAX_WINDOW_BYTES)
            throw new ConnError(H2Code.FLOW_CONTROL_ERROR, `INITIAL_WINDOW_SIZE ${v} above 2^31-1`);
          // A change applies to every open stream's send window (§6.9.2).
          const delta = v - this.peerInitialWindow;
          this.peerInitialWindow = v;
          for (const s of this.streams.values()) s.sendWindow += delta;
          break;
        }
        case 0x5:
          if (v < DEFAULT_MAX_FRAME_BYTES || v > 16_777_215)
            throw new ConnError(H2Code.PROTOCOL_ERROR, `MAX_FRAME_SIZE ${v} out of range`);
          this.peerMaxFrame = v;
          break;
        case 0x1:
          // Limits the dynamic table of our encoder (RFC 7541 §4.2); the caller's encoder watches it.
          this.peerHeaderTableSize = v;
          break;
        default:
          break;
      }
    }
    this.frameHeader(0, FrameType.SETTINGS, FLAG_ACK, 0);
    if (this.sending.length > 0) this.pumpBodies();
    if (!this.settingsSeen) {
      this.settingsSeen = true;
      const w = this.readyWait;
      this.readyWait = undefined;
      w?.resolve();
    }
    this.onSettings?.();
  }

  private onGoawayFrame(buf: Buffer, start: number, end: number): void {
    if (end - start < 8) throw new ConnError(H2Code.FRAME_SIZE_ERROR, 'GOAWAY shorter than 8 bytes');
    const last = buf.readUInt32BE(start) & 0x7fffffff;
    const code = buf.readUInt32BE(start + 4);
    const debug = buf.toString('utf8', start + 8, end);
    this.goawayLastStream = this.goawayLastStream < 0 ? last : Math.min(last, this.goawayLastStream);
    this.goawayCode = code;
    const name = H2_ERROR_NAMES[code] ?? String(code);
    for (const s of this.streams.values()) {
      if (s.id > this.goawayLastStream) {
        this.streams.delete(s.id);
        this.stalls.end(s.credit, 'stream');
        this.dropSending(s);
        s.handler.onEnd('goaway', code, `GOAWAY ${name}: stream ${s.id} above last stream ${last}`);
      }
    }
    this.onGoaway?.(last, code, debug);
  }

  // ---- writing ------------------------------------------------------------------------------------

  /** Writes a frame header for a payload of `len` bytes into the arena; returns where the payload goes. */
  private frameHeader(len: number, type: number, flags: number, sid: number): number {
    if (this.arena.length - this.arenaPos < FRAME_HEADER_BYTES + len) this.newArena(FRAME_HEADER_BYTES + len);
    const a = this.arena;
    let o = this.arenaPos;
    a[o++] = (len >>> 16) & 0xff;
    a[o++] = (len >>> 8) & 0xff;
    a[o++] = len & 0xff;
    a[o++] = type;
    a[o++] = flags;
    a.writeUInt32BE(sid, o);
    o += 4;
    this.arenaPos = o;
    return o;
  }

  /** Moves what the arena holds to the output list and starts a fresh arena with `need` bytes free. */
  private newArena(need: number): void {
    this.seal();
    this.arena = Buffer.allocUnsafe(Math.max(ARENA_BYTES, need));
    this.arenaStart = 0;
    this.arenaPos = 0;
  }

  private seal(): void {
    if (this.arenaPos > this.arenaStart) {
      this.out.push(this.arena.subarray(this.arenaStart, this.arenaPos));
      this.arenaStart = this.arenaPos;
    }
  }

  private pushRaw(b: Buffer): void {
    if (this.arena.length - this.arenaPos < b.length) this.newArena(b.length);
    b.copy(this.arena, this.arenaPos);
    this.arenaPos += b.length;
  }

  private headers(sid: number, block: Buffer, flags: number): void {
    const max = this.peerMaxFrame;
    if (block.length <= max) {
      const p = this.frameHeader(block.length, FrameType.HEADERS, flags | F_END_HEADERS, sid);
      block.copy(this.arena, p);
      this.arenaPos = p + block.length;
      return;
    }
    // Larger than a frame: HEADERS then CONTINUATION frames, back to back (RFC 9113 §6.10).
    for (let o = 0; o < block.length; o += max) {
      const part = block.subarray(o, Math.min(block.length, o + max));
      const last = o + max >= block.length;
      const type = o === 0 ? FrameType.HEADERS : FrameType.CONTINUATION;
      const f = (o === 0 ? flags : 0) | (last ? F_END_HEADERS : 0);
      const p = this.frameHeader(part.length, type, f, sid);
      part.copy(this.arena, p);
      this.arenaPos = p + part.length;
    }
  }

  private windowUpdate(sid: number, inc: number): void {
    const p = this.frameHeader(4, FrameType.WINDOW_UPDATE, 0, sid);
    this.arena.writeUInt32BE(inc, p);
    this.arenaPos = p + 4;
  }

  private rstStream(sid: number, code: number): void {
    const p = this.frameHeader(4, FrameType.RST_STREAM, 0, sid);
    this.arena.writeUInt32BE(code, p);
    this.arenaPos = p + 4;
  }

  private goaway(code: number, debug: string): void {
    const d = Buffer.from(debug, 'utf8');
    const p = this.frameHeader(8 + d.length, FrameType.GOAWAY, 0, 0);
    // Last stream id: the highest server-initiated stream we processed — none (push is off).
    this.arena.writeUInt32BE(0, p);
    this.arena.writeUInt32BE(code, p + 4);
    d.copy(this.arena, p + 8);
    this.arenaPos = p + 8 + d.length;
  }

  /** Sends request body DATA as far as the stream and connection send windows allow. */
  private pumpBodies(): void {
    let i = 0;
    while (i < this.sending.length && this.connSendWindow > 0) {
      const s = this.sending[i]!;
      const body = s.body!;
      while (s.bodyOffset < body.length && s.sendWindow > 0 && this.connSendWindow > 0) {
        const n = Math.min(body.length - s.bodyOffset, s.sendWindow, this.connSendWindow, this.peerMaxFrame);
        const last = s.bodyOffset + n === body.length;
        this.frameHeader(n, FrameType.DATA, last ? F_END_STREAM : 0, s.id);
        this.seal();
        this.out.push(Buffer.from(body.buffer, body.byteOffset + s.bodyOffset, n));
        s.bodyOffset += n;
        s.sendWindow -= n;
        this.connSendWindow -= n;
      }
      if (s.bodyOffset === body.length) {
        s.localDone = true;
        s.body = undefined;
        this.sending.splice(i, 1);
      } else {
        i++;
      }
    }
    this.scheduleFlush();
  }

  private dropSending(s: H2Stream): void {
    if (s.body === undefined) return;
    s.body = undefined;
    const i = this.sending.indexOf(s);
    if (i >= 0) this.sending.splice(i, 1);
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.closed) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  /** Writes everything queued in one call (one `writev` when there are body buffers). */
  private flush(): void {
    this.seal();
    const out = this.out;
    if (out.length === 0 || this.socket.destroyed) {
      this.out = [];
      return;
    }
    this.out = [];
    if (this.opts.frameLog) for (const b of out) this.opts.frameLog.bytes('out', b);
    if (out.length === 1) {
      this.socket.write(out[0]!);
    } else {
      this.socket.cork();
      for (const b of out) this.socket.write(b);
      this.socket.uncork();
    }
  }

  // ---- ending -------------------------------------------------------------------------------------

  private setupFailed(e: H2SetupError): void {
    this.setupError = e;
    const w = this.readyWait;
    this.readyWait = undefined;
    w?.reject(e);
    this.terminate(e.message);
  }

  private connectionError(code: number, message: string): void {
    const detail = `${H2_ERROR_NAMES[code] ?? code}: ${message}`;
    if (code !== H2Code.INTERNAL_ERROR) this.sentErrorCode = code;
    if (!this.closed) {
      this.goaway(code, message.slice(0, 200));
      this.flush();
    }
    if (!this.settingsSeen) {
      this.setupFailed(new H2SetupError('protocol', `not an HTTP/2 server (${detail})`, this.firstBytes));
      return;
    }
    this.terminate(detail);
  }

  /** Ends the connection; `clean` when the client closed it on purpose (onClose gets no error). */
  private terminate(why: string, clean = false): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.hbTimer);
    const w = this.readyWait;
    this.readyWait = undefined;
    w?.reject(new H2SetupError('closed', why));
    const streams = this.streams.values();
    this.streams.clear();
    this.sending.length = 0;
    this.stalls.end(this.connCredit, 'connection');
    for (const s of streams) this.stalls.end(s.credit, 'stream');
    this.stalls.close();
    for (const s of streams) {
      const reason: StreamEndReason =
        this.goawayLastStream >= 0 && s.id > this.goawayLastStream
          ? 'goaway'
          : this.sentErrorCode !== undefined
            ? 'protocol'
            : 'connection';
      const code = reason === 'protocol' ? this.sentErrorCode! : this.goawayCode >= 0 ? this.goawayCode : -1;
      s.handler.onEnd(reason, code, why);
    }
    // end() lets a queued GOAWAY out first; destroy() follows so a peer that never closes cannot hold it.
    this.socket.end();
    this.socket.destroy();
    this.onClose?.(clean ? undefined : why);
  }
}

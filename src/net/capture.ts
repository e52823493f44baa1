/**
 * The capture stage of a link: every packet the relay read, in both directions, at the moment the
 * link model decided its fate, with that fate in words as the packet's pcapng comment:
 *
 * ```
 *   read ─▶ loss ─▶ bottleneck ─▶ delay ─▶ jitter ─▶ fate ─▶ capture: EPB { arrival time, first snapBytes,
 *                                                             "up: delay 100.412 ms (queue 0.412 ms)" |
 *                                                             "down: dropped (loss)" | "… (queue full)" }
 * ```
 * Runs inside the relay process (`relay.ts` calls {@link LinkCapture.record}; off, it costs one
 * branch per packet). Blocks go into 1 MiB chunks in memory and reach the disk only when the capture
 * stops, so the relay never waits for a disk; a per-run size cap bounds that memory, and what it and
 * the snap length cut is counted and said in the file's section comment and in the summary.
 * Comments are formatted in place (no string per packet: the relay allocates nothing per packet).
 *
 * One cut besides the snap length: zero bytes after a datagram's QUIC long-header packets (padding
 * outside any QUIC packet, which quiche — the fixture's and the page replay's QUIC server — appends
 * to its first flight to reach 1,200 bytes) are left out of the captured bytes (the packet keeps its
 * length, the comment says so). Wireshark 4.0 (Debian 12's tshark) reads those zeros as a short-header
 * packet, fails to decrypt it and, when its garbage key-phase bit reads as 1 (every other
 * connection), decrypts none of the server's 1-RTT packets after it; without them the capture
 * decrypts with Chromium's key log.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import type { DropReason } from './conditions/types.ts';
import { interfaceDescription, packetBlockBytes, sectionHeader, writePacketBlock } from './pcapng.ts';
import { quicPaddingAt } from './quic-datagram.ts';

/** What to capture. */
interface LinkCaptureOptions {
  /** Bytes of each packet kept (headers of IP, TCP/UDP and TLS fit in the default 256). */
  snapBytes: number;
  /** Stop recording once the file would exceed this many bytes (the rest is counted, not kept). */
  maxBytes: number;
  /** CLOCK_MONOTONIC ms minus epoch ms: the relay's clock → pcapng's wall-clock timestamps. */
  monotonicToEpochMs: number;
}

/** What a capture holds and what it cut, for the result. */
export interface CaptureSummary {
  /** Packets recorded, by direction (client → server "up", server → client "down"). */
  packets: { up: number; down: number };
  /** Recorded packets marked dropped, by cause. */
  dropped: { loss: number; queue: number };
  /** Packets longer than the snap length (kept truncated). */
  truncatedPackets: number;
  /** Packets seen after the size cap was reached (not in the file). */
  packetsNotRecorded: number;
  /** File size, bytes. */
  bytes: number;
  snapBytes: number;
  maxBytes: number;
}

const CHUNK = 1 << 20;
/**
 * The section header carries what was cut, so it is built when the file is written; its room and the
 * two interface blocks' count against the cap from the start.
 */
const HEADER_ROOM = 1024;
/**
 * Chunks allocated before the capture starts (as many as the size cap, up to this) and kept from one
 * capture to the next: memory outside V8's heap that grows while packets flow makes V8 collect, and
 * those collections (up to 1.1 ms each, three per 5 s at 100 Mbit/s) delayed packets
 * (docs/performance.md). Untouched, the chunks cost address space, not memory.
 */
const PREALLOCATED_BYTES = 256 << 20;
const spare: Buffer[] = [];

/** A chunk from the spares, or a new one. */
function chunk(): Buffer {
  return spare.pop() ?? Buffer.allocUnsafe(CHUNK);
}

/**
 * Longest comment: "down: delay 123456789.123 ms (queue 123456789.123 ms); 65535 bytes of zero
 * padding not kept" with room to spare.
 */
const COMMENT_ROOM = 128;

const ascii = (s: string): Buffer => Buffer.from(s, 'latin1');
const DIR_TEXT = [ascii('up: '), ascii('down: ')] as const;
const DELAY = ascii('delay ');
const QUEUE = ascii(' ms (queue ');
const MS_CLOSE = ascii(' ms)');
const DROP_LOSS = ascii('dropped (loss)');
const DROP_QUEUE = ascii('dropped (queue full)');
const PADDING = ascii(' bytes of zero padding not kept');
const SEMICOLON = ascii('; ');

/** Writes the integer `v` ≥ 0 as ASCII at `at`; returns the bytes written. */
function writeCount(out: Buffer, at: number, v: number): number {
  let digits = 1;
  for (let p = 10; p <= v; p *= 10) digits++;
  for (let i = digits - 1; i >= 0; i--) {
    out[at + i] = 48 + (v % 10);
    v = Math.floor(v / 10);
  }
  return digits;
}

/** Writes `v` ≥ 0 with three decimals as ASCII at `at`; returns the bytes written. */
function writeMs(out: Buffer, at: number, v: number): number {
  const micros = Math.max(0, Math.round(v * 1000));
  const whole = Math.floor(micros / 1000);
  const frac = micros - whole * 1000;
  const digits = writeCount(out, at, whole);
  out[at + digits] = 46; // '.'
  out[at + digits + 1] = 48 + Math.floor(frac / 100);
  out[at + digits + 2] = 48 + (Math.floor(frac / 10) % 10);
  out[at + digits + 3] = 48 + (frac % 10);
  return digits + 4;
}

export class LinkCapture {
  readonly #opts: LinkCaptureOptions;
  readonly #chunks: Buffer[] = [];
  #chunk: Buffer;
  #used = 0;
  /** Bytes the file will hold: the header blocks' room (written last, see {@link writeTo}) and the packets. */
  #bytes = HEADER_ROOM;
  /** Datagrams whose zero padding after their QUIC packets was not kept (see the file's doc). */
  #paddingCut = 0;
  readonly summary: CaptureSummary;

  constructor(opts: LinkCaptureOptions) {
    this.#opts = opts;
    const want = Math.min(opts.maxBytes, PREALLOCATED_BYTES) / CHUNK;
    for (let i = spare.length; i < want; i++) spare.push(Buffer.allocUnsafe(CHUNK));
    this.#chunk = chunk();
    this.summary = {
      packets: { up: 0, down: 0 },
      dropped: { loss: 0, queue: 0 },
      truncatedPackets: 0,
      packetsNotRecorded: 0,
      bytes: 0,
      snapBytes: opts.snapBytes,
      maxBytes: opts.maxBytes,
    };
  }

  /**
   * One packet and its fate: `dueMs` the time the link releases it, or undefined when dropped for
   * `reason`; `queueMs` the time it waits in the bottleneck queue (0 without one).
   */
  record(
    dir: 0 | 1,
    src: Buffer,
    offset: number,
    len: number,
    nowMs: number,
    dueMs: number | undefined,
    reason: DropReason,
    queueMs: number,
  ): void {
    const s = this.summary;
    const padding = offset + len - quicPaddingAt(src, offset, offset + len);
    const captured = Math.min(len - padding, this.#opts.snapBytes);
    const room = packetBlockBytes(captured, COMMENT_ROOM) + COMMENT_ROOM;
    if (this.#bytes + room > this.#opts.maxBytes) {
      s.packetsNotRecorded++;
      return;
    }
    if (this.#used + room > CHUNK) {
      this.#chunks.push(this.#chunk.subarray(0, this.#used));
      this.#chunk = chunk();
      this.#used = 0;
    }
    const out = this.#chunk;
    // The comment is formatted past the block's largest extent, then moved into place.
    const c = this.#used + packetBlockBytes(captured, COMMENT_ROOM);
    let n = DIR_TEXT[dir].copy(out, c);
    if (dueMs === undefined) {
      n += (reason === 'queue' ? DROP_QUEUE : DROP_LOSS).copy(out, c + n);
      if (reason === 'queue') s.dropped.queue++;
      else s.dropped.loss++;
    } else {
      n += DELAY.copy(out, c + n);
      n += writeMs(out, c + n, dueMs - nowMs);
      n += QUEUE.copy(out, c + n);
      n += writeMs(out, c + n, queueMs);
      n += MS_CLOSE.copy(out, c + n);
    }
    if (padding > 0) {
      n += SEMICOLON.copy(out, c + n);
      n += writeCount(out, c + n, padding);
      n += PADDING.copy(out, c + n);
      this.#paddingCut++;
    }
    const epochUs = Math.round((nowMs - this.#opts.monotonicToEpochMs) * 1000);
    const size = writePacketBlock(out, this.#used, dir, epochUs, src, offset, captured, len, c, n);
    this.#used += size;
    this.#bytes += size;
    if (dir === 0) s.packets.up++;
    else s.packets.down++;
    if (captured < len - padding) s.truncatedPackets++;
  }

  /** Writes the capture to `path` (replacing it) and returns its summary. */
  writeTo(path: string): CaptureSummary {
    const s = this.summary;
    const cut = [
      `${s.truncatedPackets} packets cut to the snap length of ${s.snapBytes} bytes`,
      `${s.packetsNotRecorded} packets not recorded beyond the size cap of ${s.maxBytes} bytes`,
      `${this.#paddingCut} QUIC datagrams without the zero padding after their packets (it stops Wireshark 4.0 decrypting the connection)`,
    ].join('; ');
    const head = [
      sectionHeader(
        'h2lab link relay',
        `h2lab's link relay: every packet as it entered the link, timestamped on arrival; each comment says its fate (delay until release, time in the bottleneck queue, or dropped by loss or a full queue). ${cut}.`,
      ),
      interfaceDescription(s.snapBytes, 'up', 'client → server, as the link received it'),
      interfaceDescription(s.snapBytes, 'down', 'server → client, as the link received it'),
    ];
    const fd = openSync(path, 'w');
    let bytes = 0;
    try {
      for (const b of [...head, ...this.#chunks, this.#chunk.subarray(0, this.#used)]) {
        writeSync(fd, b);
        bytes += b.length;
      }
    } finally {
      closeSync(fd);
    }
    // The chunks go back to the spares for the next capture (as many as the preallocation holds).
    for (const c of [...this.#chunks, this.#chunk]) {
      if (spare.length * CHUNK >= PREALLOCATED_BYTES) break;
      spare.push(Buffer.from(c.buffer, c.byteOffset, CHUNK));
    }
    this.#chunks.length = 0;
    this.#used = 0;
    this.#paddingCut = 0;
    s.bytes = bytes;
    return s;
  }
}

/**
 * The HTTP/2 frame log of h2lab's own client (`--frames FILE`), the equivalent of `nghttp -v`: one
 * JSON line per frame in and out of a session, read from the bytes the session wrote and read (its
 * two hooks hand them over), so the session's logic is untouched and off it costs one branch each.
 *
 * ```
 * {"t":212.4,"conn":1,"dir":"in","type":"SETTINGS","stream":0,"flags":[],"length":18,"settings":{"MAX_CONCURRENT_STREAMS":128,"INITIAL_WINDOW_SIZE":65536,"MAX_FRAME_SIZE":16777215}}
 * {"t":212.5,"conn":1,"dir":"out","type":"HEADERS","stream":1,"flags":["END_STREAM","END_HEADERS"],"length":38}
 * {"t":415.9,"conn":1,"dir":"in","type":"WINDOW_UPDATE","stream":0,"flags":[],"length":4,"increment":2147418112}
 * ```
 * `t` is ms since the file's first frame in this thread (on the sessions' clock); `conn` the
 * transport's connection id (each worker thread counts its own). Lines are buffered per file and written synchronously at 64 KiB, every second and
 * when the thread exits.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { CLIENT_PREFACE, FrameReader, FrameType, H2_ERROR_NAMES, SETTING_NAMES } from './frames.ts';

const TYPE_NAMES: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(FrameType).map(([name, code]) => [code, name]),
);

/** The flags a frame type defines (RFC 9113 §6), by bit. */
function flagNames(type: number, flags: number): string[] {
  const out: string[] = [];
  const ack = type === FrameType.SETTINGS || type === FrameType.PING;
  if (flags & 0x1) out.push(ack ? 'ACK' : 'END_STREAM');
  if (flags & 0x4 && (type === FrameType.HEADERS || type === FrameType.CONTINUATION)) out.push('END_HEADERS');
  if (flags & 0x8 && (type === FrameType.DATA || type === FrameType.HEADERS)) out.push('PADDED');
  if (flags & 0x20 && type === FrameType.HEADERS) out.push('PRIORITY');
  return out;
}

/** What a frame's payload says that `nghttp -v` prints: settings, increments, error codes. */
function details(type: number, p: Buffer): Record<string, unknown> {
  switch (type) {
    case FrameType.SETTINGS: {
      const settings: Record<string, number> = {};
      for (let o = 0; o + 6 <= p.length; o += 6)
        settings[SETTING_NAMES[p.readUInt16BE(o)] ?? `0x${p.readUInt16BE(o).toString(16)}`] = p.readUInt32BE(
          o + 2,
        );
      return p.length > 0 ? { settings } : {};
    }
    case FrameType.WINDOW_UPDATE:
      return p.length === 4 ? { increment: p.readUInt32BE(0) & 0x7fffffff } : {};
    case FrameType.RST_STREAM:
      return p.length === 4 ? { error: H2_ERROR_NAMES[p.readUInt32BE(0)] ?? p.readUInt32BE(0) } : {};
    case FrameType.GOAWAY:
      return p.length >= 8
        ? {
            lastStream: p.readUInt32BE(0) & 0x7fffffff,
            error: H2_ERROR_NAMES[p.readUInt32BE(4)] ?? p.readUInt32BE(4),
            ...(p.length > 8 ? { debug: p.toString('utf8', 8, Math.min(p.length, 200)) } : {}),
          }
        : {};
    default:
      return {};
  }
}

/** Buffered lines of one file, shared by every session of the thread that logs to it. */
class LineFile {
  /** When the file was opened, on the sessions' clock: `t` counts from here. */
  originMs: number | undefined;
  #fd: number;
  #lines: string[] = [];
  #bytes = 0;

  constructor(path: string) {
    this.#fd = openSync(path, 'a');
    const timer = setInterval(() => this.flush(), 1000);
    timer.unref();
    process.once('exit', () => {
      this.flush();
      closeSync(this.#fd);
    });
  }

  add(line: string): void {
    this.#lines.push(line);
    this.#bytes += line.length;
    if (this.#bytes >= 64 * 1024) this.flush();
  }

  flush(): void {
    if (this.#lines.length === 0) return;
    const text = this.#lines.join('');
    this.#lines = [];
    this.#bytes = 0;
    try {
      writeSync(this.#fd, text);
    } catch {}
  }
}

const files = new Map<string, LineFile>();

/** Writes what this thread's frame logs hold now (a run's end). */
export function flushFrameLogs(): void {
  for (const f of files.values()) f.flush();
}

/** One session's frame log: the bytes it wrote and read, parsed into frames and written as lines. */
export class FrameLog {
  readonly #file: LineFile;
  readonly #conn: number;
  readonly #now: () => number;
  // The reader of the bytes out may see frames as large as the server's SETTINGS_MAX_FRAME_SIZE.
  readonly #readers = { in: new FrameReader(16_777_215), out: new FrameReader(16_777_215) };
  #prefaceLeft = CLIENT_PREFACE.length;

  /** Logs to `path` (appended; one file for every session of the run) as connection `conn`. */
  constructor(path: string, conn: number, now: () => number = () => performance.now()) {
    let f = files.get(path);
    if (!f) {
      f = new LineFile(path);
      files.set(path, f);
    }
    this.#file = f;
    this.#conn = conn;
    this.#now = now;
  }

  /** Bytes the session read (`in`) or wrote (`out`); copied, since a read buffer may be reused. */
  bytes(dir: 'in' | 'out', chunk: Buffer): void {
    let b = chunk;
    if (dir === 'out' && this.#prefaceLeft > 0) {
      const skip = Math.min(this.#prefaceLeft, b.length);
      this.#prefaceLeft -= skip;
      b = b.subarray(skip);
    }
    if (b.length === 0) return;
    let frames: ReturnType<FrameReader['push']>;
    try {
      frames = this.#readers[dir].push(Buffer.from(b));
    } catch {
      return; // not HTTP/2 (an HTTP/1.1 answer): the session says why
    }
    const now = this.#now();
    this.#file.originMs ??= now;
    const t = +(now - this.#file.originMs).toFixed(3);
    for (const f of frames) {
      this.#file.add(
        `${JSON.stringify({
          t,
          conn: this.#conn,
          dir,
          type: TYPE_NAMES[f.type] ?? `0x${f.type.toString(16)}`,
          stream: f.streamId,
          flags: flagNames(f.type, f.flags),
          length: f.payload.length,
          ...details(f.type, f.payload),
        })}\n`,
      );
    }
  }
}

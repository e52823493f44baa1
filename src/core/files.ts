/**
 * Files: those an option names are read with an error that names the option; those a user keeps
 * (results, reports, certificates) are written whole or not at all. The data goes to a temporary name
 * beside the target, which is then renamed over it; a rename within one file system replaces the old
 * file in one step (rename(2)), so a reader, a crash or an interrupted run never sees half a file,
 * only the previous complete one.
 */
import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { type ErrorCode, H2labError } from './errors.ts';

/** Options of {@link writeFileAtomic}. */
interface WriteFileAtomicOptions {
  /** Permission bits of the file (e.g. 0o600 for a private key), exact (not masked by the umask). */
  mode?: number;
}

/**
 * Writes `data` to `path` atomically, creating the parent directories. The temporary file
 * (`<path>.<pid>.tmp`) is removed if the write fails.
 *
 * @example writeFileAtomic('out/results.json', `${JSON.stringify(result)}\n`)
 */
export function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  opts: WriteFileAtomicOptions = {},
): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, data, opts.mode === undefined ? {} : { mode: opts.mode });
    if (opts.mode !== undefined) chmodSync(tmp, opts.mode);
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * The most h2lab reads from a file an option names, bytes, by kind of file. Reading stops at the cap
 * (a file is never read whole first), so `/dev/zero` or a 100 GB file given by mistake costs at most
 * the cap; each is far above what a real file of its kind holds.
 */
export const INPUT_FILE_CAPS = Object.freeze({
  /** `--config`: one value per option; 1 MiB is thousands of times a real one. */
  config: 1024 ** 2,
  /** PEM certificates, keys and CA bundles (`--ca`, `--cert`, `--key`, `--trust-cert`): Mozilla's whole root bundle is about 0.2 MiB. */
  pem: 1024 ** 2,
  /** URL lists (`--urls`): 16 MiB is about 250,000 lines of 64 bytes. */
  urls: 16 * 1024 ** 2,
  /** Request bodies (`--body`), held in memory once and sent by every request; also the most `--body-size` generates. */
  body: 64 * 1024 ** 2,
  /** Saved results and plans (`report`, `merge`, `--plan`): a whole field study's results.json is about 4 MiB. */
  result: 64 * 1024 ** 2,
  /** HAR files (`page replay`): bodies included, base64; a heavy page of 10 MB is ~15 MB of HAR. */
  har: 512 * 1024 ** 2,
});

const KIND_NAMES: Record<keyof typeof INPUT_FILE_CAPS, string> = {
  config: 'a config file',
  pem: 'a PEM file',
  urls: 'a URL list',
  body: 'a request body',
  result: 'a saved result',
  har: 'a HAR file',
};

/** A kind of input file, with its cap in {@link INPUT_FILE_CAPS}. */
type InputFileKind = keyof typeof INPUT_FILE_CAPS;

/** Options of {@link readOptionFile}. */
interface ReadOptionFileOptions {
  /** The kind of file, which sets the cap (default `config`). */
  kind?: InputFileKind;
  /** The code of the error when the file cannot be read (default H2LAB_ERR_FILE_UNREADABLE). */
  code?: ErrorCode;
}

/** `1048576` → `1 MiB` (caps are whole MiB or KiB). */
function formatCap(bytes: number): string {
  if (bytes >= 1024 ** 2 && bytes % 1024 ** 2 === 0) return `${bytes / 1024 ** 2} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** What a path is when it is not a regular file, for the message. */
function notRegular(st: Stats): string | undefined {
  if (st.isFile()) return undefined;
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO, a named pipe';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * Reads a file named by an option, at most the cap of its `kind` (INPUT_FILE_CAPS). Only regular
 * files are read: a directory, FIFO, device or socket is refused before it is opened, because opening
 * a FIFO without a writer blocks forever and a device such as /dev/zero never ends. The size is
 * checked on the open file (fstat) and the read stops one byte past the cap, so a file that grows
 * between the check and the read is caught too and nothing larger than the cap is allocated.
 *
 * @throws H2labError H2LAB_ERR_FILE_TOO_LARGE naming the option, the path, the size and the cap;
 *   `opts.code` (default H2LAB_ERR_FILE_UNREADABLE) naming the option, the path and the reason
 *   (ENOENT, EACCES, "a FIFO" …).
 * @example readOptionFile('body.bin', '--body', { kind: 'body' })
 */
export function readOptionFile(path: string, option: string, opts: ReadOptionFileOptions = {}): Buffer {
  const kind = opts.kind ?? 'config';
  const cap = INPUT_FILE_CAPS[kind];
  const unreadable = (reason: string): H2labError =>
    new H2labError(
      opts.code ?? 'H2LAB_ERR_FILE_UNREADABLE',
      `${option} ${path}: cannot read the file (${reason}); give a regular file, check the path and its permissions`,
      { option, path, reason },
    );
  const tooLarge = (size: string): H2labError =>
    new H2labError(
      'H2LAB_ERR_FILE_TOO_LARGE',
      `${option} ${path}: the file is ${size}, more than the ${formatCap(cap)} h2lab reads for ${option} (${KIND_NAMES[kind]}); give a smaller file`,
      { option, path, kind, capBytes: cap },
    );
  let fd: number;
  try {
    const what = notRegular(statSync(path));
    if (what) throw unreadable(what);
    // O_NONBLOCK: should the path have become a FIFO since the stat, the open does not wait for a writer.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    if (err instanceof H2labError) throw err;
    throw unreadable((err as NodeJS.ErrnoException).code ?? String(err));
  }
  try {
    const st = fstatSync(fd);
    const what = notRegular(st);
    if (what) throw unreadable(what);
    if (st.size > cap) throw tooLarge(`${st.size} bytes`);
    // One byte more than the size, to see the end of the file in the same buffer; a file that grew
    // since the fstat is read on in small chunks, up to one byte past the cap.
    let buf = Buffer.allocUnsafe(Math.min(st.size, cap) + 1);
    const chunks: Buffer[] = [];
    let used = 0;
    let n = 0;
    for (;;) {
      if (used === buf.length) {
        chunks.push(buf);
        buf = Buffer.allocUnsafe(Math.min(64 * 1024, cap + 1 - n));
        used = 0;
      }
      const r = readSync(fd, buf, used, buf.length - used, null);
      if (r === 0) break;
      used += r;
      n += r;
      if (n > cap) throw tooLarge(`more than ${cap} bytes`);
    }
    chunks.push(buf.subarray(0, used));
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, n);
  } catch (err) {
    if (err instanceof H2labError) throw err;
    throw unreadable((err as NodeJS.ErrnoException).code ?? String(err));
  } finally {
    closeSync(fd);
  }
}

/** {@link readOptionFile} as UTF-8 text. */
export function readOptionText(path: string, option: string, opts: ReadOptionFileOptions = {}): string {
  return readOptionFile(path, option, opts).toString('utf8');
}

/** What {@link checkOutputPath} checks: a file h2lab will write, or a directory it will write into. */
type OutputKind = 'file' | 'dir';

const OUTPUT_EXAMPLE: Record<string, string> = {
  '--out': 'h2lab-report',
  '--report': 'bench-report',
  '--samples': 'samples.ndjson',
  '--csv': 'cells.csv',
};

function outputError(option: string, path: string, problem: string, reason?: string): H2labError {
  return new H2labError(
    'H2LAB_ERR_OUTPUT',
    `${option} ${path}: ${problem}; choose a path in a writable directory (e.g. ${option} ./${OUTPUT_EXAMPLE[option] ?? 'result.json'})`,
    { option, path, ...(reason ? { reason } : {}) },
  );
}

/**
 * Checks, before any load is generated, that `path` can be written: it is not a special file
 * (/dev/full, a FIFO) or a directory where a file is wanted, and a file can be created and renamed in
 * its directory (or in the nearest existing ancestor, which the writer would create the rest under).
 * The probe is a real create + rename + remove, because only the file system knows: /proc and /sys
 * refuse new files whatever the mode bits say, and root passes every permission check.
 *
 * @throws H2labError H2LAB_ERR_OUTPUT naming the option, the path and the reason.
 * @example checkOutputPath('out/r.json', '--json', 'file')
 */
export function checkOutputPath(path: string, option: string, kind: OutputKind): void {
  const target = resolve(path);
  const existing = statOrUndefined(target);
  if (existing) {
    if (kind === 'file' && !existing.isFile())
      throw outputError(option, path, existing.isDirectory() ? 'is a directory' : 'is not a regular file');
    if (kind === 'dir' && !existing.isDirectory()) throw outputError(option, path, 'is not a directory');
  }
  // The directory the file lands in, or the nearest existing ancestor of it.
  let dir = kind === 'dir' && existing ? target : dirname(target);
  for (;;) {
    const st = statOrUndefined(dir);
    if (st) {
      if (!st.isDirectory()) throw outputError(option, path, `${dir} is not a directory`);
      break;
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  const probe = join(dir, `.h2lab-write-test.${process.pid}.tmp`);
  try {
    closeSync(openSync(probe, 'wx'));
    renameSync(probe, `${probe}2`);
    rmSync(`${probe}2`, { force: true });
  } catch (err) {
    rmSync(probe, { force: true });
    const reason = (err as NodeJS.ErrnoException).code ?? String(err);
    throw outputError(option, path, `cannot create a file in ${dir} (${reason})`, reason);
  }
}

function statOrUndefined(p: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(p);
  } catch {
    return undefined;
  }
}

/** Where {@link writeWithFallback} put the data. */
interface WrittenFile {
  path: string;
  /** True when `path` is the fallback, because writing the requested path failed. */
  fallback: boolean;
  /** Why the requested path failed (an errno code or message), when `fallback`. */
  reason?: string;
}

/**
 * Writes `data` to `path` atomically; when that fails at the end of a run (the directory went away,
 * the disk filled), writes it to `./<prefix>-<timestamp>.<ext>` (ext `json` unless named) in the working directory, else the
 * system's temporary directory, so a measured result is never lost.
 *
 * @throws the last write error only when every place failed.
 * @example const w = writeWithFallback('r.json', json, 'h2lab-result'); if (w.fallback) warn(w.path);
 */
export function writeWithFallback(path: string, data: string, prefix: string, ext = 'json'): WrittenFile {
  try {
    writeFileAtomic(path, data);
    return { path, fallback: false };
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? String(err);
    const name = `${prefix}-${new Date().toISOString().replace(/[:.]/g, '-')}.${ext}`;
    let last: unknown = err;
    for (const dir of [process.cwd(), tmpdir()]) {
      try {
        writeFileAtomic(join(dir, name), data);
        return { path: join(dir, name), fallback: true, reason };
      } catch (e) {
        last = e;
      }
    }
    throw last;
  }
}

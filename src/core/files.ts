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
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { H2labError } from './errors.ts';

/** Options of {@link writeFileAtomic}. */
export interface WriteFileAtomicOptions {
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
 * Reads a file named by an option. H2LAB_ERR_FILE_UNREADABLE names the option, the path and the
 * system's reason (ENOENT, EACCES, EISDIR …).
 *
 * @example readOptionFile('body.bin', '--body')
 */
export function readOptionFile(path: string, option: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new H2labError(
      'H2LAB_ERR_FILE_UNREADABLE',
      `${option} ${path}: cannot read the file (${reason}); check the path and its permissions`,
      { option, path, reason },
    );
  }
}

/** What {@link checkOutputPath} checks: a file h2lab will write, or a directory it will write into. */
export type OutputKind = 'file' | 'dir';

const OUTPUT_EXAMPLE: Record<string, string> = { '--out': 'h2lab-report', '--samples': 'samples.ndjson' };

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
export interface WrittenFile {
  path: string;
  /** True when `path` is the fallback, because writing the requested path failed. */
  fallback: boolean;
  /** Why the requested path failed (an errno code or message), when `fallback`. */
  reason?: string;
}

/**
 * Writes `data` to `path` atomically; when that fails at the end of a run (the directory went away,
 * the disk filled), writes it to `./<prefix>-<timestamp>.json` in the working directory, else the
 * system's temporary directory, so a measured result is never lost.
 *
 * @throws the last write error only when every place failed.
 * @example const w = writeWithFallback('r.json', json, 'h2lab-result'); if (w.fallback) warn(w.path);
 */
export function writeWithFallback(path: string, data: string, prefix: string): WrittenFile {
  try {
    writeFileAtomic(path, data);
    return { path, fallback: false };
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? String(err);
    const name = `${prefix}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
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

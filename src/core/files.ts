/**
 * Files: those an option names are read with an error that names the option; those a user keeps
 * (results, reports, certificates) are written whole or not at all. The data goes to a temporary name
 * beside the target, which is then renamed over it; a rename within one file system replaces the old
 * file in one step (rename(2)), so a reader, a crash or an interrupted run never sees half a file,
 * only the previous complete one.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
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

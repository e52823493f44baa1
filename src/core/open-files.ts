/**
 * The process's budget of open files (RLIMIT_NOFILE). Every connection is a socket, and a socket is
 * a file descriptor: a run asking for more connections than the process may open fails with EMFILE
 * part-way through opening its pool, which reads like an unreachable target. The run is refused
 * before any load instead, naming the option, the limit and `ulimit -n`.
 */
import { readFileSync } from 'node:fs';
import { H2labError } from './errors.ts';

/**
 * Descriptors Node.js and h2lab hold besides the run's sockets: stdio, libuv's epoll and signal
 * pipes, worker threads' ports, the samples and result files, and a fixture server's listeners.
 * About 30 are open in an idle `h2lab bench` here; the rest is headroom.
 */
const OPEN_FILES_RESERVE = 64;

/**
 * The soft limit of open files of this process, from /proc/self/limits (Linux); undefined where
 * that file does not exist or says "unlimited".
 */
function openFileLimit(limitsText?: string): number | undefined {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return undefined;
    }
  }
  const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(text);
  return m && m[1] !== 'unlimited' ? Number(m[1]) : undefined;
}

/**
 * Refuses a run that would hold `sockets` sockets (a fixture server in this process holds the other
 * end of each too: pass both) when they and {@link OPEN_FILES_RESERVE} exceed the soft limit:
 * H2LAB_ERR_FD_LIMIT, naming `option` and its value.
 *
 * @example checkOpenFiles(20_000, '--connections', 20_000) // throws where `ulimit -n` is 1024
 */
export function checkOpenFiles(
  sockets: number,
  option: string,
  value: unknown,
  limit = openFileLimit(),
): void {
  if (limit === undefined) return;
  const need = sockets + OPEN_FILES_RESERVE;
  if (need <= limit) return;
  const suggest = Math.ceil(need / 1024) * 1024;
  throw new H2labError(
    'H2LAB_ERR_FD_LIMIT',
    `${option} ${String(value)} needs about ${need} open files (a socket each, ${sockets} in all, plus ${OPEN_FILES_RESERVE} for the process) but this process may open ${limit} (ulimit -n): raise the limit (ulimit -n ${suggest}) or ask for fewer connections`,
    { option, value, sockets, limit },
  );
}

/** The error for EMFILE/ENFILE met while opening connections anyway (the limit moved, another holder). */
export function openFilesExhausted(cause: string, details: Record<string, unknown>): H2labError | undefined {
  const code = /\b(EMFILE|ENFILE)\b/.exec(cause)?.[1];
  if (!code) return undefined;
  const limit = openFileLimit();
  return new H2labError(
    'H2LAB_ERR_FD_LIMIT',
    `the process ran out of file descriptors while opening connections (${code}${code === 'ENFILE' ? ': the whole system' : limit !== undefined ? `: limit ${limit}, ulimit -n` : ''}): raise the limit or ask for fewer connections; the target was not the problem`,
    { ...details, cause, code, ...(limit !== undefined ? { limit } : {}) },
  );
}

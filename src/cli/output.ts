/**
 * How the CLI speaks to people: errors as one clear line with their code, exit statuses from the
 * error registry (usage 2, failed run 1).
 */
import { ERROR_CODES, EXIT_FAILURE, H2labError } from '../core/index.ts';

/** Formats an error for a terminal: `h2lab: CODE: message`. Unknown errors are reported as internal. */
function formatError(err: unknown): string {
  if (err instanceof H2labError) return `h2lab: ${err.code}: ${err.message}`;
  const e = err instanceof Error ? err : new Error(String(err));
  return `h2lab: H2LAB_ERR_INTERNAL: ${e.message}\n${e.stack ?? ''}\nThis is a bug in h2lab; please report it with the command line you ran.`;
}

/** Prints the error to stderr and exits with its status. */
export function exitWithError(err: unknown): never {
  process.stderr.write(`${formatError(err)}\n`);
  process.exit(err instanceof H2labError ? err.exitCode : EXIT_FAILURE);
}

/**
 * Awaits `done` with Ctrl-C (and SIGTERM) meaning "stop after the unit in progress, keep what was
 * measured": the first signal prints `message` and calls `stop`; a second one exits at once (130),
 * after `quit` — synchronous, the event loop never runs again — has written what was measured so
 * far (results.json with status "interrupted") and returned what it wrote, which is said on stderr.
 */
export async function untilDoneOrStopped<T>(
  done: Promise<T>,
  stop: () => void,
  say: (message: string) => void,
  message: string,
  quit?: () => string | undefined,
): Promise<T> {
  let interrupts = 0;
  const onSignal = () => {
    interrupts++;
    if (interrupts > 1) {
      let wrote: string | undefined;
      try {
        wrote = quit?.();
      } catch (err) {
        wrote = `writing what was measured failed (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
      }
      say(`interrupted again: quitting now; ${wrote ?? 'nothing was written'}`);
      process.exit(ERROR_CODES.H2LAB_ERR_INTERRUPTED.exit);
    }
    say(`${message} (Ctrl-C again to quit now)`);
    stop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await done;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/**
 * The width text output is laid out for: the terminal's, else `COLUMNS` (as shells and many tools
 * honour it), else 80; never beyond 120, where long lines stop being easier to read.
 */
export function outputWidth(stream: NodeJS.WriteStream): number {
  const env = Number.parseInt(process.env.COLUMNS ?? '', 10);
  const w = stream.columns ?? (Number.isFinite(env) && env > 0 ? env : 80);
  return Math.max(40, Math.min(w, 120));
}

// What the benchmark harnesses share: medians, a check for the tools they drive, free ports, and a
// scratch directory whose child processes (nginx, servers) are stopped however the harness ends.
import { type ChildProcess, execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The median (the mean of the two middle values for an even count). */
export { medianInterpolated as median } from '../src/core/index.ts';

/** Exits 2 naming the Debian package when one of `tools` ([command, version flag]) does not run. */
export function requireTools(tools: ReadonlyArray<readonly [string, string]>): void {
  for (const [cmd, arg] of tools) {
    if (spawnSync(cmd, [arg], { stdio: 'ignore' }).status !== 0) {
      console.error(`${cmd} is not installed (Debian: nginx, nghttp2-client)`);
      process.exit(2);
    }
  }
}

/** A free loopback port: bind port 0, read it, release it. */
export async function freePort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

/**
 * A scratch directory named `prefix…` and a list of child processes; on exit (also Ctrl-C, SIGTERM,
 * SIGHUP) the children get SIGTERM and the directory is removed. Harnesses end with process.exit().
 */
export function scratch(prefix: string): { dir: string; children: ChildProcess[]; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const children: ChildProcess[] = [];
  const cleanup = (): void => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', cleanup);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => process.exit(130));
  return { dir, children, cleanup };
}

/** A comma-separated option as its trimmed, non-empty items. */
export const list = (s: string): string[] =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/**
 * Runs `cmd` to its end and resolves with its standard output; rejects naming the command and the
 * tail of its standard error when it fails or outlives `timeoutMs` (then it is killed).
 */
export const runTool = (cmd: string, args: string[], timeoutMs: number): Promise<string> =>
  new Promise((resolve, reject) => {
    execFile(
      cmd,
      args,
      { encoding: 'utf8', timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 1 << 26 },
      (err, out, errOut) =>
        err ? reject(new Error(`${cmd}: ${err.message}\n${errOut.slice(-1000)}`)) : resolve(out),
    );
  });

// Real peers no one here wrote (curl, nghttp, openssl, nginx's tools): whether one is installed, and
// running one with a time bound.
import { execFile, spawnSync } from 'node:child_process';

/** True when `cmd` runs (`cmd --version`, or `cmd arg`, exits 0). */
export function have(cmd: string, arg = '--version'): boolean {
  return spawnSync(cmd, [arg], { stdio: 'ignore' }).status === 0;
}

/** How a peer's run ended. */
export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command (a real peer) with a time bound; never rejects. Output is latin1 (bodies are bytes). */
export function run(cmd: string, args: string[], timeoutMs = 15_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      cmd,
      args,
      { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, encoding: 'latin1' },
      (err, stdout, stderr) => {
        const code = err ? ((err as { code?: unknown }).code as number | null) : 0;
        resolve({ code: typeof code === 'number' ? code : null, stdout, stderr });
      },
    );
  });
}

/** `curl -w` trailer fields, parsed: http_version, status, size. */
export async function curl(
  args: string[],
): Promise<{ version: string; status: number; body: string; run: Run }> {
  const r = await run('curl', ['-sS', '-w', '\n%{http_version} %{http_code}', ...args]);
  const nl = r.stdout.lastIndexOf('\n');
  const [version = '', status = '0'] = r.stdout.slice(nl + 1).split(' ');
  return { version, status: Number(status), body: r.stdout.slice(0, nl), run: r };
}

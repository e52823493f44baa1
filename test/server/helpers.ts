// Shared by the server tests: a temporary H2LAB_HOME (so the development CA is generated there and
// removed afterwards), running real peers (curl, nghttp) and reading /metrics.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MetricsSnapshot, RunningServer } from '../../src/server/index.ts';

/** Points H2LAB_HOME at a fresh temp dir for this test file; returns a cleanup function. */
export function tempHome(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-test-home-'));
  const before = process.env.H2LAB_HOME;
  process.env.H2LAB_HOME = dir;
  return {
    dir,
    cleanup: () => {
      if (before === undefined) delete process.env.H2LAB_HOME;
      else process.env.H2LAB_HOME = before;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** True when `cmd` runs (`cmd --version` or similar exits 0). */
export function have(cmd: string, arg = '--version'): boolean {
  return spawnSync(cmd, [arg], { stdio: 'ignore' }).status === 0;
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command (a real peer) with a time bound; never rejects. */
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

/** Reads the server's metrics over HTTP, the way compare and browser will. */
export async function scrape(srv: RunningServer): Promise<MetricsSnapshot> {
  const r = await fetch(`${srv.plainUrl}/metrics?format=json`);
  return (await r.json()) as MetricsSnapshot;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The CLI as a user runs it (TypeScript sources through tsx). */
export const CLI = [process.execPath, '--import', 'tsx', 'src/cli/main.ts'] as const;

/** Runs `h2lab ...args` to completion. */
export function h2lab(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 20_000,
): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      CLI[0],
      [...CLI.slice(1), ...args],
      { env, timeout: timeoutMs, encoding: 'utf8' },
      (err, stdout, stderr) => {
        const code = err ? ((err as { code?: unknown }).code as number | null) : 0;
        resolve({ code: typeof code === 'number' ? code : null, stdout, stderr });
      },
    );
  });
}

/** `h2lab serve` running as a child process, after its listening lines. */
export interface ServeProcess {
  child: import('node:child_process').ChildProcess;
  lines: string[];
  plainUrl?: string;
  tlsUrl?: string;
  /** Sends `signal` and resolves with the exit code and all stderr. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; stderr: string }>;
}

/** Spawns `h2lab serve ...args`; resolves once the listening lines are printed (or rejects on exit). */
export async function serveCli(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  expect: { plain?: boolean; tls?: boolean } = {},
): Promise<ServeProcess> {
  const { spawn } = await import('node:child_process');
  const child = spawn(CLI[0], [...CLI.slice(1), 'serve', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => {
    err += d;
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const wantTls = expect.tls ?? !args.includes('--no-tls');
  const wantPlain = expect.plain ?? !args.includes('--no-plain');
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`h2lab serve printed no listening lines in 60 s: ${out}${err}`));
    }, 60_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d;
      const ok = (!wantPlain || /listening http:/.test(out)) && (!wantTls || /listening https:/.test(out));
      if (ok) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`h2lab serve exited with ${code}: ${err}`));
    });
  });
  const lines = out.trim().split('\n');
  return {
    child,
    lines,
    plainUrl: /listening (http:\/\/\S+)/.exec(out)?.[1],
    tlsUrl: /listening (https:\/\/\S+)/.exec(out)?.[1],
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      const code = await exited;
      return { code, stderr: err };
    },
  };
}

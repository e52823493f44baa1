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

// The fixture server for tests: src/server's startServer as is, on loopback with free ports, and with
// H2LAB_HOME pointed at a temporary directory so the development CA a test makes is never the user's
// (~/.cache/h2lab) and goes away with the test process.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeArgv } from '../../src/core/index.ts';
import {
  type MetricsSnapshot,
  type RunningServer,
  type ServerOptionsInput,
  startServer,
} from '../../src/server/index.ts';

let home: string | undefined;

/**
 * Points H2LAB_HOME (for this process and the CLI children it starts) at a temporary directory,
 * created on the first call and removed when the process exits; returns it. Idempotent.
 */
export function testHome(): string {
  if (home === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'h2lab-test-home-'));
    const before = process.env.H2LAB_HOME;
    process.env.H2LAB_HOME = dir;
    process.once('exit', () => {
      if (before === undefined) delete process.env.H2LAB_HOME;
      else process.env.H2LAB_HOME = before;
      rmSync(dir, { recursive: true, force: true });
    });
    home = dir;
  }
  return home;
}

/**
 * Starts the fixture server on 127.0.0.1 with both listeners on free ports (`port: 0, tlsPort: 0`);
 * `opts` override (e.g. `{ tls: false }`, `{ poolSize: 1, tileMs: 800 }`). Without `cert`, TLS uses
 * the development CA under {@link testHome}.
 *
 * @example const srv = await startFixture({ tls: false }); … await srv.close();
 */
export function startFixture(opts: ServerOptionsInput = {}): Promise<RunningServer> {
  testHome();
  return startServer({ host: '127.0.0.1', port: 0, tlsPort: 0, ...opts });
}

/** Reads the server's metrics over HTTP (`/metrics?format=json`), the way compare and browser do. */
export async function scrape(srv: RunningServer): Promise<MetricsSnapshot> {
  const r = await fetch(`${srv.plainUrl}/metrics?format=json`);
  return (await r.json()) as MetricsSnapshot;
}

/** A fixture server in a child process of its own (src/server/target-entry.ts over IPC). */
export interface FixtureProcess {
  readonly child: ChildProcess;
  /** Tells it to start the server with `opts`; resolves with its URLs once it listens. */
  start(opts: ServerOptionsInput): Promise<{ plainUrl?: string; tlsUrl?: string }>;
  /** SIGKILL: no close, no GOAWAY; the kernel closes its sockets. Resolves once it has exited. */
  kill(): Promise<void>;
}

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

/**
 * Spawns the fixture server's target entry as a child process (the namespace placement of
 * startFixtureTarget without the namespace), so a test can kill it as a crash would and start
 * another in its place. The child loads before `start()` is called: spawn the replacement early and
 * its start costs only the listen.
 *
 * @example const p = spawnFixtureProcess(); const { plainUrl } = await p.start({ tls: false }); await p.kill();
 */
export function spawnFixtureProcess(): FixtureProcess {
  testHome();
  const [node, ...args] = nodeArgv('server/target-entry');
  const child = spawn(node!, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.add(child);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      children.delete(child);
      resolve();
    }),
  );
  return {
    child,
    start(opts) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('fixture process: no answer in 30 s')), 30_000);
        child.once('message', (raw) => {
          clearTimeout(timer);
          const m = raw as { type: string; plainUrl?: string; tlsUrl?: string; error?: { message: string } };
          if (m.type === 'ready')
            resolve({
              ...(m.plainUrl ? { plainUrl: m.plainUrl } : {}),
              ...(m.tlsUrl ? { tlsUrl: m.tlsUrl } : {}),
            });
          else reject(new Error(`fixture process: ${m.error?.message ?? m.type}`));
        });
        child.send({ type: 'start', options: { host: '127.0.0.1', port: 0, tlsPort: 0, ...opts } });
      });
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

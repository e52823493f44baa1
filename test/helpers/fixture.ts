// The fixture server for tests: src/server's startServer as is, on loopback with free ports, and with
// H2LAB_HOME pointed at a temporary directory so the development CA a test makes is never the user's
// (~/.cache/h2lab) and goes away with the test process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

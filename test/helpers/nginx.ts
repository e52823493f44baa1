// Runs Debian's nginx (a real server no one here wrote) as a child process with its own prefix,
// config and free loopback ports, for the probe tests. Skips cleanly where nginx is not installed.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';

/** True when an nginx binary runs here. */
export function haveNginx(): boolean {
  return spawnSync('nginx', ['-v'], { stdio: 'ignore' }).status === 0;
}

/** A free loopback port: bind port 0, read it, release it. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

export interface Nginx {
  stop(): Promise<void>;
  errorLog(): string;
}

/**
 * Starts nginx in the foreground with `http { … }` body `httpBlock` under `dir` and waits until every
 * port in `ports` accepts connections (at most 10 s).
 */
export async function startNginx(dir: string, httpBlock: string, ports: number[]): Promise<Nginx> {
  for (const d of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi', 'logs'])
    mkdirSync(join(dir, d), { recursive: true });
  const conf = `
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 128; }
http {
  access_log off;
  client_body_temp_path ${join(dir, 'body')};
  proxy_temp_path ${join(dir, 'proxy')};
  fastcgi_temp_path ${join(dir, 'fastcgi')};
  uwsgi_temp_path ${join(dir, 'uwsgi')};
  scgi_temp_path ${join(dir, 'scgi')};
  ${httpBlock}
}
`;
  writeFileSync(join(dir, 'nginx.conf'), conf);
  const child: ChildProcess = spawn(
    'nginx',
    ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log'), '-g', 'daemon off;'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => {
    stderr += b.toString();
  });
  // If the test process dies before stop(), do not leave an nginx behind.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      process.removeListener('exit', killOnExit);
      resolve();
    }),
  );
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    }
  };
  const errorLog = () => {
    try {
      return `${stderr}${readFileSync(join(dir, 'error.log'), 'utf8')}`;
    } catch {
      return stderr;
    }
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    const up = await Promise.all(ports.map(accepts));
    if (up.every(Boolean)) return { stop, errorLog };
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`nginx did not start: ${errorLog()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Debian's nginx as a peer h2lab starts and stops: a prefix of its own (config, pid, logs and every
 * temp path inside one directory, so no root-owned path of the system is touched), free loopback
 * ports, and a bounded wait until it accepts. The proxy study puts it in front of the fixture server;
 * the probe tests run it as a real server no one here wrote.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { delimiter, join } from 'node:path';
import { H2labError } from '../core/index.ts';

/** Where Debian's `nginx` package installs the binary. */
const NGINX_DEFAULT_BINARY = '/usr/sbin/nginx';

/** The temp paths nginx wants writable (it creates none of its directories itself). */
const TEMP_DIRS = ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'] as const;

/**
 * The nginx to run: `binary` when given, else Debian's path, else the first `nginx` on PATH.
 * Undefined when there is none.
 */
export function findNginx(binary?: string): string | undefined {
  if (binary) return existsSync(binary) ? binary : undefined;
  if (existsSync(NGINX_DEFAULT_BINARY)) return NGINX_DEFAULT_BINARY;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const p = join(dir, 'nginx');
    if (dir && existsSync(p)) return p;
  }
  return undefined;
}

/** `nginx -v`'s version, e.g. `1.22.1`; undefined when the binary does not run. */
export function nginxVersion(binary: string): string | undefined {
  const r = spawnSync(binary, ['-v'], { encoding: 'utf8', timeout: 5000 });
  if (r.status !== 0) return undefined;
  return /nginx\/(\S+)/.exec(`${r.stderr}${r.stdout}`)?.[1] ?? 'unknown';
}

/**
 * The nginx binary and its version, or H2LAB_ERR_PEER_MISSING naming `option` and the fix. Called by
 * a study's `check`, before anything runs.
 */
export function checkNginx(
  binary: string | undefined,
  option = '--nginx',
): { binary: string; version: string } {
  const found = findNginx(binary);
  const version = found ? nginxVersion(found) : undefined;
  if (!found || !version)
    throw new H2labError(
      'H2LAB_ERR_PEER_MISSING',
      binary
        ? `${option} ${binary}: ${found ? 'does not run (nginx -v failed)' : 'no such file'}; give the path of an nginx binary, or leave ${option} out to use ${NGINX_DEFAULT_BINARY}`
        : `nginx is not installed (looked for ${NGINX_DEFAULT_BINARY} and nginx on PATH): install it with apt-get install nginx, or pass ${option} PATH`,
      { option, ...(binary ? { value: binary } : {}), peer: 'nginx' },
    );
  return { binary: found, version };
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

/** A running nginx. */
export interface Nginx {
  /** The prefix directory: config, pid, logs and temp paths. */
  readonly dir: string;
  /** The generated nginx.conf. */
  readonly config: string;
  /** The worker processes' ids (Linux: the master's /proc children), [] where they cannot be read. */
  workerPids(): number[];
  /** SIGTERM (nginx's fast shutdown), SIGKILL after 5 s. */
  stop(): Promise<void>;
  /** What nginx wrote to stderr and to its main error log. */
  errorLog(): string;
}

/** Options of {@link startNginx}. */
interface StartNginxOptions {
  /** Default: {@link findNginx}. */
  binary?: string;
  /** Bound on the wait until every port accepts, ms. Default 10000. */
  startTimeoutMs?: number;
  /** `worker_processes`. Default 1: one core of a small machine, and one worker's logs to read. */
  workers?: number;
}

/**
 * Starts nginx in the foreground with `http { … }` body `httpBlock` under `dir` and waits until every
 * port in `ports` accepts connections. Rejects (nginx stopped) with its error log when it exits or
 * the ports stay closed.
 *
 * @example
 * const n = await startNginx(dir, `server { listen 127.0.0.1:${port}; return 200; }`, [port]);
 * await n.stop();
 */
export async function startNginx(
  dir: string,
  httpBlock: string,
  ports: number[],
  opts: StartNginxOptions = {},
): Promise<Nginx> {
  const binary = opts.binary ?? findNginx();
  if (!binary) checkNginx(undefined);
  for (const d of [...TEMP_DIRS, 'logs']) mkdirSync(join(dir, d), { recursive: true });
  // A root master drops its workers to `nobody`, who could not write a private (0700) temp dir:
  // the workers run as whoever runs h2lab.
  const user = process.getuid?.() === 0 ? `user ${os.userInfo().username};\n` : '';
  const config = `${user}worker_processes ${opts.workers ?? 1};
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 1024; }
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
  writeFileSync(join(dir, 'nginx.conf'), config);
  const child: ChildProcess = spawn(
    binary!,
    ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log'), '-g', 'daemon off;'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => {
    stderr += b.toString();
  });
  // If this process dies before stop(), do not leave an nginx behind holding its ports.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      process.removeListener('exit', killOnExit);
      resolve();
    }),
  );
  child.once('error', (err) => {
    stderr += `${err.message}\n`;
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
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
  const workerPids = () => {
    try {
      return readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8')
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map(Number);
    } catch {
      return [];
    }
  };
  const deadline = Date.now() + (opts.startTimeoutMs ?? 10_000);
  for (;;) {
    const up = await Promise.all(ports.map(accepts));
    if (up.every(Boolean)) return { dir, config, workerPids, stop, errorLog };
    if (child.exitCode !== null || child.pid === undefined || Date.now() > deadline) {
      await stop();
      throw new Error(`nginx did not start: ${errorLog().trim() || 'no error logged'}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

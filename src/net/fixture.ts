/**
 * The embedded fixture server behind an emulated link: `h2lab serve` started as a child process
 * inside the link's server namespace, with a certificate issued for the link's server address (the
 * development certificate names only localhost), so clients in the host namespace verify it.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { H2labError } from '../core/index.ts';
import { CERT_FILES, generateCertificates, writeCertificateSet } from '../tls/index.ts';
import { nodeEntry } from './child-entry.ts';
import { createLink, type Link, type LinkOptions } from './link.ts';

/** The fixture server running in a link's server namespace. */
export interface LinkedFixture {
  /** HTTP/1.1 + h2c listener, e.g. `http://198.18.7.2:40123`. */
  plainUrl: string;
  /** h2 + HTTP/1.1 (ALPN) listener. */
  tlsUrl: string;
  /** CA that verifies the TLS listener's certificate (issued for the server address). */
  caFile: string;
  child: ChildProcess;
  close(): Promise<void>;
}

/**
 * Starts the fixture server inside `link`'s server namespace. `serveArgs` are extra `h2lab serve`
 * flags (e.g. `['--pool-size', '8']`). Resolves once both listeners are open.
 */
export async function startFixtureInLink(
  link: Link,
  serveArgs: readonly string[] = [],
): Promise<LinkedFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-net-'));
  try {
    const set = await generateCertificates({ hosts: [link.serverAddress] });
    writeCertificateSet(dir, set, { force: true });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const [node, ...args] = nodeEntry('cli/main');
  const child = link.spawnInServer(
    node!,
    [
      ...args,
      'serve',
      '--host',
      link.serverAddress,
      '--port',
      '0',
      '--tls-port',
      '0',
      '--cert',
      join(dir, CERT_FILES.serverPem),
      '--key',
      join(dir, CERT_FILES.serverKeyPem),
      ...serveArgs,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const close = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      });
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const urls = await new Promise<{ plain: string; tls: string }>((resolve, reject) => {
      let out = '';
      let err = '';
      const timer = setTimeout(() => reject(failed(`no listening lines within 30 s: ${err.trim()}`)), 30_000);
      child.stderr!.on('data', (d: Buffer) => {
        err += d.toString();
      });
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const plain = /listening (http:\/\/\S+)/.exec(out)?.[1];
        const tls = /listening (https:\/\/\S+)/.exec(out)?.[1];
        if (plain && tls) {
          clearTimeout(timer);
          resolve({ plain, tls });
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(failed(`it exited with status ${code}: ${err.trim()}`));
      });
    });
    child.removeAllListeners('exit');
    return { plainUrl: urls.plain, tlsUrl: urls.tls, caFile: join(dir, CERT_FILES.caPem), child, close };
  } catch (err) {
    await close();
    throw err;
  }
}

function failed(why: string): H2labError {
  return new H2labError(
    'H2LAB_ERR_NET_SETUP',
    `the fixture server did not start in the server namespace: ${why}`,
    {},
  );
}

/**
 * Creates a link, starts the fixture server behind it, runs `fn`, and tears everything down (also
 * when `fn` throws). This is what `bench`/`compare` without a URL and with `--net` do.
 *
 * @example
 * const result = await withLinkedFixture({ profile: 'wan' }, ({ fixture }) =>
 *   runLoad({ url: fixture.tlsUrl, caFile: fixture.caFile }).done);
 */
export async function withLinkedFixture<T>(
  linkOptions: LinkOptions,
  fn: (ctx: { link: Link; fixture: LinkedFixture }) => Promise<T>,
  serveArgs: readonly string[] = [],
): Promise<T> {
  const link = await createLink(linkOptions);
  try {
    const fixture = await startFixtureInLink(link, serveArgs);
    try {
      return await fn({ link, fixture });
    } finally {
      await fixture.close();
    }
  } finally {
    await link.close();
  }
}

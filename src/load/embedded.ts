/**
 * The embedded target: `h2lab bench` with no URL (or with only a path) starts the fixture server on
 * free loopback ports, in a worker thread of its own, and drives it. `--plain` picks its cleartext
 * listener (HTTP/1.1 and h2c); the default is its TLS listener (h2 and http/1.1 by ALPN), trusted
 * through the server's development CA.
 */
import { once } from 'node:events';
import { type ErrorCode, H2labError } from '../core/index.ts';
import type { ServerOptionsInput } from '../server/index.ts';
import type { ResolvedLoadOptions } from './options.ts';
import { siblingModule, startThread } from './thread.ts';

/** The path driven when neither a URL nor a path was given: 1 KiB bodies. */
export const EMBEDDED_DEFAULT_PATH = '/bytes/1024';

/** A started embedded target. */
export interface EmbeddedTarget {
  /** Listener URL with the path to drive. */
  url: string;
  /** The development CA that signed the server certificate. */
  caPem?: string;
  /** Why the server's thread died during the run, if it did. */
  failure(): string | undefined;

  close(): Promise<void>;
}

/** True when the options name no target, only (optionally) a path on the embedded one. */
export function isEmbedded(url: string | undefined): boolean {
  return url === undefined || url.startsWith('/');
}

/** The fixture server running in a worker thread of its own. */
export interface FixtureThread {
  plainUrl?: string;
  tlsUrl?: string;
  /** The development CA that signed the server certificate (PEM), and where it is cached. */
  caPem?: string;
  caPath?: string;
  /** Why the server's thread died, if it did. */
  failure(): string | undefined;
  close(): Promise<void>;
}

interface Started {
  plainUrl?: string;
  tlsUrl?: string;
  caPem?: string;
  caPath?: string;
  error?: { code: string; message: string; details: Record<string, unknown> };
}

/**
 * Starts the fixture server with `options` in a worker thread, so that a load client in this thread
 * measures only itself (its event loop and CPU are not mixed with the server's work). Rejects with
 * the server's H2labError (a busy port, unreadable certificates, ...).
 */
export async function startFixtureThread(options: ServerOptionsInput): Promise<FixtureThread> {
  const worker = startThread(siblingModule('embedded-thread'), options);
  const [msg] = (await Promise.race([
    once(worker, 'message'),
    once(worker, 'error').then(([e]) => Promise.reject(e)),
  ])) as [Started];
  if (msg.error) {
    await worker.terminate();
    throw new H2labError(msg.error.code as ErrorCode, msg.error.message, msg.error.details);
  }
  let failure: string | undefined;
  worker.on('error', (err) => {
    failure = `the embedded fixture server crashed during the run (${err.message}): later requests could not connect`;
  });
  return {
    ...(msg.plainUrl ? { plainUrl: msg.plainUrl } : {}),
    ...(msg.tlsUrl ? { tlsUrl: msg.tlsUrl } : {}),
    ...(msg.caPem ? { caPem: msg.caPem } : {}),
    ...(msg.caPath ? { caPath: msg.caPath } : {}),
    failure: () => failure,
    close: async () => {
      worker.postMessage('close');
      await Promise.race([once(worker, 'message'), new Promise((r) => setTimeout(r, 5000))]);
      await worker.terminate();
    },
  };
}

/** Starts the fixture server on 127.0.0.1 (free ports) and returns the listener the options ask for. */
export async function startEmbeddedServer(o: ResolvedLoadOptions): Promise<EmbeddedTarget> {
  const plain = o.embeddedListener === 'plain';
  const f = await startFixtureThread({ host: '127.0.0.1', port: 0, tlsPort: 0, plain, tls: !plain });
  const base = plain ? f.plainUrl : f.tlsUrl;
  const path = o.url?.startsWith('/') ? o.url : EMBEDDED_DEFAULT_PATH;
  return {
    url: `${base}${path}`,
    ...(f.caPem ? { caPem: f.caPem } : {}),
    failure: f.failure,
    close: f.close,
  };
}

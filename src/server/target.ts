/**
 * The fixture server as a target: ONE way to start it, in one of three placements, and one handle
 * that load, compare and browser are given instead of starting their own.
 *
 * ```
 *   'in-process'   startServer() in this thread (cheapest; shares the event loop with its client,
 *                  so its metrics carry no CPU or event-loop figure of its own)
 *   'thread'       a worker thread of its own: the client's event loop figure is its own, and the
 *                  server's metrics read its thread's CPU and event loop apart from the client's
 *   { link }       a child process inside the link's server namespace, at link.serverAddress, with a
 *                  certificate issued for that address; started and stopped over typed IPC
 *                  (target-protocol.ts), as the link's relay is
 *   { namespace }  the same in any namespace (net/isolation.ts): a private one where Chromium runs,
 *                  on 127.0.0.1 there; its metrics come over the IPC channel when this process
 *                  cannot dial the namespace's address
 * ```
 * Every placement gives the same {@link FixtureTarget}: URLs, the CA that verifies its TLS listener,
 * a metrics client (owned: h2lab may reset it) and `close()`.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { type ErrorCode, H2labError, nodeArgv, startThread, stopChildProcess } from '../core/index.ts';
import {
  createLink,
  type Link,
  type LinkOptions,
  linkServerNamespace,
  type ServerNamespace,
} from '../net/index.ts';
import { CERT_FILES, generateCertificates, writeCertificateSet } from '../tls/index.ts';
import type { MetricsSnapshot } from './metrics.ts';
import { clientOf, metricsClient, type ServerMetricsClient } from './metrics-client.ts';
import type { ServerOptionsInput } from './options.ts';
import { startServer } from './server.ts';
import type { FromTarget, ToTarget } from './target-protocol.ts';

/** Where the fixture server runs. */
type FixturePlacement = 'in-process' | 'thread' | { link: Link } | { namespace: ServerNamespace };

/** A started fixture server, wherever it runs. */
export interface FixtureTarget {
  /** `in-process`, `thread` or `namespace`. */
  readonly placement: 'in-process' | 'thread' | 'namespace';
  /** HTTP/1.1 and h2c (prior knowledge) listener, e.g. `http://127.0.0.1:40123`, when it serves one. */
  readonly plainUrl?: string;
  /** h2 and HTTP/1.1 by ALPN, when it serves one. */
  readonly tlsUrl?: string;
  /** HTTP/3 over UDP (`h3: true` or `h3Port` in the options), when it serves it. */
  readonly h3Url?: string;
  /** HTTP/3 was asked for and is not served: why (the binding did not load). */
  readonly h3Unavailable?: string;
  /** The CA (PEM) that verifies the TLS listener's certificate, when h2lab issued it. */
  readonly caPem?: string;
  /** The same CA as a file, for options that take a path (`caFile`). */
  readonly caFile?: string;
  /** The TLS listener's certificate (PEM); the browser pins its SPKI. */
  readonly certPem: string;
  /** Its `/metrics`, owned by h2lab (reset before each run is allowed). */
  readonly metrics: ServerMetricsClient;
  /** Why the server died while in use, if it did (thread and namespace placements). */
  failure(): string | undefined;
  /** Stops the server (in-flight work is cut after a short grace) and removes what it left. */
  close(): Promise<void>;
}

/**
 * Starts the fixture server with `options` at `placement` (default: a worker thread). Rejects with
 * the server's H2labError (a busy port, unreadable certificates, …); the namespace placement with
 * H2LAB_ERR_NET_SETUP when the child does not come up.
 *
 * @example
 * const target = await startFixtureTarget({ poolSize: 8 }, 'thread');
 * const run = runLoad({ requests: 100 }, { target }); // drives target.tlsUrl + /bytes/1024
 * await run.done;
 * await target.close();
 *
 * @example
 * const link = await createLink({ profile: 'wan' });
 * const target = await startFixtureTarget({}, { link }); // at link.serverAddress, behind the link
 */
export async function startFixtureTarget(
  options: ServerOptionsInput = {},
  placement: FixturePlacement = 'thread',
): Promise<FixtureTarget> {
  const free = { host: '127.0.0.1', port: 0, tlsPort: 0, ...options };
  if (placement === 'in-process') return inProcess(free);
  if (placement === 'thread') return inThread(free);
  return inNamespace(
    options,
    'link' in placement ? linkServerNamespace(placement.link) : placement.namespace,
  );
}

function metricsOf(ready: { plainUrl?: string; tlsUrl?: string; caPem?: string }): ServerMetricsClient {
  const base = ready.plainUrl ?? ready.tlsUrl!;
  return metricsClient(`${base}/metrics`, {
    owned: true,
    ...(ready.caPem ? { tls: { ca: ready.caPem } } : {}),
  });
}

function target(
  placement: FixtureTarget['placement'],
  ready: Extract<FromTarget, { type: 'ready' }>,
  caFile: string | undefined,
  failure: () => string | undefined,
  close: () => Promise<void>,
  metrics: ServerMetricsClient = metricsOf(ready),
): FixtureTarget {
  return {
    placement,
    ...(ready.plainUrl ? { plainUrl: ready.plainUrl } : {}),
    ...(ready.tlsUrl ? { tlsUrl: ready.tlsUrl } : {}),
    ...(ready.h3Url ? { h3Url: ready.h3Url } : {}),
    ...(ready.h3Unavailable ? { h3Unavailable: ready.h3Unavailable } : {}),
    ...(ready.caPem ? { caPem: ready.caPem } : {}),
    ...(caFile ? { caFile } : {}),
    certPem: ready.certPem,
    metrics,
    failure,
    close,
  };
}

async function inProcess(options: ServerOptionsInput): Promise<FixtureTarget> {
  const s = await startServer(options);
  // Its CPU and event loop are its client's: no figure of its own to report.
  s.shareThread();
  const ready = {
    type: 'ready' as const,
    ...(s.plainUrl ? { plainUrl: s.plainUrl } : {}),
    ...(s.tlsUrl ? { tlsUrl: s.tlsUrl } : {}),
    ...(s.h3Url ? { h3Url: s.h3Url } : {}),
    ...(s.h3Unavailable ? { h3Unavailable: s.h3Unavailable } : {}),
    ...(s.caPem ? { caPem: s.caPem } : {}),
    certPem: s.certPem,
  };
  return target(
    'in-process',
    ready,
    s.caFile,
    () => undefined,
    () => s.close(0),
  );
}

function toError(e: { code: string; message: string; details: Record<string, unknown> }): H2labError {
  return new H2labError(e.code as ErrorCode, e.message, e.details);
}

async function inThread(options: ServerOptionsInput): Promise<FixtureTarget> {
  const worker: Worker = startThread('server/target-entry', undefined);
  const send = (m: ToTarget) => worker.postMessage(m);
  send({ type: 'start', options });
  const [msg] = (await Promise.race([
    once(worker, 'message'),
    once(worker, 'error').then(([e]) => Promise.reject(e)),
  ])) as [FromTarget];
  if (msg.type !== 'ready') {
    await worker.terminate();
    throw msg.type === 'error' ? toError(msg.error) : new Error('fixture thread: unexpected answer');
  }
  let failure: string | undefined;
  worker.on('error', (err) => {
    failure = `the embedded fixture server crashed during the run (${err.message}): later requests could not connect`;
  });
  return target(
    'thread',
    msg,
    msg.caFile,
    () => failure,
    async () => {
      send({ type: 'stop' });
      // The bound is cleared once the thread answers: a pending 5 s timer kept a finished (or
      // interrupted) comparison's process alive 5 s after its last line.
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([once(worker, 'message'), new Promise((r) => (bound = setTimeout(r, 5000)))]);
      clearTimeout(bound);
      await worker.terminate();
    },
  );
}

function setupFailed(why: string): H2labError {
  return new H2labError(
    'H2LAB_ERR_NET_SETUP',
    `the fixture server did not start in the server namespace: ${why}`,
    {},
  );
}

/**
 * Metrics asked of the child over its IPC channel (answers come in the order asked), for a namespace
 * this process cannot dial.
 */
function ipcMetrics(c: ChildProcess, ready: { plainUrl?: string; tlsUrl?: string }): ServerMetricsClient {
  const waiting: Array<{ resolve(s: MetricsSnapshot): void; reject(e: Error): void }> = [];
  const url = `${ready.plainUrl ?? ready.tlsUrl}/metrics`;
  c.on('message', (raw) => {
    const m = raw as FromTarget;
    if (m.type === 'metrics') waiting.shift()?.resolve(m.snapshot);
  });
  c.once('exit', () => {
    for (const w of waiting.splice(0))
      w.reject(new H2labError('H2LAB_ERR_SERVER_METRICS', `${url} could not be read: the server exited`, {}));
  });
  const ask = (reset: boolean) =>
    new Promise<MetricsSnapshot>((resolve, reject) => {
      if (!c.connected) {
        reject(new H2labError('H2LAB_ERR_SERVER_METRICS', `${url} could not be read: the server exited`, {}));
        return;
      }
      waiting.push({ resolve, reject });
      c.send({ type: 'metrics', reset } satisfies ToTarget);
    });
  return clientOf(
    url,
    true,
    () => ask(false),
    async () => {
      await ask(true).catch(() => {});
    },
  );
}

/**
 * The namespace placement: a certificate for the namespace's address (the development one names only
 * localhost, so clients in the host namespace could not verify a link's), then the target entry as a
 * child inside the namespace, told what to serve over IPC.
 */
async function inNamespace(options: ServerOptionsInput, serverNs: ServerNamespace): Promise<FixtureTarget> {
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-target-'));
  let child: ChildProcess | undefined;
  let stderr = '';
  let failure: string | undefined;
  let closing = false;
  const close = async (): Promise<void> => {
    closing = true;
    if (child) await stopChildProcess(child, { type: 'stop' } satisfies ToTarget);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // `localhost` too: the HTTP/3 binding verifies DNS names only (src/h3/binding.ts, verifiedName).
    const set = await generateCertificates({ hosts: [serverNs.address, 'localhost'] });
    writeCertificateSet(dir, set, { force: true });
    const [node, ...args] = nodeArgv('server/target-entry');
    // A process group of its own: Ctrl-C in a terminal reaches the whole foreground group, and the
    // server must outlive it until the run in progress is stopped and its metrics read (this process
    // stops it; the namespace's deletion ends it in any case).
    const c = serverNs.spawn(node!, args, {
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
      detached: true,
    });
    child = c;
    c.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    const ready = await new Promise<Extract<FromTarget, { type: 'ready' }>>((resolve, reject) => {
      const timer = setTimeout(() => reject(setupFailed(`no answer within 30 s: ${stderr.trim()}`)), 30_000);
      const onExit = (code: number | null) => {
        clearTimeout(timer);
        reject(setupFailed(`it exited with status ${code}: ${stderr.trim()}`));
      };
      c.once('exit', onExit);
      c.on('message', function onMessage(raw) {
        const msg = raw as FromTarget;
        if (msg.type === 'stopped' || msg.type === 'metrics') return;
        clearTimeout(timer);
        c.off('message', onMessage);
        c.off('exit', onExit);
        if (msg.type === 'ready') resolve(msg);
        else reject(toError(msg.error));
      });
      c.send({
        type: 'start',
        options: {
          ...options,
          host: serverNs.address,
          // QUIC on the namespace's only address all the same, by the unspecified one: bound to
          // the address itself, quiche probes the path MTU up to loopback's (the route to a local
          // address), the kernel fragments its 8–16 KB datagrams onto the link's 1,500-byte MTU,
          // and one fragment dropped at the queue loses the whole packet (docs/net.md).
          ...(options.h3 || options.h3Port !== undefined
            ? { h3Host: options.h3Host ?? (isIPv6(serverNs.address) ? '::' : '0.0.0.0') }
            : {}),
          port: options.port ?? 0,
          tlsPort: options.tlsPort ?? 0,
          cert: join(dir, CERT_FILES.serverPem),
          key: join(dir, CERT_FILES.serverKeyPem),
        },
      } satisfies ToTarget);
    });
    c.once('exit', (code, signal) => {
      if (!closing)
        failure = `the fixture server in namespace ${serverNs.namespace} exited (${signal ?? code}) during the run: ${stderr.trim()}`;
    });
    return target(
      'namespace',
      { ...ready, caPem: set.caPem },
      join(dir, CERT_FILES.caPem),
      () => failure,
      close,
      serverNs.reachable ? metricsOf(ready) : ipcMetrics(c, ready),
    );
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * Creates a link, starts the fixture server behind it (namespace placement), runs `fn`, and tears
 * both down, also when `fn` throws. What `bench` and `compare` with `--net` and no URL do.
 *
 * @example
 * const result = await withLinkedTarget({ profile: 'wan' }, ({ target }) =>
 *   runLoad({ url: `${target.tlsUrl}/bytes/1024`, caFile: target.caFile }).done);
 */
export async function withLinkedTarget<T>(
  linkOptions: LinkOptions,
  fn: (ctx: { link: Link; target: FixtureTarget }) => Promise<T>,
  serverOptions: ServerOptionsInput = {},
): Promise<T> {
  const link = await createLink(linkOptions);
  try {
    const target = await startFixtureTarget(serverOptions, { link });
    try {
      return await fn({ link, target });
    } finally {
      await target.close();
    }
  } finally {
    await link.close();
  }
}

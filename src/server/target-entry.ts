/**
 * Entry of a fixture server run away from its owner: a worker thread (`workerData` is absent; the
 * MessagePort is `parentPort`) or a child process started with an IPC channel, e.g. inside a
 * network namespace. Speaks {@link ToTarget} / {@link FromTarget} (target-protocol.ts) on either.
 */
import { parentPort } from 'node:worker_threads';
import { isH2labError } from '../core/index.ts';
import { type RunningServer, startServer } from './server.ts';
import type { FromTarget, ToTarget } from './target-protocol.ts';

interface Channel {
  send(msg: FromTarget): void;
  onMessage(fn: (msg: ToTarget) => void): void;
  close(): void;
}

function channel(): Channel {
  const port = parentPort;
  if (port) {
    return {
      send: (m) => port.postMessage(m),
      onMessage: (fn) => port.on('message', fn),
      close: () => port.close(),
    };
  }
  if (!process.send) throw new Error('target-entry: started without a parent port or an IPC channel');
  return {
    send: (m) => process.send!(m),
    onMessage: (fn) => process.on('message', (m) => fn(m as ToTarget)),
    close: () => process.exit(0),
  };
}

const ch = channel();
let server: RunningServer | undefined;

if (!parentPort) {
  // The owner died or closed the channel: nothing will stop this server but this.
  process.on('disconnect', () => {
    void (server?.close(0) ?? Promise.resolve()).finally(() => process.exit(0));
  });
}

ch.onMessage(async (msg) => {
  if (msg.type === 'start') {
    try {
      server = await startServer(msg.options);
      ch.send({
        type: 'ready',
        ...(server.plainUrl ? { plainUrl: server.plainUrl } : {}),
        ...(server.tlsUrl ? { tlsUrl: server.tlsUrl } : {}),
        ...(server.h3Url ? { h3Url: server.h3Url } : {}),
        ...(server.h3Unavailable ? { h3Unavailable: server.h3Unavailable } : {}),
        ...(server.caPem ? { caPem: server.caPem } : {}),
        ...(server.caFile ? { caFile: server.caFile } : {}),
        certPem: server.certPem,
      });
    } catch (err) {
      ch.send({
        type: 'error',
        error: isH2labError(err)
          ? err.toJSON()
          : { code: 'H2LAB_ERR_INTERNAL', message: String(err), details: {} },
      });
    }
  } else if (msg.type === 'metrics') {
    if (!server) return;
    if (msg.reset) server.resetMetrics();
    ch.send({ type: 'metrics', snapshot: server.metrics() });
  } else if (msg.type === 'stop') {
    await server?.close(0);
    ch.send({ type: 'stopped' });
    ch.close();
  }
});

/**
 * Worker-thread entry of the embedded fixture server: the server gets its own event loop, so the load
 * client's measurements (and its saturation figures) are not mixed with the server's work.
 *
 * Protocol: → { plainUrl, tlsUrl, caPem, caPath } or { error }; ← 'close' → { closed: true }.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isH2labError } from '../core/index.ts';
import { startServer } from '../server/index.ts';

const port = parentPort!;
try {
  const server = await startServer(workerData as Parameters<typeof startServer>[0]);
  port.postMessage({
    plainUrl: server.plainUrl,
    tlsUrl: server.tlsUrl,
    caPem: server.caPem,
    caPath: server.caPath,
  });
  port.on('message', async (m) => {
    if (m === 'close') {
      await server.close(0);
      port.postMessage({ closed: true });
      port.close();
    }
  });
} catch (err) {
  port.postMessage({
    error: isH2labError(err)
      ? err.toJSON()
      : { code: 'H2LAB_ERR_INTERNAL', message: String(err), details: {} },
  });
}

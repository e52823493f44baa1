/**
 * Worker-thread entry of `--workers N`: one {@link LoadShare} with the share it was given.
 *
 * Protocol (→ to the engine, ← from it):
 *   → { type: 'ready' } | { type: 'error', error }     after opening connections
 *   ← { type: 'start', originEpochMs, samples }         run the schedule
 *   → { type: 'live', completed, inFlight }              every 100 ms
 *   → { type: 'samples', lines }                         NDJSON lines, batched, when asked for
 *   ← { type: 'stop', error? }                           end now (with error: abort in-flight)
 *   → { type: 'result', result }                         the part's tally, encoded
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type ErrorCode, H2labError, isH2labError } from '../core/index.ts';
import type { Sample } from '../model/index.ts';
import { LoadShare, type ShareInput } from './share.ts';
import { encodeTally } from './tally.ts';

const port = parentPort!;
const part = new LoadShare(workerData as ShareInput);

port.on(
  'message',
  async (m: {
    type: string;
    originEpochMs?: number;
    samples?: boolean;
    error?: ReturnType<H2labError['toJSON']>;
  }) => {
    if (m.type === 'stop') {
      part.stop(
        m.error ? new H2labError(m.error.code as ErrorCode, m.error.message, m.error.details) : undefined,
      );
      return;
    }
    if (m.type !== 'start') return;
    const live = setInterval(() => port.postMessage({ type: 'live', ...part.live }), 100);
    let lines: string[] = [];
    const flush = (): void => {
      if (lines.length > 0) port.postMessage({ type: 'samples', lines });
      lines = [];
    };
    const flusher = m.samples ? setInterval(flush, 100) : undefined;
    const onSample = m.samples
      ? (s: Sample): void => {
          lines.push(JSON.stringify(s));
        }
      : undefined;
    const result = await part.start({ originEpochMs: m.originEpochMs!, ...(onSample ? { onSample } : {}) });
    clearInterval(live);
    clearInterval(flusher);
    flush();
    port.postMessage({ type: 'live', ...part.live });
    port.postMessage({ type: 'result', result: encodeTally(result) });
  },
);

try {
  await part.prepare();
  port.postMessage({ type: 'ready' });
} catch (err) {
  port.postMessage({
    type: 'error',
    error: isH2labError(err)
      ? err.toJSON()
      : { code: 'H2LAB_ERR_INTERNAL', message: String(err), details: {} },
  });
}

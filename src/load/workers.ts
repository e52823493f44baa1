/**
 * `--workers N`: N worker threads, each running a {@link LoadShare} with its share of the concurrency,
 * rate, request count and connections, on one shared time origin. Their tallies come back encoded
 * and merge exactly (src/load/tally.ts).
 */
import type { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { Worker } from 'node:worker_threads';
import { type ErrorCode, H2labError, startThread } from '../core/index.ts';
import type { ResolvedLoadOptions } from './options.ts';
import { progressTimer } from './progress.ts';
import type { ShareInput, ShareLive } from './share.ts';
import { decodeTally, type EncodedTally, type RunTally } from './tally.ts';

type FromWorker =
  | { type: 'ready' }
  | { type: 'error'; error: ReturnType<H2labError['toJSON']> }
  | ({ type: 'live' } & ShareLive)
  | { type: 'samples'; lines: string[] }
  | { type: 'result'; result: EncodedTally };

/** Runs one part per input in its own thread; resolves with every part's result. */
export async function runWorkerParts(
  inputs: ShareInput[],
  o: ResolvedLoadOptions,
  events: EventEmitter,
  onStopHook: (hook: (e: H2labError) => void) => void,
  onSampleLine: ((line: string) => void) | undefined,
  barrier?: () => Promise<void>,
): Promise<RunTally[]> {
  const workers: Worker[] = [];
  const lives: ShareLive[] = inputs.map(() => ({ completed: 0, inFlight: 0 }));
  const results: Array<RunTally | undefined> = inputs.map(() => undefined);
  let readyCount = 0;
  let failed: H2labError | undefined;
  let onReady: () => void = () => {};
  let onAllDone: () => void = () => {};
  const ready = new Promise<void>((r) => {
    onReady = r;
  });
  const allDone = new Promise<void>((r) => {
    onAllDone = r;
  });
  const checkDone = (): void => {
    if (results.every((x) => x !== undefined)) onAllDone();
  };
  try {
    for (const [i, input] of inputs.entries()) {
      const w = startThread('load/worker-entry', input);
      workers.push(w);
      w.on('message', (m: FromWorker) => {
        switch (m.type) {
          case 'ready':
            if (++readyCount === inputs.length) onReady();
            break;
          case 'error':
            failed ??= new H2labError(m.error.code as ErrorCode, m.error.message, m.error.details);
            onReady();
            break;
          case 'live':
            lives[i] = { completed: m.completed, inFlight: m.inFlight };
            break;
          case 'samples':
            for (const l of m.lines) onSampleLine?.(l);
            break;
          case 'result':
            results[i] = decodeTally(m.result);
            checkDone();
            break;
        }
      });
      w.on('error', (err) => {
        failed ??= new H2labError('H2LAB_ERR_INTERNAL', `a load worker thread failed: ${err.message}`, {
          stack: err.stack,
        });
        onReady();
        results[i] ??= undefined;
      });
    }
    await ready;
    if (failed) throw failed;
    await barrier?.();
    onStopHook((e) => {
      for (const w of workers) w.postMessage({ type: 'stop', error: e.toJSON() });
    });
    const origin = performance.timeOrigin + performance.now();
    const progress = progressTimer(o, events, origin, () => lives);
    for (const w of workers)
      w.postMessage({ type: 'start', originEpochMs: origin, samples: onSampleLine !== undefined });
    await allDone;
    clearInterval(progress);
    return results as RunTally[];
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

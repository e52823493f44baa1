/**
 * Progress of a run while it lasts: one timer summing the live counters of its parts (one part per
 * worker thread, or the single in-process part).
 */
import type { EventEmitter } from 'node:events';
import type { ResolvedLoadOptions } from './options.ts';

/** A progress event, emitted every `progressIntervalMs`. */
export interface LoadProgress {
  /** Since the load started (warm-up included), ms. */
  elapsedMs: number;
  /** Requests completed so far (warm-up included). */
  completed: number;
  inFlight: number;
  /** Completions per second over the last interval. */
  rps: number;
}

/** Emits `progress` events summing the parts' live counters. */
export function progressTimer(
  o: ResolvedLoadOptions,
  events: EventEmitter,
  originEpochMs: number,
  lives: () => Array<{ completed: number; inFlight: number }>,
): NodeJS.Timeout {
  let lastCompleted = 0;
  let lastT = 0;
  const t = setInterval(() => {
    const elapsedMs = performance.timeOrigin + performance.now() - originEpochMs;
    let completed = 0;
    let inFlight = 0;
    for (const l of lives()) {
      completed += l.completed;
      inFlight += l.inFlight;
    }
    const rps = elapsedMs > lastT ? ((completed - lastCompleted) * 1000) / (elapsedMs - lastT) : 0;
    lastCompleted = completed;
    lastT = elapsedMs;
    events.emit('progress', { elapsedMs, completed, inFlight, rps } satisfies LoadProgress);
  }, o.progressIntervalMs);
  t.unref();
  return t;
}

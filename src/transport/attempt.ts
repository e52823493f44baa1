/**
 * One request's attempts: the {@link Sample} it starts with, the setup times it carries for a
 * connection it opened, whether a refused attempt is sent again and what the next attempt starts
 * from. The fields an attempt resets are declared once beside `Sample` (SAMPLE_ATTEMPT_FIELDS,
 * src/model/sample.ts), so a new per-attempt fact is reset by adding it there.
 */
import {
  type FailureClass,
  type RequestTiming,
  SAMPLE_ATTEMPT_FIELDS,
  type Sample,
  type WireProtocol,
} from '../model/index.ts';
import type { PoolConn } from './pool-conn.ts';

/**
 * Retries of a request refused with REFUSED_STREAM before it counts as a failure: Chromium's
 * budget for a refused stream (HttpNetworkTransaction, kMaxRetryAttempts 2).
 */
export const MAX_RETRIES = 2;

/**
 * Retries of a request that GOAWAY named unprocessed (RFC 9113 §6.8: above its last-stream-id).
 * Larger than {@link MAX_RETRIES}: such a refusal says the session ended, not that the server would
 * not take the request, and in a pool the retry can land on another session whose GOAWAY is already
 * on the wire (a server rotating every session after each response lost 136 of 1000 `h2-pool`
 * requests with 2). Still a bound, so a server that refuses every stream ends the run.
 */
export const MAX_GOAWAY_RETRIES = 10;

/** The sample of a request handed over at `timing`, before its first attempt. */
export function newSample(timing: RequestTiming, protocol: WireProtocol): Sample {
  return {
    seq: timing.seq,
    intendedMs: timing.intendedMs,
    queuedMs: timing.queuedMs,
    sentMs: timing.queuedMs,
    endMs: timing.queuedMs,
    connectionId: 0,
    newConnection: false,
    bytesIn: 0,
    bytesOut: 0,
    protocol,
  };
}

/** Ends an attempt that never reached the wire (or failed beside it) as `error`, at `nowMs`. */
export function failSample(sample: Sample, error: FailureClass, detail: string, nowMs: number): Sample {
  sample.error = error;
  sample.errorDetail = detail;
  sample.endMs = nowMs;
  if (sample.sentMs < sample.queuedMs) sample.sentMs = sample.queuedMs;
  return sample;
}

/** The attempt opened `conn` (or is its first request): it carries the connection's setup times. */
export function carrySetup(sample: Sample, conn: PoolConn): void {
  sample.newConnection = true;
  sample.connectMs = conn.connectMs;
  if (conn.tlsMs !== undefined) sample.tlsMs = conn.tlsMs;
}

/**
 * True when the attempt that just ended is to be sent again: the server refused it unprocessed
 * (GOAWAY above its stream, REFUSED_STREAM) and its budget is not spent. Requests the server never
 * processed are safe to retry (RFC 9113 §8.7), as browsers do; counting them as failures would charge
 * HTTP/2 for a server's routine session rotation (nginx: `keepalive_requests`) that HTTP/1.1 pays with
 * a quiet close. Counts a GOAWAY refusal in `unprocessed`.
 */
export function mayRetry(sample: Sample): boolean {
  if (sample.error === 'goaway') sample.unprocessed = (sample.unprocessed ?? 0) + 1;
  const budget =
    sample.error === 'goaway' ? MAX_GOAWAY_RETRIES : sample.error === 'refused-stream' ? MAX_RETRIES : 0;
  return (sample.retries ?? 0) < budget;
}

/** Starts the request's next attempt: counts it, and resets every field of SAMPLE_ATTEMPT_FIELDS. */
export function nextAttempt(sample: Sample): void {
  sample.retries = (sample.retries ?? 0) + 1;
  const fields = sample as Record<string, unknown>;
  for (const [k, v] of Object.entries(SAMPLE_ATTEMPT_FIELDS)) {
    if (v === undefined) delete fields[k];
    else fields[k] = v;
  }
}

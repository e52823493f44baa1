/**
 * The bottleneck: a rate limit behind one drop-tail queue that every flow in this direction shares
 * (six HTTP/1.1 connections compete for the same bytes, as on a real access link; a per-connection
 * limit would hand them six times the link).
 *
 * ```
 *   arrivals ──▶ [ queue ≤ queueBytes ] ──▶ serialiser at rateBitsPerSec ──▶ departures
 *                 full? drop the arrival (drop-tail)
 * ```
 *
 * Kept in virtual time: `busyUntil` is when the serialiser finishes everything admitted so far, so
 * the bytes still waiting at time t are (busyUntil − t)·rate/8 and a packet's departure is known
 * the moment it arrives. The packet being serialised counts as queued until it is fully sent. Sizes
 * are IP packet bytes (no link-layer framing).
 */
import { DROP, type LinkCondition } from './types.ts';

export interface RateOptions {
  /** Link rate in bits per second (> 0). */
  rateBitsPerSec: number;
  /** Bottleneck queue capacity in bytes, including the packet on the wire (≥ one MTU). */
  queueBytes: number;
}

export function rate(opts: RateOptions): LinkCondition {
  const msPerByte = 8000 / opts.rateBitsPerSec;
  const { queueBytes } = opts;
  let busyUntil = Number.NEGATIVE_INFINITY;
  return {
    kind: 'rate',
    dropReason: 'queue',
    admit(sizeBytes, atMs) {
      const backlogBytes = busyUntil > atMs ? (busyUntil - atMs) / msPerByte : 0;
      if (backlogBytes + sizeBytes > queueBytes) return DROP;
      busyUntil = Math.max(busyUntil, atMs) + sizeBytes * msPerByte;
      return busyUntil;
    },
  };
}

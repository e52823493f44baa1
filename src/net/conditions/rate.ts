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
 *
 * Keys: `rateBitsPerSec` (`--rate`, `--bandwidth` in bench and compare), `rateUpBitsPerSec`
 * (`--rate-up`), `queueBytes` (`--queue`; default one bandwidth-delay product, at least 64 KiB).
 * Stage: bottleneck, after loss.
 */
import { DROP, defineCondition, type LinkCondition, STAGE } from './types.ts';

interface RateOptions {
  /** Link rate in bits per second (> 0). */
  rateBitsPerSec: number;
  /** Bottleneck queue capacity in bytes, including the packet on the wire (≥ one MTU). */
  queueBytes: number;
}

export function rate(opts: RateOptions): LinkCondition {
  const msPerByte = 8000 / opts.rateBitsPerSec;
  const { queueBytes } = opts;
  let busyUntil = Number.NEGATIVE_INFINITY;
  let waitMs = 0;
  return {
    kind: 'rate',
    dropReason: 'queue',
    get lastWaitMs() {
      return waitMs;
    },
    admit(sizeBytes, atMs) {
      const backlogBytes = busyUntil > atMs ? (busyUntil - atMs) / msPerByte : 0;
      if (backlogBytes + sizeBytes > queueBytes) return DROP;
      waitMs = busyUntil > atMs ? busyUntil - atMs : 0;
      busyUntil = Math.max(busyUntil, atMs) + sizeBytes * msPerByte;
      return busyUntil;
    },
  };
}

/** 10e6 → "10mbit": a rate's part of a link's name. */
function rateTag(v: number): string {
  if (v >= 1e9 && v % 1e9 === 0) return `${v / 1e9}gbit`;
  if (v >= 1e6 && v % 1e6 === 0) return `${v / 1e6}mbit`;
  return `${+(v / 1e3).toPrecision(6)}kbit`;
}

/** The default bottleneck queue: one bandwidth-delay product, at least 64 KiB. */
function defaultQueueBytes(rateBitsPerSec: number, rttMs: number): number {
  return Math.max(64 * 1024, Math.round((rateBitsPerSec * rttMs) / 8000));
}

export const rateCondition = defineCondition({
  kind: 'rate',
  stage: STAGE.bottleneck,
  keys: {
    rateBitsPerSec: {
      type: 'number',
      positive: true,
      doc: 'Bottleneck rate in bits/s in both directions (undefined = no limit).',
      flag: 'rate',
      grammar: 'bitrate',
      arg: 'bitrate',
      help: 'bottleneck rate of the link both ways, e.g. 50mbit',
      axisTag: rateTag,
      asksForLink: true,
    },
    rateUpBitsPerSec: {
      type: 'number',
      positive: true,
      doc: 'Client → server rate when it differs (asymmetric access links).',
      flag: 'rate-up',
      grammar: 'bitrate',
      arg: 'bitrate',
      help: 'client → server rate when it differs',
    },
    queueBytes: {
      type: 'number',
      int: true,
      min: 1500,
      doc: 'Bottleneck queue per direction, bytes (drop-tail, shared by all flows). Default: one bandwidth-delay product of the link, at least 64 KiB — a "rule of thumb" buffer.',
      flag: 'queue',
      grammar: 'bytes',
      arg: 'size',
      help: 'bottleneck queue per direction (drop-tail, shared by all flows), e.g. 64KiB; default one BDP',
      fix: 'use at least one packet, 1500 bytes (e.g. 64KiB)',
    },
  },
  direction: (own, spec, dir) => {
    const rateBitsPerSec = dir === 'up' ? (own.rateUpBitsPerSec ?? own.rateBitsPerSec) : own.rateBitsPerSec;
    if (rateBitsPerSec === undefined) return {};
    // The queue's default is one BDP of the link: the delay condition's rttMs.
    return {
      rateBitsPerSec,
      queueBytes: own.queueBytes ?? defaultQueueBytes(rateBitsPerSec, spec.rttMs as number),
    };
  },
  build: (d) =>
    d.rateBitsPerSec === undefined
      ? undefined
      : rate({ rateBitsPerSec: d.rateBitsPerSec, queueBytes: d.queueBytes ?? 64 * 1024 }),
});

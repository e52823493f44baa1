/**
 * How many round trips each strategy's connection set-up took before its first request could leave,
 * from first principles and the runs' own numbers: TCP's handshake and then TLS 1.3's (2 round trips),
 * QUIC's and TLS 1.3's together (1; 2 when the server sends a Retry, RFC 9000 §8.1.2), each followed
 * by the request's own round trip. Said for a burst whose connections were opened inside the timed
 * period, beside the time each side measured for its set-up.
 */
import { formatMs } from '../core/index.ts';
import type { RunResult } from '../model/index.ts';

/** One strategy's median run of a burst cell. */
export interface HandshakeSide {
  strategy: string;
  run: RunResult;
}

/** The set-up of one run in words: "h2: TCP then TLS 1.3, 2 round trips (measured 205 ms)". */
function sideText({ strategy, run }: HandshakeSide, rttMs: number): string | undefined {
  const c = run.connections;
  const setup = (c.connectMs?.p50 ?? 0) + (c.tlsMs?.p50 ?? 0);
  if (setup <= 0) return undefined;
  const measured = `measured ${formatMs(setup)}, ${(setup / rttMs).toFixed(1)} RTT`;
  if (run.transport.quic) {
    const retry = c.quic?.server?.retry;
    if (retry === undefined)
      return `${strategy}: QUIC with TLS 1.3, 1 round trip, 2 if the server sent a Retry (${measured})`;
    return retry
      ? `${strategy}: a Retry, then QUIC with TLS 1.3, 2 round trips (${measured}; --quic-retry)`
      : `${strategy}: QUIC with TLS 1.3 together, 1 round trip (${measured})`;
  }
  if (!c.tlsMs) return `${strategy}: TCP, 1 round trip (${measured})`;
  return `${strategy}: TCP then TLS 1.3, 2 round trips (${measured})`;
}

/**
 * The sentence for a burst at `rttMs` whose sides opened their connections inside the timed period,
 * when a QUIC strategy is among them; undefined otherwise.
 */
export function handshakeSentence(sides: readonly HandshakeSide[], rttMs: number): string | undefined {
  if (rttMs <= 0 || !sides.some((s) => s.run.transport.quic)) return undefined;
  if (sides.some((s) => s.run.schedule.handshakes === 'exclude')) return undefined;
  const parts = sides.map((s) => sideText(s, rttMs)).filter((x) => x !== undefined);
  if (parts.length < 2) return undefined;
  return `Connection set-up before the first request, each followed by the request's own round trip: ${parts.join('; ')}.`;
}

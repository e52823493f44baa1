/**
 * Why requests waited for a stream slot on a multiplexed connection, from what a run recorded: the
 * one rule behind the load engine's warning and the compare verdict's sentence (the two
 * once named different limits for the same run).
 *
 * - `server-limit`: a connection reached the SETTINGS_MAX_CONCURRENT_STREAMS the server announced;
 * - `provisional`: a connection reached the {@link PROVISIONAL_STREAMS} a client opens before the
 *   server's SETTINGS arrive (RFC 9113 §5.1.2; h2lab, like Chromium, assumes 100), below the
 *   server's limit;
 * - `goaway`: the server ended sessions with GOAWAY (a requests-per-connection limit such as nginx's
 *   `keepalive_requests`, 1000 by default), and requests waited for the session that replaced each —
 *   what nginx showed at c=8 against a limit of 128;
 * - `credit`: QUIC counts streams opened and returns credit later (MAX_STREAMS, RFC 9000 §4.6), so a
 *   request can wait with fewer streams open than the limit;
 * - `unknown`: no connection reached either limit and it is not QUIC: the wait is one h2lab cannot
 *   attribute from these fields.
 */
import { PROVISIONAL_STREAMS } from './h2-wire-conn.ts';

/** What {@link streamWaitCause} reads: a run's `connections` fields. */
interface StreamWaitFacts {
  streamCapHits?: number | undefined;
  serverMaxConcurrentStreams?: number | undefined;
  peakStreamsPerConnection?: number | undefined;
  /** The connections' lifetimes as the run logged them (the first 64 that closed). */
  lifetimes?: { connections: ReadonlyArray<{ closedBy?: string; requests: number }> } | undefined;
}

/** Why requests waited for a stream slot; undefined when none did. */
export type StreamWaitCause = 'server-limit' | 'provisional' | 'goaway' | 'credit' | 'unknown';

/** The cause of a run's stream-slot waits (see the module comment), or undefined when there were none. */
export function streamWaitCause(f: StreamWaitFacts, quic: boolean): StreamWaitCause | undefined {
  if ((f.streamCapHits ?? 0) === 0) return undefined;
  const max = f.serverMaxConcurrentStreams;
  const peak = f.peakStreamsPerConnection;
  if (peak === undefined) return 'unknown';
  if (max !== undefined && peak >= max) return 'server-limit';
  if (peak >= PROVISIONAL_STREAMS && (max === undefined || max > PROVISIONAL_STREAMS)) return 'provisional';
  if (goaways(f).length > 0) return 'goaway';
  return quic ? 'credit' : 'unknown';
}

function goaways(f: StreamWaitFacts) {
  return (f.lifetimes?.connections ?? []).filter((c) => c.closedBy === 'goaway');
}

/** The cause in words, for a sentence that begins with who waited ("… waited for a stream slot N times: …"). */
export function streamWaitWords(cause: StreamWaitCause, f: StreamWaitFacts): string {
  const max = f.serverMaxConcurrentStreams;
  const peak = f.peakStreamsPerConnection;
  switch (cause) {
    case 'server-limit':
      return `the server's SETTINGS_MAX_CONCURRENT_STREAMS${max !== undefined ? ` (${max})` : ''} was reached: concurrency beyond it is queueing, not multiplexing`;
    case 'provisional':
      return `requests beyond the first ${PROVISIONAL_STREAMS} waited for the server's SETTINGS on new sessions (a client opens at most ${PROVISIONAL_STREAMS} streams until the server announces its limit${max !== undefined ? `, here ${max}` : ''}), not for the server's limit`;
    case 'goaway': {
      const g = goaways(f);
      const each = [...new Set(g.map((c) => c.requests))];
      return `the server ended ${g.length} session${g.length === 1 ? '' : 's'} with GOAWAY${each.length === 1 ? ` after ${each[0]} requests each` : ''} and requests waited for the session that replaced ${g.length === 1 ? 'it' : 'each'} (a requests-per-connection limit, e.g. nginx keepalive_requests), not for a stream limit: no connection had more than ${peak} streams open`;
    }
    case 'credit':
      return `QUIC's stream credit (MAX_STREAMS) came back later than streams ended, with at most ${peak} streams open on a connection${max !== undefined ? ` against a limit of ${max}` : ''}`;
    default:
      return `no connection had more than ${peak ?? 'an unknown number of'} streams open, below the server's limit${max !== undefined ? ` (${max})` : ''} and the ${PROVISIONAL_STREAMS} a client opens before it: the cause is not one h2lab measures`;
  }
}

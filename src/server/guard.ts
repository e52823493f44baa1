/**
 * Session hardening the Node 20 http2 core does not do by itself (see docs/reliability.md and the
 * measured defaults in docs/design.md, "Fixture server"):
 *
 *   - rapid reset (CVE-2023-44487): client RST_STREAMs are counted per connection in a token bucket;
 *     above it the session ends with GOAWAY(ENHANCE_YOUR_CALM). Handlers start one microtask after
 *     their HEADERS, so a stream reset in the same read never runs one (Go limits started handlers
 *     the same way: golang/net b225e7ca, `scheduleHandler`).
 *   - PRIORITY floods: the same bucket per connection (nginx: `priority_limit`, ENHANCE_YOUR_CALM).
 *   - header-list bombs: streams that nghttp2 began but that never reached a handler (refused for
 *     their header list) are counted from `lastProcStreamID`; above the limit, ENHANCE_YOUR_CALM.
 *   - a session whose nghttp2 has terminated it (its own GOAWAY after a protocol error or flood)
 *     stops reading and writing, but Node keeps the socket: a PING probe on a quiet session that
 *     stays queued while the socket has nothing to write shows it, and the socket is destroyed.
 *   - a session that opens no stream within the first-stream timeout (preface only, SETTINGS then
 *     silence) gets GOAWAY(NO_ERROR) and is closed.
 *
 * Every limit is an option of {@link ServerOptions}; everything counted is in {@link GuardCounts}.
 */
import { type Http2Session, constants as h2c, type ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';

/** How often quiet sessions are looked at, ms. A terminated session is found within ~2 of these. */
const TICK_MS = 200;
/** The longest pause between two probes of a healthy quiet session, ms. */
const MAX_PROBE_INTERVAL_MS = 8000;
/** Time given to a probe PING to reach the socket before the session is judged stalled, ms. */
const PROBE_CHECK_MS = 50;

/** The limits the guard enforces (a subset of the server options, all resolved). */
export interface GuardLimits {
  /** Client RST_STREAMs per connection per second (bucket of the same size); 0 = no limit. */
  h2MaxResetsPerSec: number;
  /** PRIORITY frames per connection per second (bucket of the same size); 0 = no limit. */
  h2MaxPriorityPerSec: number;
  /** Streams refused for their header list per connection before the session ends; 0 = no limit. */
  h2MaxRefusedStreams: number;
  /** A session must open its first stream within this, ms; 0 = no limit. */
  prefaceTimeoutMs: number;
  /** After a GOAWAY (ours or nghttp2's), streams get this long before the socket is destroyed, ms. */
  h2GoawayGraceMs: number;
}

/** What the guard did since the server started. */
export interface GuardCounts {
  /** Sessions ended with GOAWAY(ENHANCE_YOUR_CALM), by reason. */
  enhanceYourCalm: { resets: number; priority: number; refused: number };
  /** Sessions nghttp2 had terminated on its own, whose socket the guard destroyed. */
  stalled: number;
  /** Sessions closed because they opened no stream within the first-stream timeout. */
  noFirstStream: number;
  /** Streams whose handler was never started (reset, or their session ended, before it would run). */
  handlersSkipped: number;
}

/** A token bucket of `perSec` tokens refilled continuously, full at start. */
class Bucket {
  private tokens: number;
  private at = performance.now();
  constructor(private readonly perSec: number) {
    this.tokens = perSec;
  }
  /** Takes one token; false when the bucket is empty. */
  take(): boolean {
    const now = performance.now();
    this.tokens = Math.min(this.perSec, this.tokens + ((now - this.at) * this.perSec) / 1000);
    this.at = now;
    if (this.tokens < 1) return false;
    this.tokens--;
    return true;
  }
}

interface SessionState {
  session: Http2Session;
  /** The socket handed to the http2 server (a TLSSocket on the TLS port). */
  sock: Socket;
  /** The TCP socket under it. */
  raw: Socket;
  startedAt: number;
  resets?: Bucket;
  priority?: Bucket;
  /** 'stream' events seen (streams that reached the server's handler path). */
  streams: number;
  /** Set once the guard (or a GOAWAY) has decided the session's end: no handler starts after it. */
  ended: boolean;
  lastRead: number;
  lastWritten: number;
  nextProbeAt: number;
  probeIntervalMs: number;
  probing: boolean;
}

/** Bytes the socket under a session still has to hand to the kernel (TLS: the TCP socket below). */
function queuedWriteBytes(raw: Socket): number {
  const handle = (raw as unknown as { _handle?: { writeQueueSize?: number } })._handle;
  return handle?.writeQueueSize ?? 0;
}

/** The per-server HTTP/2 guard; one instance serves every session of a server. */
export class H2Guard {
  readonly counts: GuardCounts = {
    enhanceYourCalm: { resets: 0, priority: 0, refused: 0 },
    stalled: 0,
    noFirstStream: 0,
    handlersSkipped: 0,
  };
  private readonly states = new Map<Http2Session, SessionState>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly limits: GuardLimits) {
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  /** Starts guarding a session; `sock` is the socket handed to the http2 server. */
  adopt(session: Http2Session, sock: Socket): void {
    // A TLSSocket made by tls.Server keeps the TCP socket it wraps as `_parent`.
    const raw = (sock as unknown as { _parent?: Socket })._parent ?? sock;
    const st: SessionState = {
      session,
      sock,
      raw,
      startedAt: performance.now(),
      streams: 0,
      ended: false,
      lastRead: 0,
      lastWritten: 0,
      nextProbeAt: 0,
      probeIntervalMs: TICK_MS,
      probing: false,
    };
    if (this.limits.h2MaxResetsPerSec > 0) st.resets = new Bucket(this.limits.h2MaxResetsPerSec);
    if (this.limits.h2MaxPriorityPerSec > 0) {
      st.priority = new Bucket(this.limits.h2MaxPriorityPerSec);
      session.on('priority', () => {
        if (!st.ended && !st.priority!.take()) this.calm(st, 'priority');
      });
    }
    this.states.set(session, st);
    session.once('close', () => this.states.delete(session));
    raw.once('close', () => this.states.delete(session));
  }

  /**
   * Runs `start` for a new stream one microtask later, unless the stream was reset or its session
   * ended meanwhile. Node delivers HEADERS while nghttp2 is still inside one read; the microtask runs
   * after that read, so the RST_STREAMs and GOAWAY decisions of the same bytes are known.
   */
  startStream(session: Http2Session, stream: ServerHttp2Stream, start: () => void): void {
    const st = this.states.get(session);
    if (st) {
      st.streams++;
      st.probeIntervalMs = TICK_MS;
    }
    queueMicrotask(() => {
      if (stream.destroyed || stream.closed || st?.ended || session.closed || session.destroyed) {
        this.counts.handlersSkipped++;
        return;
      }
      start();
    });
  }

  /** A stream of `session` was reset by the client (RFC 9113 §6.4). */
  clientReset(session: Http2Session | undefined): void {
    const st = session && this.states.get(session);
    if (st?.resets && !st.ended && !st.resets.take()) this.calm(st, 'resets');
  }

  /** Marks a session as ending (a GOAWAY sent by the server): new streams get no handler. */
  ending(session: Http2Session): void {
    const st = this.states.get(session);
    if (st) st.ended = true;
  }

  /** GOAWAY then close; the socket is destroyed once streams ended or after `graceMs` at most. */
  shut(session: Http2Session, graceMs = this.limits.h2GoawayGraceMs): void {
    const st = this.states.get(session);
    if (st) st.ended = true;
    if (!session.closed && !session.destroyed) session.close();
    // Node's graceful close waits for the peer's FIN after its own: a peer that never sends one
    // would keep the socket. Bound it.
    const raw = st?.raw;
    const t = setTimeout(() => {
      if (!session.destroyed) session.destroy();
      raw?.destroy();
    }, graceMs);
    t.unref();
    (raw ?? session).once('close', () => clearTimeout(t));
  }

  /** Stops the timer (server shutdown). */
  stop(): void {
    clearInterval(this.timer);
  }

  /** Ends a session for abuse: GOAWAY(ENHANCE_YOUR_CALM) with the last stream nghttp2 processed. */
  private calm(st: SessionState, reason: keyof GuardCounts['enhanceYourCalm']): void {
    st.ended = true;
    this.counts.enhanceYourCalm[reason]++;
    const { session, raw } = st;
    if (!session.destroyed)
      session.destroy(new Error(`h2lab: too many ${reason}`), h2c.NGHTTP2_ENHANCE_YOUR_CALM);
    // Node ends the socket after flushing the GOAWAY; an attacker that never reads could hold that.
    const t = setTimeout(() => raw.destroy(), this.limits.h2GoawayGraceMs);
    t.unref();
    raw.once('close', () => clearTimeout(t));
  }

  private tick(): void {
    const now = performance.now();
    for (const st of this.states.values()) {
      const { session, sock, raw } = st;
      if (session.destroyed || st.probing) continue;
      if (this.limits.h2MaxRefusedStreams > 0 && !st.ended) {
        // Client stream ids are odd: (last + 1) / 2 streams began; those without a 'stream' event
        // were refused by nghttp2 or Node (header list too large, too many streams).
        const began = ((session.state.lastProcStreamID ?? 0) + 1) >>> 1;
        if (began - st.streams > this.limits.h2MaxRefusedStreams) {
          this.calm(st, 'refused');
          continue;
        }
      }
      if (
        this.limits.prefaceTimeoutMs > 0 &&
        st.streams === 0 &&
        !st.ended &&
        now - st.startedAt > this.limits.prefaceTimeoutMs
      ) {
        this.counts.noFirstStream++;
        this.shut(session);
        continue;
      }
      const read = sock.bytesRead;
      const written = sock.bytesWritten;
      const quiet = read === st.lastRead && written === st.lastWritten;
      st.lastRead = read;
      st.lastWritten = written;
      if (!quiet || now < st.nextProbeAt || queuedWriteBytes(raw) > 0) continue;
      this.probe(st);
    }
  }

  /**
   * RFC 9113 §6.7: PING can determine "whether an idle connection is still functional". A healthy
   * session writes it at once; one that nghttp2 has terminated keeps it in its outbound queue.
   */
  private probe(st: SessionState): void {
    const { session, sock, raw } = st;
    const before = sock.bytesWritten;
    try {
      if (!session.ping(ignorePing)) return;
    } catch {
      return;
    }
    st.probing = true;
    const t = setTimeout(() => {
      st.probing = false;
      if (session.destroyed) return;
      const stuck =
        sock.bytesWritten === before &&
        (session.state.outboundQueueSize ?? 0) > 0 &&
        queuedWriteBytes(raw) === 0;
      if (stuck) {
        this.counts.stalled++;
        st.ended = true;
        session.destroy();
        raw.destroy();
        return;
      }
      st.lastWritten = sock.bytesWritten;
      st.lastRead = sock.bytesRead;
      st.nextProbeAt = performance.now() + st.probeIntervalMs;
      st.probeIntervalMs = Math.min(MAX_PROBE_INTERVAL_MS, st.probeIntervalMs * 2);
    }, PROBE_CHECK_MS);
    t.unref();
  }
}

function ignorePing(): void {}

/**
 * RFC 9112 §6.1 / §3.2: HTTP/1.1 request shapes that llhttp accepts but a strict server refuses,
 * because two parsers in a chain may read them differently (request smuggling). Returns the reason,
 * or undefined when the request is acceptable.
 */
export function refuseH1(rawHeaders: readonly string[]): string | undefined {
  let hosts = 0;
  let te: string | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (name === 'host') hosts++;
    else if (name === 'transfer-encoding') te = te === undefined ? rawHeaders[i + 1]! : `${te},`;
  }
  if (hosts > 1) return 'more than one Host field';
  // A server that does not implement a coding other than chunked must answer 501 or 400; the only
  // safe list is exactly "chunked" (RFC 9112 §6.1, §7).
  if (te !== undefined && te.trim().toLowerCase() !== 'chunked')
    return 'Transfer-Encoding other than chunked';
  return undefined;
}

/**
 * Session hardening the Node 20 http2 core does not do by itself (see docs/reliability.md and the
 * measured defaults in docs/performance.md, "Fixture server (src/server) and certificates (src/tls)"):
 *
 *   - rapid reset (CVE-2023-44487): client RST_STREAMs are counted per connection in a token bucket;
 *     above it the session ends with GOAWAY(ENHANCE_YOUR_CALM). Handlers start after the read that carried their HEADERS, so a stream reset in the same bytes runs none (Go limits started handlers
 *     the same way: golang/net b225e7ca, `scheduleHandler`).
 *   - PRIORITY floods: the same bucket per connection (nginx: `priority_limit`, ENHANCE_YOUR_CALM).
 *   - header-list bombs: streams that nghttp2 began after the last one that reached the server (refused
 *     for their header list) are counted from `lastProcStreamID`, and the server's own refusals of a
 *     list larger than `--max-header-list-size` are added; above the limit, ENHANCE_YOUR_CALM. Stream
 *     ids a client skipped (RFC 9113 §5.1.1 allows it) are not refusals.
 *   - floods of frames that never reach JavaScript (WINDOW_UPDATE, unknown types; RFC 9113 §10.5):
 *     the bytes a session reads beyond what its requests carry are taken from a bucket; empty →
 *     ENHANCE_YOUR_CALM. Node 20 surfaces neither frame type, so the guard counts bytes, as nginx does
 *     (`total_bytes / 8 > payload_bytes + 1 MiB`, "http2 flood detected").
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
/** Time given to a GOAWAY(ENHANCE_YOUR_CALM) to be written before the socket is destroyed, ms. */
const CALM_FLUSH_MS = 50;
/** Time given to a probe PING to reach the socket before the session is judged stalled, ms. */
const PROBE_CHECK_MS = 50;

/** The limits the guard enforces (a subset of the server options, all resolved). */
interface GuardLimits {
  /** Client RST_STREAMs per connection: a bucket of this size refilled over 10 s; 0 = no limit. */
  h2MaxResets: number;
  /** PRIORITY frames per connection: a bucket of this size refilled over 10 s; 0 = no limit. */
  h2MaxPriority: number;
  /** Streams refused for their header list per connection before the session ends; 0 = no limit. */
  h2MaxRefusedStreams: number;
  /**
   * Bytes a connection may read beyond its requests' header lists and bodies and 1/16 of what the
   * server wrote: a bucket of this size refilled over 10 s; 0 = no limit.
   */
  h2MaxFloodBytes: number;
  /** A session must open its first stream within this, ms; 0 = no limit. */
  prefaceTimeoutMs: number;
  /** After a GOAWAY (ours or nghttp2's), streams get this long before the socket is destroyed, ms. */
  h2GoawayGraceMs: number;
}

/** What the guard did since the server started. */
export interface GuardCounts {
  /** Sessions ended with GOAWAY(ENHANCE_YOUR_CALM), by reason. */
  enhanceYourCalm: { resets: number; priority: number; refused: number; flood: number };
  /** Streams refused (RST_STREAM ENHANCE_YOUR_CALM) for a header list above `--max-header-list-size`. */
  headerListTooLarge: number;
  /** Sessions nghttp2 had terminated on its own, whose socket the guard destroyed. */
  stalled: number;
  /** Sessions closed because they opened no stream within the first-stream timeout. */
  noFirstStream: number;
  /** Streams whose handler was never started (reset, or their session ended, before it would run). */
  handlersSkipped: number;
}

/** The time a token bucket takes to refill from empty, ms. */
const REFILL_MS = 10_000;

/**
 * A token bucket of `size` tokens, full at start, refilled continuously over {@link REFILL_MS}: a
 * client may cancel everything it has open at once (size ≥ 2 × MAX_CONCURRENT_STREAMS by default),
 * but not keep doing it. nghttp2's own reset limit is a burst of 1,000 refilled at 33/s.
 */
class Bucket {
  private tokens: number;
  private at = performance.now();
  constructor(private readonly size: number) {
    this.tokens = size;
  }
  /** Takes one token; false when the bucket is empty. */
  take(): boolean {
    return this.takeMany(1);
  }
  /** Takes `n` tokens (the flood bucket counts bytes); false when fewer were left. */
  takeMany(n: number): boolean {
    const now = performance.now();
    this.tokens = Math.min(this.size, this.tokens + ((now - this.at) * this.size) / REFILL_MS);
    this.at = now;
    if (this.tokens < n) return false;
    this.tokens -= n;
    return true;
  }
}

/** Of the bytes a server wrote, the share that may come back as the peer's WINDOW_UPDATEs and ACKs. */
const WRITTEN_CREDIT_SHARE = 1 / 16;

/**
 * The size of a header list as SETTINGS_MAX_HEADER_LIST_SIZE counts it (RFC 9113 §6.5.2): name and
 * value octets plus 32 per field. Node's `rawHeaders` (name, value, name, value, …) as strings.
 */
export function headerListBytes(rawHeaders: readonly string[]): number {
  let n = 16 * rawHeaders.length; // 32 per field, two entries per field
  for (let i = 0; i < rawHeaders.length; i++) n += rawHeaders[i]!.length;
  return n;
}

/** Node's per-stream native handle; its `bytesRead` is the DATA payload the stream received. */
let kHandle: symbol | undefined;
function streamHandle(stream: ServerHttp2Stream): { bytesRead?: number } | undefined {
  if (kHandle === undefined) {
    kHandle = Object.getOwnPropertySymbols(stream).find((s) => s.description === 'kHandle');
    if (kHandle === undefined) return undefined;
  }
  return (stream as unknown as Record<symbol, { bytesRead?: number } | undefined>)[kHandle];
}

/** A stream whose handler starts after the read that carried its HEADERS. */
interface PendingStart {
  session: Http2Session;
  stream: ServerHttp2Stream;
  st?: SessionState;
  start: () => void;
  /** Reset (or its session gone) while it waited: its handler never starts. */
  cancelled: boolean;
}

/** The stream's entry among the pending starts, while it waits (then undefined, never deleted). */
const kPendingStart = Symbol('h2lab.pendingStart');

/** A stream whose request has a body: its DATA is credited to the session as it arrives. */
interface BodyStream {
  handle: { bytesRead?: number };
  credited: number;
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
  /** The highest stream id that reached the server: ids below it that never did were skipped. */
  highestStreamId: number;
  /** Streams the server refused itself (header list too large) that are past `highestStreamId`. */
  refusedHere: number;
  flood?: Bucket;
  /** Bytes read that requests carried: header lists, and DATA credited from `bodies`. */
  credit: number;
  bodies?: Set<BodyStream>;
  /** `bytesRead`, `bytesWritten` and `credit` at the last flood check. */
  floodRead: number;
  floodWritten: number;
  floodCredit: number;
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
    enhanceYourCalm: { resets: 0, priority: 0, refused: 0, flood: 0 },
    headerListTooLarge: 0,
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
      highestStreamId: 0,
      refusedHere: 0,
      credit: 0,
      floodRead: 0,
      floodWritten: 0,
      floodCredit: 0,
      ended: false,
      lastRead: 0,
      lastWritten: 0,
      nextProbeAt: 0,
      probeIntervalMs: 0,
      probing: false,
    };
    if (this.limits.h2MaxResets > 0) st.resets = new Bucket(this.limits.h2MaxResets);
    if (this.limits.h2MaxFloodBytes > 0) {
      st.flood = new Bucket(this.limits.h2MaxFloodBytes);
      st.bodies = new Set();
    }
    if (this.limits.h2MaxPriority > 0) {
      st.priority = new Bucket(this.limits.h2MaxPriority);
      session.on('priority', () => {
        if (!st.ended && !st.priority!.take()) this.calm(st, 'priority');
      });
    }
    this.states.set(session, st);
    session.once('close', () => this.states.delete(session));
    raw.once('close', () => this.states.delete(session));
  }

  /**
   * Runs `start` for a new stream once Node has finished handing over the bytes of the current read
   * (one shared `setImmediate`), unless the stream was reset or its session ended meanwhile. Node
   * emits 'stream' for each HEADERS while it is still inside the read (and runs microtasks after
   * each callback), so the RST_STREAMs that follow in the same bytes are only known after it.
   */
  startStream(
    session: Http2Session,
    stream: ServerHttp2Stream,
    listBytes: number,
    hasBody: boolean,
    start: () => void,
  ): void {
    const st = this.states.get(session);
    if (stream.destroyed || st?.ended) {
      // Node emits 'stream' from a nextTick, after nghttp2 has processed the whole read: a rapid
      // reset's streams are already destroyed here (94,374 of 94,877 in the issue-26 attack). Nothing
      // is kept for them, so they die young: held to the next setImmediate (100k streams of 50
      // connections in one poll phase) they were promoted to the old space, +300 MiB of RSS that stayed.
      this.counts.handlersSkipped++;
      if (st) {
        this.seen(st, stream);
        this.onAborted(st, stream);
      }
      return;
    }
    const entry: PendingStart = { session, stream, st, start, cancelled: false };
    this.pending.push(entry);
    (stream as unknown as Record<symbol, PendingStart | undefined>)[kPendingStart] = entry;
    // A stream reset while it waits is skipped, and is counted against the session's bucket. One
    // listener shared by every stream ('aborted' fires at most once), which finds the entry on the
    // stream: a `once` and a closure per stream made the fixture's garbage collection twice as
    // costly (docs/performance.md).
    stream.on('aborted', this.onStreamAborted);
    if (st) {
      this.seen(st, stream);
      st.probeIntervalMs = 0;
      if (st.bodies) {
        st.credit += listBytes;
        const handle = hasBody ? streamHandle(stream) : undefined;
        if (handle) {
          const body: BodyStream = { handle, credited: 0 };
          st.bodies.add(body);
          // At 'close' Node has let go of the handle (its count may read 0): credit what came before.
          stream.once('end', () => creditBody(st, body));
          stream.once('close', () => {
            creditBody(st, body);
            st.bodies?.delete(body);
          });
        }
      }
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.drain);
    }
  }

  /** Streams waiting for the end of the read that carried them (insertion order = arrival). */
  private pending: PendingStart[] = [];
  private scheduled = false;
  private readonly drain = (): void => {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    for (const entry of batch) {
      const { session, stream, st, start } = entry;
      (stream as unknown as Record<symbol, PendingStart | undefined>)[kPendingStart] = undefined;
      if (entry.cancelled) continue;
      if (stream.destroyed || stream.closed || st?.ended || session.closed || session.destroyed) {
        this.counts.handlersSkipped++;
        continue;
      }
      start();
    }
  };

  /**
   * A stream the server refused itself (RST_STREAM ENHANCE_YOUR_CALM) for a header list larger than
   * `--max-header-list-size`: Node enforces the advertised limit only once the client acknowledged
   * our SETTINGS (RFC 9113 §6.5.3), so a first flight reaches JavaScript. It counts as refused.
   */
  refuseHeaderList(session: Http2Session, stream: ServerHttp2Stream): void {
    this.counts.headerListTooLarge++;
    const st = this.states.get(session);
    if (!st) return;
    this.seen(st, stream);
    st.refusedHere++;
    if (this.refused(st) > this.limits.h2MaxRefusedStreams && this.limits.h2MaxRefusedStreams > 0)
      this.calm(st, 'refused');
  }

  /**
   * A stream's 'aborted' (the peer reset it, or its session went, before its response ended), with
   * the stream as `this`. Node emits it while the stream still has its session.
   */
  private readonly onStreamAborted = ((guard: H2Guard) =>
    function onStreamAborted(this: ServerHttp2Stream): void {
      const entry = (this as unknown as Record<symbol, PendingStart | undefined>)[kPendingStart];
      if (entry && !entry.cancelled) {
        entry.cancelled = true;
        guard.counts.handlersSkipped++;
      }
      const st = this.session && guard.states.get(this.session);
      if (st) guard.onAborted(st, this);
    })(this);

  /** A stream reached the server: ids nghttp2 processed up to it are either seen or skipped. */
  private seen(st: SessionState, stream: ServerHttp2Stream): void {
    st.streams++;
    const id = stream.id ?? 0;
    if (id > st.highestStreamId) st.highestStreamId = id;
  }

  /**
   * Streams refused before they reached the server. Client stream ids are odd and increase (RFC 9113
   * §5.1.1), but a client may skip ids: only the ids nghttp2 processed after the highest stream that
   * reached the server are refusals (a stream that is accepted is handed over in the same callback
   * that processed it). A refused stream between two accepted ones is not counted here; nghttp2's
   * own limit and the server's refusals (`refusedHere`) still are.
   */
  private refused(st: SessionState): number {
    const last = st.session.state.lastProcStreamID ?? 0;
    return (last > st.highestStreamId ? (last - st.highestStreamId) >>> 1 : 0) + st.refusedHere;
  }

  /** A stream was reset before its response ended (RFC 9113 §6.4). */
  private onAborted(st: SessionState, stream: ServerHttp2Stream): void {
    if (!st.resets || st.ended || st.session.destroyed) return;
    if (stream.rstCode === undefined || stream.rstCode === h2c.NGHTTP2_NO_ERROR) return;
    if (!st.resets.take()) this.calm(st, 'resets');
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
    if (session.destroyed) return;
    // RFC 9113 §6.8: the last stream we processed. Submitting the GOAWAY also makes Node write out
    // what nghttp2 queued: if nghttp2's own reset limit fired first in the same bytes, the peer sees
    // that GOAWAY (INTERNAL_ERROR) instead, which Node 20 does not let us change.
    try {
      session.goaway(h2c.NGHTTP2_ENHANCE_YOUR_CALM, session.state.lastProcStreamID ?? 0);
    } catch {
      // the session was already going away
    }
    const t = setTimeout(() => {
      if (!session.destroyed) session.destroy();
      raw.destroy();
    }, CALM_FLUSH_MS);
    t.unref();
    raw.once('close', () => clearTimeout(t));
  }

  private tick(): void {
    const now = performance.now();
    for (const st of this.states.values()) {
      const { session, sock, raw } = st;
      if (session.destroyed || st.probing) continue;
      if (this.limits.h2MaxRefusedStreams > 0 && !st.ended) {
        if (this.refused(st) > this.limits.h2MaxRefusedStreams) {
          this.calm(st, 'refused');
          continue;
        }
      }
      if (st.flood && !st.ended && !this.floodCheck(st)) {
        this.calm(st, 'flood');
        continue;
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
   * RFC 9113 §10.5: frames a server must process but that carry no request cost it CPU (nginx measured
   * 0.12 s, this server 1.28 s of CPU per 100k). The bytes read since the last check, less the header
   * lists and DATA of its streams and 1/16 of what the server wrote (the peer's WINDOW_UPDATEs, PING
   * and SETTINGS ACKs answer writes), are taken from the session's flood bucket. False when empty.
   */
  private floodCheck(st: SessionState): boolean {
    if (st.bodies) for (const b of st.bodies) creditBody(st, b);
    const read = st.sock.bytesRead;
    const written = st.sock.bytesWritten;
    const overhead =
      read - st.floodRead - (st.credit - st.floodCredit) - (written - st.floodWritten) * WRITTEN_CREDIT_SHARE;
    st.floodRead = read;
    st.floodWritten = written;
    st.floodCredit = st.credit;
    return overhead <= 0 || st.flood!.takeMany(overhead);
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
    if (process.env.DBG) console.log('probe', before, session.state);
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
      // The first probe of a quiet spell may only have flushed a GOAWAY nghttp2 had queued; the
      // next tick looks again before backing off.
      st.probeIntervalMs = Math.min(MAX_PROBE_INTERVAL_MS, Math.max(TICK_MS, st.probeIntervalMs * 2));
    }, PROBE_CHECK_MS);
    t.unref();
  }
}

function ignorePing(): void {}

/** Credits the DATA a body stream received since its last credit to its session. */
function creditBody(st: SessionState, b: BodyStream): void {
  const n = b.handle.bytesRead ?? 0;
  if (n > b.credited) {
    st.credit += n - b.credited;
    b.credited = n;
  }
}

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

/**
 * Flow-control stalls of h2lab's HTTP/2 client, measured from the client's side (RFC 9113 §6.9).
 *
 * A receive window can decide an HTTP/2 result on a delayed link: the server may have at most one
 * window of unacknowledged DATA on a stream and on the connection, so a window smaller than the
 * bandwidth-delay product caps the transfer at one window per round trip, whatever the protocol.
 *
 * **Why not "the remaining window fell below one frame".** This client credits data back as it
 * arrives, in WINDOW_UPDATEs of half a window (session.ts), so by its own books the window left to
 * the server never drops below half a window. What stops the server is the credit it has *received*:
 * a WINDOW_UPDATE is still on its way for half a round trip. So the accounting follows the limits
 * the client granted, not its books:
 *
 *   credit limits: L0 = window, then after each WINDOW_UPDATE L = bytes received + window
 *   received:      ─────────────────────────────▶ reaches L_k exactly, frame without END_STREAM
 *                                                  └─ stalled ─┐ (until the next DATA frame)
 *
 * A scope (the connection, or one stream) is **stalled** from the DATA frame that brings the bytes
 * received on it exactly to a limit the client granted — the server sent all the credit it had, and
 * servers split DATA to fill a window (nghttp2, Go, nginx do) — until the next DATA frame arrives on
 * that scope (or the stream ends), but at most two round trips after the credit that ended it was
granted: a server that answers credit later than that was idle, not blocked. The limit counts only when the next credit was granted less than
 * one round trip earlier (the lower of the TCP handshake's and SETTINGS→ACK's, at least 1 ms for the
server to act on it): a server that had
 * already received more credit and still paused was not stopped by flow control. Not a stall: the
 * frame carried END_STREAM (for the connection: on its last open stream — in a burst of small
 * responses the window often runs out on some stream's last frame while the others wait), or the
 * next frame is an empty END_STREAM (nothing was waiting).
 *
 * The time measured is the server's blocked time: the last allowed byte and the first byte sent on
 * new credit cross the same one-way path. Each DATA frame costs two comparisons when no limit is
 * reached; nothing is allocated per frame.
 */
import type { FlowControlStats, FlowStalls } from '../model/index.ts';

/**
 * `a` + `b`, where `b` is one session's stalls (`FlowStalls`) or a sum of sessions'; undefined when
 * neither measured any (HTTP/1.1, node:http2).
 */
export function mergeFlowControl(
  a: FlowControlStats | undefined,
  b: FlowStalls | FlowControlStats | undefined,
): FlowControlStats | undefined {
  if (!b) return a;
  const out: FlowControlStats = a ? { ...a } : { ...emptyFlowStalls(), sessions: 0 };
  addFlowStalls(out, b);
  out.sessions += 'sessions' in b ? b.sessions : 1;
  return out;
}

/** All counters at zero. */
function emptyFlowStalls(): FlowStalls {
  return {
    connectionStalls: 0,
    streamStalls: 0,
    stalledMs: 0,
    connectionStalledMs: 0,
    streamStalledMs: 0,
    bytesAfterStall: 0,
    sessionMs: 0,
  };
}

/** Adds `b` into `a`. */
function addFlowStalls(a: FlowStalls, b: FlowStalls): void {
  a.connectionStalls += b.connectionStalls;
  a.streamStalls += b.streamStalls;
  a.stalledMs += b.stalledMs;
  a.connectionStalledMs += b.connectionStalledMs;
  a.streamStalledMs += b.streamStalledMs;
  a.bytesAfterStall += b.bytesAfterStall;
  a.sessionMs += b.sessionMs;
}

/**
 * The credit one receive window (the connection's, or one stream's) gave the server. With credit
 * replenished at half a window, limits are at least half a window apart and at most one window above
 * what was received, so at most two are pending: two slots suffice.
 */
export class CreditLedger {
  /** Flow-controlled bytes received (padding included, RFC 9113 §6.9.1). */
  received = 0;
  /** The lowest limit not yet passed (0 = none) and when it was granted, ms. */
  limit0: number;
  grantedMs0 = Number.NEGATIVE_INFINITY;
  limit1 = 0;
  grantedMs1 = 0;
  /** When the current stall began, ms; -1 = not stalled. */
  stallStartMs = -1;
  /** The limit up to which bytes after the current stall count as having waited. */
  stallRelease = 0;
  /** The latest time the current stall can end, ms (two round trips after the next credit). */
  stallCapMs = 0;
  /** Bytes up to this count as `bytesAfterStall` (0 = none). */
  releaseUntil = 0;

  /** `windowBytes`: the window the server starts from (our SETTINGS, or the raised connection window). */
  constructor(windowBytes: number) {
    this.limit0 = windowBytes;
  }
}

/** Which window a ledger is. */
type Scope = 'connection' | 'stream';

/** One session's stall book: its ledgers report to it; it keeps the totals and their union in time. */
export class StallBook {
  readonly totals: FlowStalls = emptyFlowStalls();
  private readonly now: () => number;
  /** A limit counts when the next credit was granted less than this long before, ms. */
  private credibleMs: number;
  private open = 0;
  private unionStartMs = 0;
  private unionEndMs = 0;
  private readonly openedMs: number;
  private closedMs = -1;

  /** `rttMs`: the connection's round-trip time (its TCP handshake); unknown = every exact hit counts. */
  constructor(now: () => number, rttMs: number | undefined) {
    this.now = now;
    this.openedMs = now();
    this.credibleMs = rttMs === undefined ? Number.POSITIVE_INFINITY : Math.max(1, rttMs);
  }

  /**
   * A round trip seen on the connection, ms (our SETTINGS to its ACK): the lowest one seen is used,
   * since a cold server's first accept can inflate the handshake's (30 ms over loopback, measured).
   */
  observeRtt(ms: number): void {
    this.credibleMs = Math.min(this.credibleMs, Math.max(1, ms));
  }

  /**
   * A DATA frame of `flowLen` flow-controlled bytes arrived on `c`. `endStream`: nothing more is
   * expected on this scope after it (for the connection: END_STREAM on its last open stream).
   * `newLimit`: the credit limit a
   * WINDOW_UPDATE sent for this frame granted (0 = none). `counted`: its bytes were already counted
   * as having waited (by the other scope). Returns whether they now are.
   */
  frame(
    c: CreditLedger,
    scope: Scope,
    flowLen: number,
    endStream: boolean,
    newLimit: number,
    counted: boolean,
  ): boolean {
    let now = -1;
    if (c.stallStartMs >= 0) {
      now = this.now();
      this.endStall(c, scope, now, flowLen === 0 && endStream);
    }
    c.received += flowLen;
    const r = c.received;
    let waited = counted;
    if (c.releaseUntil > 0) {
      if (!counted) {
        this.totals.bytesAfterStall += flowLen;
        waited = true;
      }
      if (r >= c.releaseUntil) c.releaseUntil = 0;
    }
    if (r < c.limit0 && newLimit === 0) return waited;
    if (now < 0) now = this.now();
    let hit = false;
    if (c.limit0 !== 0 && r >= c.limit0) {
      hit = r === c.limit0;
      c.limit0 = c.limit1;
      c.grantedMs0 = c.grantedMs1;
      c.limit1 = 0;
      if (c.limit0 !== 0 && r >= c.limit0) c.limit0 = 0; // passed as well (not with this client's policy)
    }
    if (newLimit !== 0) {
      if (c.limit0 === 0) {
        c.limit0 = newLimit;
        c.grantedMs0 = now;
      } else {
        c.limit1 = newLimit;
        c.grantedMs1 = now;
      }
    }
    if (hit && !endStream) {
      // No further credit granted yet: blocked until there is.
      const granted = c.limit0 === 0 ? now : c.grantedMs0;
      if (now - granted < this.credibleMs) {
        c.stallStartMs = now;
        c.stallRelease = c.limit0;
        c.stallCapMs = granted + 2 * this.credibleMs;
        if (this.open++ === 0) {
          this.unionStartMs = now;
          this.unionEndMs = now;
        }
      }
    }
    return waited;
  }

  /**
   * The scope ends without a DATA frame (reset, cancelled, connection closed, or trailers). A stall in
   * progress counts to now, unless `complete` (trailers: the body was complete, nothing waited).
   */
  end(c: CreditLedger, scope: Scope, complete = false): void {
    if (c.stallStartMs >= 0) this.endStall(c, scope, this.now(), complete);
  }

  /** The session ended (its scopes' stalls are ended first). */
  close(): void {
    if (this.closedMs < 0) this.closedMs = this.now();
  }

  /** The totals, with a stall still in progress counted to now. */
  snapshot(): FlowStalls {
    const t = { ...this.totals };
    const now = this.closedMs >= 0 ? this.closedMs : this.now();
    if (this.open > 0) t.stalledMs += Math.max(this.unionEndMs, now) - this.unionStartMs;
    t.sessionMs = now - this.openedMs;
    return t;
  }

  private endStall(c: CreditLedger, scope: Scope, now: number, discard: boolean): void {
    const end = Math.max(c.stallStartMs, Math.min(now, c.stallCapMs));
    const ms = end - c.stallStartMs;
    c.stallStartMs = -1;
    if (!discard && end > this.unionEndMs) this.unionEndMs = end;
    if (!discard) {
      const t = this.totals;
      if (scope === 'connection') {
        t.connectionStalls++;
        t.connectionStalledMs += ms;
      } else {
        t.streamStalls++;
        t.streamStalledMs += ms;
      }
      c.releaseUntil = c.stallRelease;
    }
    if (--this.open === 0) this.totals.stalledMs += this.unionEndMs - this.unionStartMs;
  }
}

/**
 * The pool's statistics, kept apart from its scheduling (after undici's pool-stats split): what its
 * closed connections left (requests carried, peaks, each one's facts and life) and the snapshot
 * {@link PoolRecord.snapshot} makes of them with the open ones. A connection adds what it alone
 * measures through one hook, `facts()` — flow-control stalls for h2lab's HTTP/2 client, the QUIC
 * binding's reading for HTTP/3 — so a new kind of connection fact is a field of
 * {@link ConnectionFacts}, not another optional hook.
 */
import { mergeFlowControl } from '../h2/index.ts';
import type {
  ConnectionEnd,
  ConnectionLifetime,
  FlowControlStats,
  FlowStalls,
  QuicConnectionInfo,
} from '../model/index.ts';
import { LIFETIMES_KEPT, OUTAGES_KEPT, type Outage, type TransportStats } from './types.ts';

/** What one connection measures of itself beyond the pool's counters. */
export interface ConnectionFacts {
  /** HTTP/2 on h2lab's client: flow-control stalls so far (src/h2/flow-stalls.ts). */
  flowStalls?: FlowStalls;
  /** QUIC: the binding's reading of the connection (the last one taken, at its close). */
  quic?: QuicConnectionInfo;
}

/** What the record reads of a connection. */
interface CountedConn {
  readonly id: number;
  requests: number;
  peakStreams: number;
  createdMs: number;
  lastActiveMs: number;
  goawayAtMs?: number;
  goawayCode?: number;
  facts?(): ConnectionFacts;
}

/** The scheduler's own counters, read into a snapshot. */
export interface SchedulerCounts {
  opened: number;
  inFlight: number;
  peakInFlight: number;
  capHits: number;
  minAnnounced: number | undefined;
  tlsVersion: string | undefined;
  tcp?: TransportStats['tcp'];
  outages: { periods: Outage[]; current: Outage | undefined; omitted: number };
}

/** The record of a pool's connections: closed ones summed and logged, open ones read on demand. */
export class PoolRecord {
  private peakStreams = 0;
  private requests = 0;
  private conns = 0;
  private max = 0;
  private flow: FlowControlStats | undefined;
  private readonly quic: QuicConnectionInfo[] = [];
  private readonly lifetimes: ConnectionLifetime[] = [];
  private lifetimesOmitted = 0;

  /** A connection closed (`closedBy` why, at `nowMs` on the run's clock): keep what it measured. */
  retire(c: CountedConn, closedBy: ConnectionEnd, nowMs: number): void {
    this.logLifetime(c, closedBy, nowMs);
    if (c.peakStreams > this.peakStreams) this.peakStreams = c.peakStreams;
    const f = c.facts?.();
    this.flow = mergeFlowControl(this.flow, f?.flowStalls);
    if (f?.quic) this.quic.push(f.quic);
    if (c.requests > 0) {
      this.conns++;
      this.requests += c.requests;
      if (c.requests > this.max) this.max = c.requests;
    }
  }

  private logLifetime(c: CountedConn, closedBy: ConnectionEnd, nowMs: number): void {
    if (this.lifetimes.length >= LIFETIMES_KEPT) {
      this.lifetimesOmitted++;
      return;
    }
    this.lifetimes.push({
      id: c.id,
      openedMs: c.createdMs,
      lastActiveMs: c.lastActiveMs,
      ...(c.goawayAtMs !== undefined ? { goawayMs: c.goawayAtMs } : {}),
      ...(c.goawayCode !== undefined ? { goawayCode: c.goawayCode } : {}),
      closedMs: nowMs,
      requests: c.requests,
      closedBy,
    });
  }

  /** The transport's statistics now: closed connections' record with the open ones `open`. */
  snapshot(s: SchedulerCounts, open: readonly CountedConn[]): TransportStats {
    let n = this.conns;
    let sum = this.requests;
    let max = this.max;
    let peak = this.peakStreams;
    let flow = this.flow;
    const quic = [...this.quic];
    for (const c of open) {
      if (c.peakStreams > peak) peak = c.peakStreams;
      const f = c.facts?.();
      flow = mergeFlowControl(flow, f?.flowStalls);
      if (f?.quic) quic.push(f.quic);
      if (c.requests === 0) continue;
      n++;
      sum += c.requests;
      if (c.requests > max) max = c.requests;
    }
    const periods = s.outages.current
      ? [...s.outages.periods, { ...s.outages.current }]
      : [...s.outages.periods];
    return {
      opened: s.opened,
      inFlight: s.inFlight,
      peakInFlight: s.peakInFlight,
      peakStreamsPerConnection: peak,
      ...(s.minAnnounced !== undefined ? { serverMaxConcurrentStreams: s.minAnnounced } : {}),
      ...(s.tlsVersion !== undefined ? { tlsVersion: s.tlsVersion } : {}),
      capHits: s.capHits,
      requestsPerConnection: { mean: n > 0 ? sum / n : 0, max, connections: n, requests: sum },
      ...(s.tcp ? { tcp: s.tcp } : {}),
      ...(flow ? { flowControl: flow } : {}),
      ...(this.lifetimes.length + this.lifetimesOmitted > 0
        ? { lifetimes: { connections: [...this.lifetimes], omitted: this.lifetimesOmitted } }
        : {}),
      ...(quic.length > 0 ? { quic } : {}),
      ...(periods.length + s.outages.omitted > 0
        ? { outages: { periods: periods.slice(0, OUTAGES_KEPT), omitted: s.outages.omitted } }
        : {}),
    };
  }
}

/**
 * The result of `measureBrowser`: versioned data that renderers only read. Times are milliseconds
 * (fractional); times inside a run are relative to that run's first `requestWillBeSent`.
 *
 * Bump {@link BROWSER_RESULT_VERSION} on any incompatible change and say what changed in docs/design.md.
 */
import type { BrowserOptions } from './browser-options.ts';

/** Low and high quantiles of one quantity, ms. */
export interface Spread {
  p50: number;
  p90: number;
  min: number;
  max: number;
  count: number;
}

export const BROWSER_RESULT_VERSION = 1;

/** One thing measured: an origin as one Chromium reaches it. */
export interface BrowserTarget {
  /** Short stable id used in tables and JSON: `http`, `https`, `https-h1` (… `-2` when repeated). */
  id: string;
  /** Human label, e.g. "https:// h2". */
  label: string;
  origin: string;
  /** True for the HTTP/1.1-over-TLS control: a second Chromium started with `--disable-http2`. */
  h2Disabled: boolean;
  /** What the target should negotiate (checked per request; a mismatch is a warning). */
  expectedProtocol?: 'http/1.1' | 'h2';
}

/** One request as CDP saw it (and, when found, as the page's Resource Timing saw it). */
export interface BrowserRequest {
  /** Index in issue order. */
  index: number;
  url: string;
  /** `Network.requestWillBeSent`: the page asked for it. */
  startMs: number;
  /** Request headers sent (`timing.requestTime + sendStart`); absent when it never got a response. */
  sendMs?: number;
  /** Response headers received (`timing.requestTime + receiveHeadersEnd`). */
  headersMs?: number;
  /** `loadingFinished` or `loadingFailed`. */
  endMs: number;
  /**
   * Last `dataReceived`: the last body bytes arrived. `loadingFinished` can trail it by a few ms, in
   * which time an h2 stream slot is already free again (so peaks use this end when present).
   */
  lastDataMs?: number;
  /** Waiting inside the browser: for a connection (HTTP/1.1's 6 per host), a stream, or a handshake. */
  stalledMs?: number;
  /** From the request's send to its last byte: the network and the server (including its queue). */
  wireMs?: number;
  totalMs: number;
  /** Negotiated protocol as CDP reports it: `http/1.1`, `h2`, … */
  protocol?: string;
  connectionId?: string;
  connectionReused?: boolean;
  status?: number;
  encodedBytes?: number;
  /** `loadingFailed.errorText`, e.g. `net::ERR_ABORTED`. */
  failed?: string;
  canceled?: boolean;
  /** The page's own Resource Timing, for the cross-check. */
  resourceTiming?: { stalledMs: number; wireMs: number; totalMs: number };
}

/** Statistics of one burst run. */
export interface BurstRunStats {
  /** Highest number of requests between send and end at the same time. */
  peakInFlight: number;
  /** Distinct CDP connection ids that carried responses. */
  connections: number;
  /** Requests per negotiated protocol. */
  protocols: Record<string, number>;
  stalledMs: Spread;
  wireMs: Spread;
  totalMs: Spread;
  /** From the first request's start to the last one's end. */
  wallMs: number;
  /** How long the page's loop of `fetch()` calls took (the page's own clock). */
  issueLoopMs: number;
  ok: number;
  failed: number;
  /**
   * Requests the page completed but CDP gave no response or end event for (within the settle bound).
   * A run with any is left out of the summary: its peak and connections would be undercounted.
   */
  cdpMissing: number;
  /**
   * The cross-check against the page's Resource Timing: how many requests matched, and the largest
   * |CDP − Resource Timing| of the on-the-wire time (send → last byte) and of the start (the moment the
   * request was asked for, which moves stalled and total together), ms.
   */
  resourceTiming?: { matched: number; wireMaxDiffMs: number; startMaxDiffMs: number };
}

/** The server's view of one run (the metrics contract), when a metrics URL is known. */
export interface ServerRunView {
  /** Requests whose handler started, by protocol. */
  requestsByProtocol: Record<string, number>;
  requests: number;
  /** Time tiles waited for a backend worker, from the pool's histogram: p50/p90, ms. */
  poolQueueMs?: { p50: number; p90: number };
  /** Highest number of requests in handlers at once (only when h2lab could reset the gauge). */
  inFlightPeak?: number;
  connectionsOpened: number;
}

/** One burst run. */
export interface BurstRun {
  target: string;
  /** 0-based repetition; run 0 is the warm-up and discarded from the summary. */
  index: number;
  discarded: boolean;
  stats: BurstRunStats;
  server?: ServerRunView;
  requests: BrowserRequest[];
}

/** Medians over the kept runs of one target. */
export interface BurstSummary {
  target: string;
  /** Runs the medians are over. */
  runs: number;
  /** Kept runs left out because CDP lost events (see BurstRunStats.cdpMissing). */
  incompleteRuns: number;
  peakInFlight: { median: number; min: number; max: number };
  connections: { median: number; min: number; max: number };
  stalledP50Ms: number;
  stalledP90Ms: number;
  wireP50Ms: number;
  wireP90Ms: number;
  totalP50Ms: number;
  wallMs: number;
  /** Median time the page took to issue its `fetch()` calls (a lower bound on how late starts can be). */
  issueLoopMs: number;
  /** Requests that failed over the kept runs, by CDP error text (e.g. `net::ERR_ABORTED`). */
  failures: Record<string, number>;
  /** Negotiated protocols over all kept requests. */
  protocols: Record<string, number>;
  /**
   * Highest number of requests in the server's handlers at once over the kept runs (when h2lab owns the
   * server). The authority on "bounded by SETTINGS_MAX_CONCURRENT_STREAMS": the browser's own peak is
   * measured from CDP events, which trail the stream's close by a few ms.
   */
  serverInFlightPeak?: number;
  /** Median over kept runs of the server's pool queue p50, ms. */
  serverPoolQueueP50Ms?: number;
  /** Worst Resource Timing disagreement over the kept runs, ms (see BurstRunStats.resourceTiming). */
  resourceTimingWireMaxDiffMs?: number;
  resourceTimingStartMaxDiffMs?: number;
}

/** What the server saw of one cancellation run. */
export interface CancelServerView {
  /** Abandoned requests whose handler started (the wanted tile excluded). */
  reachedHandler: number;
  /** Cancellations by stage: `queued` (dropped before work), `running` (aborted), `after` (finished). */
  cancellations: Record<string, number>;
  /** Pool jobs by outcome; `unwanted` = rendered to completion for a client that had gone. */
  jobs: Record<string, number>;
  /** RST_STREAM frames from the client by error code; code 8 is CANCEL (RFC 9113 §7). */
  rstStreamByCode: Record<string, number>;
  /** True when the pool was idle again before the numbers were read. */
  drained: boolean;
}

/** One cancellation run: fire `count`, abort them all, then fetch one wanted tile. */
export interface CancelRun {
  target: string;
  /** 0-based repetition of this leg. */
  index: number;
  /** Whether the server honoured cancellation (`ignore` = the fixture ran with ignoreCancel). */
  serverMode: 'honour' | 'ignore' | 'unknown';
  count: number;
  requestedAbortMs: number;
  /** When the abort actually ran, after the first fetch was issued (timers are late on busy machines). */
  actualAbortMs: number;
  issueLoopMs: number;
  /** Requests CDP reported as failed with `canceled`. */
  browserCanceled: number;
  /** Failed requests by CDP error text (`net::ERR_ABORTED` for the aborted ones). */
  browserFailures: Record<string, number>;
  /** Requests that completed before the abort. */
  completedBeforeAbort: number;
  /** The wanted tile fetched alone on an idle server (median of 3), ms. */
  baselineMs: number;
  /** The wanted tile fetched right after the abort, ms. */
  wantedMs: number;
  server?: CancelServerView;
}

/**
 * One leg (target × server mode) over its `runs` repetitions: times (`actualAbortMs`, `issueLoopMs`,
 * `baselineMs`, `wantedMs`) are medians; counts (`browserCanceled`, `browserFailures`,
 * `completedBeforeAbort`, every server count) are totals over the runs.
 */
export interface CancelSummary extends Omit<CancelRun, 'index'> {
  runs: number;
}

/** How the browser was told to trust the servers' certificates. */
export interface TrustInfo {
  method: 'spki-pin' | 'system';
  /** Pinned SPKI hashes (base64 SHA-256), passed as `--ignore-certificate-errors-spki-list`. */
  spki: string[];
  /** Whether pages on https:// targets were secure contexts (a real pin, not a blanket bypass). */
  secureContext?: boolean;
}

/** The result of one `measureBrowser` call. */
export interface BrowserResult {
  kind: 'h2lab.browser';
  version: typeof BROWSER_RESULT_VERSION;
  options: BrowserOptions;
  environment: {
    h2labVersion: string;
    node: string;
    platform: string;
    cpus: number;
    chromium: { path: string; version: string; flags: string[] };
    startedAt: string;
  };
  trust: TrustInfo;
  /** Set when h2lab started the fixture server itself. */
  fixture?: {
    plainUrl: string;
    tlsUrl: string;
    poolSize: number;
    tileMs: number;
    maxConcurrentStreams: number;
  };
  targets: BrowserTarget[];
  burst: { runs: BurstRun[]; summaries: BurstSummary[] };
  /** Every cancellation run. */
  cancel: CancelRun[];
  /** Per target and server mode: median times, total counts (what tables and findings show). */
  cancelSummaries: CancelSummary[];
  /** Conclusions in words (e.g. "the queue moved"). */
  findings: string[];
  /** Anything that could distort the numbers. */
  warnings: string[];
  error?: { code: string; message: string; details?: Record<string, unknown> };
}

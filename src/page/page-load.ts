/**
 * One page load in a fresh browser context, as Chromium reports it over CDP: every request with its
 * initiator, priority, headers, connection and timing, and the page's own timings. Used by
 * `page record` (which also reads the bodies) and by every replay load.
 *
 *   requestWillBeSent ─ stalled ─▶ send ─ wait ─▶ first byte ─ receive ─▶ loadingFinished
 *        (discovered)    (socket, stream, handshake: connectStart..connectEnd inside it)
 *
 * A fresh context per load is a fresh network context in Chromium: no socket, session ticket or
 * cache survives from the load before, so every load pays its handshakes as a first visit does.
 */
import type { Browser, CDPSession } from 'playwright-core';
import { H2labError } from '../core/index.ts';
import type { PageMetrics } from '../model/index.ts';

/** CDP's ResourceTiming (ms relative to `requestTime`, −1 = did not happen). */
interface CdpTiming {
  requestTime: number;
  dnsStart: number;
  dnsEnd: number;
  connectStart: number;
  connectEnd: number;
  sslStart: number;
  sslEnd: number;
  sendStart: number;
  sendEnd: number;
  receiveHeadersEnd: number;
}

/** One request of a captured load. */
interface CapturedRequest {
  requestId: string;
  url: string;
  method: string;
  requestHeaders: Record<string, string>;
  /** CDP initiator type (`parser`, `script`, `other`…) and the URL that caused the request. */
  initiator: { type: string; url?: string };
  priority?: string;
  resourceType?: string;
  /** Monotonic seconds (CDP clock). */
  willBeSentS: number;
  wallTimeS: number;
  status?: number;
  statusText?: string;
  responseHeaders?: Record<string, string>;
  mimeType?: string;
  protocol?: string;
  connectionId?: string;
  remoteAddress?: string;
  timing?: CdpTiming;
  endS?: number;
  encodedBytes?: number;
  failed?: string;
  /** True for a redirect hop (its response came with the next request's requestWillBeSent). */
  redirect?: boolean;
}

/** How many times a load hit by a host network change is repeated. */
export const NETWORK_CHANGED_RETRIES = 2;

/**
 * True when Chromium aborted the load because the host's network interfaces changed
 * (net::ERR_NETWORK_CHANGED: a link, namespace or container coming or going): that load measured
 * the host, not the page, and is repeated.
 */
export function networkChanged(load: CapturedLoad): boolean {
  return (
    load.requests.some((r) => r.failed === 'net::ERR_NETWORK_CHANGED') ||
    (load.error?.includes('ERR_NETWORK_CHANGED') ?? false)
  );
}

/** What {@link capturePageLoad} returns. */
export interface CapturedLoad {
  requests: CapturedRequest[];
  /** The document's requestWillBeSent, CDP monotonic seconds: time zero of the load. */
  t0S: number;
  metrics?: PageMetrics;
  /** Bodies by request id (only with `bodies`). */
  bodies: Map<string, Buffer>;
  error?: string;
}

/** Options of {@link capturePageLoad}. */
interface CaptureOptions {
  /** Also read every response body (recording). */
  bodies?: boolean;
  /** Bound on the load, ms. */
  timeoutMs: number;
  /** After the load event, wait until no request is pending for this long (late XHRs), ms. Default 300. */
  quietMs?: number;
}

interface CdpRequestEvent {
  requestId: string;
  timestamp: number;
  wallTime: number;
  type?: string;
  request: { url: string; method: string; headers: Record<string, string>; initialPriority?: string };
  initiator: { type: string; url?: string; stack?: { callFrames: Array<{ url: string }> } };
  redirectResponse?: CdpResponse;
}
interface CdpResponse {
  url: string;
  status: number;
  statusText: string;
  headers: Record<string, string>;
  mimeType: string;
  protocol?: string;
  connectionId: number;
  remoteIPAddress?: string;
  timing?: CdpTiming;
}

/**
 * The page's timings once the load event has fired: Navigation Timing's responseStart,
 * DOMContentLoaded and load; First Contentful Paint; the last Largest Contentful Paint candidate
 * (buffered entries of a PerformanceObserver, read 50 ms after load so the last candidate is in).
 */
const METRICS_SCRIPT = `(async () => {
  const nav = performance.getEntriesByType('navigation')[0];
  const fcp = performance.getEntriesByName('first-contentful-paint')[0];
  const lcp = await new Promise((resolve) => {
    let last;
    try {
      new PerformanceObserver((l) => { const e = l.getEntries(); last = e[e.length - 1]; })
        .observe({ type: 'largest-contentful-paint', buffered: true });
    } catch {}
    setTimeout(() => resolve(last), 50);
  });
  return {
    ttfbMs: nav ? nav.responseStart : NaN,
    dclMs: nav ? nav.domContentLoadedEventEnd : NaN,
    loadMs: nav ? nav.loadEventEnd : NaN,
    fcpMs: fcp ? fcp.startTime : undefined,
    lcpMs: lcp ? lcp.startTime : undefined,
  };
})()`;

function initiatorOf(e: CdpRequestEvent['initiator']): { type: string; url?: string } {
  const url = e.url ?? e.stack?.callFrames.find((f) => f.url)?.url;
  return url ? { type: e.type, url } : { type: e.type };
}

/**
 * Loads `url` in a new context of `browser` and returns what CDP reported. Never throws for a page
 * that failed to load: the error is in `error` with whatever was captured.
 */
export async function capturePageLoad(
  browser: Browser,
  url: string,
  opts: CaptureOptions,
): Promise<CapturedLoad> {
  const context = await browser.newContext();
  const byId = new Map<string, CapturedRequest>();
  const order: CapturedRequest[] = [];
  const bodies = new Map<string, Buffer>();
  let cdp: CDPSession | undefined;
  try {
    const page = await context.newPage();
    cdp = await context.newCDPSession(page);
    const c = cdp;
    const start = (e: CdpRequestEvent) => {
      const r: CapturedRequest = {
        requestId: e.requestId,
        url: e.request.url,
        method: e.request.method,
        requestHeaders: e.request.headers,
        initiator: initiatorOf(e.initiator),
        willBeSentS: e.timestamp,
        wallTimeS: e.wallTime,
      };
      if (e.request.initialPriority) r.priority = e.request.initialPriority;
      if (e.type) r.resourceType = e.type.toLowerCase();
      byId.set(e.requestId, r);
      order.push(r);
    };
    const respond = (r: CapturedRequest, res: CdpResponse) => {
      r.status = res.status;
      r.statusText = res.statusText;
      r.responseHeaders = res.headers;
      r.mimeType = res.mimeType;
      if (res.protocol) r.protocol = res.protocol;
      r.connectionId = String(res.connectionId);
      if (res.remoteIPAddress) r.remoteAddress = res.remoteIPAddress;
      if (res.timing) r.timing = res.timing;
    };
    c.on('Network.requestWillBeSent', (e) => {
      const ev = e as unknown as CdpRequestEvent;
      const prev = byId.get(ev.requestId);
      if (prev && ev.redirectResponse) {
        // The same id continues at the new URL: the hop so far becomes an entry of its own.
        respond(prev, ev.redirectResponse);
        prev.redirect = true;
        prev.endS = ev.timestamp;
        prev.requestId = `${ev.requestId}.r${order.length}`;
      }
      start(ev);
    });
    c.on('Network.responseReceived', (e) => {
      const r = byId.get(e.requestId);
      if (r) respond(r, e.response as unknown as CdpResponse);
    });
    c.on('Network.loadingFinished', (e) => {
      const r = byId.get(e.requestId);
      if (!r) return;
      r.endS = e.timestamp;
      r.encodedBytes = e.encodedDataLength;
    });
    c.on('Network.loadingFailed', (e) => {
      const r = byId.get(e.requestId);
      if (!r) return;
      r.endS = e.timestamp;
      r.failed = e.errorText;
    });
    const buffer = opts.bodies ? 256 * 1024 * 1024 : 0;
    await c.send('Network.enable', { maxTotalBufferSize: buffer, maxResourceBufferSize: buffer });
    await c.send('Network.setCacheDisabled', { cacheDisabled: true });
    let error: string | undefined;
    const deadline = performance.now() + opts.timeoutMs;
    try {
      await page.goto(url, { waitUntil: 'load', timeout: opts.timeoutMs });
    } catch (err) {
      error = (err as Error).message.split('\n')[0];
    }
    // Late requests (an XHR after load) and CDP events trailing the page: wait for quiet, at most
    // 10 s after the load event (a long poll or a beacon that never ends is not the page's load).
    const quiet = opts.quietMs ?? 300;
    const graceEnd = Math.min(deadline, performance.now() + 10_000);
    let quietSince = performance.now();
    let pending = -1;
    while (performance.now() < graceEnd) {
      const now = order.filter((r) => r.endS === undefined).length;
      if (now !== pending || now > 0) {
        pending = now;
        quietSince = performance.now();
      } else if (performance.now() - quietSince >= quiet) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    let metrics: PageMetrics | undefined;
    if (!error) {
      const m = (await page.evaluate(METRICS_SCRIPT)) as Omit<PageMetrics, 'lastByteMs'>;
      metrics = { ...m, lastByteMs: 0 } as PageMetrics;
    }
    if (opts.bodies) {
      for (const r of order) {
        if (r.redirect || r.failed || r.endS === undefined) continue;
        try {
          const b = (await c.send('Network.getResponseBody', { requestId: r.requestId })) as {
            body: string;
            base64Encoded: boolean;
          };
          bodies.set(r.requestId, Buffer.from(b.body, b.base64Encoded ? 'base64' : 'utf8'));
        } catch {
          // No body (204, a failed or aborted request): recorded as empty.
        }
      }
    }
    const doc = order[0];
    const t0S = doc?.willBeSentS ?? 0;
    if (metrics) {
      const ends = order.map((r) => r.endS ?? r.willBeSentS);
      metrics.lastByteMs = (Math.max(...ends) - t0S) * 1000;
    }
    const out: CapturedLoad = { requests: order, t0S, bodies };
    if (metrics) out.metrics = metrics;
    if (error) out.error = error;
    return out;
  } catch (err) {
    throw new H2labError(
      'H2LAB_ERR_BROWSER_PAGE',
      `loading ${url} in Chromium failed: ${(err as Error).message.split('\n')[0]}`,
      { url },
      { cause: err },
    );
  } finally {
    await cdp?.detach().catch(() => {});
    await context.close().catch(() => {});
  }
}

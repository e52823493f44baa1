/**
 * A CDP network collector for one page: the browser's own account of every request.
 *
 *   requestWillBeSent ──(stalled: waiting for a socket / stream / handshake)──▶ send
 *   send ──(on the wire: network + server, including the server's queue)──▶ loadingFinished/Failed
 *
 * send = `response.timing.requestTime + timing.sendStart / 1000` (seconds on the same monotonic clock
 * as the event timestamps). A request that fails before its response has no send time.
 */
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { H2labError } from '../core/index.ts';
import type { BrowserRequest } from '../model/index.ts';

interface RawRequest {
  url: string;
  willBeSentS: number;
  requestTimeS?: number;
  sendStartMs?: number;
  receiveHeadersEndMs?: number;
  protocol?: string;
  connectionId?: string;
  connectionReused?: boolean;
  status?: number;
  securityState?: string;
  endS?: number;
  /** Last `dataReceived`: when the last body bytes (and, over h2, END_STREAM) reached the browser. */
  lastDataS?: number;
  encodedBytes?: number;
  errorText?: string;
  canceled?: boolean;
}

/** The fields of CDP's Network events that the collector reads. */
interface NetEvent {
  requestId: string;
  timestamp: number;
  request: { url: string };
  response: {
    timing?: { requestTime: number; sendStart: number; receiveHeadersEnd: number };
    protocol?: string;
    connectionId: number;
    connectionReused: boolean;
    status: number;
    securityState: string;
  };
  encodedDataLength: number;
  errorText: string;
  canceled?: boolean;
}

/** The path of the blank landing document; fulfilled by the collector itself, never sent. */
const LANDING_PATH = '/__h2lab/blank.html';

/** A page on one origin with its network collector attached. */
export class CollectedPage {
  readonly page: Page;
  readonly origin: string;
  private readonly cdp: CDPSession;
  private readonly byId = new Map<string, RawRequest>();
  private workers = false;

  private constructor(page: Page, cdp: CDPSession, origin: string) {
    this.page = page;
    this.cdp = cdp;
    this.origin = origin;
    // Events of one request are merged by id whatever order they arrive in: under load CDP can
    // deliver a response before the request that caused it.
    for (const [method, handle] of Object.entries(this.handlers()))
      cdp.on(method as 'Network.requestWillBeSent', (e) => handle(e as unknown as NetEvent, ''));
  }

  /** The Network event handlers; `scope` keeps request ids of different targets apart. */
  private handlers(): Record<string, (e: NetEvent, scope: string) => void> {
    return {
      'Network.requestWillBeSent': (e: NetEvent, scope: string) => {
        const r = this.entry(scope + e.requestId);
        r.url = e.request.url;
        r.willBeSentS = Math.min(r.willBeSentS, e.timestamp);
      },
      'Network.responseReceived': (e: NetEvent, scope: string) => {
        const r = this.entry(scope + e.requestId);
        const t = e.response.timing;
        if (t) {
          r.requestTimeS = t.requestTime;
          r.sendStartMs = t.sendStart;
          r.receiveHeadersEndMs = t.receiveHeadersEnd;
        }
        if (e.response.protocol !== undefined) r.protocol = e.response.protocol;
        r.connectionId = String(e.response.connectionId);
        r.connectionReused = e.response.connectionReused;
        r.status = e.response.status;
        r.securityState = e.response.securityState;
      },
      'Network.dataReceived': (e: NetEvent, scope: string) => {
        const r = this.entry(scope + e.requestId);
        r.lastDataS = Math.max(r.lastDataS ?? 0, e.timestamp);
      },
      'Network.loadingFinished': (e: NetEvent, scope: string) => {
        const r = this.entry(scope + e.requestId);
        r.endS = e.timestamp;
        r.encodedBytes = e.encodedDataLength;
      },
      'Network.loadingFailed': (e: NetEvent, scope: string) => {
        const r = this.entry(scope + e.requestId);
        r.endS = e.timestamp;
        r.errorText = e.errorText;
        r.canceled = e.canceled ?? false;
      },
    };
  }

  /**
   * Also records the requests of the page's dedicated workers (MapLibre fetches its tiles from one).
   * A page-level CDP session does not see them: each worker is a target of its own. Auto-attach in
   * the non-flat mode hands its messages to this session (Playwright's CDPSession cannot address a
   * flat child session), and each new worker waits for the debugger until its Network domain is on,
   * so its first requests are not missed. Idempotent.
   */
  async collectWorkers(): Promise<void> {
    if (this.workers) return;
    this.workers = true;
    let id = 1;
    const handlers = this.handlers();
    const cdp = this.cdp as unknown as {
      send(method: string, params: object): Promise<unknown>;
      on(event: string, cb: (e: Record<string, unknown>) => void): void;
    };
    const post = (sessionId: string, method: string, params: object = {}) =>
      cdp
        .send('Target.sendMessageToTarget', {
          sessionId,
          message: JSON.stringify({ id: id++, method, params }),
        })
        .catch(() => {});
    cdp.on('Target.attachedToTarget', (e) => {
      const sessionId = String(e.sessionId);
      void (async () => {
        await post(sessionId, 'Network.enable', { maxTotalBufferSize: 0, maxResourceBufferSize: 0 });
        await post(sessionId, 'Network.setCacheDisabled', { cacheDisabled: true });
        await post(sessionId, 'Runtime.runIfWaitingForDebugger');
      })();
    });
    cdp.on('Target.receivedMessageFromTarget', (e) => {
      const m = JSON.parse(String(e.message)) as { method?: string; params?: unknown };
      const handle = m.method === undefined ? undefined : handlers[m.method];
      if (handle) handle(m.params as NetEvent, `${String(e.sessionId)}:`);
    });
    await cdp.send('Target.setAutoAttach', {
      autoAttach: true,
      waitForDebuggerOnStart: true,
      flatten: false,
    });
  }

  /**
   * Opens a page on `origin`. The landing document is answered by CDP's Fetch domain for exactly
   * one URL, so no request of h2lab's own reaches the server and any origin works (a 404 at `/`
   * would otherwise leave Chromium on an error page with an opaque origin). The browser HTTP cache
   * is disabled so every burst goes to the server.
   */
  static async open(context: BrowserContext, origin: string): Promise<CollectedPage> {
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    const landing = `${origin}${LANDING_PATH}`;
    const html = '<!doctype html><meta charset="utf-8"><title>h2lab browser</title><body>h2lab</body>';
    cdp.on('Fetch.requestPaused', (e) => {
      void cdp
        .send('Fetch.fulfillRequest', {
          requestId: e.requestId,
          responseCode: 200,
          responseHeaders: [
            { name: 'content-type', value: 'text/html; charset=utf-8' },
            { name: 'cache-control', value: 'no-store' },
          ],
          body: Buffer.from(html).toString('base64'),
        })
        .catch(() => {});
    });
    await cdp.send('Fetch.enable', { patterns: [{ urlPattern: landing, requestStage: 'Request' }] });
    await page.goto(landing, { waitUntil: 'load' });
    await cdp.send('Fetch.disable');
    await cdp.send('Network.enable', { maxTotalBufferSize: 0, maxResourceBufferSize: 0 });
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    return new CollectedPage(page, cdp, origin);
  }

  private entry(id: string): RawRequest {
    let r = this.byId.get(id);
    if (!r) {
      r = { url: '', willBeSentS: Number.POSITIVE_INFINITY };
      this.byId.set(id, r);
    }
    return r;
  }

  /** Turns CDP network collection off (to measure what the instrument itself costs). */
  async stopCollecting(): Promise<void> {
    await this.cdp.send('Network.disable');
  }

  /** Forgets every request seen so far. */
  clear(): void {
    this.byId.clear();
  }

  /**
   * Waits until every URL in `urls` has its response and end events (CDP events trail the page's
   * promises, by seconds on a loaded machine), at most `timeoutMs`. Returns false on timeout.
   */
  async settle(urls: readonly string[], timeoutMs = 10_000): Promise<boolean> {
    const want = new Set(urls);
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      let ended = 0;
      for (const r of this.byId.values()) {
        if (want.has(r.url) && r.endS !== undefined && (r.status !== undefined || r.errorText !== undefined))
          ended++;
      }
      if (ended >= want.size) return true;
      if (performance.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /**
   * The requests for `urls`, in the order of `urls`, with times in ms relative to the earliest
   * `requestWillBeSent` among them. A URL CDP never saw is left out.
   */
  records(urls: readonly string[]): BrowserRequest[] {
    const byUrl = new Map<string, RawRequest>();
    for (const r of this.byId.values()) if (!byUrl.has(r.url)) byUrl.set(r.url, r);
    const raws = urls.map((u) => byUrl.get(u));
    const t0 = Math.min(...raws.filter((r): r is RawRequest => r !== undefined).map((r) => r.willBeSentS));
    const out: BrowserRequest[] = [];
    raws.forEach((r, index) => {
      if (!r) return;
      const ms = (s: number) => (s - t0) * 1000;
      const startMs = ms(r.willBeSentS);
      const endMs = r.endS !== undefined ? ms(r.endS) : startMs;
      const rec: BrowserRequest = { index, url: r.url, startMs, endMs, totalMs: endMs - startMs };
      if (r.requestTimeS !== undefined && r.sendStartMs !== undefined && r.sendStartMs >= 0) {
        rec.sendMs = ms(r.requestTimeS) + r.sendStartMs;
        rec.stalledMs = rec.sendMs - startMs;
        rec.wireMs = endMs - rec.sendMs;
        if (r.receiveHeadersEndMs !== undefined && r.receiveHeadersEndMs >= 0) {
          rec.headersMs = ms(r.requestTimeS) + r.receiveHeadersEndMs;
        }
      }
      if (r.lastDataS !== undefined && r.endS !== undefined && r.lastDataS <= r.endS)
        rec.lastDataMs = ms(r.lastDataS);
      if (r.protocol !== undefined) rec.protocol = r.protocol;
      if (r.connectionId !== undefined) rec.connectionId = r.connectionId;
      if (r.connectionReused !== undefined) rec.connectionReused = r.connectionReused;
      if (r.status !== undefined) rec.status = r.status;
      if (r.encodedBytes !== undefined) rec.encodedBytes = r.encodedBytes;
      if (r.errorText !== undefined) rec.failed = r.errorText;
      if (r.canceled !== undefined) rec.canceled = r.canceled;
      out.push(rec);
    });
    return out;
  }

  /** Security states of responses seen for `urls` (`secure` when the pin made the certificate valid). */
  securityStates(urls: readonly string[]): Record<string, number> {
    const want = new Set(urls);
    const out: Record<string, number> = {};
    for (const r of this.byId.values()) {
      if (!want.has(r.url) || r.securityState === undefined) continue;
      out[r.securityState] = (out[r.securityState] ?? 0) + 1;
    }
    return out;
  }

  /** Evaluates a page script (an expression, see page-scripts.ts) and returns its value. */
  async evaluate<T>(expression: string): Promise<T> {
    try {
      return (await this.page.evaluate(expression)) as T;
    } catch (err) {
      throw new H2labError(
        'H2LAB_ERR_BROWSER_PAGE',
        `the experiment page on ${this.origin} failed: ${(err as Error).message.split('\n')[0]}`,
        { origin: this.origin },
        { cause: err },
      );
    }
  }

  async close(): Promise<void> {
    await this.cdp.detach().catch(() => {});
    await this.page.close().catch(() => {});
  }
}

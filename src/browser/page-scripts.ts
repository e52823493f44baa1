/**
 * What runs inside the page. Written as plain JavaScript source (not TypeScript functions) so that
 * no transpiler helper can leak into the page, and called with JSON arguments.
 */

/** The page's report of a burst. Times are the page's `performance.now()` ms. */
export interface PageBurstReport {
  issueLoopMs: number;
  wallMs: number;
  statuses: number[];
  resourceTiming: Array<{
    name: string;
    startTime: number;
    requestStart: number;
    responseEnd: number;
    nextHopProtocol: string;
  }>;
}

/** The page's report of a cancellation run. */
export interface PageCancelReport {
  issueLoopMs: number;
  /** When the abort ran, after the first fetch was issued; null when everything finished first. */
  abortAtMs: number | null;
  outcomes: Array<'ok' | 'aborted' | 'error'>;
  wantedMs: number;
  wantedStatus: number;
}

// Every fetch reads its body to the end: a response is finished when its last byte arrived.
const BURST = `async ({ urls }) => {
  performance.setResourceTimingBufferSize(100000);
  performance.clearResourceTimings();
  const t0 = performance.now();
  const ps = urls.map((u) => fetch(u, { cache: 'no-store' }).then(async (r) => { await r.arrayBuffer(); return r.status; }).catch(() => -1));
  const issueLoopMs = performance.now() - t0;
  const statuses = await Promise.all(ps);
  const wallMs = performance.now() - t0;
  const want = new Set(urls);
  const resourceTiming = performance.getEntriesByType('resource').filter((e) => want.has(e.name)).map((e) => ({
    name: e.name, startTime: e.startTime, requestStart: e.requestStart, responseEnd: e.responseEnd, nextHopProtocol: e.nextHopProtocol,
  }));
  return { issueLoopMs, wallMs, statuses, resourceTiming };
}`;

// The abort timer is armed before the loop, as a page would; issuing many fetch() calls can itself
// take longer than the timer, so the time the abort really ran is reported.
const CANCEL = `async ({ urls, abortAfterMs, wanted }) => {
  const ac = new AbortController();
  const t0 = performance.now();
  let abortAtMs = null;
  // Also callable from outside (the runner's abort when enough requests reached the server).
  globalThis.__h2labAbort = () => { if (abortAtMs === null) { abortAtMs = performance.now() - t0; ac.abort(); } };
  const timer = setTimeout(() => globalThis.__h2labAbort(), abortAfterMs);
  const ps = urls.map((u) => fetch(u, { cache: 'no-store', signal: ac.signal })
    .then(async (r) => { await r.arrayBuffer(); return 'ok'; })
    .catch((e) => (e && e.name === 'AbortError' ? 'aborted' : 'error')));
  const issueLoopMs = performance.now() - t0;
  const outcomes = await Promise.all(ps);
  clearTimeout(timer);
  const w0 = performance.now();
  let wantedStatus = -1;
  try { const r = await fetch(wanted, { cache: 'no-store' }); await r.arrayBuffer(); wantedStatus = r.status; } catch {}
  const wantedMs = performance.now() - w0;
  return { issueLoopMs, abortAtMs, outcomes, wantedMs, wantedStatus };
}`;

const SINGLE = `async ({ url }) => {
  const t0 = performance.now();
  let status = -1;
  try { const r = await fetch(url, { cache: 'no-store' }); await r.arrayBuffer(); status = r.status; } catch {}
  return { ms: performance.now() - t0, status };
}`;

function call(fn: string, args: unknown): string {
  return `(${fn})(${JSON.stringify(args)})`;
}

/** Fires every URL at once with fetch() and reads Resource Timing afterwards. */
export function burstScript(urls: readonly string[]): string {
  return call(BURST, { urls });
}

/** Fires every URL, aborts them all after `abortAfterMs`, then fetches `wanted` alone. */
export function cancelScript(urls: readonly string[], abortAfterMs: number, wanted: string): string {
  return call(CANCEL, { urls, abortAfterMs, wanted });
}

/** Fetches one URL and times it on the page's clock: `{ ms, status }`. */
export function singleScript(url: string): string {
  return call(SINGLE, { url });
}

/**
 * The burst's URLs: `template` expanded for i in [0, count) — `{i}` the index, `{x}`/`{y}` a square
 * grid of side ceil(sqrt(count)) — with a cache-busting `h2lab` query parameter unique to `tag`.
 *
 * @example burstUrls('http://h', '/t/{x}/{y}', 4, 'r1')[3] === 'http://h/t/1/1?h2lab=r1-3'
 */
export function burstUrls(origin: string, template: string, count: number, tag: string): string[] {
  const side = Math.max(1, Math.ceil(Math.sqrt(count)));
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const path = template
      .replaceAll('{i}', String(i))
      .replaceAll('{x}', String(i % side))
      .replaceAll('{y}', String(Math.floor(i / side)));
    out.push(`${origin}${path}${path.includes('?') ? '&' : '?'}h2lab=${encodeURIComponent(tag)}-${i}`);
  }
  return out;
}

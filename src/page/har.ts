/**
 * HAR 1.2 (the W3C draft format DevTools, Playwright and WebPageTest export) in and out.
 *
 * Out: `page record` writes every request with its body (`content.text`, base64 for binary),
 * headers, timings, the connection, and DevTools' own extensions `_initiator`, `_priority` and
 * `_resourceType`, so DevTools reads it back as its own.
 *
 * In: any HAR. What the replay needs and a HAR may lack is filled in and named in `inferred`:
 * - bodies (DevTools' "Export HAR (sanitized)" and Playwright's `content: 'omit'` drop them): a body of
 *   the recorded size is synthesised; the document is rebuilt to reference every other entry (a flat
 *   initiator graph: everything discovered by the HTML), stylesheets and scripts are comments of the
 *   recorded size, other types filler bytes;
 * - the server's think time: the response's own `Server-Timing` durations when it has any (h2lab's
 *   generated pages do; many servers do); otherwise `timings.wait` less one round trip to that
 *   origin, taken as the smallest TCP connect time (`timings.connect − timings.ssl`) recorded for it,
 *   or the whole wait when the HAR has none.
 */
import { H2labError, readOptionText } from '../core/index.ts';
import type { OriginResource } from '../server/index.ts';
import type { CapturedLoad } from './capture.ts';

/** The subset of HAR 1.2 h2lab reads and writes. */
export interface HarEntry {
  pageref?: string;
  startedDateTime: string;
  time: number;
  request: {
    method: string;
    url: string;
    httpVersion: string;
    headers: Array<{ name: string; value: string }>;
    queryString: Array<{ name: string; value: string }>;
    cookies: unknown[];
    headersSize: number;
    bodySize: number;
  };
  response: {
    status: number;
    statusText: string;
    httpVersion: string;
    headers: Array<{ name: string; value: string }>;
    cookies: unknown[];
    content: { size: number; mimeType: string; text?: string; encoding?: string };
    redirectURL: string;
    headersSize: number;
    bodySize: number;
    _transferSize?: number;
  };
  cache: Record<string, unknown>;
  timings: {
    blocked: number;
    dns: number;
    connect: number;
    ssl: number;
    send: number;
    wait: number;
    receive: number;
  };
  serverIPAddress?: string;
  connection?: string;
  _initiator?: { type: string; url?: string };
  _priority?: string;
  _resourceType?: string;
}

export interface Har {
  log: {
    version: string;
    creator: { name: string; version: string };
    pages?: Array<{
      startedDateTime: string;
      id: string;
      title: string;
      pageTimings: { onContentLoad?: number; onLoad?: number };
    }>;
    entries: HarEntry[];
  };
}

const pairs = (h: Record<string, string> | undefined) =>
  Object.entries(h ?? {}).flatMap(([name, v]) => v.split('\n').map((value) => ({ name, value })));

/** HAR's httpVersion of what Chromium negotiated (its wire protocol, e.g. `h2`). */
const httpVersionOf = (wire: string | undefined) =>
  wire === 'h2'
    ? 'HTTP/2.0'
    : wire === 'h3'
      ? 'HTTP/3'
      : wire?.startsWith('http/')
        ? wire.toUpperCase()
        : (wire ?? '');

const TEXTUAL = /^(text\/|application\/(json|javascript|xml|.*\+xml|.*\+json))|image\/svg\+xml/;

/** A HAR of one captured load (with bodies), as `page record` writes it. */
export function harOf(load: CapturedLoad, creatorVersion: string, title: string): Har {
  const entries: HarEntry[] = [];
  const ms = (a: number, b: number) => (a >= 0 && b >= 0 ? b - a : -1);
  for (const r of load.requests) {
    if (r.status === undefined) continue;
    const t = r.timing;
    const sendAtS = t ? t.requestTime + t.sendStart / 1000 : r.willBeSentS;
    const headersAtS = t ? t.requestTime + t.receiveHeadersEnd / 1000 : sendAtS;
    const endS = r.endS ?? headersAtS;
    const body = load.bodies.get(r.requestId) ?? Buffer.alloc(0);
    const textual = TEXTUAL.test(r.mimeType ?? '');
    const content: HarEntry['response']['content'] = { size: body.length, mimeType: r.mimeType ?? '' };
    if (body.length > 0) {
      content.text = body.toString(textual ? 'utf8' : 'base64');
      if (!textual) content.encoding = 'base64';
    }
    const location = r.responseHeaders?.location ?? r.responseHeaders?.Location ?? '';
    const entry: HarEntry = {
      pageref: 'page_1',
      startedDateTime: new Date(r.wallTimeS * 1000).toISOString(),
      time: (endS - r.willBeSentS) * 1000,
      request: {
        method: r.method,
        url: r.url,
        httpVersion: httpVersionOf(r.protocol),
        headers: pairs(r.requestHeaders),
        queryString: [...new URL(r.url).searchParams].map(([name, value]) => ({ name, value })),
        cookies: [],
        headersSize: -1,
        bodySize: 0,
      },
      response: {
        status: r.status,
        statusText: r.statusText ?? '',
        httpVersion: httpVersionOf(r.protocol),
        headers: pairs(r.responseHeaders),
        cookies: [],
        content,
        redirectURL: location,
        headersSize: -1,
        bodySize: r.encodedBytes ?? body.length,
      },
      cache: {},
      timings: {
        blocked: t ? Math.max(0, (t.requestTime - r.willBeSentS) * 1000 + Math.max(0, t.dnsStart)) : 0,
        dns: t ? ms(t.dnsStart, t.dnsEnd) : -1,
        connect: t ? ms(t.connectStart, t.connectEnd) : -1,
        ssl: t ? ms(t.sslStart, t.sslEnd) : -1,
        send: t ? Math.max(0, t.sendEnd - t.sendStart) : 0,
        wait: Math.max(0, (headersAtS - sendAtS) * 1000),
        receive: Math.max(0, (endS - headersAtS) * 1000),
      },
      _initiator: r.initiator,
      ...(r.priority ? { _priority: r.priority } : {}),
      ...(r.resourceType ? { _resourceType: r.resourceType } : {}),
    };
    if (r.remoteAddress) entry.serverIPAddress = r.remoteAddress.replace(/^\[|\]$/g, '');
    if (r.connectionId) entry.connection = r.connectionId;
    entries.push(entry);
  }
  const first = load.requests[0];
  const m = load.metrics;
  return {
    log: {
      version: '1.2',
      creator: { name: 'h2lab', version: creatorVersion },
      pages: [
        {
          startedDateTime: new Date((first?.wallTimeS ?? 0) * 1000).toISOString(),
          id: 'page_1',
          title,
          pageTimings: m ? { onContentLoad: m.dclMs, onLoad: m.loadMs } : {},
        },
      ],
      entries,
    },
  };
}

/** A HAR read for replay: the document, the origins' resources and what was inferred. */
export interface ReplaySite {
  url: string;
  creator: string;
  source: 'h2lab' | 'devtools' | 'playwright' | 'other';
  entries: number;
  /** Resources by hostname, in the order the HAR lists them. */
  origins: Map<string, OriginResource[]>;
  /**
   * Hosts whose requests shared a connection in the recording (HTTP/2 or HTTP/3 connection
   * coalescing): replayed from one listener whose certificate names them all.
   */
  shared: string[][];
  /** The port each hostname was recorded on (443 unless the URL named one): what QUIC is forced to. */
  ports: Map<string, number>;
  bytes: number;
  inferred: string[];
  /** Entries left out (not http(s), no status), with why. */
  skipped: string[];
}

/**
 * Groups of hosts whose entries name the same connection (HAR `connection`, Chromium's connection id)
 * and server address: one connection carried requests for several hosts, which only HTTP/2 and
 * HTTP/3 coalescing does. Union–find over hosts; groups of one are left out.
 */
function coalescedHosts(entries: readonly HarEntry[]): string[][] {
  const parent = new Map<string, string>();
  const find = (h: string): string => {
    const p = parent.get(h) ?? h;
    if (p === h) return h;
    const root = find(p);
    parent.set(h, root);
    return root;
  };
  const firstHost = new Map<string, string>();
  for (const e of entries) {
    if (!e.connection || e.connection === '0') continue;
    const host = new URL(e.request.url).hostname;
    parent.set(host, parent.get(host) ?? host);
    const key = `${e.serverIPAddress ?? ''}|${e.connection}`;
    const other = firstHost.get(key);
    if (other === undefined) firstHost.set(key, host);
    else if (find(other) !== find(host)) parent.set(find(host), find(other));
  }
  const groups = new Map<string, string[]>();
  for (const h of parent.keys()) groups.set(find(h), [...(groups.get(find(h)) ?? []), h]);
  return [...groups.values()].filter((g) => g.length > 1);
}

/** The sum of a response's `Server-Timing` durations (W3C Server Timing), ms, if it has any. */
export function serverTimingMs(headers: ReadonlyArray<readonly [string, string]>): number | undefined {
  let total: number | undefined;
  for (const [k, v] of headers) {
    if (k.toLowerCase() !== 'server-timing') continue;
    for (const m of v.matchAll(/;\s*dur=([\d.]+)/g)) total = (total ?? 0) + Number(m[1]);
  }
  return total;
}

function invalidHar(file: string, why: string): H2labError {
  return new H2labError(
    'H2LAB_ERR_HAR_INVALID',
    `${file} is not a HAR h2lab can replay: ${why}. Record one with \`h2lab page record URL -o site.har\`, or export it from DevTools (Network panel → Export HAR) or Playwright (recordHar)`,
    { option: 'HAR', value: file, why },
  );
}

function sourceOf(creator: string): ReplaySite['source'] {
  const c = creator.toLowerCase();
  if (c === 'h2lab') return 'h2lab';
  if (c.includes('webinspector') || c.includes('devtools') || c.includes('chrome')) return 'devtools';
  if (c.includes('playwright')) return 'playwright';
  return 'other';
}

function filler(n: number, open = '', close = ''): Buffer {
  if (n <= open.length + close.length) return Buffer.from(`${open}${close}`.slice(0, Math.max(0, n)));
  const unit = 'h2lab synthesised body ';
  const inner = unit.repeat(Math.ceil((n - open.length - close.length) / unit.length));
  return Buffer.from(`${open}${inner.slice(0, n - open.length - close.length)}${close}`);
}

function typeOf(e: HarEntry): string {
  if (e._resourceType) return e._resourceType.toLowerCase();
  const m = e.response.content.mimeType ?? '';
  if (m.includes('html')) return 'document';
  if (m.includes('css')) return 'stylesheet';
  if (m.includes('javascript')) return 'script';
  if (m.startsWith('image/')) return 'image';
  if (m.startsWith('font/') || m.includes('woff')) return 'font';
  return 'fetch';
}

/** A document that asks for every other entry at its recorded URL, padded to `size` bytes. */
function synthesiseDocument(others: readonly HarEntry[], size: number): Buffer {
  const head: string[] = [];
  const body: string[] = [];
  const fetches: string[] = [];
  for (const e of others) {
    const u = JSON.stringify(e.request.url).slice(1, -1).replace(/"/g, '&quot;');
    const t = typeOf(e);
    if (t === 'stylesheet') head.push(`<link rel="stylesheet" href="${u}">`);
    else if (t === 'script') head.push(`<script src="${u}"></script>`);
    else if (t === 'image') body.push(`<img src="${u}" alt="">`);
    else if (t === 'font') head.push(`<link rel="preload" as="font" crossorigin href="${u}">`);
    else if (t !== 'document' && e.request.method === 'GET') fetches.push(JSON.stringify(e.request.url));
  }
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>h2lab synthesised document</title>
${head.join('\n')}
</head><body><p>Synthesised by h2lab from a HAR without bodies.</p>
${body.join('\n')}
<script>for (const u of [${fetches.join(',')}]) fetch(u).then((r) => r.arrayBuffer()).catch(() => {});</script>
</body></html>`;
  const pad = size - Buffer.byteLength(html);
  return pad > 7 ? Buffer.concat([Buffer.from(html), filler(pad, '<!--', '-->')]) : Buffer.from(html);
}

/**
 * Reads a HAR for replay. Throws H2LAB_ERR_HAR_INVALID (naming the file and the first problem) or
 * H2LAB_ERR_FILE_UNREADABLE.
 */
export function readHar(file: string): ReplaySite {
  const text = readOptionText(file, 'HAR', { kind: 'har' });
  let har: Har;
  try {
    har = JSON.parse(text) as Har;
  } catch (err) {
    throw invalidHar(file, `not JSON (${(err as Error).message})`);
  }
  const entries = har?.log?.entries;
  if (!Array.isArray(entries)) throw invalidHar(file, 'it has no log.entries array');
  const creator = String(har.log.creator?.name ?? 'unknown');
  const source = sourceOf(creator);
  const skipped: string[] = [];
  const usable: HarEntry[] = [];
  entries.forEach((e, i) => {
    const url = e?.request?.url;
    if (typeof url !== 'string' || !/^https?:\/\//.test(url)) {
      skipped.push(`entry ${i}: ${String(url).slice(0, 60)} (not http or https)`);
      return;
    }
    if (typeof e.response?.status !== 'number' || e.response.status <= 0) {
      skipped.push(`entry ${i}: ${url.slice(0, 60)} (no response status: it failed when recorded)`);
      return;
    }
    usable.push(e);
  });
  if (usable.length === 0) throw invalidHar(file, 'no entry has an http(s) URL and a response status');
  const doc =
    usable.find((e) => typeOf(e) === 'document' && e.response.status < 300) ??
    usable.find((e) => typeOf(e) === 'document') ??
    usable[0]!;
  // One round trip per origin: its smallest TCP connect time (connect includes ssl in HAR 1.2).
  const rtt = new Map<string, number>();
  for (const e of usable) {
    const tcp = e.timings?.connect > 0 ? e.timings.connect - Math.max(0, e.timings.ssl ?? 0) : -1;
    const host = new URL(e.request.url).hostname;
    if (tcp > 0) rtt.set(host, Math.min(rtt.get(host) ?? Number.POSITIVE_INFINITY, tcp));
  }
  let synthesised = 0;
  let fromServerTiming = 0;
  let bytes = 0;
  const origins = new Map<string, OriginResource[]>();
  const ports = new Map<string, number>();
  for (const e of usable) {
    const u = new URL(e.request.url);
    const c = e.response.content ?? { size: 0, mimeType: '' };
    let body: Buffer;
    if (typeof c.text === 'string') body = Buffer.from(c.text, c.encoding === 'base64' ? 'base64' : 'utf8');
    else {
      const size = [c.size, e.response.bodySize, e.response._transferSize].find(
        (n) => typeof n === 'number' && n >= 0,
      ) as number | undefined;
      const t = typeOf(e);
      body =
        e === doc
          ? synthesiseDocument(
              usable.filter((x) => x !== doc),
              size ?? 0,
            )
          : t === 'stylesheet' || t === 'script'
            ? filler(size ?? 0, '/*', '*/')
            : filler(size ?? 0);
      synthesised++;
    }
    bytes += body.length;
    const host = u.hostname;
    const resource: OriginResource = {
      method: e.request.method ?? 'GET',
      path: `${u.pathname}${u.search}`,
      status: e.response.status,
      headers: (e.response.headers ?? []).map((h) => [String(h.name), String(h.value)] as const),
      body,
      thinkMs: 0,
    };
    const told = serverTimingMs(resource.headers);
    if (told !== undefined) {
      resource.thinkMs = told;
      fromServerTiming++;
    } else resource.thinkMs = Math.max(0, (e.timings?.wait ?? 0) - (rtt.get(host) ?? 0));
    if (e === doc)
      resource.headers = resource.headers.filter(([k]) => k.toLowerCase() !== 'content-security-policy');
    if (!ports.has(host)) ports.set(host, Number(u.port || 443));
    const list = origins.get(host) ?? [];
    list.push(resource);
    origins.set(host, list);
  }
  const shared = coalescedHosts(usable);
  const inferred: string[] = [];
  if (synthesised > 0)
    inferred.push(
      `bodies: ${synthesised} of ${usable.length} entries had none; bodies of the recorded sizes were synthesised${
        typeof doc.response.content?.text === 'string'
          ? ''
          : ' and the document rebuilt to reference every other entry (a flat initiator graph: the recorded discovery chain is not replayed)'
      }`,
    );
  if (fromServerTiming < usable.length)
    inferred.push(
      `think time: ${usable.length - fromServerTiming} of ${usable.length} entries carry no Server-Timing, so their think time is the recorded wait less one round trip to the origin (its smallest TCP connect time${
        rtt.size === 0
          ? '; none recorded, so the whole wait'
          : rtt.size <= 4
            ? `: ${[...rtt].map(([h, v]) => `${h} ${v.toFixed(1)} ms`).join(', ')}`
            : `: ${Math.min(...rtt.values()).toFixed(1)}–${Math.max(...rtt.values()).toFixed(1)} ms over ${rtt.size} origins`
      })`,
    );
  if (!usable.some((e) => e._initiator)) inferred.push('initiators: none recorded');
  if (!usable.some((e) => e._priority)) inferred.push('priorities: none recorded (Chromium chooses its own)');
  return {
    url: doc.request.url,
    creator: `${creator} ${har.log.creator?.version ?? ''}`.trim(),
    source,
    entries: usable.length,
    origins,
    shared,
    ports,
    bytes,
    inferred,
    skipped,
  };
}

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
 *
 * Everything read is checked before it is served (a HAR is input from anyone): bodies, recorded or
 * claimed, are capped per entry and in total ({@link HAR_LIMITS}) and synthesised ones cost no
 * memory until sent; header fields HTTP cannot carry and statuses other than 200–599 are left out
 * and counted; think times are cut to the load timeout; origins are capped at
 * {@link MAX_REPLAY_ORIGINS}. A malformed HAR is H2LAB_ERR_HAR_INVALID naming the entry, a too large
 * one H2LAB_ERR_HAR_TOO_LARGE naming the flag that raises the cap.
 */
import { declareFlag, formatBytes, H2labError, readOptionText } from '../core/index.ts';
import { HAR_MAX_BODY_BYTES, HAR_MAX_TOTAL_BYTES } from '../model/index.ts';
import { fillerBody, type OriginBody, type OriginResource } from '../server/index.ts';
import type { CapturedLoad } from './page-load.ts';

/** The subset of HAR 1.2 h2lab reads and writes. */
interface HarEntry {
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
  /** What was changed to serve the rest (header fields left out, think times cut), with counts. */
  warnings: string[];
}

/** The caps {@link readHar} holds a HAR to. */
export interface HarLimits {
  /** The largest body of one entry, recorded or claimed (`content.size`), bytes. */
  maxBodyBytes: number;
  /** The largest sum of every entry's body, bytes. */
  maxTotalBytes: number;
  /** The longest think time served, ms; longer ones are cut to it with a warning. */
  maxThinkMs: number;
}

/**
 * Default caps: far above a real page (HTTP Archive's heaviest pages weigh tens of MB; h2lab's file
 * cap on a HAR is 512 MiB) and far below what would exhaust the host. The think time cap is the
 * default load timeout, past which a load has failed anyway.
 */
export const HAR_LIMITS: Readonly<HarLimits> = Object.freeze({
  maxBodyBytes: HAR_MAX_BODY_BYTES,
  maxTotalBytes: HAR_MAX_TOTAL_BYTES,
  maxThinkMs: 60_000,
});

/** `page replay --har-max-body`: {@link HarLimits.maxBodyBytes}. */
export const HAR_MAX_BODY_FLAG = declareFlag({
  flag: 'har-max-body',
  grammar: 'bytes',
  arg: 'size',
  min: 1,
  max: 2 ** 40,
  description: 'largest body one HAR entry may have, recorded or claimed (content.size)',
  defaultText: '64MiB',
  defaultValue: '64MiB',
});
/** `page replay --har-max-total`: {@link HarLimits.maxTotalBytes}. */
export const HAR_MAX_TOTAL_FLAG = declareFlag({
  flag: 'har-max-total',
  grammar: 'bytes',
  arg: 'size',
  min: 1,
  max: 2 ** 40,
  description: "largest sum of the HAR's bodies",
  defaultText: '256MiB',
  defaultValue: '256MiB',
});

/**
 * The most origins a replay serves: each is a listener and a certificate, and Chromium is given all
 * of them in one `--host-resolver-rules` argument, which Linux caps at 128 KiB (MAX_ARG_STRLEN).
 * Measured: 2,001 origins took 32 s to start and made a 143 KB argument, so Chromium did not start;
 * 256 start in 3 s, and even with 253-byte hostnames their rules fit. Real pages have tens.
 */
export const MAX_REPLAY_ORIGINS = 256;

/**
 * Groups of hosts whose entries name the same connection (HAR `connection`, Chromium's connection id)
 * and server address: one connection carried requests for several hosts, which only HTTP/2 and
 * HTTP/3 coalescing does. Union–find over hosts; groups of one are left out.
 */
function coalescedHosts(entries: readonly Entry[]): string[][] {
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
    const host = e.url.hostname;
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
function serverTimingMs(headers: ReadonlyArray<readonly [string, string]>): number | undefined {
  let total: number | undefined;
  for (const [k, v] of headers) {
    if (k.toLowerCase() !== 'server-timing') continue;
    for (const m of v.matchAll(/;\s*dur=([\d.]+)/g)) {
      const ms = Number(m[1]);
      if (Number.isFinite(ms)) total = (total ?? 0) + ms;
    }
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

function tooLarge(file: string, what: string, flag: string | undefined, details: Record<string, unknown>) {
  return new H2labError(
    'H2LAB_ERR_HAR_TOO_LARGE',
    `${file}: ${what}${flag ? `: raise ${flag} if the page really is that large` : ": replay the origins that matter (edit the HAR's log.entries)"}`,
    { option: flag ?? 'HAR', value: file, ...details },
  );
}

function sourceOf(creator: string): ReplaySite['source'] {
  const c = creator.toLowerCase();
  if (c === 'h2lab') return 'h2lab';
  if (c.includes('webinspector') || c.includes('devtools') || c.includes('chrome')) return 'devtools';
  if (c.includes('playwright')) return 'playwright';
  return 'other';
}

/** One HAR entry as checked by {@link entryOf}: only what the replay uses, each of its type. */
interface Entry {
  index: number;
  /** The URL as recorded (what Chromium asks for) and parsed. */
  href: string;
  url: URL;
  method: string;
  status: number;
  /** Response fields HTTP can carry (the others are counted in `droppedHeaders`). */
  headers: Array<readonly [string, string]>;
  droppedHeaders: number;
  mimeType: string;
  resourceType?: string;
  text?: { value: string; encoding: 'base64' | 'utf8' };
  /** The recorded size when the body was left out, bytes. */
  claimedBytes?: number;
  waitMs: number;
  tcpMs: number;
  connection?: string;
  serverIPAddress?: string;
  hasInitiator: boolean;
  hasPriority: boolean;
}

type Json = Record<string, unknown>;
const objectOr = (v: unknown): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
const finite = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
/** An HTTP token (RFC 9110 §5.6.2): what a method and a field name are. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A field value HTTP/1.1, HTTP/2 and node:http all carry: no CR, LF, NUL or other control (RFC 9110 §5.5). */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * The most bytes of header fields one replayed response carries; fields beyond are left out. Real
 * responses carry a few KiB; a HAR can claim megabytes in one value.
 */
const MAX_HEADER_BYTES = 64 * 1024;

/** Entry `i` checked, or why it is left out (a string); throws H2LAB_ERR_HAR_INVALID on a damaged one. */
function entryOf(raw: unknown, i: number, file: string): Entry | string {
  const e = objectOr(raw);
  const req = objectOr(e.request);
  const res = objectOr(e.response);
  const href = text(req.url);
  if (href === undefined || !/^https?:\/\//i.test(href) || !URL.canParse(href))
    return `entry ${i}: ${String(href).slice(0, 60)} (not an http or https URL)`;
  const status = res.status;
  if (typeof status !== 'number' || !(status > 0))
    return `entry ${i}: ${href.slice(0, 60)} (no response status: it failed when recorded)`;
  if (!Number.isInteger(status) || status < 200 || status > 599)
    return `entry ${i}: ${href.slice(0, 60)} (status ${status}: only final statuses 200–599 can be replayed over HTTP/1.1, h2 and h3)`;
  const method = req.method === undefined ? 'GET' : text(req.method);
  if (method === undefined || !TOKEN.test(method))
    return `entry ${i}: ${href.slice(0, 60)} (method ${JSON.stringify(req.method).slice(0, 30)} is not an HTTP method)`;
  if (res.headers !== undefined && !Array.isArray(res.headers))
    throw invalidHar(
      file,
      `entry ${i} (${href.slice(0, 60)}): response.headers is not an array of { name, value }`,
    );
  const headers: Array<readonly [string, string]> = [];
  let droppedHeaders = 0;
  let headerBytes = 0;
  for (const h of (res.headers as unknown[] | undefined) ?? []) {
    const o = objectOr(h);
    const name = text(o.name);
    const value = typeof o.value === 'number' ? String(o.value) : text(o.value);
    // HTTP/2 and HTTP/3 pseudo-header fields (`:status`) some tools export: never served as fields.
    if (name?.startsWith(':') && TOKEN.test(name.slice(1))) continue;
    const fits =
      name !== undefined &&
      value !== undefined &&
      headerBytes + name.length + value.length <= MAX_HEADER_BYTES;
    if (fits && TOKEN.test(name) && FIELD_VALUE.test(value)) {
      headers.push([name, value]);
      headerBytes += name.length + value.length;
    } else droppedHeaders++;
  }
  const content = objectOr(res.content);
  const body = text(content.text);
  const claimed = [content.size, res.bodySize, res._transferSize]
    .map(finite)
    .find((n) => n !== undefined && n >= 0);
  const timings = objectOr(e.timings);
  const connect = finite(timings.connect) ?? -1;
  const connection = typeof e.connection === 'number' ? String(e.connection) : text(e.connection);
  const serverIPAddress = text(e.serverIPAddress);
  const resourceType = text(e._resourceType);
  return {
    index: i,
    href,
    url: new URL(href),
    method,
    status,
    headers,
    droppedHeaders,
    mimeType: text(content.mimeType) ?? '',
    ...(resourceType ? { resourceType: resourceType.toLowerCase() } : {}),
    ...(body !== undefined
      ? { text: { value: body, encoding: content.encoding === 'base64' ? 'base64' : 'utf8' } }
      : claimed !== undefined
        ? { claimedBytes: Math.floor(claimed) }
        : {}),
    waitMs: Math.max(0, finite(timings.wait) ?? 0),
    tcpMs: connect > 0 ? connect - Math.max(0, finite(timings.ssl) ?? 0) : -1,
    ...(connection !== undefined ? { connection } : {}),
    ...(serverIPAddress !== undefined ? { serverIPAddress } : {}),
    hasInitiator: e._initiator !== undefined && e._initiator !== null,
    hasPriority: Boolean(e._priority),
  };
}

function typeOf(e: Entry): string {
  if (e.resourceType) return e.resourceType;
  const m = e.mimeType;
  if (m.includes('html')) return 'document';
  if (m.includes('css')) return 'stylesheet';
  if (m.includes('javascript')) return 'script';
  if (m.startsWith('image/')) return 'image';
  if (m.startsWith('font/') || m.includes('woff')) return 'font';
  return 'fetch';
}

/** A document that asks for every other entry at its recorded URL, padded to `size` bytes. */
function synthesiseDocument(others: readonly Entry[], size: number): OriginBody {
  const head: string[] = [];
  const body: string[] = [];
  const fetches: string[] = [];
  for (const e of others) {
    const u = JSON.stringify(e.href).slice(1, -1).replace(/"/g, '&quot;');
    const t = typeOf(e);
    if (t === 'stylesheet') head.push(`<link rel="stylesheet" href="${u}">`);
    else if (t === 'script') head.push(`<script src="${u}"></script>`);
    else if (t === 'image') body.push(`<img src="${u}" alt="">`);
    else if (t === 'font') head.push(`<link rel="preload" as="font" crossorigin href="${u}">`);
    else if (t !== 'document' && e.method === 'GET') fetches.push(JSON.stringify(e.href));
  }
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>h2lab synthesised document</title>
${head.join('\n')}
</head><body><p>Synthesised by h2lab from a HAR without bodies.</p>
${body.join('\n')}
<script>for (const u of [${fetches.join(',')}]) fetch(u).then((r) => r.arrayBuffer()).catch(() => {});</script>
</body></html>`;
  const pad = size - Buffer.byteLength(html);
  if (pad <= 7) return Buffer.from(html);
  const padding = fillerBody(pad, '<!--', '-->');
  return {
    length: Buffer.byteLength(html) + padding.length,
    head: Buffer.from(`${html}<!--`),
    tail: padding.tail,
  };
}

/** The body entry `e` is served with: its recorded text, or one synthesised to its recorded size. */
function bodyOf(e: Entry, doc: Entry, usable: readonly Entry[]): OriginBody {
  if (e.text) return Buffer.from(e.text.value, e.text.encoding);
  const size = e.claimedBytes ?? 0;
  if (e === doc)
    return synthesiseDocument(
      usable.filter((x) => x !== doc),
      size,
    );
  const t = typeOf(e);
  return t === 'stylesheet' || t === 'script' ? fillerBody(size, '/*', '*/') : fillerBody(size);
}

/** Bytes entry `e` is served with, known before any is allocated. */
const bytesOf = (e: Entry) =>
  e.text ? Buffer.byteLength(e.text.value, e.text.encoding) : (e.claimedBytes ?? 0);

/**
 * Reads a HAR for replay. Throws H2LAB_ERR_HAR_INVALID (naming the file and the first problem),
 * H2LAB_ERR_HAR_TOO_LARGE (a cap of `limits`, the flag that raises it) or H2LAB_ERR_FILE_UNREADABLE.
 */
export function readHar(file: string, limits: Partial<HarLimits> = {}): ReplaySite {
  const input = readOptionText(file, 'HAR', { kind: 'har' });
  let har: unknown;
  try {
    har = JSON.parse(input);
  } catch (err) {
    throw invalidHar(file, `not JSON (${(err as Error).message})`);
  }
  return siteOfHar(har, file, limits);
}

/** {@link readHar} of a HAR already parsed; `file` names it in messages. */
function siteOfHar(har: unknown, file: string, limits: Partial<HarLimits> = {}): ReplaySite {
  const caps: HarLimits = { ...HAR_LIMITS, ...limits };
  const log = objectOr(objectOr(har).log);
  const entries = log.entries;
  if (!Array.isArray(entries)) throw invalidHar(file, 'it has no log.entries array');
  const creatorOf = objectOr(log.creator);
  const creator = String(text(creatorOf.name) ?? 'unknown');
  const source = sourceOf(creator);
  const skipped: string[] = [];
  const usable: Entry[] = [];
  entries.forEach((raw, i) => {
    const e = entryOf(raw, i, file);
    if (typeof e === 'string') skipped.push(e);
    else usable.push(e);
  });
  if (usable.length === 0) throw invalidHar(file, 'no entry has an http(s) URL and a response status');
  const hosts = new Set(usable.map((e) => e.url.hostname));
  if (hosts.size > MAX_REPLAY_ORIGINS)
    throw tooLarge(
      file,
      `it has ${hosts.size} origins (hostnames); a replay serves at most ${MAX_REPLAY_ORIGINS}, each from a listener and a certificate of its own per protocol setting`,
      undefined,
      { origins: hosts.size, max: MAX_REPLAY_ORIGINS },
    );
  let total = 0;
  for (const e of usable) {
    const n = bytesOf(e);
    if (n > caps.maxBodyBytes)
      throw tooLarge(
        file,
        `entry ${e.index} (${e.href.slice(0, 60)}) has a body of ${formatBytes(n)} (${e.text ? 'content.text' : 'its recorded size'}), above the ${formatBytes(caps.maxBodyBytes)} of --har-max-body`,
        '--har-max-body',
        { entry: e.index, bytes: n, max: caps.maxBodyBytes },
      );
    total += n;
  }
  if (total > caps.maxTotalBytes)
    throw tooLarge(
      file,
      `its ${usable.length} entries' bodies add up to ${formatBytes(total)}, above the ${formatBytes(caps.maxTotalBytes)} of --har-max-total`,
      '--har-max-total',
      { bytes: total, max: caps.maxTotalBytes },
    );
  const doc =
    usable.find((e) => typeOf(e) === 'document' && e.status < 300) ??
    usable.find((e) => typeOf(e) === 'document') ??
    usable[0]!;
  // One round trip per origin: its smallest TCP connect time (connect includes ssl in HAR 1.2).
  const rtt = new Map<string, number>();
  for (const e of usable) {
    const host = e.url.hostname;
    if (e.tcpMs > 0) rtt.set(host, Math.min(rtt.get(host) ?? Number.POSITIVE_INFINITY, e.tcpMs));
  }
  let synthesised = 0;
  let fromServerTiming = 0;
  let bytes = 0;
  const cut: Entry[] = [];
  const origins = new Map<string, OriginResource[]>();
  const ports = new Map<string, number>();
  for (const e of usable) {
    const u = e.url;
    const body = bodyOf(e, doc, usable);
    if (!e.text) synthesised++;
    bytes += body.length;
    const host = u.hostname;
    const resource: OriginResource = {
      method: e.method,
      path: `${u.pathname}${u.search}`,
      status: e.status,
      headers: e.headers,
      body,
      thinkMs: 0,
    };
    const told = serverTimingMs(resource.headers);
    if (told !== undefined) {
      resource.thinkMs = told;
      fromServerTiming++;
    } else resource.thinkMs = Math.max(0, e.waitMs - (rtt.get(host) ?? 0));
    if (resource.thinkMs > caps.maxThinkMs) {
      resource.thinkMs = caps.maxThinkMs;
      cut.push(e);
    }
    if (e === doc)
      resource.headers = resource.headers.filter(([k]) => k.toLowerCase() !== 'content-security-policy');
    if (!ports.has(host)) ports.set(host, Number(u.port || 443));
    const list = origins.get(host) ?? [];
    list.push(resource);
    origins.set(host, list);
  }
  const warnings: string[] = [];
  const dropped = usable.filter((e) => e.droppedHeaders > 0);
  if (dropped.length > 0)
    warnings.push(
      `HAR header fields: ${dropped.reduce((n, e) => n + e.droppedHeaders, 0)} in ${dropped.length} entries (first: entry ${dropped[0]!.index}) were left out: a name that is not an HTTP token, a value with CR, LF, NUL or another control character, which no HTTP version can carry, or fields beyond ${MAX_HEADER_BYTES / 1024} KiB in one response`,
    );
  if (cut.length > 0)
    warnings.push(
      `think time: ${cut.length} entries (first: entry ${cut[0]!.index}) recorded a wait or Server-Timing above ${caps.maxThinkMs / 1000} s (the load timeout); they are served after ${caps.maxThinkMs / 1000} s, and a load that waits for them times out`,
    );
  const shared = coalescedHosts(usable);
  const inferred: string[] = [];
  if (synthesised > 0)
    inferred.push(
      `bodies: ${synthesised} of ${usable.length} entries had none; bodies of the recorded sizes were synthesised${
        doc.text
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
  if (!usable.some((e) => e.hasInitiator)) inferred.push('initiators: none recorded');
  if (!usable.some((e) => e.hasPriority))
    inferred.push('priorities: none recorded (Chromium chooses its own)');
  return {
    url: doc.href,
    creator: `${creator} ${text(creatorOf.version) ?? ''}`.trim(),
    source,
    entries: usable.length,
    origins,
    shared,
    ports,
    bytes,
    inferred,
    skipped,
    warnings,
  };
}

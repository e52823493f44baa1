/**
 * A generated page with the shape of a real one, to record and replay where no site of the user's is
 * at hand (tests, the worked example in docs/usage.md):
 *
 * ```
 *   www (origin 0)  index.html ── think time ──▶ parser discovers:
 *     <head>  style-0.css (render-blocking) ──▶ font-0.woff2, font-1.woff2 (discovered late: CSS)
 *             head.js (render-blocking, sync)
 *     <body>  img-N.svg … spread over origins 0..M-1, app-K.js (defer)
 *     app-0.js ──▶ fetch() data.json (an XHR, discovered only when the script runs)
 * ```
 * Resources are spread round-robin over the origins after the document, so a 1 + 17 origin page has
 * most of its requests on third parties, as on the web. Everything is deterministic from the
 * parameters: the same spec gives the same bytes. Every response says its think time in a
 * `Server-Timing: think;dur=MS` field (W3C Server Timing), which is what a replay takes as the think
 * time: a `wait` measured on a loaded 2-core machine holds the server's and the browser's CPU queues.
 */
import { invalidOption } from '../core/index.ts';
import type { OriginResource, OriginSpec } from './origins.ts';

/** What to generate. */
export interface SiteSpec {
  /** Origins, the first one first-party (serves the HTML). 1–50. Default 3. */
  origins: number;
  /** Resources in all, the document included. 8–2000. Default 80. */
  resources: number;
  /** Server think time of the HTML, ms. Default 20. */
  htmlThinkMs: number;
  /** Server think time of every other resource, ms. Default 2. */
  assetThinkMs: number;
  /** Bytes of each image. Default 6000. */
  imageBytes: number;
  /**
   * How many origins, the first party first, one server serves with one certificate naming them all
   * (a CDN serving `www` and `o1`): Chromium coalesces them onto one h2 connection. Default 1 (none).
   */
  shared: number;
  /** Domain under which origin hosts are named (`www.DOMAIN`, `o1.DOMAIN`…). Default `h2lab.test` (RFC 6761). */
  domain: string;
}

export const DEFAULT_SITE: Readonly<SiteSpec> = Object.freeze({
  origins: 3,
  resources: 80,
  htmlThinkMs: 20,
  assetThinkMs: 2,
  imageBytes: 6000,
  shared: 1,
  domain: 'h2lab.test',
});

/**
 * Parses `origins=3,resources=80,think=20ms,asset-think=2ms,image=6000`; missing keys keep their
 * defaults. Errors name `option` and the key.
 */
export function parseSiteSpec(text: string, option = '--generate'): SiteSpec {
  const out: SiteSpec = { ...DEFAULT_SITE };
  if (text.trim() === '' || text === 'default') return out;
  for (const part of text.split(',')) {
    const [k, v = ''] = part.split('=').map((s) => s.trim()) as [string, string?];
    const num = (lo: number, hi: number, unit = '') => {
      const n = Number(unit ? v.replace(new RegExp(`${unit}$`), '') : v);
      if (!Number.isFinite(n) || n < lo || n > hi)
        throw invalidOption(option, text, `${k} must be a number from ${lo} to ${hi}${unit}`);
      return n;
    };
    if (k === 'origins') out.origins = Math.round(num(1, 50));
    else if (k === 'resources') out.resources = Math.round(num(8, 2000));
    else if (k === 'think') out.htmlThinkMs = num(0, 60_000, 'ms');
    else if (k === 'asset-think') out.assetThinkMs = num(0, 60_000, 'ms');
    else if (k === 'image') out.imageBytes = Math.round(num(200, 10_000_000));
    else if (k === 'shared') out.shared = Math.round(num(1, 50));
    else if (k === 'domain' && /^[a-z0-9.-]+$/.test(v)) out.domain = v;
    else
      throw invalidOption(
        option,
        text,
        'use comma-separated keys origins=N, resources=N, think=MS, asset-think=MS, image=BYTES, shared=N, domain=NAME (e.g. origins=3,resources=80)',
      );
  }
  return out;
}

/** Host of origin `i` (0 = first party). */
export function siteHost(spec: SiteSpec, i: number): string {
  return i === 0 ? `www.${spec.domain}` : `o${i}.${spec.domain}`;
}

function pad(text: string, bytes: number, open: string, close: string): string {
  const need = bytes - Buffer.byteLength(text) - open.length - close.length;
  if (need <= 0) return text;
  let filler = '';
  for (let i = 0; filler.length < need; i++) filler += `h2lab-${i} `;
  return `${text}${open}${filler.slice(0, need)}${close}`;
}

function svg(i: number, bytes: number): string {
  const hue = (i * 47) % 360;
  const body = `<svg xmlns="http://www.w3.org/2000/svg" width="160" height="100" viewBox="0 0 160 100"><rect width="160" height="100" fill="hsl(${hue} 60% 55%)"/><text x="8" y="60" font-size="28" fill="#fff">${i}</text>`;
  return `${pad(body, bytes - 6, '<!--', '-->')}</svg>`;
}

/**
 * The generated site as origins and their resources, every one served with h2 (the recording is
 * made over whatever the browser negotiates; the replay chooses protocols itself).
 */
export function generateSite(spec: SiteSpec): { url: string; origins: OriginSpec[]; shared: string[][] } {
  const hosts = Array.from({ length: spec.origins }, (_, i) => siteHost(spec, i));
  const byHost = new Map<string, OriginResource[]>(hosts.map((h) => [h, []]));
  const url = (i: number, path: string) => `https://${hosts[i % hosts.length]}${path}`;
  const cors: Array<[string, string]> = [['access-control-allow-origin', '*']];
  const add = (
    originIndex: number,
    path: string,
    type: string,
    body: string | Buffer,
    think = spec.assetThinkMs,
  ) => {
    byHost.get(hosts[originIndex % hosts.length]!)!.push({
      method: 'GET',
      path,
      status: 200,
      headers: [
        ['content-type', type],
        ['cache-control', 'no-store'],
        ['server-timing', `think;dur=${think}`],
        ...cors,
      ],
      body: Buffer.isBuffer(body) ? body : Buffer.from(body),
      thinkMs: think,
    });
  };
  // Fixed parts: document, 1 stylesheet, 2 fonts, 1 head script, 2 deferred scripts, 1 XHR.
  const fixed = 8;
  const images = Math.max(0, spec.resources - fixed);
  let next = 1; // round-robin over origins for everything after the document
  const at = () => next++ % hosts.length;
  const css = at();
  const fonts = [at(), at()];
  const headJs = at();
  const apps = [at(), at()];
  const xhr = at();
  const fontFaces = fonts
    .map(
      (o, k) =>
        `@font-face{font-family:f${k};src:url(${url(o, `/font-${k}.woff2`)}) format("woff2");font-display:swap}`,
    )
    .join('\n');
  add(
    css,
    '/style-0.css',
    'text/css',
    pad(
      `${fontFaces}\nbody{font:15px f0,system-ui;margin:1em}h1{font-family:f1,serif}.g{display:grid;grid-template-columns:repeat(auto-fill,160px);gap:4px}\n`,
      12_000,
      '/*',
      '*/',
    ),
  );
  fonts.forEach((o, k) => {
    add(o, `/font-${k}.woff2`, 'font/woff2', Buffer.alloc(20_000, k + 1));
  });
  add(
    headJs,
    '/head.js',
    'text/javascript',
    pad('window.h2labHead = performance.now();\n', 15_000, '/*', '*/'),
  );
  add(
    apps[0]!,
    '/app-0.js',
    'text/javascript',
    pad(
      `fetch(${JSON.stringify(url(xhr, '/data.json'))}).then((r) => r.json()).then((d) => { document.getElementById('xhr').textContent = 'data: ' + d.items.length + ' items'; });\n`,
      40_000,
      '/*',
      '*/',
    ),
  );
  add(apps[1]!, '/app-1.js', 'text/javascript', pad('window.h2labApp = 1;\n', 30_000, '/*', '*/'));
  add(
    xhr,
    '/data.json',
    'application/json',
    JSON.stringify({ items: Array.from({ length: 50 }, (_, i) => ({ i, name: `item ${i}` })) }),
  );
  const imgTags: string[] = [];
  for (let i = 0; i < images; i++) {
    const o = at();
    add(o, `/img-${i}.svg`, 'image/svg+xml', svg(i, spec.imageBytes));
    imgTags.push(`<img src="${url(o, `/img-${i}.svg`)}" width="160" height="100" alt="">`);
  }
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>h2lab generated page</title>
<link rel="stylesheet" href="${url(css, '/style-0.css')}">
<script src="${url(headJs, '/head.js')}"></script>
${apps.map((o, k) => `<script defer src="${url(o, `/app-${k}.js`)}"></script>`).join('\n')}
</head><body>
<h1>A generated page: ${spec.resources} resources on ${spec.origins} origin${spec.origins > 1 ? 's' : ''}</h1>
<p>First party www.${spec.domain}; images, scripts, a stylesheet, two fonts and an XHR on the others.</p>
<p id="xhr">data: pending</p>
<div class="g">
${imgTags.join('\n')}
</div>
</body></html>
`;
  byHost.get(hosts[0]!)!.unshift({
    method: 'GET',
    path: '/',
    status: 200,
    headers: [
      ['content-type', 'text/html; charset=utf-8'],
      ['cache-control', 'no-store'],
      ['server-timing', `think;dur=${spec.htmlThinkMs}`],
    ],
    body: Buffer.from(html),
    thinkMs: spec.htmlThinkMs,
  });
  return {
    url: `https://${hosts[0]}/`,
    origins: hosts.map((host) => ({ host, wire: 'h2' as const, resources: byHost.get(host)! })),
    shared: spec.shared > 1 ? [hosts.slice(0, spec.shared)] : [],
  };
}

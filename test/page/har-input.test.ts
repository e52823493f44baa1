// A HAR is input from anyone: reading one never ends as an internal error, never allocates what an
// entry merely claims, and never hands the origin servers a field or status that would throw on the
// wire. A fast-check fuzz of readHar over malformed shapes, the cases a hostile HAR is made of, and
// a real replay over loopback in Chromium of a HAR built to hurt the host (RSS sampled throughout).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { validateHeaderName, validateHeaderValue } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import fc from 'fast-check';
import { isH2labError } from '../../src/core/index.ts';
import { loadBinding } from '../../src/h3/index.ts';
import type { ReplayProtocol } from '../../src/model/index.ts';
import { HAR_LIMITS, MAX_REPLAY_ORIGINS, readHar, replayPage } from '../../src/page/index.ts';
import { startOriginServers } from '../../src/server/index.ts';
import { ensureDevCertificates } from '../../src/tls/index.ts';
import { chromiumMissing } from '../browser/helpers.ts';
import { h3SkipReason } from '../h3/helpers.ts';
import { run } from '../helpers/peers.ts';

const dir = mkdtempSync(join(tmpdir(), 'h2lab-har-input-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
/** Writes `har` (any JSON value) to a new file; returns its path. */
function file(har: unknown): string {
  const f = join(dir, `h${n++}.har`);
  writeFileSync(f, JSON.stringify(har));
  return f;
}

/** One well-formed entry of `url`, with `patch` applied to its response. */
function entry(url: string, response: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return {
    startedDateTime: '2026-01-01T00:00:00.000Z',
    time: 10,
    request: { method: 'GET', url, httpVersion: 'HTTP/2.0', headers: [], queryString: [], cookies: [] },
    response: {
      status: 200,
      statusText: 'OK',
      httpVersion: 'HTTP/2.0',
      headers: [{ name: 'content-type', value: 'text/plain' }],
      cookies: [],
      content: { size: 10, mimeType: 'text/plain' },
      redirectURL: '',
      headersSize: -1,
      bodySize: 10,
      ...response,
    },
    cache: {},
    timings: { blocked: 0, dns: -1, connect: -1, ssl: -1, send: 0, wait: 5, receive: 1 },
    ...extra,
  };
}
const harOf = (entries: unknown[]) => ({
  log: { version: '1.2', creator: { name: 'test', version: '1' }, entries },
});

/** Calls `f`; returns the H2labError code it threw, or 'ok'; anything else fails the test. */
function outcome(f: () => unknown): string {
  try {
    f();
    return 'ok';
  } catch (err) {
    assert.ok(isH2labError(err), `not an H2labError: ${(err as Error)?.stack ?? String(err)}`);
    return err.code;
  }
}

test('a claimed 500 MB body and a claimed 1e12-byte body are refused by the cap at once, naming the entry and the flag', () => {
  const before = process.memoryUsage().rss;
  for (const size of [500e6, 1e12]) {
    const f = file(harOf([entry('https://a.test/', { content: { size, mimeType: 'image/png' } })]));
    const t0 = performance.now();
    assert.throws(
      () => readHar(f),
      (err: unknown) =>
        isH2labError(err) &&
        err.code === 'H2LAB_ERR_HAR_TOO_LARGE' &&
        /entry 0 .*--har-max-body/.test(err.message),
    );
    assert.ok(performance.now() - t0 < 1000, `refused in ${performance.now() - t0} ms`);
  }
  assert.ok(process.memoryUsage().rss - before < 50e6, 'nothing of the claimed size was allocated');
  // Four entries under the per-body cap that together pass the total one.
  const five = [0, 1, 2, 3, 4].map((i) =>
    entry(`https://a.test/${i}`, { content: { size: 60 * 1024 ** 2, mimeType: 'image/png' } }),
  );
  assert.throws(
    () => readHar(file(harOf(five))),
    (err: unknown) => isH2labError(err) && /300 MiB.*--har-max-total/.test(err.message),
  );
  assert.equal(
    outcome(() => readHar(file(harOf(five)), { maxTotalBytes: 2 ** 30 })),
    'ok',
  );
});

test('a body claimed above the default cap, allowed by a raised one, is synthesised without being allocated', () => {
  const before = process.memoryUsage().rss;
  const site = readHar(
    file(harOf([entry('https://a.test/', { content: { size: 1e12, mimeType: 'image/png' } })])),
    { maxBodyBytes: 2e12, maxTotalBytes: 2e12 },
  );
  assert.equal(site.bytes, 1e12);
  assert.equal(site.origins.get('a.test')![0]!.body.length, 1e12);
  assert.ok(process.memoryUsage().rss - before < 50e6, 'a terabyte claimed costs no memory');
});

test('response.headers that is not an array is H2LAB_ERR_HAR_INVALID naming the entry', () => {
  const f = file(harOf([entry('https://a.test/'), entry('https://a.test/x', { headers: 'x' })]));
  assert.throws(
    () => readHar(f),
    (err: unknown) =>
      isH2labError(err) &&
      err.code === 'H2LAB_ERR_HAR_INVALID' &&
      /entry 1 .*response\.headers/.test(err.message),
  );
});

test('header fields HTTP cannot carry are left out and counted; statuses outside 200–599 are skipped', () => {
  const site = readHar(
    file(
      harOf([
        entry('https://a.test/', {
          headers: [
            { name: 'x-ok', value: 'fine' },
            { name: 'x-crlf', value: 'a\r\nSet-Cookie: injected=1' },
            { name: 'bad name', value: 'v' },
            { name: 'x-nul', value: 'a\u0000b' },
            { name: ':status', value: '200' },
            { name: 7, value: 'v' },
            null,
            { name: 'x-huge', value: 'v'.repeat(70 * 1024) },
          ],
        }),
        entry('https://a.test/101', { status: 101 }),
        entry('https://a.test/999', { status: 999 }),
        entry('https://a.test/1e6', { status: 1_000_000 }),
        entry('https://a.test/frac', { status: 200.5 }),
      ]),
    ),
  );
  const served = site.origins.get('a.test')!;
  assert.deepEqual(
    served.map((r) => r.path),
    ['/'],
    'only the entry with a final status is served',
  );
  assert.deepEqual(served[0]!.headers, [['x-ok', 'fine']]);
  assert.equal(site.skipped.length, 4, site.skipped.join('\n'));
  assert.ok(site.skipped.every((s) => /status .*200–599/.test(s)));
  assert.match(site.warnings.join('\n'), /HAR header fields: 6 in 1 entries \(first: entry 0\)/);
});

test('a wait of 1e12 ms is cut to the think time cap with a warning, never left to overflow a timer', () => {
  const site = readHar(
    file(
      harOf([
        entry('https://a.test/', {}, { timings: { wait: 1e12 } }),
        entry('https://a.test/st', {
          headers: [{ name: 'server-timing', value: 'app;dur=99999999999999, db;dur=1.2.3' }],
        }),
      ]),
    ),
  );
  const [slow, told] = site.origins.get('a.test')!;
  assert.equal(slow!.thinkMs, HAR_LIMITS.maxThinkMs);
  assert.ok(Number.isFinite(told!.thinkMs) && told!.thinkMs <= HAR_LIMITS.maxThinkMs, String(told!.thinkMs));
  assert.match(site.warnings.join('\n'), /think time: 2 entries \(first: entry 0\).*above 60 s/);
});

test(`more than ${MAX_REPLAY_ORIGINS} origins are refused at read, not by Chromium after a minute`, () => {
  const many = Array.from({ length: 2001 }, (_, i) => entry(`https://o${i}.a.test/`));
  const t0 = performance.now();
  assert.throws(
    () => readHar(file(harOf(many))),
    (err: unknown) =>
      isH2labError(err) && err.code === 'H2LAB_ERR_HAR_TOO_LARGE' && /2001 origins/.test(err.message),
  );
  assert.ok(performance.now() - t0 < 2000);
  const enough = many.slice(0, MAX_REPLAY_ORIGINS);
  assert.equal(readHar(file(harOf(enough))).origins.size, MAX_REPLAY_ORIGINS);
});

test('fuzz: readHar over malformed HARs never throws anything but HAR_INVALID / HAR_TOO_LARGE, and serves only what HTTP carries', () => {
  const junk = fc.jsonValue({ maxDepth: 2 });
  const num = fc.oneof(
    fc.constantFrom(-1, 0, 0.5, 10, 1e6, 500e6, 1e12, 1e308, -1e308, 2 ** 31),
    fc.integer({ min: -10, max: 100_000 }),
    junk,
  );
  const str = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.constantFrom('a\r\nb', 'bad name', 'x\u0000', 'é', '\u2028', '', ':status', 'Set-Cookie'),
    junk,
  );
  const header = fc.oneof(fc.record({ name: str, value: fc.oneof(str, num) }, { requiredKeys: [] }), junk);
  const url = fc.oneof(
    fc.constantFrom(
      'https://a.test/',
      'http://b.test:8080/x?y=1',
      'https://',
      'http://[::1]:1/',
      'ftp://a.test/',
      'https://a.test/%',
      'HTTPS://UP.test/',
      'https://a.test/"><script>',
    ),
    str,
  );
  const response = fc.record(
    {
      status: fc.oneof(fc.constantFrom(200, 204, 304, 101, 999, 1_000_000, 200.5, 0, -1, 404, 599, 600), num),
      headers: fc.oneof(fc.array(header, { maxLength: 4 }), junk),
      content: fc.oneof(
        fc.record(
          {
            size: num,
            text: fc.oneof(fc.string({ maxLength: 20 }), junk),
            encoding: fc.oneof(fc.constant('base64'), str),
            mimeType: fc.oneof(
              fc.constantFrom('text/html', 'text/css', 'application/javascript', 'image/png'),
              str,
            ),
          },
          { requiredKeys: [] },
        ),
        junk,
      ),
      bodySize: num,
      _transferSize: num,
    },
    { requiredKeys: [] },
  );
  const anEntry = fc.record(
    {
      request: fc.oneof(
        fc.record(
          { url, method: fc.oneof(fc.constantFrom('GET', 'POST', 'G T'), str) },
          { requiredKeys: [] },
        ),
        junk,
      ),
      response: fc.oneof(response, junk),
      timings: fc.oneof(fc.record({ wait: num, connect: num, ssl: num }, { requiredKeys: [] }), junk),
      connection: fc.oneof(fc.constantFrom('1', '2'), num),
      serverIPAddress: str,
      _resourceType: fc.oneof(fc.constantFrom('document', 'script', 'stylesheet', 'image', 'font'), str),
      _initiator: junk,
      _priority: junk,
    },
    { requiredKeys: [] },
  );
  const har = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        log: fc.record(
          { creator: junk, entries: fc.array(fc.oneof(anEntry, junk), { maxLength: 6 }) },
          { requiredKeys: ['entries'] },
        ),
      }),
    },
    { weight: 1, arbitrary: junk },
    { weight: 1, arbitrary: fc.record({ log: fc.record({ entries: junk }) }) },
  );
  fc.assert(
    fc.property(har, (h) => {
      const f = file(h);
      let site: ReturnType<typeof readHar>;
      try {
        site = readHar(f);
      } catch (err) {
        assert.ok(isH2labError(err), `not an H2labError: ${(err as Error)?.stack ?? String(err)}`);
        assert.ok(
          err.code === 'H2LAB_ERR_HAR_INVALID' || err.code === 'H2LAB_ERR_HAR_TOO_LARGE',
          `${err.code}: ${err.message}`,
        );
        return;
      } finally {
        rmSync(f);
      }
      assert.ok(Number.isFinite(site.bytes) && site.bytes <= HAR_LIMITS.maxTotalBytes + 1024 ** 2);
      for (const resources of site.origins.values())
        for (const r of resources) {
          assert.ok(Number.isInteger(r.status) && r.status >= 200 && r.status <= 599, `status ${r.status}`);
          assert.ok(r.thinkMs >= 0 && r.thinkMs <= HAR_LIMITS.maxThinkMs, `think ${r.thinkMs}`);
          assert.ok(r.body.length <= HAR_LIMITS.maxBodyBytes + 1024 ** 2, `body ${r.body.length}`);
          for (const [k, v] of r.headers) {
            validateHeaderName(k);
            validateHeaderValue(k, v);
          }
        }
    }),
    { numRuns: 400, seed: 39 },
  );
});

/** A HAR built to hurt the host: a 128 MiB body claimed, fields HTTP cannot carry, statuses 101, 999 and 1e6, a wait of 1e12 ms. */
const big = 128 * 1024 ** 2;
const html = `<!doctype html><html><head><link rel="stylesheet" href="/s.css"></head><body>
<script>fetch('/big.bin').then((r) => r.arrayBuffer())</script><img src="/101.png"><img src="/999.png"><img src="/1e6.png"></body></html>`;
const hostile = harOf([
  entry(
    'https://www.hostile.test/',
    {
      headers: [
        { name: 'content-type', value: 'text/html' },
        { name: 'x-split', value: 'a\r\nx-injected: 1' },
        { name: 'bad name', value: 'v' },
      ],
      content: { size: html.length, mimeType: 'text/html', text: html },
    },
    { _resourceType: 'document' },
  ),
  entry('https://www.hostile.test/s.css', {
    headers: [
      { name: 'content-type', value: 'text/css' },
      { name: 'x-lf', value: 'a\nb' },
    ],
    content: { size: 20, mimeType: 'text/css', text: 'body{color:#123456}' },
  }),
  entry(
    'https://www.hostile.test/big.bin',
    { content: { size: big, mimeType: 'application/octet-stream' } },
    { _resourceType: 'fetch' },
  ),
  entry('https://www.hostile.test/101.png', { status: 101 }),
  entry('https://www.hostile.test/999.png', { status: 999 }),
  entry('https://www.hostile.test/1e6.png', { status: 1_000_000 }),
  entry('https://www.hostile.test/never', {}, { timings: { wait: 1e12 } }),
]);

/** RSS of this process sampled every 20 ms while `f` runs: its peak above the level before. */
async function peakGrowth<T>(f: () => Promise<T>): Promise<{ value: T; growthBytes: number }> {
  globalThis.gc?.();
  const base = process.memoryUsage().rss;
  let peak = base;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  try {
    const value = await f();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { value, growthBytes: peak - base };
  } finally {
    clearInterval(timer);
  }
}

/** Serves `hostile` with `wire` and fetches /big.bin and /999.png (and /s.css's head) with a real peer. */
async function serveHostile(wire: ReplayProtocol): Promise<string[]> {
  const site = readHar(file(hostile), { maxBodyBytes: 256 * 1024 ** 2 });
  const resources = site.origins.get('www.hostile.test')!;
  const out: string[] = [];
  const o = await startOriginServers([{ host: 'www.hostile.test', wire, resources }], {
    ca: await ensureDevCertificates(),
  });
  try {
    const port = o.listeners[0]!.port;
    if (wire === 'h3') {
      const b = await loadBinding();
      const c = await b.connect({
        host: '127.0.0.1',
        port,
        servername: 'www.hostile.test',
        insecure: true,
        timeoutMs: 10_000,
      });
      for (const path of ['/big.bin', '/999.png']) {
        const got = await new Promise<string>((resolve, reject) => {
          let status = 0;
          let bytes = 0;
          const r = c.request(
            { ':method': 'GET', ':path': path, ':scheme': 'https', ':authority': 'www.hostile.test' },
            undefined,
            {
              headers: (s) => {
                status = s;
              },
              data: (n) => {
                bytes += n;
              },
              end: () => resolve(`${status} ${bytes}`),
              error: reject,
            },
          );
          if (r === 'stream-limit') reject(new Error('stream limit'));
        });
        out.push(`${wire} ${path} ${got}`);
      }
      await c.close();
      return out;
    }
    const curl = (path: string, more: string[] = []) =>
      run(
        'curl',
        [
          '-sS',
          '-k',
          wire === 'h2' ? '--http2' : '--http1.1',
          '--resolve',
          `www.hostile.test:${port}:127.0.0.1`,
          ...more,
          `https://www.hostile.test:${port}${path}`,
        ],
        30_000,
      );
    for (const path of ['/big.bin', '/999.png']) {
      const r = await curl(path, ['-o', '/dev/null', '-w', '%{http_code} %{size_download}']);
      assert.equal(r.code, 0, `${wire} ${path}: ${r.stderr}`);
      out.push(`${wire} ${path} ${r.stdout}`);
    }
    const css = await curl('/s.css', ['-D', '-']);
    assert.match(css.stdout, /content-type: text\/css/i, `${wire}: ${css.stdout}`);
    assert.doesNotMatch(css.stdout, /x-lf|x-injected/i, `${wire}: the field with a LF is left out`);
    assert.match(css.stdout, /body\{color:#123456\}/);
  } finally {
    await o.close();
  }
  return out;
}

test('the origins serve a hostile HAR to curl (h1, h2) and an h3 client: no crash, bad fields left out, a 128 MiB body streamed', async (t) => {
  await ensureDevCertificates();
  const h3 = await h3SkipReason();
  if (h3) t.diagnostic(`h3 left out: ${h3}`);
  for (const wire of ['http/1.1', 'h2', ...(h3 ? [] : ['h3'])] as ReplayProtocol[]) {
    const { value: fetched, growthBytes } = await peakGrowth(() => serveHostile(wire));
    t.diagnostic(
      `${wire}: RSS peak growth ${(growthBytes / 1024 ** 2).toFixed(0)} MiB: ${fetched.join(' | ')}`,
    );
    for (const line of fetched) {
      const [, path, status, bytes] = line.split(' ');
      if (path === '/big.bin') assert.equal(`${status} ${bytes}`, `200 ${big}`, `${wire} ${path}`);
      else assert.equal(status, '404', `${wire} ${path}: not recorded (status 999 is not served)`);
    }
    // The HTTP/3 binding admits a stream's writes faster than QUIC sends them and holds the rest
    // (measured: +119 MiB for a 128 MiB body, +250 MiB for 512 MiB), so only TCP's is bounded here.
    if (wire !== 'h3')
      assert.ok(
        growthBytes < 64 * 1024 ** 2,
        `${wire}: RSS grew ${(growthBytes / 1024 ** 2).toFixed(0)} MiB serving a 128 MiB body`,
      );
  }
});

test('replay over loopback of a hostile HAR: no crash, the bad fields and statuses are counted, a 128 MiB body costs no 128 MiB', async (t) => {
  const missing = chromiumMissing();
  if (missing) return t.skip(missing);
  // h3 is left out: its binding holds what it is given to send (the test above).
  const protocols = ['http/1.1', 'h2'] as const;
  const { value: r, growthBytes } = await peakGrowth(() =>
    replayPage({
      har: file(hostile),
      protocols: [...protocols],
      runs: 1,
      loadTimeoutMs: 30_000,
      harMaxBodyBytes: 256 * 1024 ** 2,
    }),
  );
  t.diagnostic(`RSS peak growth ${(growthBytes / 1024 ** 2).toFixed(0)} MiB over ${r.loads.length} loads`);
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  assert.equal(r.loads.length, 2 * protocols.length);
  for (const l of r.loads) {
    assert.equal(l.error, undefined, `${l.protocol} round ${l.round}: ${l.error}`);
    const q = l.requests.find((x) => x.url.endsWith('/big.bin'));
    assert.equal(q?.status, 200, `${l.protocol}: big.bin served`);
    assert.ok(q!.bytes >= big, `${l.protocol}: all ${big} bytes of big.bin arrived (${q!.bytes})`);
    for (const p of ['/101.png', '/999.png', '/1e6.png'])
      assert.equal(
        l.requests.find((x) => x.url.endsWith(p))?.status,
        404,
        `${l.protocol} ${p}: not recorded`,
      );
  }
  const warnings = r.warnings.join('\n');
  assert.match(warnings, /HAR header fields: 3 in 2 entries/);
  assert.match(warnings, /think time: 1 entries \(first: entry 6\)/);
  assert.equal(r.warnings.filter((w) => /skipped HAR entry \d: .*status/.test(w)).length, 3, warnings);
  assert.ok(
    growthBytes < 96 * 1024 ** 2,
    `RSS grew ${(growthBytes / 1024 ** 2).toFixed(0)} MiB serving a 128 MiB body`,
  );
});

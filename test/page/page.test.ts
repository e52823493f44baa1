// `h2lab page` end to end with real Chromium on pages h2lab generates and serves itself: record a
// generated multi-origin page, replay it under HTTP/1.1 and h2 (and through an emulated link when
// root is here), replay a DevTools-style HAR without bodies, and the 1 + 17 origin dilution case.
// Small pages and one kept load per setting keep the file well under 90 s on 2 cores.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { launchChromium, spkiPins } from '../../src/browser/index.ts';
import { isH2labError } from '../../src/core/index.ts';
import { parsePageResult } from '../../src/model/index.ts';
import { browserNetwork, missingPrerequisite } from '../../src/net/index.ts';
import { type Har, readHar, recordPage, replayPage } from '../../src/page/index.ts';
import { startSiteOrigins } from '../../src/page/origins-host.ts';
import { loadHtmlAssets, renderPageHtml, renderPageMarkdown } from '../../src/report/index.ts';
import { generateSite, parseSiteSpec, resolverRules } from '../../src/server/index.ts';
import { ensureDevCertificates } from '../../src/tls/index.ts';
import { chromiumMissing } from '../browser/helpers.ts';
import { h3SkipReason } from '../h3/helpers.ts';
import { startFixture } from '../helpers/fixture.ts';

const CHROMIUM = '/usr/bin/chromium';
let dir = '';
let harFile = '';
let har: Har | undefined;
const missing = chromiumMissing();

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'h2lab-page-test-'));
  if (missing) return;
  const rec = await recordPage({
    generate: parseSiteSpec('origins=3,resources=16,think=10ms,shared=2'),
    chromiumPath: CHROMIUM,
    timeoutMs: 30_000,
  });
  har = rec.har;
  harFile = join(dir, 'site.har');
  writeFileSync(harFile, JSON.stringify(rec.har));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Records a generated page into `name` under the test directory; returns the path. */
async function recordGenerated(spec: string, name: string): Promise<string> {
  const rec = await recordPage({ generate: parseSiteSpec(spec), chromiumPath: CHROMIUM, timeoutMs: 30_000 });
  const f = join(dir, name);
  writeFileSync(f, JSON.stringify(rec.har));
  return f;
}

/** The page's own requests (Chromium's favicon request aside), as a sorted URL list. */
const urls = (list: readonly string[]) =>
  [...new Set(list.filter((u) => !u.endsWith('/favicon.ico')))].sort();

test('record: a generated 3-origin page (2 on one server) becomes a HAR with bodies, initiators, priorities and think times', (t) => {
  if (missing) return t.skip(missing);
  const entries = har!.log.entries;
  assert.ok(entries.length >= 16, `16 resources recorded, got ${entries.length}`);
  assert.equal(new Set(entries.map((e) => new URL(e.request.url).hostname)).size, 3, 'three origins');
  const font = entries.find((e) => e.request.url.includes('/font-0.woff2'));
  assert.ok(font, 'the font (discovered by the stylesheet) is recorded');
  assert.match(font._initiator?.url ?? '', /style-0\.css$/, 'the font was initiated by the stylesheet');
  const xhr = entries.find((e) => e.request.url.includes('/data.json'));
  assert.match(xhr?._initiator?.url ?? '', /app-0\.js$/, 'the XHR was initiated by the script');
  assert.ok(
    entries.every((e) => e._priority),
    'every entry has a priority',
  );
  const img = entries.find((e) => e.request.url.includes('/img-0.svg'))!;
  assert.equal(img.response.content.size, 6000, 'image body recorded whole');
  const site = readHar(harFile);
  const doc = site.origins.get('www.h2lab.test')![0]!;
  assert.equal(doc.thinkMs, 10, 'the document think time comes from its Server-Timing');
  assert.ok(!site.inferred.some((i) => i.startsWith('bodies')), `nothing synthesised: ${site.inferred}`);
  // www and o1 share a server (one certificate naming both): Chromium coalesced them when recording.
  assert.deepEqual(
    site.shared.map((g) => [...g].sort()),
    [['o1.h2lab.test', 'www.h2lab.test']],
    'the coalesced hosts are found in the HAR',
  );
});

test('replay on loopback: h1 and h2 reproduce the recorded request graph (URLs, sizes, initiators, coalescing)', async (t) => {
  if (missing) return t.skip(missing);
  const r = parsePageResult(
    JSON.parse(
      JSON.stringify(
        await replayPage({ har: harFile, protocols: ['http/1.1', 'h2'], runs: 1, chromiumPath: CHROMIUM }),
      ),
    ),
  );
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  // A result saved by version 2 (its placement a word) still reads, as the placement it meant.
  const v2 = { ...r, version: 2, replayServer: { ...r.replayServer, placement: 'loopback' } };
  assert.equal(parsePageResult(JSON.parse(JSON.stringify(v2))).replayServer.placement, 'in-process');
  const v2link = { ...v2, replayServer: { ...r.replayServer, placement: 'namespace' } };
  assert.deepEqual(parsePageResult(JSON.parse(JSON.stringify(v2link))).replayServer.placement, {
    link: 'link',
  });
  assert.deepEqual(
    r.misses.filter((m) => !m.endsWith('/favicon.ico')),
    [],
    'every request matched a recorded entry',
  );
  const recorded = urls(har!.log.entries.map((e) => e.request.url));
  const entry = new Map(har!.log.entries.map((e) => [e.request.url, e]));
  for (const l of r.loads) {
    assert.equal(l.error, undefined, `${l.protocol} round ${l.round}: ${l.error}`);
    assert.deepEqual(
      urls(l.requests.map((q) => q.url)),
      recorded,
      `${l.protocol}: the same URLs as recorded`,
    );
    for (const q of l.requests) {
      const e = entry.get(q.url);
      if (!e || q.url.endsWith('/favicon.ico')) continue;
      assert.equal(q.initiator, e._initiator?.url, `${l.protocol} ${q.url}: initiator as recorded`);
      // Encoded bytes are the body plus the response head (a few hundred bytes).
      const size = e.response.content.size;
      assert.ok(
        q.bytes >= size && q.bytes < size + 2000,
        `${l.protocol} ${q.url}: ${q.bytes} bytes, body ${size}`,
      );
    }
    const conns = (host: string) =>
      new Set(l.requests.filter((q) => q.host === host && q.connectionId).map((q) => q.connectionId));
    const www = conns('www.h2lab.test');
    const together = [...conns('o1.h2lab.test')].some((c) => www.has(c));
    assert.equal(together, l.protocol === 'h2', `${l.protocol}: www and o1 coalesced only over h2`);
    const want = l.protocol;
    assert.ok(
      l.requests.every((q) => q.protocol === want),
      `${l.protocol} loads spoke ${want}`,
    );
    assert.ok(l.metrics && l.metrics.loadMs > 0 && l.metrics.lastByteMs > 0, 'page timings measured');
  }
  const h1 = r.summaries.find((s) => s.protocol === 'http/1.1')!;
  const h2 = r.summaries.find((s) => s.protocol === 'h2')!;
  // Credentialed and anonymous (CORS: fonts, fetch) requests use separate pools of 6 each.
  for (const [h, n] of Object.entries(h1.connectionsPerOrigin))
    assert.ok(n <= 12, `h1 ${h}: ${n} connections`);
  for (const [h, n] of Object.entries(h2.connectionsPerOrigin))
    assert.ok(n <= 2, `h2 ${h}: ${n} connections`);
  assert.equal(h2.waitedBehindRequests, 0, 'no h2 request counted as waiting behind another');
  assert.ok(r.verdict.length >= 1 && r.comparisons.length === 1, `a verdict: ${r.verdict.join(' | ')}`);
  assert.match(renderPageHtml(r, loadHtmlAssets()), /<svg/, 'report.html has waterfalls');
  assert.match(renderPageMarkdown(r), /## Verdict/, 'report.md has the verdict');
});

test('a DevTools-style HAR without bodies replays with bodies synthesised, and says so', async (t) => {
  if (missing) return t.skip(missing);
  const stripped: Har = JSON.parse(JSON.stringify(har));
  stripped.log.creator = { name: 'WebInspector', version: '537.36' };
  for (const e of stripped.log.entries) {
    delete e.response.content.text;
    delete e.response.content.encoding;
  }
  const f = join(dir, 'devtools.har');
  writeFileSync(f, JSON.stringify(stripped));
  const r = await replayPage({ har: f, protocols: ['h2'], runs: 1, chromiumPath: CHROMIUM });
  assert.equal(r.har.source, 'devtools');
  assert.ok(
    r.har.inferred.some((i) => i.includes('synthesised')),
    `inferred: ${r.har.inferred}`,
  );
  const served = urls(r.loads.at(-1)!.requests.map((q) => q.url));
  const recorded = urls(har!.log.entries.map((e) => e.request.url));
  assert.deepEqual(served, recorded, 'the synthesised document asks for every recorded URL');
  assert.match(renderPageMarkdown(r), /Inferred: bodies/, 'the report says bodies were synthesised');
});

test("a HAR Playwright recorded without bodies (recordHar content 'omit') replays the same URLs", async (t) => {
  if (missing) return t.skip(missing);
  const spec = parseSiteSpec('origins=2,resources=12');
  const site = generateSite(spec);
  // Where page record puts them: in Chromium's own namespace as root.
  const net = await browserNetwork(undefined);
  const origins = await startSiteOrigins(spec, await ensureDevCertificates(), net.serverNamespace);
  const f = join(dir, 'playwright.har');
  try {
    const b = await launchChromium({
      executablePath: CHROMIUM,
      spki: origins.certPems.flatMap(spkiPins),
      extraFlags: [`--host-resolver-rules=${resolverRules(origins.listeners, origins.address)}`],
      ...(net.netns ? { netns: net.netns } : {}),
    });
    try {
      const ctx = await b.context.browser()!.newContext({ recordHar: { path: f, content: 'omit' } });
      const p = await ctx.newPage();
      await p.goto(site.url, { waitUntil: 'load' });
      await p.waitForTimeout(300);
      await ctx.close();
    } finally {
      await b.close();
    }
  } finally {
    await origins.close();
    await net.close();
  }
  const r = await replayPage({ har: f, protocols: ['h2'], runs: 1, chromiumPath: CHROMIUM });
  assert.equal(r.har.source, 'playwright');
  assert.ok(
    r.har.inferred.some((i) => i.startsWith('bodies')),
    `inferred: ${r.har.inferred}`,
  );
  const recorded = urls(site.origins.flatMap((o) => o.resources.map((x) => `https://${o.host}${x.path}`)));
  assert.deepEqual(
    urls(r.loads.at(-1)!.requests.map((q) => q.url)),
    recorded,
    'every generated URL replayed',
  );
});

test('1 first-party + 17 third-party origins with only the first on h2: reported as diluted with the share', async (t) => {
  if (missing) return t.skip(missing);
  const f = await recordGenerated('origins=18,resources=40,think=5ms,image=1500', 'many.har');
  const r = await replayPage({
    har: f,
    protocols: ['http/1.1', 'h2'],
    h2Origins: ['www.h2lab.test'],
    runs: 1,
    chromiumPath: CHROMIUM,
  });
  const h2 = r.summaries.find((s) => s.protocol === 'h2')!;
  assert.equal(Object.values(h2.originProtocols).filter((p) => p === 'h2').length, 1, 'one origin on h2');
  const last = r.loads.filter((l) => l.protocol === 'h2').at(-1)!;
  assert.ok(
    last.requests.filter((q) => q.host !== 'www.h2lab.test').every((q) => q.protocol === 'http/1.1'),
    'third parties stayed on HTTP/1.1',
  );
  const line = r.verdict.find((v) => v.startsWith('Diluted'));
  assert.ok(line, `a dilution sentence: ${r.verdict.join(' | ')}`);
  assert.match(line, /only 1 of 18 origins \(www\.h2lab\.test\) were on h2, carrying \d+% of the requests/);
});

test('replay through an emulated link with 3% loss: the link and its drops are recorded, every load pays its round trips', async (t) => {
  if (missing) return t.skip(missing);
  const why = missingPrerequisite(true);
  if (why) return t.skip(`no emulated link here: ${why}`);
  const h3 = await h3SkipReason();
  if (h3) t.diagnostic(`h3 left out: ${h3}`);
  const r = await replayPage(
    {
      har: harFile,
      protocols: h3 ? ['http/1.1', 'h2'] : ['http/1.1', 'h2', 'h3'],
      runs: 1,
      chromiumPath: CHROMIUM,
    },
    { link: { profile: { rttMs: 40, loss: 0.03 }, backend: 'relay' } },
  );
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  assert.equal(r.link?.rttMs, 40, 'the link is recorded');
  if (!h3) {
    // The origins run in the link's namespace, where QUIC's replies leave from the address dialled.
    for (const l of r.loads.filter((x) => x.protocol === 'h3'))
      assert.ok(
        l.requests.every((q) => q.protocol === 'h3' && !q.failed),
        `every h3 request spoke h3: ${JSON.stringify(l.requests.filter((q) => q.protocol !== 'h3' || q.failed).slice(0, 3))}`,
      );
  }
  const dropped = r.loads.reduce((n, l) => n + (l.linkDrops?.loss ?? 0), 0);
  assert.ok(dropped > 0, `the link's drops are counted per load: ${dropped}`);
  assert.ok(
    r.verdict.some((v) =>
      /dropped 3\.0% of packets \(median per load: HTTP\/1\.1 \d+ on \d+ connections/.test(v),
    ),
    `a loss sentence with the drops: ${r.verdict.join(' | ')}`,
  );
  for (const l of r.loads) {
    // TCP handshake, TLS 1.3 handshake, then the request: three round trips before the first byte;
    // QUIC's handshake is one (no Retry), so h3 has two. (No upper bound: a lost handshake packet
    // waits for a retransmission timeout, a second or more.)
    const rtts = l.protocol === 'h3' ? 2 : 3;
    assert.ok(l.metrics!.ttfbMs >= rtts * 40 * 0.95, `${l.protocol}: first byte at ${l.metrics!.ttfbMs} ms`);
  }
});

test('a page whose HTML takes 1.5 s on the server is reported as bound by its think time', async (t) => {
  if (missing) return t.skip(missing);
  const f = await recordGenerated('origins=1,resources=8,think=1500ms', 'slow.har');
  const r = await replayPage({ har: f, protocols: ['http/1.1', 'h2'], runs: 1, chromiumPath: CHROMIUM });
  for (const l of r.loads)
    assert.ok(l.metrics!.ttfbMs >= 1500, `${l.protocol}: first byte after the think time`);
  assert.ok(
    r.verdict.some((v) => /bound by its server think time: the HTML takes 1,500 ms/.test(v)),
    `a think-time sentence: ${r.verdict.join(' | ')}`,
  );
});

test('record a URL (the fixture tiles page on 127.0.0.1, a private CA) and replay its IP-literal origin', async (t) => {
  if (missing) return t.skip(missing);
  const srv = await startFixture({ poolSize: 64, tileMs: 5 });
  let f = '';
  try {
    const rec = await recordPage({
      url: `${srv.tlsUrl}/page/tiles.html?n=8`,
      chromiumPath: CHROMIUM,
      timeoutMs: 30_000,
      trustCert: [srv.caFile!],
    });
    assert.ok(rec.requests >= 9, `the page and its 8 tiles: ${rec.requests}`);
    f = join(dir, 'fixture.har');
    writeFileSync(f, JSON.stringify(rec.har));
  } finally {
    await srv.close(0);
  }
  // The fixture is gone: every response now comes from the replay listener the rules send 127.0.0.1 to.
  const r = await replayPage({ har: f, protocols: ['http/1.1', 'h2'], runs: 1, chromiumPath: CHROMIUM });
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  for (const l of r.loads)
    assert.ok(
      l.requests.filter((q) => q.url.includes('/tiles/')).every((q) => q.status === 200),
      `${l.protocol}: every tile answered by the replay`,
    );
});

test('a file that is not a HAR is a usage error naming the file', () => {
  const f = join(dir, 'not.har');
  writeFileSync(f, '{"log": {}}');
  assert.throws(
    () => readHar(f),
    (e: unknown) => isH2labError(e, 'H2LAB_ERR_HAR_INVALID') && e.message.includes(f) && e.exitCode === 2,
    'H2LAB_ERR_HAR_INVALID with exit 2',
  );
  assert.ok(readFileSync(f, 'utf8').length > 0, 'file still there');
});

// Two h2lab runs at once: a page replay on loopback while another link is created and removed beside
// it. Every link adds and removes a veth (and its addresses) in the host's namespace, and Chromium
// aborts what is in flight there with net::ERR_NETWORK_CHANGED; in its private namespace it sees none
// of it. Every attempt counts: a load repeated for a network change is a failure here too.
import assert from 'node:assert/strict';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { PageResult } from '../../src/model/index.ts';
import { type LinkOptions, missingPrerequisite } from '../../src/net/index.ts';
import { recordPage, replayPage } from '../../src/page/index.ts';
import { renderPageMarkdown } from '../../src/report/index.ts';
import { parseSiteSpec } from '../../src/server/index.ts';
import { chromiumMissing } from '../browser/helpers.ts';
import { h3SkipReason } from '../h3/helpers.ts';
import { h2lab } from '../helpers/cli.ts';
import { churnLinks } from '../net/helpers.ts';

const CHROMIUM = '/usr/bin/chromium';
const dir = mkdtempSync(join(tmpdir(), 'h2lab-isolation-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const missing = chromiumMissing() ?? missingPrerequisite(true);
let harFile = '';

before(async () => {
  if (missing) return;
  const rec = await recordPage({
    generate: parseSiteSpec('origins=2,resources=40,think=20ms'),
    chromiumPath: CHROMIUM,
    timeoutMs: 30_000,
  });
  assert.match(rec.netns ?? '', /^h2lab-\d+-p\d+$/, 'the generated page was recorded in a private namespace');
  harFile = join(dir, 'site.har');
  writeFileSync(harFile, JSON.stringify(rec.har));
});

/**
 * Replays h1 and h2 (`runs` kept loads each) while links come and go beside it, and asserts that no
 * request failed and no load was repeated. Returns the result.
 */
async function replayBesideChurn(runs: number, link?: LinkOptions): Promise<PageResult> {
  let done = false;
  const churn = churnLinks(() => done, 200);
  const r = await replayPage(
    { har: harFile, protocols: ['http/1.1', 'h2'], runs, chromiumPath: CHROMIUM },
    link ? { link } : {},
  ).finally(() => {
    done = true;
  });
  const links = await churn;
  assert.ok(links >= 3, `the other links came and went during the replay (${links})`);
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  const failed = r.loads.flatMap((l) => l.requests).filter((q) => q.failed);
  const repeated = r.warnings.filter((w) => w.includes('ERR_NETWORK_CHANGED'));
  assert.deepEqual(
    { failed: failed.map((q) => `${q.url} ${q.failed}`), repeated },
    { failed: [], repeated: [] },
    `${links} links came and went during ${r.loads.length} loads`,
  );
  assert.equal(r.loads.length, 2 * (runs + 1), 'one warm-up and the kept loads per setting, none repeated');
  return r;
}

test('page replay on loopback beside another link coming and going: no request fails, no load is repeated', async (t) => {
  if (missing) return t.skip(`needs ${missing}`);
  const r = await replayBesideChurn(3);
  const netns = r.environment.chromium.netns ?? '';
  assert.match(netns, /^h2lab-\d+-p\d+$/, 'Chromium ran in a private namespace');
  // The origins ran there too, and the result and its report say so, not "loopback".
  assert.deepEqual(r.replayServer.placement, { namespace: netns });
  const md = renderPageMarkdown(r);
  assert.ok(md.includes(`in the private namespace ${netns} with Chromium`), md);
  assert.doesNotMatch(md, /on this host's loopback,/);
});

test('page replay behind a link beside another link coming and going: Chromium on its own client side', async (t) => {
  if (missing) return t.skip(`needs ${missing}`);
  const r = await replayBesideChurn(2, { profile: 'relay', overrides: { rttMs: 10 } });
  assert.match(
    r.environment.chromium.netns ?? '',
    /^h2lab-\d+-\d+c$/,
    "Chromium ran in the link's client namespace",
  );
  assert.deepEqual(r.replayServer.placement, { link: r.link?.profile });
  assert.ok(renderPageMarkdown(r).includes(`in the server namespace of the link (${r.link?.profile})`));
});

/** Every request of an h3 replay that failed or did not speak h3, `url protocol failed`. */
function offH3(
  loads: ReadonlyArray<{ requests: ReadonlyArray<{ url: string; protocol: string; failed?: string }> }>,
) {
  return loads
    .flatMap((l) => l.requests.filter((q) => q.protocol !== 'h3' || q.failed))
    .map((q) => `${q.url} ${q.protocol} ${q.failed ?? ''}`);
}

test('page replay over h3 in its private namespace: every request over h3, none refused for its size', async (t) => {
  if (missing) return t.skip(`needs ${missing}`);
  const h3 = await h3SkipReason();
  if (h3) return t.skip(`needs the HTTP/3 binding: ${h3}`);
  // Bound to 127.0.0.1 there, quiche probed up to loopback's MTU: 17 of 882 requests failed
  // (QUIC_PACKET_TOO_LARGE, ERR_CONNECTION_CLOSED) over 22 loads; bound to the unspecified address, 0.
  const r = await replayPage({ har: harFile, protocols: ['h3'], runs: 6, chromiumPath: CHROMIUM });
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  assert.match(r.environment.chromium.netns ?? '', /^h2lab-\d+-p\d+$/);
  assert.deepEqual(offH3(r.loads), []);
  assert.ok(!r.warnings.some((w) => w.includes('QUIC_PACKET_TOO_LARGE')), r.warnings.join('\n'));
});

test('page replay over h3 without root (uid 65534): the host namespace, and the result says why', async (t) => {
  if (chromiumMissing()) return t.skip(`needs ${chromiumMissing()}`);
  const h3 = await h3SkipReason();
  if (h3) return t.skip(`needs the HTTP/3 binding: ${h3}`);
  if (process.getuid?.() !== 0) return t.skip('needs root to start the CLI as uid 65534');
  const home = join(dir, 'nobody');
  mkdirSync(home);
  chownSync(home, 65534, 65534);
  chmodSync(dir, 0o755);
  chmodSync(harFile, 0o644);
  const run = await h2lab(
    ['page', 'replay', harFile, '--protocols', 'h3', '--runs', '3', '--json', '-', '--quiet'],
    {
      uid: 65534,
      gid: 65534,
      env: { ...process.env, HOME: home },
      timeoutMs: 120_000,
    },
  );
  assert.ok(run.code === 0 || run.code === 1, run.stderr.slice(-2000));
  const r = JSON.parse(run.stdout) as PageResult;
  assert.equal(r.environment.chromium.netns, undefined);
  assert.match(r.environment.chromium.hostNetwork ?? '', /needs root/);
  assert.equal(r.replayServer.placement, 'in-process');
  assert.match(renderPageMarkdown(r), /in this process on this host's loopback/);
  assert.ok(r.warnings.some((w) => w.startsWith("Chromium shares the host's network view")));
  assert.ok(
    r.warnings.some((w) => w.includes('QUIC_PACKET_TOO_LARGE')),
    'the h3-on-loopback warning',
  );
  // What Chromium refused, if anything: measured, not asserted (a probe meets a connection or not).
  t.diagnostic(`off h3 without root: ${JSON.stringify(offH3(r.loads))}`);
});

// Two h2lab runs at once: a page replay on loopback while another link is created and removed beside
// it. Every link adds and removes a veth (and its addresses) in the host's namespace, and Chromium
// aborts what is in flight there with net::ERR_NETWORK_CHANGED; in its private namespace it sees none
// of it. Every attempt counts: a load repeated for a network change is a failure here too.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type LinkOptions, missingPrerequisite } from '../../src/net/index.ts';
import { recordPage, replayPage } from '../../src/page/index.ts';
import { parseSiteSpec } from '../../src/server/index.ts';
import { chromiumMissing } from '../browser/helpers.ts';
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
  harFile = join(dir, 'site.har');
  writeFileSync(harFile, JSON.stringify(rec.har));
});

/**
 * Replays h1 and h2 (`runs` kept loads each) while links come and go beside it, and asserts that no
 * request failed and no load was repeated. Returns Chromium's namespace.
 */
async function replayBesideChurn(runs: number, link?: LinkOptions): Promise<string | undefined> {
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
  return r.environment.chromium.netns;
}

test('page replay on loopback beside another link coming and going: no request fails, no load is repeated', async (t) => {
  if (missing) return t.skip(`needs ${missing}`);
  const netns = await replayBesideChurn(3);
  assert.match(netns ?? '', /^h2lab-\d+-p\d+$/, 'Chromium ran in a private namespace');
});

test('page replay behind a link beside another link coming and going: Chromium on its own client side', async (t) => {
  if (missing) return t.skip(`needs ${missing}`);
  const netns = await replayBesideChurn(2, { profile: 'relay', overrides: { rttMs: 10 } });
  assert.match(netns ?? '', /^h2lab-\d+-\d+c$/, "Chromium ran in the link's client namespace");
});

// Two h2lab runs at once: a browser measurement against the fixture while another link is created
// and removed beside it. Every link adds and removes a veth (and its addresses) in the host's
// namespace, and Chromium aborts what is in flight there with net::ERR_NETWORK_CHANGED; in its
// private namespace, with the fixture beside it, it sees none of it. Every attempt counts: a burst
// repeated for a network change is a failure here too.
import assert from 'node:assert/strict';
import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { measureBrowser } from '../../src/browser/index.ts';
import type { BrowserResult } from '../../src/model/index.ts';
import { missingPrerequisite } from '../../src/net/index.ts';
import { h3SkipReason } from '../h3/helpers.ts';
import { h2lab } from '../helpers/cli.ts';
import { churnLinks } from '../net/helpers.ts';
import { chromiumMissing } from './helpers.ts';

const missing = chromiumMissing() ?? missingPrerequisite(true);

/** Every request Chromium reported as failed, burst and cancellation runs, repeated ones included. */
function failures(r: BrowserResult): string[] {
  const bursts = [...r.burst.runs, ...(r.burst.repeated ?? [])].flatMap((b) =>
    b.requests.filter((q) => q.failed).map((q) => `${b.target} burst ${b.index}: ${q.url} ${q.failed}`),
  );
  const cancels = r.cancel.flatMap((c) =>
    Object.entries(c.browserFailures)
      .filter(([why]) => why !== 'net::ERR_ABORTED')
      .map(([why, n]) => `${c.target} cancel ${c.index}: ${n} × ${why}`),
  );
  return [...bursts, ...cancels];
}

test('browser beside another link coming and going: no request fails, no run is repeated', async (t) => {
  if (missing) return t.skip(`needs ${missing}`);
  let done = false;
  const churn = churnLinks(() => done, 200);
  const r = await measureBrowser({
    count: 121,
    runs: 6,
    cancelRuns: 1,
    cancelAfterMs: 150,
    fixture: { poolSize: 8, tileMs: 20, maxConcurrentStreams: 256 },
  }).finally(() => {
    done = true;
  });
  const links = await churn;
  assert.ok(links >= 3, `the other links came and went during the measurement (${links})`);
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  assert.match(r.environment.chromium.netns ?? '', /^h2lab-\d+-p\d+$/, 'Chromium ran in a private namespace');
  assert.equal(r.environment.chromium.hostNetwork, undefined);
  const repeated = r.warnings.filter((w) => w.includes('ERR_NETWORK_CHANGED'));
  assert.deepEqual(
    { failed: failures(r), repeated },
    { failed: [], repeated: [] },
    `${links} links came and went during ${r.burst.runs.length} bursts`,
  );
  assert.equal(r.burst.runs.length, 6 * r.targets.length, 'every burst once, none repeated');
  // The server's view crossed into the namespace too (its metrics over the fixture's IPC channel).
  assert.ok(
    r.burst.runs.every((b) => (b.server?.requests ?? 0) >= 121),
    'the fixture counted every burst',
  );
});

test('browser --h3 with the fixture in the private namespace: every h3 request over h3, none failed', async (t) => {
  if (missing) return t.skip(`needs ${missing}`);
  const h3 = await h3SkipReason();
  if (h3) return t.skip(`needs the HTTP/3 binding: ${h3}`);
  const r = await measureBrowser({ h3: true, count: 60, runs: 3, cancel: false, control: false });
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  assert.match(r.environment.chromium.netns ?? '', /^h2lab-\d+-p\d+$/);
  const quic = r.burst.runs.filter((b) => b.target === 'https-h3').flatMap((b) => b.requests);
  assert.equal(quic.length, 3 * 60);
  assert.deepEqual(
    quic.filter((q) => q.protocol !== 'h3' || q.failed).map((q) => `${q.protocol} ${q.failed ?? ''}`),
    [],
  );
});

test('browser with origins given: Chromium in the host namespace, and the result says why', async (t) => {
  if (chromiumMissing()) return t.skip(`needs ${chromiumMissing()}`);
  const r = await measureBrowser({ origins: ['http://127.0.0.1:9'], runs: 2, count: 1, cancel: false });
  assert.equal(r.environment.chromium.netns, undefined);
  assert.match(r.environment.chromium.hostNetwork ?? '', /origins given/);
  assert.ok(r.warnings.some((w) => w.startsWith("Chromium shares the host's network view")));
});

test('h2lab browser without root (uid 65534): the host namespace, one line saying so and why', async (t) => {
  if (chromiumMissing()) return t.skip(`needs ${chromiumMissing()}`);
  if (process.getuid?.() !== 0) return t.skip('needs root to start the CLI as uid 65534');
  const home = mkdtempSync(join(tmpdir(), 'h2lab-browser-nobody-'));
  try {
    chmodSync(home, 0o755);
    chownSync(home, 65534, 65534);
    const run = await h2lab(
      ['browser', '--runs', '2', '--count', '8', '--no-cancel', '--no-control', '--quiet'],
      {
        uid: 65534,
        gid: 65534,
        env: { ...process.env, HOME: home },
        timeoutMs: 90_000,
      },
    );
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const lines = run.stdout.split('\n').filter((l) => l.includes("Chromium shares the host's network view"));
    assert.equal(lines.length, 1, run.stdout);
    assert.match(lines[0]!, /a namespace of its own needs root/);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

// The verdict names what a small queue did to the QUIC server's first flight, with the run's own
// numbers: compare h2 against h3 for one 2 MiB download through a 40 ms / 50 Mbit/s link (queue one
// BDP, 250 kB) and on loopback. The fixture's binding starts quiche at 1,000 packets, so the link's
// queue drops hundreds of the server's packets; the verdict must say how many, the server's initial
// window read from its qlog, and the packets it declared lost — and say nothing of the kind on
// loopback, where nothing was dropped.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runComparison } from '../../src/compare/index.ts';
import { formatBytes } from '../../src/core/index.ts';
import type { CompareResult } from '../../src/model/index.ts';
import { compareSettings } from '../../src/report/settings.ts';
import { testHome } from '../helpers/fixture.ts';
import { netSkipReason } from '../net/helpers.ts';
import { h3SkipReason } from './helpers.ts';

const skip = netSkipReason() ?? (await h3SkipReason());
if (skip) console.log(`# h3 queue-drop verdict test skipped: ${skip}`);

const SIZE = 2 * 1024 * 1024;

async function compareBulk(qlogDir?: string): Promise<CompareResult> {
  testHome();
  const c = await runComparison({
    protocols: ['h2', 'h3'],
    baseline: 'h2',
    burst: [1],
    runs: 2,
    warmupRuns: 0,
    net: ['loopback'],
    links: { rttMs: [40], rateBitsPerSec: [50e6], congestionControl: ['cubic'], backend: 'relay' },
    workloads: [{ id: 'bulk', label: '2 MiB', paths: [`/bytes/${SIZE}`] }],
    ...(qlogDir ? { qlogDir } : {}),
  });
  const r = await c.done;
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  return r;
}

describe('the verdict names the queue drops of a QUIC first flight', { skip, timeout: 300_000 }, () => {
  it('behind 40 ms / 50 Mbit/s: drops, initial window and losses of this run; none on loopback', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'h2lab-queue-drops-'));
    try {
      const r = await compareBulk(dir);
      const linked = r.cells.find((c) => c.protocol === 'h3' && c.net !== 'loopback')!;
      assert.ok(linked, JSON.stringify(r.cells.map((c) => c.net)));
      const all = (r.verdict?.workloads ?? []).flatMap((w) => w.paragraphs);
      const quic = all.filter((p) => p.includes('Mechanism (QUIC'));
      assert.equal(
        quic.length,
        1,
        `one QUIC mechanism paragraph, for the linked cell: ${JSON.stringify(all)}`,
      );
      const text = quic[0]!;
      const runs = linked.runs.slice(linked.warmupRuns).filter((x) => x.error === undefined);
      // The numbers are one run's: its queue drops, its server's initial window and packets lost.
      const run = runs.find((x) =>
        text.includes(
          `dropped ${x.connections.quic!.linkDrops!.queuePackets.toLocaleString('en-US')} of h3's`,
        ),
      );
      assert.ok(run, `the queue drops quoted are a run's: ${text}`);
      const drops = run.connections.quic!.linkDrops!.queuePackets;
      assert.ok(drops >= 100, `the queue dropped ${drops} of the server's packets`);
      const server = run.connections.quic!.server!;
      const initial = Math.max(...server.perConnection.map((c) => c.initialCwndBytes ?? 0));
      assert.ok(initial > 250_000, `the server's initial window ${initial} B, read from its qlog`);
      assert.ok(
        text.includes(`initial congestion window was ${formatBytes(initial)} (read from its qlog)`),
        text,
      );
      assert.match(text, /× TCP's 10 segments/);
      assert.match(text, /so its first round trip overran the queue/);
      assert.ok(text.includes(`declared ${server.packetsLost!.toLocaleString('en-US')} packets lost`), text);
      assert.match(text, /h3's times in this run include that cost/);
      const qlogRow = compareSettings(r).find((x) => x.name === 'qlog');
      assert.match(qlogRow?.value ?? '', /the fixture's server wrote its side while sending, which slows it/);
      // Loopback: nothing dropped, nothing said (the one QUIC paragraph is the linked cell's).
      assert.ok(text.startsWith(`On ${linked.net}:`), text);
      assert.ok(
        !all.some((p) => p.startsWith('On loopback') && p.includes('full queue')),
        JSON.stringify(all),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('without --qlog: the drops are said, the cause is not, and --qlog is suggested', async () => {
    const r = await compareBulk();
    const all = (r.verdict?.workloads ?? []).flatMap((w) => w.paragraphs);
    const quic = all.filter((p) => p.includes('Mechanism (QUIC'));
    assert.equal(quic.length, 1, JSON.stringify(all));
    assert.match(quic[0]!, /the link's full queue dropped [\d,]+ of h3's UDP packets/);
    assert.match(quic[0]!, /initial congestion window was not read: .*--qlog DIR/);
    assert.doesNotMatch(quic[0]!, /so its first round trip overran|declared [\d,]+ packets lost/);
  });
});

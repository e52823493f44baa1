/**
 * A comparison split into shards and run as child processes on this machine against the fixture
 * server over TLS: every run's shards merged exactly, judged by the engine's own analysis; and a shard
 * that misses a slot's start ends the comparison there, with the runs before it kept.
 */
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { test } from 'node:test';
import { keptRuns } from '../../src/compare/index.ts';
import type { MetricsSnapshot } from '../../src/server/index.ts';
import {
  mergeCompareShards,
  planCompareShards,
  runComparePlanLocally,
  runCompareShard,
  startClockServer,
} from '../../src/shard/index.ts';
import { startFixture } from '../helpers/fixture.ts';

const served = (m: MetricsSnapshot): number =>
  Object.values(m.requests).reduce((n, row) => n + Object.values(row).reduce((a, b) => a + b, 0), 0);

test('h1 against h2 over 2 processes: each run is the sum of its shards, the verdict the engine’s', async () => {
  const srv = await startFixture({});
  const clock = await startClockServer();
  try {
    const input = {
      url: `${srv.tlsUrl}/bytes/1024`,
      protocols: ['h1', 'h2'],
      concurrency: [4],
      runs: 3,
      durationMs: 300,
      tls: { ca: srv.caFile! },
    };
    srv.resetMetrics();
    // Generous lead and grace: children load through tsx, slowly on a busy machine; this test is
    // about the split and the merge, the lag is only recorded.
    const { result, shards, exitCodes, stderr, plan } = await runComparePlanLocally(
      (ready) =>
        planCompareShards(input, {
          shards: 2,
          startAtEpochMs: ready + 4000,
          startGraceMs: 2000,
          slotGapMs: 800,
          clockUrl: clock.url,
        }),
      2,
    );
    assert.deepEqual(exitCodes, [0, 0], stderr.join('\n'));
    assert.equal(result.status, 'complete', JSON.stringify(result.error));
    assert.equal(plan.slots.length, 6);
    for (const s of shards) {
      assert.equal(s.runs.length, 6, `shard ${s.index} ran every slot`);
      assert.equal(s.stopped, undefined);
      assert.equal(s.clock.source, 'coordinator');
    }
    let total = 0;
    for (const [k, slot] of plan.slots.entries()) {
      const cell = result.cells[slot.cell]!;
      const run = cell.runs[slot.round]!;
      const parts = shards.map((s) => s.runs.find((r) => r.slot === k)!.result);
      assert.equal(
        run.counts.total,
        parts[0]!.counts.total + parts[1]!.counts.total,
        `${cell.id} round ${slot.round}: the merged count is the shards' sum`,
      );
      assert.equal(run.latencyMs.count, parts[0]!.latencyMs.count + parts[1]!.latencyMs.count);
      assert.equal(run.latencyMs.max, Math.max(parts[0]!.latencyMs.max, parts[1]!.latencyMs.max));
      assert.equal(run.options.concurrency, 4, 'the whole run’s concurrency: 2 + 2');
      assert.deepEqual(
        parts.map((p) => p.options.shard),
        [
          { index: 0, count: 2 },
          { index: 1, count: 2 },
        ],
      );
      // The shards started this run together, each at the slot's start on the reference clock.
      for (const s of shards) {
        const b = s.runs.find((r) => r.slot === k)!.barrier;
        assert.equal(b.startAtEpochMs, plan.startAtEpochMs + slot.atMs);
        assert.ok(b.lagMs! >= 0 && b.lagMs! < plan.startGraceMs, `lag ${b.lagMs}`);
      }
      total += run.counts.total;
    }
    assert.equal(served(srv.metrics()), total, 'the server saw every request once');
    const h2 = result.cells.find((c) => c.protocol === 'h2')!;
    assert.equal(h2.runs[1]!.transport.connections, 2, 'one session per shard');
    assert.equal(result.cells.find((c) => c.protocol === 'h1')!.runs[1]!.transport.connections, 4);
    assert.equal(keptRuns(h2).length, 2);
    assert.ok(result.comparisons.some((c) => c.protocol === 'h2' && c.baseline === 'h1'));
    assert.ok(result.verdict && result.verdict.workloads.length === 1);
    assert.match(
      result.verdict.caveats.join(' '),
      /Run as 2 shards.*h2 ran its fixed connection count once per shard/,
    );
    assert.equal(result.sharding?.runs.length, 6);
    assert.equal(result.sharding?.clock.reference, 'coordinator');
    // Two processes here, the fixture server in this one: said, with the cores they shared.
    assert.deepEqual(result.sharding?.local, { processes: 2, cpus: availableParallelism() });
    assert.match(
      result.verdict.caveats.join(' '),
      /The shards were 2 processes of one machine with \d+ cores, the target on it too/,
    );
  } finally {
    await clock.close();
    await srv.close();
  }
});

test('a slot reached after its start plus the grace ends every shard there; the runs before it are merged', async () => {
  const srv = await startFixture({});
  try {
    // No gap and no grace: the second run's connections open after the first run ended, so each
    // shard reaches the second slot late.
    const plan = planCompareShards(
      {
        url: `${srv.tlsUrl}/bytes/64`,
        protocols: ['h1', 'h2'],
        concurrency: [2],
        runs: 2,
        warmupRuns: 0,
        durationMs: 200,
        tls: { ca: srv.caFile! },
      },
      { shards: 2, startAtEpochMs: Date.now() + 1500, startGraceMs: 0, slotGapMs: 0 },
    );
    const shards = await Promise.all([runCompareShard(plan, 0), runCompareShard(plan, 1)]);
    for (const s of shards) {
      assert.equal(s.stopped?.code, 'H2LAB_ERR_SHARD_MISSED_START', JSON.stringify(s.stopped));
      assert.equal(s.stopped?.slot, 1);
      assert.equal(s.runs.length, 1);
    }
    const r = mergeCompareShards(plan, shards);
    assert.equal(r.status, 'interrupted');
    assert.equal(r.error?.code, 'H2LAB_ERR_SHARD_MISSED_START');
    assert.match(
      r.error!.message,
      /^shard 0 has no result for run 2 of 4 \(url\/c2\/loopback\/h2, round 0\): .*larger --slot-gap; the run before it is merged$/,
    );
    const h1 = r.cells.find((c) => c.protocol === 'h1')!;
    assert.equal(h1.runs.length, 1);
    assert.equal(h1.status, 'interrupted');
    assert.ok(h1.runs[0]!.counts.ok > 0);
  } finally {
    await srv.close();
  }
});

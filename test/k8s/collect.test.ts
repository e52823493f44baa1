/**
 * Collection from pods as the Kubernetes API lists them: each pod's log and its container's
 * termination message go through the shard collector; a replaced pod's output for the same index is
 * named, not preferred. The shard outputs are real (two shards against the fixture server).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isH2labError } from '../../src/core/index.ts';
import { collectFromPods } from '../../src/k8s/index.ts';
import { encodeShardOutput, planShards, runShard } from '../../src/shard/index.ts';
import { startFixture } from '../helpers/fixture.ts';

test('pods → logs and termination messages → shards; a second pod for one index is a duplicate', async () => {
  const srv = await startFixture({ tls: false });
  try {
    const plan = planShards(
      { url: `${srv.plainUrl}/bytes/64`, protocol: 'h1', connections: 2, rateRps: 300, requests: 12 },
      { shards: 2, startAtEpochMs: Date.now() + 300, runId: 'pods' },
    );
    const outs = (await Promise.all([0, 1].map((i) => runShard(plan, i)))).map(encodeShardOutput);
    const pod = (name: string, index: number) => ({
      metadata: { name, annotations: { 'batch.kubernetes.io/job-completion-index': String(index) } },
      status: {
        containerStatuses: [
          {
            name: 'shard',
            state: { terminated: { exitCode: 0, message: JSON.stringify(outs[index]!.digest) } },
          },
        ],
      },
    });
    const logs = new Map([
      ['h2lab-pods-0-abcde', `starting\n${outs[0]!.lines.join('\n')}\n`],
      ['h2lab-pods-1-fghij', `${outs[1]!.lines.join('\n')}\n`],
    ]);
    const shards = collectFromPods(plan, [pod('h2lab-pods-0-abcde', 0), pod('h2lab-pods-1-fghij', 1)], logs);
    assert.deepEqual(
      shards.map((s) => [s.index, s.kind === 'h2lab.shard' ? s.result.counts.total : -1]),
      [
        [0, 6],
        [1, 6],
      ],
    );
    logs.set('h2lab-pods-1-zzzzz', `${outs[1]!.lines.join('\n')}\n`);
    try {
      collectFromPods(
        plan,
        [pod('h2lab-pods-0-abcde', 0), pod('h2lab-pods-1-fghij', 1), pod('h2lab-pods-1-zzzzz', 1)],
        logs,
      );
      assert.fail('a duplicate was accepted');
    } catch (err) {
      assert.ok(isH2labError(err, 'H2LAB_ERR_SHARD_DUPLICATE'), String(err));
      assert.match(err.message, /shard 1/);
    }
  } finally {
    await srv.close();
  }
});

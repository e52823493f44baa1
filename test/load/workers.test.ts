/**
 * `--workers N`: the load is split across threads and merged exactly.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { decodeHistogram, runLoad } from '../../src/load/index.ts';
import type { Sample } from '../../src/model/sample.ts';
import { startTestServer } from '../helpers/servers.ts';

test('two workers: requests, bytes and histogram counts add up exactly, sequence numbers are unique', async () => {
  const server = await startTestServer('h2c');
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-workers-'));
  try {
    const samplesFile = join(dir, 's.ndjson');
    const r = await runLoad({
      url: `${server.url}/bytes/{1..50}`,
      protocol: 'h2-pool',
      connections: 4,
      workers: 2,
      requests: 501,
      concurrency: 6,
      samplesFile,
    }).done;
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.equal(r.client.workers, 2);
    assert.equal(r.counts.total, 501);
    assert.equal(server.seen.requests, 501);
    assert.equal(r.throughput.bytesIn, server.seen.bytesOut);
    assert.equal(
      decodeHistogram(r.histograms.latency).totalCount,
      501,
      'merged histogram holds every sample',
    );
    assert.equal(r.connections.opened, 4, 'the sessions are split between the workers');
    const samples = readFileSync(samplesFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Sample);
    assert.equal(samples.length, 501);
    assert.equal(new Set(samples.map((s) => s.seq)).size, 501);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  }
});

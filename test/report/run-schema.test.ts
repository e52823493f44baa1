// Real results — from the engine against the fixture server, closed and open loop, and a failed run —
// and every --samples line validate strictly against the model's schemas.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runLoad } from '../../src/load/index.ts';
import { runResultSchema, sampleSchema } from '../../src/model/index.ts';
import type { RunningServer } from '../../src/server/index.ts';
import { startFixture } from '../helpers/fixture.ts';

let server: RunningServer;
before(async () => {
  server = await startFixture();
});
after(() => server.close(0));

test('every --samples line validates, successes and failures alike', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-samples-'));
  try {
    const file = join(dir, 's.ndjson');
    // An unknown path is an HTTP error; /hang never answers and times out.
    await runLoad({
      url: `${server.plainUrl}/`,
      paths: ['/bytes/100', '/nope', '/hang'],
      protocol: 'h2',
      requests: 30,
      concurrency: 3,
      timeoutMs: 200,
      samplesFile: file,
    }).done;
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    assert.equal(lines.length, 30);
    const kinds = new Set<string>();
    for (const l of lines) {
      const parsed = sampleSchema.safeParse(JSON.parse(l));
      assert.ok(parsed.success, `${l}: ${parsed.success ? '' : parsed.error.message}`);
      kinds.add(parsed.data.error ?? String(parsed.data.status));
    }
    assert.ok(kinds.has('200') && kinds.has('404') && kinds.has('timeout'), [...kinds].join(','));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('real results validate: h2 closed loop over TLS, h1 open loop, h2-pool, and a run against a dead port', async () => {
  const tls = { ca: server.caFile!, serverMetrics: true };
  const runs = [
    await runLoad({
      url: `${server.tlsUrl}/bytes/1KiB`,
      protocol: 'h2',
      requests: 50,
      concurrency: 4,
      ...tls,
    }).done,
    await runLoad({ url: `${server.plainUrl}/chunks/{0..7}`, protocol: 'h1', rateRps: 200, requests: 40 })
      .done,
    await runLoad({
      url: `${server.tlsUrl}/echo`,
      method: 'POST',
      bodySizeBytes: 2048,
      protocol: 'h2-pool',
      requests: 20,
      ...tls,
    }).done,
    await runLoad({ url: 'http://127.0.0.1:1/', protocol: 'h1', requests: 5 }).done,
  ];
  for (const r of runs) {
    const parsed = runResultSchema.safeParse(JSON.parse(JSON.stringify(r)));
    assert.ok(
      parsed.success,
      `${r.transport.name} ${r.target.url}: ${parsed.success ? '' : parsed.error.message}`,
    );
  }
  assert.equal(runs[1]!.schedule.mode, 'open');
  assert.ok(runs[1]!.latencyUncorrectedMs, 'open loop carries the uncorrected latency too');
  assert.ok(runs[3]!.error, 'the dead port is a failed run, and its result still validates');
});

// The published RunResult schema is the generated one, and real results — from the engine against the
// fixture server, closed and open loop, and a failed run — validate against it strictly.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { runLoad } from '../../src/load/index.ts';
import { runResultJsonSchema, runResultSchema } from '../../src/report/run-schema.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';

let server: RunningServer;
before(async () => {
  server = await startServer({ host: '127.0.0.1', port: 0, tlsPort: 0 });
});
after(() => server.close(0));

test('docs/run-result.schema.json is the one generated from the model (npm run schema)', () => {
  const published = JSON.parse(readFileSync('docs/run-result.schema.json', 'utf8'));
  assert.deepEqual(published, JSON.parse(JSON.stringify(runResultJsonSchema())));
});

test('real results validate: h2 closed loop over TLS, h1 open loop, h2-pool, and a run against a dead port', async () => {
  const tls = { caFile: server.caPath!, serverMetrics: true };
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

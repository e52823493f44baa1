// A server that offers no HTTP/3 (a TLS listener, nothing on UDP): compare's h3 cells are "not
// offered" after one QUIC handshake of a probe's timeout, said before the runs, not "unreachable"
// after every cell's 10 s connect timeout; the h2 cells run.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runComparison } from '../../src/compare/index.ts';
import { PREFLIGHT_QUIC_MS } from '../../src/load/index.ts';
import type { RunningServer } from '../../src/server/index.ts';
import { startFixture, testHome } from '../helpers/fixture.ts';
import { h3SkipReason } from './helpers.ts';

const skip = await h3SkipReason();
if (skip) console.log(`# h3 not-offered test skipped: ${skip}`);

describe('compare against a server without HTTP/3', { skip }, () => {
  let srv: RunningServer;
  before(async () => {
    testHome();
    srv = await startFixture({});
  });
  after(() => srv.close(0));

  test('h3 is not offered within one probe timeout; h2 runs', async () => {
    const started = performance.now();
    const c = await runComparison({
      url: `${srv.tlsUrl}/`,
      tls: { ca: srv.caFile! },
      protocols: ['h2', 'h3'],
      baseline: 'h2',
      concurrency: [1],
      runs: 3,
      warmupRuns: 1,
      requests: 5,
      workloads: [{ id: 'small', label: '1 KiB', paths: ['/bytes/1024'] }],
    });
    const result = await c.done;
    const elapsed = performance.now() - started;
    const h3 = result.cells.find((x) => x.protocol === 'h3')!;
    const h2 = result.cells.find((x) => x.protocol === 'h2')!;
    assert.equal(h3.status, 'not-offered', h3.note);
    assert.match(h3.note ?? '', /HTTP\/3 not offered by the server.*did not answer QUIC.*within 5000 ms/);
    assert.equal(h2.status, 'done', h2.note);
    assert.ok(elapsed < PREFLIGHT_QUIC_MS + 4000, `${elapsed.toFixed(0)} ms in all`);
  });
});

/**
 * compare's request options reach the load engine for every strategy, over real loopback sockets:
 * the server counts the method, the header and the body bytes it received (h1, h2 and h2-pool
 * against node's TLS server with ALPN; h3 and h3-pool against the QUIC test server when the binding
 * loads). `--timeout` turns a slow response into a timeout; an open-loop cell achieves its rate.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runComparison } from '../../src/compare/index.ts';
import type { CompareResult } from '../../src/model/index.ts';
import { buildVerdict, renderHtml } from '../../src/report/index.ts';
import { type TestCerts, testCerts } from '../helpers/certs.ts';
import { startH3TestServer, startTestServer, type TestServer } from '../helpers/servers.ts';

let certs: TestCerts;
let server: TestServer;
let bodyFile: string;
const BODY_BYTES = 1234;

before(async () => {
  certs = await testCerts();
  server = await startTestServer('tls', certs);
  bodyFile = join(certs.dir, 'body.bin');
  writeFileSync(bodyFile, Buffer.alloc(BODY_BYTES, 7));
});
after(async () => {
  await server.close();
  certs.cleanup();
});

const fast = { runs: 3, warmupRuns: 1, durationMs: 200 } as const;

function assertAllDone(r: CompareResult): void {
  assert.equal(r.status, 'complete', JSON.stringify(r.error));
  for (const c of r.cells) assert.equal(c.status, 'done', `${c.id}: ${c.note}`);
}

test('-m, -H and --body reach h1, h2 and h2-pool: the server saw them on every request', async () => {
  const before = { ...server.seen, byMethod: { ...server.seen.byMethod } };
  const c = await runComparison({
    url: `${server.url}/`,
    tls: { ca: certs.path.caPem },
    protocols: ['h1', 'h2', 'h2-pool'],
    concurrency: [2],
    workloads: [{ id: 'echo', label: 'echo', paths: ['/echo'] }],
    method: 'PUT',
    headers: { 'x-h2lab-test': 'compare' },
    bodyFile,
    timeoutMs: 5000,
    connectTimeoutMs: 3000,
    ...fast,
  });
  const r = await c.done;
  assertAllDone(r);
  const sent = r.cells.flatMap((x) => x.runs).reduce((n, run) => n + run.counts.total, 0);
  const requests = server.seen.requests - before.requests;
  assert.ok(sent > 0);
  assert.equal(requests, sent, 'the server saw every request the runs counted');
  assert.equal((server.seen.byMethod.PUT ?? 0) - (before.byMethod.PUT ?? 0), requests, 'every one a PUT');
  assert.equal(server.seen.byHeader['x-h2lab-test: compare'], requests, 'every one with the header');
  assert.equal(server.seen.bytesIn - before.bytesIn, requests * BODY_BYTES, 'every one with the body');
  assert.ok(server.seen.byProtocol.h2! > 0 && server.seen.byProtocol['http/1.1']! > 0);
  // Recorded: in the resolved options, in the workloads as run, and in every run's own options.
  assert.equal(r.options.method, 'PUT');
  assert.deepEqual(r.axes.workloads[0]!.headers, { 'x-h2lab-test': 'compare' });
  assert.equal(r.axes.workloads[0]!.bodyFile, bodyFile);
  for (const run of r.cells.flatMap((x) => x.runs)) {
    assert.equal(run.options.timeoutMs, 5000);
    assert.equal(run.options.connectTimeoutMs, 3000);
    assert.equal(run.options.method, 'PUT');
  }
});

test('-m, -H and --body reach h3 and h3-pool (when the HTTP/3 binding loads)', async (t) => {
  let h3: TestServer;
  try {
    h3 = await startH3TestServer(certs);
  } catch (err) {
    t.skip(`HTTP/3 binding not available: ${(err as Error).message}`);
    return;
  }
  try {
    const c = await runComparison({
      url: `${h3.url}/`,
      tls: { ca: certs.path.caPem },
      protocols: ['h3', 'h3-pool'],
      baseline: 'h3',
      concurrency: [2],
      workloads: [{ id: 'echo', label: 'echo', paths: ['/echo'] }],
      method: 'PUT',
      headers: { 'x-h2lab-test': 'h3' },
      bodyFile,
      ...fast,
    });
    const r = await c.done;
    assertAllDone(r);
    const sent = r.cells.flatMap((x) => x.runs).reduce((n, run) => n + run.counts.total, 0);
    assert.equal(h3.seen.requests, sent);
    assert.equal(h3.seen.byMethod.PUT, sent);
    assert.equal(h3.seen.byHeader['x-h2lab-test: h3'], sent);
    assert.equal(h3.seen.bytesIn, sent * BODY_BYTES);
  } finally {
    await h3.close();
  }
});

test('--timeout reaches the engine: a response slower than it fails as timeout', async () => {
  const c = await runComparison({
    url: `${server.url}/`,
    tls: { ca: certs.path.caPem },
    protocols: ['h1', 'h2'],
    concurrency: [1],
    workloads: [{ id: 'slow', label: 'slow', paths: ['/delay/600', '/bytes/10'] }],
    timeoutMs: 150,
    runs: 2,
    warmupRuns: 0,
    requests: 4,
  });
  const r = await c.done;
  for (const run of r.cells.flatMap((x) => x.runs)) {
    assert.equal(run.counts.byFailure?.timeout, 2, JSON.stringify(run.counts));
    assert.equal(run.counts.ok, 2);
  }
});

test('--rate: one open-loop cell per rate, and each offers the rate asked', async () => {
  const c = await runComparison({
    url: `${server.url}/`,
    tls: { ca: certs.path.caPem },
    protocols: ['h1', 'h2'],
    rateRps: [100, 300],
    workloads: [{ id: 'small', label: 'small', paths: ['/bytes/512'] }],
    runs: 3,
    durationMs: 400,
  });
  const r = await c.done;
  assertAllDone(r);
  assert.deepEqual(
    r.cells.map((x) => x.id),
    ['small/r100/loopback/h1', 'small/r100/loopback/h2', 'small/r300/loopback/h1', 'small/r300/loopback/h2'],
  );
  assert.deepEqual(r.axes.workloads[0]!.rateRps, [100, 300]);
  for (const cell of r.cells) {
    for (const run of cell.runs) {
      assert.equal(run.schedule.mode, 'open');
      assert.equal(run.schedule.rateRps, cell.concurrency);
    }
    // The schedule offered the rate asked: every arrival of the measured period was sent, late or not
    // (even arrivals: rate × duration of them, ±1 at the edges). The achieved req/s divides by the
    // measured period, which runs on to the last response, so a loaded machine lowers it without
    // the schedule being wrong; it never rises above the rate (no arrival is sent twice or early).
    for (const run of cell.runs) {
      const offered = (cell.concurrency * 400) / 1000;
      const shown = `${cell.id}: ${run.counts.total} sent, ${run.counts.late ?? 0} late, in ${run.durationMs} ms`;
      assert.ok(Math.abs(run.counts.total - offered) <= 1, `${shown}; ${offered} offered`);
      assert.ok(run.durationMs >= 400 - 1000 / cell.concurrency, shown);
      assert.ok(run.throughput.rps <= cell.concurrency * 1.05, `${shown}: ${run.throughput.rps} req/s`);
    }
  }
  // The words name a rate as a rate: "at 300 req/s", never "at c=300".
  const words = [
    ...buildVerdict(r).workloads.flatMap((w) => [w.headline, ...w.paragraphs]),
    renderHtml(r, { uplotJs: '', uplotCss: '' }),
  ].join('\n');
  assert.match(words, /at (100|300) req\/s/);
  assert.doesNotMatch(words, /c=(100|300)\b/);
});

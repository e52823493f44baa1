/**
 * The burst schedule against h2lab's fixture server over loopback: N requests at one instant, the
 * time until the last one ends. Where connections are opened (inside the timed period or before it)
 * is checked from the client's count and the server's.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type LoadOptionsInput, runLoad } from '../../src/load/index.ts';
import type { Sample } from '../../src/model/index.ts';
import type { RunningServer } from '../../src/server/index.ts';
import { startFixture } from '../helpers/fixture.ts';

let server: RunningServer;
let dir: string;
before(async () => {
  server = await startFixture();
  dir = mkdtempSync(join(tmpdir(), 'h2lab-burst-'));
});
after(async () => {
  await server.close(0);
  rmSync(dir, { recursive: true, force: true });
});

function tls(path: string, o: LoadOptionsInput): LoadOptionsInput {
  return { ...o, url: `${server.tlsUrl}${path}`, ca: server.caFile! };
}

const sum = (row: object): number =>
  Object.values(row as Record<string, number | object>).reduce<number>(
    (a, v) => a + (typeof v === 'number' ? v : sum(v)),
    0,
  );

/** What the server counted so far: connections accepted on its TLS listener, requests served. */
function serverSaw(): { connections: number; requests: number } {
  const m = server.metrics();
  return { connections: sum(m.connections.total.tls), requests: sum(m.requests) };
}

function readSamples(file: string): Sample[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Sample);
}

for (const handshakes of ['include', 'exclude'] as const) {
  test(`h1 × 6, burst of 32, handshakes ${handshakes}: 32 requests, ${handshakes === 'include' ? 6 : 0} connections opened inside the timed period`, async () => {
    const samplesFile = join(dir, `h1-${handshakes}.ndjson`);
    const seen0 = serverSaw();
    const r = await runLoad(
      tls('/bytes/{1000..1031}', {
        protocol: 'h1',
        connections: 6,
        burst: 32,
        burstHandshakes: handshakes,
        samplesFile,
      }),
    ).done;
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.equal(r.schedule.mode, 'burst');
    assert.equal(r.schedule.concurrency, 32);
    assert.equal(r.counts.total, 32);
    assert.equal(r.counts.ok, 32);
    const seen = serverSaw();
    assert.equal(seen.requests - seen0.requests, 32, 'the server saw the 32 requests');
    assert.equal(seen.connections - seen0.connections, 6, 'the server accepted 6 connections');
    const b = r.burst!;
    assert.equal(b.requests, 32);
    assert.equal(b.bursts, 1);
    assert.equal(b.handshakes, handshakes);
    assert.equal(b.failed, 0);
    assert.equal(b.connectionsOpened, handshakes === 'include' ? 6 : 0);
    // The completion time is t0 → the last sample's end, and every sample was handed over at t0.
    const samples = readSamples(samplesFile);
    assert.equal(samples.length, 32, 'one sample per request');
    const t0 = b.perBurst[0]!.startMs;
    for (const s of samples) assert.equal(s.queuedMs, t0);
    const lastEnd = Math.max(...samples.map((s) => s.endMs));
    assert.ok(b.completionMs >= lastEnd - t0 - 1e-6, `${b.completionMs} ≥ ${lastEnd - t0}`);
    assert.ok(b.completionMs - (lastEnd - t0) < 1e-6, 'and nothing more');
    assert.ok(b.firstResponseMs! > 0 && b.firstResponseMs! <= b.completionMs);
    // 32 requests on 6 connections: most waited in the client (the page-load queue of HTTP/1.1).
    assert.ok(r.clientQueueMs.max > 0);
    const newConns = samples.filter((s) => s.newConnection).length;
    assert.equal(newConns, 6, 'six samples carry the setup of their connection');
  });
}

test('h2, burst of 64 with handshakes included: one session, opened in the timed period, no wait at the stream cap', async () => {
  const r = await runLoad(tls('/bytes/2048', { protocol: 'h2', burst: 64 })).done;
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  assert.equal(r.counts.ok, 64);
  assert.equal(r.burst?.connectionsOpened, 1);
  assert.equal(r.connections.opened, 1);
  // Waiting for the session's handshake is not waiting at SETTINGS_MAX_CONCURRENT_STREAMS.
  assert.equal(r.connections.streamCapHits, 0);
  assert.ok(!r.warnings.some((w) => w.includes('MAX_CONCURRENT_STREAMS')), r.warnings.join('\n'));
});

test('--bursts 3: three bursts, each on fresh connections, the median reported', async () => {
  const r = await runLoad(tls('/bytes/512', { protocol: 'h1', burst: 8, bursts: 3, burstGapMs: 20 })).done;
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  const b = r.burst!;
  assert.equal(b.bursts, 3);
  assert.equal(r.counts.ok, 24);
  assert.deepEqual(
    b.perBurst.map((x) => x.connectionsOpened),
    [6, 6, 6],
  );
  assert.equal(r.connections.opened, 18);
  const sorted = b.perBurst.map((x) => x.completionMs).sort((x, y) => x - y);
  assert.equal(b.completionMs, sorted[1]);
  assert.ok(b.perBurst[1]!.startMs - b.perBurst[0]!.startMs >= b.perBurst[0]!.completionMs + 20);
});

test('failed requests in a burst are counted as failed; the completion still ends at the last end', async () => {
  const samplesFile = join(dir, 'failed.ndjson');
  const r = await runLoad(
    tls('/bytes/100', {
      protocol: 'h2',
      burst: 10,
      paths: ['/bytes/100', '/reset'],
      samplesFile,
      maxErrorRate: 1,
    }),
  ).done;
  assert.equal(r.counts.total, 10);
  assert.equal(r.counts.failed, 5, JSON.stringify(r.counts));
  assert.equal(r.burst?.failed, 5);
  assert.equal(r.burst?.perBurst[0]?.ok, 5);
  const samples = readSamples(samplesFile);
  const lastEnd = Math.max(...samples.map((s) => s.endMs));
  assert.ok(Math.abs(r.burst!.completionMs - (lastEnd - r.burst!.perBurst[0]!.startMs)) < 1e-6);
  assert.ok(
    r.warnings.some((w) => w.startsWith('5 of 10 requests of the burst failed')),
    r.warnings.join('\n'),
  );
});

test('burst options that contradict it are refused with the option named', () => {
  assert.throws(
    () => runLoad({ burst: 8, durationMs: 1000 }),
    /--duration 1000 cannot be combined with --burst 8/,
  );
  assert.throws(() => runLoad({ burst: 8, concurrency: 4 }), /--concurrency/);
  assert.throws(() => runLoad({ bursts: 3 }), /--bursts needs --burst N/);
  assert.throws(() => runLoad({ burst: 8, workers: 2 }), /--workers 2 cannot be combined with --burst/);
});

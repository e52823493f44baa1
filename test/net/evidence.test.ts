// The evidence a run leaves, checked against what h2lab says it did, by readers no one here wrote:
// tshark decrypts a comparison's captures with its key log into the HTTP/2 frames and HTTP/1.1
// requests results.json counts, and the packets a capture marks dropped are the drops the relay
// counted over the same span.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleepMs } from 'node:timers/promises';
import type { CompareResult, RunResult } from '../../src/model/index.ts';
import { createLink } from '../../src/net/index.ts';
import { testCerts } from '../helpers/certs.ts';
import { h2lab } from '../helpers/cli.ts';
import { freePort, haveNginx, type Nginx, startNginx } from '../helpers/nginx.ts';
import { bulkDownload, netSkipReason, startPeer, tsharkFields, tsharkSkipReason } from './helpers.ts';

const skip =
  netSkipReason() ??
  tsharkSkipReason() ??
  (haveNginx() ? undefined : 'nginx is not installed (apt-get install nginx)');
if (skip) console.log(`# evidence tests skipped: ${skip}`);

const dir = mkdtempSync(join(tmpdir(), 'h2lab-evidence-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The HTTP/2 frames tshark decrypts from `file`: [direction, type, stream, length] per frame. */
function h2Frames(file: string, keys: string): Array<[string, number, number, number]> {
  const rows = tsharkFields(
    file,
    ['frame.interface_name', 'http2.type', 'http2.streamid', 'http2.length'],
    ['-o', `tls.keylog_file:${keys}`, '-Y', 'http2.type and not frame.comment contains "dropped"'],
  );
  const out: Array<[string, number, number, number]> = [];
  for (const [dir, types, streams, lengths] of rows) {
    const t = types!.split(','),
      s = streams!.split(','),
      l = lengths!.split(',');
    for (let i = 0; i < t.length; i++) out.push([dir!, Number(t[i]), Number(s[i]), Number(l[i])]);
  }
  return out;
}

describe('evidence: a capture decrypted with the key log matches results.json', { skip }, () => {
  let nginx: Nginx | undefined;
  let port = 0;
  before(async () => {
    const certs = await testCerts({ leafDays: 20 });
    writeFileSync(join(dir, 'server.pem'), certs.serverPem);
    writeFileSync(join(dir, 'server.key'), certs.serverKeyPem);
    writeFileSync(join(dir, 'ca.pem'), certs.caPem);
    certs.cleanup();
    writeFileSync(join(dir, '10k.bin'), Buffer.alloc(10240, 7));
    port = await freePort();
    nginx = await startNginx(
      join(dir, 'nginx'),
      `ssl_certificate ${join(dir, 'server.pem')};
  ssl_certificate_key ${join(dir, 'server.key')};
  server { listen 127.0.0.1:${port} ssl http2; root ${dir}; }`,
      [port],
    );
  });
  after(() => nginx?.stop());

  it('compare --burst 32 over 200 ms / 10 Mbit/s: 32 HEADERS and 10 KiB of DATA per stream on h2, 32 requests on 6 connections on h1', async () => {
    const out = join(dir, 'cmp');
    const cap = join(out, 'cap');
    const keys = join(out, 'keys.log');
    const r = await h2lab(
      [
        'compare',
        `https://127.0.0.1:${port}/10k.bin`,
        ...'-k --burst 32 --rtt 200ms --bandwidth 10mbit --protocols h1,h2 --runs 3 -q'.split(' '),
        ...['--capture', cap, '--keylog', keys, '--out', out],
      ],
      { timeoutMs: 180_000 },
    );
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as CompareResult;
    const capturedRuns = (id: string): RunResult[] =>
      result.cells.find((c) => c.protocol === id)!.runs.filter((x) => x.evidence?.capture);
    // One capture per cell (its representative run); the other measured runs say why they have none.
    const h2 = capturedRuns('h2');
    const h1 = capturedRuns('h1');
    assert.equal(h2.length, 1);
    assert.equal(h1.length, 1);
    const h2run = h2[0]!;
    const h1run = h1[0]!;
    assert.equal(h2run.evidence?.keyLog?.file, keys);
    // The report says where the evidence is and what the key log unlocks.
    const report = readFileSync(join(out, 'report.md'), 'utf8');
    assert.match(report, new RegExp(`2 pcapng files in ${cap}`));
    assert.match(report, /TLS key log.*decrypts/s);

    const frames = h2Frames(h2run.evidence!.capture!.file, keys);
    const headers = new Set(frames.filter(([d, t]) => d === 'up' && t === 1).map(([, , s]) => s));
    assert.equal(headers.size, h2run.counts.ok);
    assert.equal(headers.size, 32);
    const dataPerStream = new Map<number, number>();
    for (const [d, t, s, l] of frames)
      if (d === 'down' && t === 0) dataPerStream.set(s, (dataPerStream.get(s) ?? 0) + l);
    assert.deepEqual(
      [...dataPerStream.keys()].sort((a, b) => a - b),
      [...headers].sort((a, b) => a - b),
    );
    for (const [s, bytes] of dataPerStream) assert.equal(bytes, 10240, `stream ${s}`);
    assert.equal(
      [...dataPerStream.values()].reduce((a, b) => a + b, 0),
      h2run.counts.ok * 10240,
    );

    const requests = tsharkFields(
      h1run.evidence!.capture!.file,
      ['tcp.srcport', 'http.request.uri'],
      ['-o', `tls.keylog_file:${keys}`, '-Y', 'http.request and not frame.comment contains "dropped"'],
    );
    assert.equal(requests.length, h1run.counts.ok);
    assert.ok(requests.every(([, uri]) => uri === '/10k.bin'));
    assert.equal(new Set(requests.map(([p]) => p)).size, h1run.connections.opened);
    assert.equal(h1run.connections.opened, 6);
  });
});

describe('evidence: the packets a capture marks dropped are the drops the relay counted', { skip }, () => {
  it('random loss and a full bottleneck queue, both directions', async () => {
    const link = await createLink({
      backend: 'relay',
      profile: { rttMs: 20, loss: 0.02, rateBitsPerSec: 20e6, queueBytes: 16 * 1024 },
    });
    try {
      const peer = await startPeer(link);
      try {
        const before = await link.stats();
        assert.equal(await link.startCapture({ snapBytes: 128, maxBytes: 64 << 20 }), true);
        await bulkDownload(link.serverAddress, peer.tcpPort, { flows: 4, durationMs: 1500 });
        // The closes and their last retransmissions pass before the capture and the counters stop.
        await sleepMs(1000);
        const file = join(dir, 'drops.pcapng');
        const s = await link.stopCapture(file);
        const after = await link.stats();
        assert.ok(s);
        const counted = (k: 'droppedLoss' | 'droppedQueue'): number =>
          after.up![k] + after.down![k] - before.up![k] - before.down![k];
        assert.ok(counted('droppedLoss') > 0 && counted('droppedQueue') > 0, JSON.stringify(s.dropped));
        assert.deepEqual(s.dropped, { loss: counted('droppedLoss'), queue: counted('droppedQueue') });
        assert.equal(s.packetsNotRecorded, 0);
        const comments = tsharkFields(file, ['frame.comment']).map(([c]) => c!);
        assert.equal(comments.filter((c) => c.endsWith('dropped (loss)')).length, counted('droppedLoss'));
        assert.equal(
          comments.filter((c) => c.endsWith('dropped (queue full)')).length,
          counted('droppedQueue'),
        );
        const packetsIn =
          after.up!.packetsIn + after.down!.packetsIn - before.up!.packetsIn - before.down!.packetsIn;
        assert.equal(comments.length, packetsIn);
        // A full queue shows as queue delay in the packets before it.
        const queued = comments.map((c) => Number(/queue ([\d.]+) ms/.exec(c)?.[1] ?? 0));
        assert.ok(Math.max(...queued) > 1, `longest queue wait ${Math.max(...queued)} ms`);
      } finally {
        await peer.stop();
      }
    } finally {
      await link.close();
    }
  });
});

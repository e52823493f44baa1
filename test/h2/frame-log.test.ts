// The evidence files of a run without a link, over real loopback sockets against the fixture server:
// the HTTP/2 frame log of h2lab's client (`--frames`) says what went over the wire as the run and
// the server counted it, and the key logs of the client (`--keylog`) and of the fixture server
// (`serve --keylog`) hold the secrets of the same TLS connections.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runLoad } from '../../src/load/index.ts';
import type { RunningServer } from '../../src/server/index.ts';
import { startFixture } from '../helpers/fixture.ts';

interface FrameLine {
  t: number;
  conn: number;
  dir: 'in' | 'out';
  type: string;
  stream: number;
  flags: string[];
  length: number;
  settings?: Record<string, number>;
  increment?: number;
  error?: string;
}

const dir = mkdtempSync(join(tmpdir(), 'h2lab-frame-log-'));
const serverKeys = join(dir, 'server-keys.log');
let server: RunningServer;
before(async () => {
  server = await startFixture({ maxConcurrentStreams: 77, keyLogFile: serverKeys });
});
after(async () => {
  await server.close(0);
  rmSync(dir, { recursive: true, force: true });
});

const lines = (file: string): string[] => readFileSync(file, 'utf8').split('\n').filter(Boolean);

/** The client randoms of a key log's TLS 1.3 traffic secrets: one per connection. */
const randoms = (file: string): Set<string> =>
  new Set(
    lines(file)
      .filter((l) => l.startsWith('CLIENT_TRAFFIC_SECRET_0 '))
      .map((l) => l.split(' ')[1]!),
  );

test('--frames: every frame of an h2 burst, as the run and the server counted them', async () => {
  const frames = join(dir, 'frames.ndjson');
  const keys = join(dir, 'client-keys.log');
  const result = await runLoad({
    url: `${server.tlsUrl}/bytes/3000`,
    ca: server.caFile!,
    protocol: 'h2',
    burst: 16,
    framesFile: frames,
    keyLogFile: keys,
  }).done;
  assert.equal(result.counts.ok, 16);
  assert.equal(result.evidence?.frames?.file, frames);
  const log = lines(frames).map((l) => JSON.parse(l) as FrameLine);
  const out = log.filter((f) => f.dir === 'out');
  const inn = log.filter((f) => f.dir === 'in');
  // Our SETTINGS and connection window, as the session sent them.
  const ours = out.find((f) => f.type === 'SETTINGS' && !f.flags.includes('ACK'))!;
  assert.equal(ours.stream, 0);
  assert.equal(ours.settings?.ENABLE_PUSH, 0);
  assert.equal(ours.settings?.INITIAL_WINDOW_SIZE, result.transport.window?.streamWindowBytes);
  // The server's SETTINGS as it announced them, and as the run recorded them.
  const theirs = inn.find((f) => f.type === 'SETTINGS' && !f.flags.includes('ACK'))!;
  assert.equal(theirs.settings?.MAX_CONCURRENT_STREAMS, 77);
  assert.equal(result.connections.serverMaxConcurrentStreams, 77);
  assert.ok(out.some((f) => f.type === 'SETTINGS' && f.flags.includes('ACK')));
  // One HEADERS out per request, odd streams from 1, each ending the stream; 3000 bytes of DATA back.
  const headers = out.filter((f) => f.type === 'HEADERS');
  assert.deepEqual(
    headers.map((f) => f.stream),
    Array.from({ length: 16 }, (_, i) => 2 * i + 1),
  );
  assert.ok(headers.every((f) => f.flags.includes('END_STREAM') && f.flags.includes('END_HEADERS')));
  const data = new Map<number, number>();
  for (const f of inn) if (f.type === 'DATA') data.set(f.stream, (data.get(f.stream) ?? 0) + f.length);
  assert.equal(data.size, 16);
  for (const [s, n] of data) assert.equal(n, 3000, `stream ${s}`);
  assert.ok(inn.filter((f) => f.type === 'HEADERS').length >= 16);
  const sent = out.find((f) => f.type === 'WINDOW_UPDATE' && f.stream === 0);
  assert.equal(sent?.increment, result.transport.window!.connectionWindowBytes - 65_535);
  assert.ok(log.every((f, i) => i === 0 || f.t >= log[i - 1]!.t || f.dir !== log[i - 1]!.dir));
  assert.ok(new Set(log.map((f) => f.conn)).size === 1);

  // Both ends logged the secrets of the run's one connection.
  assert.equal(result.evidence?.keyLog?.file, keys);
  const client = randoms(keys);
  assert.equal(client.size, result.connections.opened);
  for (const r of client) assert.ok(randoms(serverKeys).has(r), `the server logged ${r.slice(0, 12)}…`);
});

test('--frames on HTTP/1.1: no frames, and the result names no frame log', async () => {
  const frames = join(dir, 'h1-frames.ndjson');
  const result = await runLoad({
    url: `${server.tlsUrl}/bytes/100`,
    ca: server.caFile!,
    protocol: 'h1',
    requests: 4,
    framesFile: frames,
  }).done;
  assert.equal(result.counts.ok, 4);
  assert.equal(result.evidence?.frames, undefined);
});

/**
 * Timeouts put down to a server that stopped reading, from the client's TCP readings: a plain Node.js
 * HTTP/2 echo server advertising 15 MiB of connection window under Node's default 10 MB session
 * memory stops reading its socket mid-upload (docs/reliability.md, "Session memory and receive
 * windows"); the run's notes say so with the share of time the server's receive window held the
 * connection. Requests that time out on a server that reads but never answers (`/hang`) get no
 * such note.
 */
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { runLoad } from '../../src/load/index.ts';
import { multiplexedStrategy } from '../../src/transport/index.ts';
import { startFixture } from '../helpers/fixture.ts';

const STOPPED =
  /timed out while the server's TCP receive window held 1 of 1 connection\(s\) for (\d+)% of their busy time .*: the server stopped reading its socket/;

function one(): string {
  const s = multiplexedStrategy('one');
  assert.ok(s);
  return s.name;
}

test('uploads that time out on a server that stopped reading name it', async () => {
  const server = http2.createServer({ settings: { initialWindowSize: 6 * 1024 * 1024 } });
  server.on('session', (s) => s.setLocalWindowSize(15 * 1024 * 1024));
  server.on('stream', (st) => {
    st.on('error', () => {});
    st.respond({ ':status': 200 });
    st.pipe(st);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port } = server.address() as AddressInfo;
    const r = await runLoad({
      protocol: one(),
      url: `http://127.0.0.1:${port}/echo`,
      method: 'POST',
      bodySizeBytes: 1 << 20,
      concurrency: 32,
      requests: 32,
      warmupMs: 0,
      timeoutMs: 3000,
    }).done;
    assert.ok((r.counts.byFailure.timeout ?? 0) > 0, JSON.stringify(r.counts));
    const note = r.warnings.find((w) => STOPPED.test(w));
    assert.ok(note, r.warnings.join('\n'));
    assert.ok(Number(STOPPED.exec(note)![1]) >= 50, note);
  } finally {
    server.close();
  }
});

test('timeouts on a server that reads but never answers get no such note', async () => {
  const srv = await startFixture({ tls: false });
  try {
    const r = await runLoad({
      protocol: one(),
      url: `${srv.plainUrl}/hang`,
      concurrency: 4,
      requests: 4,
      warmupMs: 0,
      timeoutMs: 1000,
    }).done;
    assert.equal(r.counts.byFailure.timeout, 4, JSON.stringify(r.counts));
    assert.ok(!r.warnings.some((w) => /stopped reading/.test(w)), r.warnings.join('\n'));
  } finally {
    await srv.close();
  }
});

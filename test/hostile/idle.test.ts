// Many idle connections: 1000 silent TCP connections and 200 HTTP/2 sessions that sent SETTINGS and
// nothing more. The server answers others meanwhile, holds each for little memory, closes every one
// within the (shortened) preface timeout and leaves no fd behind.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { RunningServer } from '../../src/server/index.ts';
import { startFixture } from '../helpers/fixture.ts';
import {
  connectPeer,
  fdsBackTo,
  normalRequestOk,
  openFds,
  plainPort,
  preface,
  settingsAck,
  until,
} from './attacker.ts';

const TIMEOUT_MS = 1500;
const MIB = 2 ** 20;

let srv: RunningServer;
before(async () => {
  srv = await startFixture({ tls: false, prefaceTimeoutMs: TIMEOUT_MS });
});
after(() => srv.close(200));

test('1000 silent TCP connections and 200 idle h2 sessions: < 2 MiB each, all closed after --preface-timeout, no fd left', async (t) => {
  const fds = openFds();
  globalThis.gc?.();
  const rss0 = process.memoryUsage().rss;
  const t0 = performance.now();
  const silent = [];
  for (let i = 0; i < 1000; i += 100) {
    silent.push(
      ...(await Promise.all(
        Array.from({ length: 100 }, () => connectPeer({ port: plainPort(srv), raw: true })),
      )),
    );
  }
  const h2 = await Promise.all(Array.from({ length: 200 }, () => connectPeer({ port: plainPort(srv) })));
  await Promise.all(h2.map((p) => p.write(Buffer.concat([preface(), settingsAck()]))));
  const held = performance.now() - t0;
  // Both ends of every connection live in this process: the bound holds for the pair.
  const perConn = (process.memoryUsage().rss - rss0) / 1200;
  assert.ok(await normalRequestOk(srv), 'a normal request while 1200 idle connections are held');
  const all = [...silent, ...h2];
  const closedAll = await until(() => all.every((p) => p.isClosed()), TIMEOUT_MS + 3000, 50);
  const ms = performance.now() - t0;
  const left = await fdsBackTo(fds);
  t.diagnostic(
    `opened 1200 in ${held.toFixed(0)} ms; RSS +${(perConn / 1024).toFixed(1)} KiB per connection (both ends); all closed ${closedAll} at ${ms.toFixed(0)} ms (timeout ${TIMEOUT_MS} ms); fds ${fds} → ${left}; guard noFirstStream=${srv.guardCounts().noFirstStream}`,
  );
  assert.ok(perConn < 2 * MIB, `${perConn} bytes per connection`);
  assert.ok(closedAll, `${all.filter((p) => !p.isClosed()).length} still open`);
  assert.ok(left <= fds + 2, `fds ${fds} → ${left}`);
});

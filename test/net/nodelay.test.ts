// TCP_NODELAY on every socket the fixture server accepts, TLS included: through a 100 ms link curl's
// GET on a fresh HTTP/1.1-over-TLS connection is answered one round trip after the handshake, not
// two. With Nagle on the TLS listener's sockets the response's last partial segment waited for the
// ACK of the small segment written just before it (curl and h2load both saw one extra RTT; Node's own
// TLS client did not), which biased every HTTP/1.1-over-TLS figure on a delayed link against h1.
// curl is the referee: it is what a user would check with.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { medianInterpolated as median } from '../../src/core/index.ts';
import { createLink, type Link } from '../../src/net/index.ts';
import { type FixtureTarget, startFixtureTarget } from '../../src/server/index.ts';
import { netSkipReason } from './helpers.ts';

const RTT_MS = 100;
const hasCurl = spawnSync('curl', ['--version']).status === 0;
const skip = netSkipReason() ?? (hasCurl ? undefined : 'curl is not installed (apt-get install curl)');

/** curl's own timings of one GET on a fresh connection, ms after the TLS (or TCP) handshake. */
function curlAfterHandshakeMs(url: string, ca: string): number {
  const r = spawnSync(
    'curl',
    [
      '-s',
      '-o',
      '/dev/null',
      '--http1.1',
      '--cacert',
      ca,
      '-w',
      '%{time_connect} %{time_appconnect} %{time_total}',
      url,
    ],
    { encoding: 'utf8', timeout: 10_000 },
  );
  assert.equal(r.status, 0, `curl failed: ${r.stderr}`);
  const [connect, appconnect, total] = r.stdout.trim().split(' ').map(Number) as [number, number, number];
  const handshake = appconnect > 0 ? appconnect : connect;
  return (total - handshake) * 1000;
}

describe('fixture server: Nagle off on every accepted socket', { skip }, () => {
  let link: Link;
  let fixture: FixtureTarget;
  before(async () => {
    link = await createLink({ profile: { rttMs: RTT_MS }, backend: 'relay' });
    fixture = await startFixtureTarget({}, { link });
  });
  after(async () => {
    await fixture?.close();
    await link?.close();
  });

  for (const listener of ['plain', 'tls'] as const) {
    it(`${listener}: a 10 KiB response on a fresh HTTP/1.1 connection takes one RTT, not two`, () => {
      const base = listener === 'tls' ? fixture.tlsUrl : fixture.plainUrl;
      const times = [0, 1, 2].map(() => curlAfterHandshakeMs(`${base}/bytes/10240`, fixture.caFile!));
      const m = median(times);
      const shown = times.map((t) => t.toFixed(0)).join(', ');
      assert.ok(m >= RTT_MS * 0.95, `median ${m.toFixed(1)} ms (${shown}) is less than the RTT: no link?`);
      // One RTT plus a little of the relay and both hosts; a segment held by Nagle makes it ≥ 2 RTT.
      assert.ok(m < RTT_MS * 1.5, `median ${m.toFixed(1)} ms (${shown}) is more than one RTT: Nagle?`);
    });
  }
});

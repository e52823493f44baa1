// runLoad with a fixture target given in its deps: a path drives the target (its URL, its CA, its
// server view), a full URL together with a target is refused before any load (it would have driven
// the URL and silently ignored the target).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isH2labError } from '../../src/core/index.ts';
import { runLoad } from '../../src/load/index.ts';
import { type FixtureTarget, startFixtureTarget } from '../../src/server/index.ts';

let target: FixtureTarget;
before(async () => {
  target = await startFixtureTarget({ poolSize: 2, tileMs: 1 }, 'in-process');
});
after(() => target.close());

test('a path drives the given target, over its TLS listener, and reads its server view', async () => {
  const r = await runLoad({ url: '/tiles/7/1/1', protocol: 'h2', requests: 30 }, { target }).done;
  assert.equal(r.error, undefined);
  assert.equal(r.counts.ok, 30);
  assert.ok(r.target.url.startsWith(`${target.tlsUrl}/tiles/`), r.target.url);
  assert.equal(r.target.embedded, true);
  assert.equal(r.server?.requests, 30);
});

test('a full URL with a target is a usage error naming the option and the path to pass', async () => {
  const url = `${target.tlsUrl}/bytes/10`;
  const before = (await target.metrics.read()).requests.bytes;
  const r = await runLoad({ url, protocol: 'h2', requests: 5 }, { target }).done.then(
    (res) => res.error,
    (err: unknown) => err,
  );
  assert.ok(isH2labError(r) || (r && typeof r === 'object' && 'code' in r), String(r));
  const e = r as { code: string; message: string; details?: Record<string, unknown> };
  assert.equal(e.code, 'H2LAB_ERR_INVALID_OPTION');
  assert.match(e.message, /pass only a path \(e\.g\. \/bytes\/10\)/);
  assert.deepEqual((await target.metrics.read()).requests.bytes, before, 'no request was sent');
});

// The misbehaving routes other issues' tests rely on, judged by curl and nghttp where they can say
// it (exit codes, frames), by Node's client where only it can (the RST_STREAM code, GOAWAY's
// last-stream-id).
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningServer } from '../../src/server/index.ts';
import { startFixture } from '../helpers/fixture.ts';
import { curl, have, run } from '../helpers/peers.ts';

let srv: RunningServer;
before(async () => {
  srv = await startFixture({ tls: false });
});
after(async () => {
  await srv.close(200);
});

const H2 = ['--http2-prior-knowledge'];

describe('misbehaving fixture routes (curl)', {
  skip: have('curl') ? false : 'curl is not installed',
}, () => {
  for (const [label, args] of [
    ['HTTP/1.1', []],
    ['h2c', H2],
  ] as const) {
    test(`${label}: /slow-headers?ms=300 answers after ≥ 300 ms`, async () => {
      const r = await run('curl', [
        '-sS',
        ...args,
        '-o',
        '/dev/null',
        '-w',
        '%{time_starttransfer} %{http_code}',
        `${srv.plainUrl}/slow-headers?ms=300`,
      ]);
      const [t, code] = r.stdout.split(' ');
      assert.equal(code, '200');
      assert.ok(Number(t) >= 0.29, `first byte after ${t} s`);
    });

    test(`${label}: /hang never answers; the handler ends when the client leaves`, async () => {
      const r = await run('curl', ['-sS', ...args, '--max-time', '0.4', `${srv.plainUrl}/hang`]);
      assert.equal(r.code, 28, `curl exit ${r.code} (28 = timed out)`);
      for (let i = 0; i < 100 && srv.metrics().inFlight > 0; i++) await sleep(10);
      assert.equal(srv.metrics().inFlight, 0, 'nothing left in flight');
    });
  }

  test('HTTP/1.1: /reset destroys the connection (curl 52), after=headers truncates (curl 18)', async () => {
    assert.equal((await curl([`${srv.plainUrl}/reset`])).run.code, 52);
    assert.equal((await curl([`${srv.plainUrl}/reset?after=headers`])).run.code, 18);
  });

  test('h2c: /reset resets the stream (curl 92 names the code)', async () => {
    const r = await curl([...H2, `${srv.plainUrl}/reset`]);
    assert.equal(r.run.code, 92);
    assert.match(r.run.stderr, /INTERNAL_ERROR/);
    const c = await curl([...H2, `${srv.plainUrl}/reset?code=8`]);
    assert.match(c.run.stderr, /CANCEL/);
  });

  test('HTTP/1.1: /goaway answers with Connection: close', async () => {
    const r = await curl(['-D', '-', `${srv.plainUrl}/goaway`]);
    assert.equal(r.status, 200);
    assert.match(r.body, /connection: close/i);
  });
});

describe('HTTP/2 frames the fixtures send (Node client)', () => {
  test('/reset: RST_STREAM INTERNAL_ERROR by default, the given code, INTERNAL_ERROR after the head; the session survives', async () => {
    const s = http2.connect(srv.plainUrl!);
    try {
      const code = (path: string) =>
        new Promise<number | undefined>((resolve) => {
          const q = s.request({ ':path': path });
          q.on('error', () => {});
          q.resume();
          q.on('close', () => resolve(q.rstCode));
        });
      assert.equal(await code('/reset'), http2.constants.NGHTTP2_INTERNAL_ERROR);
      assert.equal(await code('/reset?code=8'), http2.constants.NGHTTP2_CANCEL);
      assert.equal(await code('/reset?after=headers'), http2.constants.NGHTTP2_INTERNAL_ERROR);
      assert.equal(await code('/healthz'), http2.constants.NGHTTP2_NO_ERROR, 'same session still serves');
    } finally {
      s.close();
    }
  });

  test('/reset?every=3: only every third request is reset, the others answer 200 on the same session', async () => {
    const s = http2.connect(srv.plainUrl!);
    try {
      const outcomes: string[] = [];
      for (let i = 0; i < 9; i++) {
        outcomes.push(
          await new Promise<string>((resolve) => {
            const q = s.request({ ':path': '/reset?every=3' });
            let status = 0;
            q.on('response', (h) => {
              status = Number(h[':status']);
            });
            q.on('error', () => {});
            q.resume();
            q.on('close', () => resolve(q.rstCode ? `rst ${q.rstCode}` : String(status)));
          }),
        );
      }
      const rst = `rst ${http2.constants.NGHTTP2_INTERNAL_ERROR}`;
      assert.deepEqual(outcomes, ['200', '200', rst, '200', '200', rst, '200', '200', rst]);
    } finally {
      s.close();
    }
  });

  test('/goaway: the response arrives, then GOAWAY naming its stream as the last one', async () => {
    const s = http2.connect(srv.plainUrl!);
    s.on('error', () => {});
    const goaway = new Promise<[number, number]>((resolve) =>
      s.once('goaway', (code, last) => resolve([code, last])),
    );
    const q = s.request({ ':path': '/goaway' });
    let body = '';
    q.setEncoding('utf8');
    q.on('data', (d: string) => {
      body += d;
    });
    await new Promise((r) => q.on('end', r));
    assert.equal(body, 'goaway\n');
    const [code, last] = await goaway;
    assert.equal(code, 0);
    assert.equal(last, q.id);
    await new Promise((r) => s.once('close', r));
  });

  /** Opens a session with a stream that never ends, resets with mode=socket, waits (≤ 5 s) for the end. */
  async function resetSocket() {
    const s = http2.connect(srv.plainUrl!);
    s.on('error', () => {});
    let goaway: number | undefined;
    s.once('goaway', (code) => {
      goaway = code;
    });
    const closed = new Promise<'closed'>((r) => s.once('close', () => r('closed')));
    // A stream that would never end on its own shares the connection with the reset.
    const hang = s.request({ ':path': '/hang' });
    hang.on('error', () => {});
    let hangAnswered = false;
    hang.once('response', () => {
      hangAnswered = true;
    });
    await new Promise((r) => hang.once('ready', r));
    const q = s.request({ ':path': '/reset?mode=socket' });
    q.on('error', () => {});
    let resetAnswered = false;
    q.once('response', () => {
      resetAnswered = true;
    });
    // The client never closes this session: only the server can end it.
    const outcome = await Promise.race([closed, sleep(5000, 'still open' as const, { ref: false })]);
    if (!s.destroyed) s.destroy();
    return { outcome, goaway, hangAnswered, resetAnswered, hangClosed: hang.closed };
  }

  test('/reset?mode=socket ends the whole connection: the other stream on it is cut, nothing is answered', async () => {
    const r = await resetSocket();
    assert.equal(r.outcome, 'closed', 'the server did not end the connection');
    assert.equal(r.resetAnswered, false);
    assert.equal(r.hangAnswered, false);
    assert.ok(r.hangClosed, 'the other stream on the connection ended with it');
  });

  test('/reset?mode=socket sends no GOAWAY (an abrupt end, not a graceful one)', async () => {
    const r = await resetSocket();
    assert.equal(r.outcome, 'closed');
    assert.equal(r.goaway, undefined, `GOAWAY code ${r.goaway} received`);
  });
});

test('nghttp sees the fixtures too (GOAWAY frame received)', {
  skip: have('nghttp') ? false : 'nghttp is not installed',
}, async () => {
  const r = await run('nghttp', ['-v', `${srv.plainUrl}/goaway`, `${srv.plainUrl}/slow-headers?ms=200`]);
  assert.match(r.stdout, /recv GOAWAY frame/);
});

// The socket-failure table against errors real sockets raise on loopback: a refused connection, TLS
// spoken to a plain-text port, a peer that resets.
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import tls from 'node:tls';
import { socketFailureOf } from '../../src/core/index.ts';

/** The error `connect` raises (it must raise one). */
function errorOf(connect: () => net.Socket): Promise<NodeJS.ErrnoException> {
  return new Promise((resolve, reject) => {
    const s = connect();
    s.once('error', resolve);
    s.once('close', () => reject(new Error('closed without an error')));
  });
}

/** A loopback port nothing listens on (bound, read, released). */
async function closedPort(): Promise<number> {
  const srv = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => srv.once('listening', r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

test('a refused connection is unreachable', async () => {
  const port = await closedPort();
  const err = await errorOf(() => net.connect(port, '127.0.0.1'));
  assert.equal(err.code, 'ECONNREFUSED');
  assert.equal(socketFailureOf(err), 'unreachable');
});

test('TLS to a port that answers in plain text is tls; a reset is reset', async () => {
  let answer: 'plain' | 'reset' = 'plain';
  const srv = net.createServer((s) => {
    s.once('data', () => {
      if (answer === 'reset') s.resetAndDestroy();
      else s.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  try {
    const err = await errorOf(() => tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }));
    assert.match(String(err.code), /^ERR_SSL/);
    assert.equal(socketFailureOf(err), 'tls');
    answer = 'reset';
    const reset = await errorOf(() =>
      net.connect(port, '127.0.0.1', function (this: net.Socket) {
        this.write('x');
      }),
    );
    assert.equal(reset.code, 'ECONNRESET');
    assert.equal(socketFailureOf(reset), 'reset');
  } finally {
    await new Promise((r) => srv.close(r));
  }
});

test('codes outside the table have no kind', () => {
  assert.equal(socketFailureOf({ code: 'ERR_HTTP2_GOAWAY_SESSION' }), undefined);
  assert.equal(socketFailureOf(new Error('no code')), undefined);
  assert.equal(socketFailureOf('ETIMEDOUT'), 'timeout');
});

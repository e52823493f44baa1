// `--unix-socket PATH`: the plain listener's protocols also served on a Unix domain socket, as a
// reverse proxy on the same host reaches its backend (report 001's nginx → uvicorn). curl is the
// referee: HTTP/1.1 and h2c prior knowledge over the path, and the server counts the connections.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { scrape, startFixture } from '../helpers/fixture.ts';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'h2lab-unix-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('--unix-socket', () => {
  test('curl gets HTTP/1.1 and h2c over the path; the connections are counted as plain', async () => {
    const path = join(dir, 'fixture.sock');
    const srv = await startFixture({ tls: false, unixSocket: path });
    try {
      assert.equal(srv.unixSocket, path);
      const before = await scrape(srv);
      const curl = (...extra: string[]) =>
        run('curl', [
          '-sS',
          ...extra,
          '--unix-socket',
          path,
          '-o',
          '/dev/null',
          '-w',
          '%{http_version} %{size_download}',
          'http://localhost/bytes/1000',
        ]);
      const h1 = await curl();
      assert.equal(h1.stdout, '1.1 1000', `curl over the socket: ${h1.stdout}`);
      const h2 = await curl('--http2-prior-knowledge');
      assert.equal(h2.stdout, '2 1000', `curl h2c over the socket: ${h2.stdout}`);
      const afterS = await scrape(srv);
      const plain = (m: typeof before) => Object.values(m.connections.total.plain).reduce((a, b) => a + b, 0);
      // Two curl connections over the path; the scrapes' fetch may reuse its keep-alive connection
      // (then nothing more) or open one over TCP.
      const n = plain(afterS) - plain(before);
      assert.ok(
        n === 2 || n === 3,
        `plain connections counted: ${n} (${JSON.stringify(afterS.connections.total)})`,
      );
    } finally {
      await srv.close(200);
    }
    assert.equal(existsSync(path), false, 'the socket file is removed at close');
  });

  test('a path in a directory that does not exist fails, naming the option', async () => {
    await assert.rejects(
      startFixture({ tls: false, unixSocket: join(dir, 'missing', 'x.sock') }),
      /--unix-socket .*cannot listen/,
    );
  });
});

// The QUIC key log h2lab does not write, and why: the binding's `keylog` option turns quiche's key
// logging on but gives no connection a writer, so its file stays empty on both ends after a complete
// exchange (docs/usage.md says so). Should a version of the binding write the keys, this fails, and
// `--keylog` can then cover QUIC too.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { H3_PACKAGE } from '../../src/h3/index.ts';
import { startFixture } from '../helpers/fixture.ts';
import { h3SkipReason } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'h2lab-h3-keylog-'));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Session {
  request(h: Record<string, string>, o: { endStream: boolean }): NodeJS.EventEmitter & { resume(): void };
  close(): Promise<void>;
}

test("the binding's keylog writes no QUIC secret, client or server", {
  skip: await h3SkipReason(),
}, async () => {
  const m = (await import(H3_PACKAGE)) as {
    connectAsync(a: string, o: Record<string, unknown>): Promise<Session>;
    createSecureServer(
      o: Record<string, unknown>,
      h: (s: { respondWithBody(h: Record<string, string>, b: string): void }) => void,
    ): NodeJS.EventEmitter & {
      listen(p: number, h: string): void;
      address(): { port: number };
      close(): Promise<void>;
    };
  };
  // The fixture only for its development CA and certificate.
  const fixture = await startFixture({ tls: true });
  await fixture.close(0);
  const certs = join(process.env.H2LAB_HOME!, 'dev-certs');
  const [serverKeys, clientKeys] = [join(dir, 'server.keys'), join(dir, 'client.keys')];
  const server = m.createSecureServer(
    {
      key: readFileSync(join(certs, 'server-key.pem')),
      cert: readFileSync(join(certs, 'server.pem')),
      disableRetry: true,
      keylog: serverKeys,
    },
    (s) => s.respondWithBody({ ':status': '200' }, 'ok'),
  );
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const c = await m.connectAsync(`127.0.0.1:${server.address().port}`, {
      ca: readFileSync(join(certs, 'ca.pem')),
      servername: 'localhost',
      keylog: clientKeys,
    });
    const st = c.request(
      { ':method': 'GET', ':path': '/', ':authority': 'localhost', ':scheme': 'https' },
      {
        endStream: true,
      },
    );
    st.resume();
    await new Promise((r) => st.once('end', r));
    await c.close();
    // Past the binding's 100 ms poll of the file, had anything been written.
    await new Promise((r) => setTimeout(r, 300));
    for (const f of [serverKeys, clientKeys]) assert.equal(statSync(f).size, 0, `${f} holds secrets now`);
  } finally {
    await server.close();
  }
});

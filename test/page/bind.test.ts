// Where a replay's origin listeners listen: on the address the replay reports (QUIC behind a link on
// the unspecified address of the link's namespace, which holds no other), so a HAR (private bodies,
// cookies) is never served to the network. A peer in a namespace of the
// test, over a veth pair to this host, tries the h3 listener; the sockets' addresses are read from
// the kernel (`ss`). Needs no browser.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createLink, linkServerNamespace } from '../../src/net/index.ts';
import { HAR_LIMITS, readHar } from '../../src/page/index.ts';
import { type ReplayOrigins, startReplayOrigins } from '../../src/page/origins-host.ts';
import { h3SkipReason } from '../h3/helpers.ts';
import { type TestCerts, testCerts } from '../helpers/certs.ts';
import { netSkipReason } from '../net/helpers.ts';
import { oneEntryHar } from './helpers.ts';

const h3Skip = await h3SkipReason();
if (h3Skip) console.log(`# replay bind tests skipped: ${h3Skip}`);
const nsSkip = h3Skip ?? netSkipReason();

const HOST = 'www.example.test';
const GET = fileURLToPath(new URL('./fixtures/h3-get.ts', import.meta.url));
const tag = process.pid.toString(36);
const PEER = `h2labtest-peer-${tag}`;
const HOST_DEV = `xp${tag}h`;
/** This host's end of the peer's veth pair, and the peer's. */
const HOST_ADDR = '10.203.0.1';
const PEER_ADDR = '10.203.0.2';

/**
 * The local addresses of the listening sockets on `port` (`udp` or `tcp`), as the kernel has them,
 * here or in namespace `ns`.
 */
function listeningOn(proto: 'udp' | 'tcp', port: number, ns?: string): string[] {
  const args = ['-H', '-n', '-l', proto === 'udp' ? '-u' : '-t', `sport = :${port}`];
  const out = execFileSync('ss', ns ? ['-N', ns, ...args] : args, { encoding: 'utf8' });
  return out
    .split('\n')
    .filter(Boolean)
    .map((l) => l.trim().split(/\s+/)[3] ?? '');
}

/** `GET /` over h3 `count` times from `ns` (or here): the status of each try, or why it failed. */
function h3Get(
  address: string,
  port: number,
  caFile: string,
  count: number,
  ns?: string,
): Promise<Array<number | string>> {
  const argv = [
    process.execPath,
    ...process.execArgv,
    GET,
    address,
    String(port),
    HOST,
    caFile,
    String(count),
  ];
  if (ns) argv.unshift('ip', 'netns', 'exec', ns);
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.once('exit', () => {
      try {
        resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as Array<number | string>);
      } catch {
        reject(new Error(`h3-get printed ${JSON.stringify(out)}`));
      }
    });
  });
}

const quiet = (args: string[]): void => {
  try {
    execFileSync('ip', args, { stdio: 'ignore' });
  } catch {}
};

describe('page replay: every listener binds the address it reports', { skip: h3Skip }, () => {
  let dir = '';
  let certs: TestCerts | undefined;
  let origins: ReplayOrigins | undefined;
  let harFile = '';
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'h2lab-replay-bind-'));
    harFile = join(dir, 'one.har');
    writeFileSync(harFile, JSON.stringify(oneEntryHar(`https://${HOST}/`)));
    certs = await testCerts();
    origins = await startReplayOrigins(
      readHar(harFile),
      { file: harFile, limits: HAR_LIMITS },
      [
        { protocol: 'h2', map: { [HOST]: 'h2' } },
        { protocol: 'h3', map: { [HOST]: 'h3' } },
      ],
      { caPem: certs.caPem, caKeyPem: certs.caKeyPem },
      100,
      undefined,
    );
  });
  after(async () => {
    await origins?.close();
    certs?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('on loopback: the TCP and the UDP sockets listen on 127.0.0.1, and answer there', async () => {
    assert.equal(origins!.address, '127.0.0.1');
    const listeners = origins!.settings.flatMap((s) => s.listeners);
    assert.deepEqual(
      listeners.map((l) => l.wire),
      ['h2', 'h3'],
    );
    for (const l of listeners) {
      const proto = l.wire === 'h3' ? 'udp' : 'tcp';
      // The HTTP/3 binding may open more than one socket on the port (one per worker): all of them.
      const seen = listeningOn(proto, l.port);
      assert.ok(seen.length > 0, `${l.wire}: no ${proto} socket on ${l.port}`);
      assert.deepEqual([...new Set(seen)], [`127.0.0.1:${l.port}`], `${l.wire} (${proto})`);
    }
    const h3 = listeners.find((l) => l.wire === 'h3')!;
    assert.deepEqual(await h3Get('127.0.0.1', h3.port, certs!.path.caPem, 2), [200, 200]);
  });

  test("behind a link: TCP listens on the link's server address, UDP on its namespace's only one, and h3 answers there", {
    skip: nsSkip,
  }, async () => {
    const link = await createLink({ profile: 'relay' });
    let inLink: ReplayOrigins | undefined;
    try {
      inLink = await startReplayOrigins(
        readHar(harFile),
        { file: harFile, limits: HAR_LIMITS },
        [
          { protocol: 'http/1.1', map: { [HOST]: 'http/1.1' } },
          { protocol: 'h3', map: { [HOST]: 'h3' } },
        ],
        { caPem: certs!.caPem, caKeyPem: certs!.caKeyPem },
        100,
        linkServerNamespace(link),
      );
      assert.equal(inLink.address, link.serverAddress);
      const listeners = inLink.settings.flatMap((s) => s.listeners);
      // QUIC binds the unspecified address (bound to the link's, quiche's packets outgrow the link's
      // MTU): the namespace holds the link's server address and loopback only, so it is as private.
      const addresses = execFileSync('ip', ['-n', link.namespace, '-o', 'addr', 'show'], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(/\s+/)[3]!.split('/')[0]);
      assert.deepEqual(
        addresses.filter((a) => !/^(127\.|::1$|fe80:)/.test(a!)),
        [link.serverAddress],
      );
      for (const l of listeners) {
        const proto = l.wire === 'h3' ? 'udp' : 'tcp';
        const seen = listeningOn(proto, l.port, link.namespace);
        assert.ok(seen.length > 0, `${l.wire}: no ${proto} socket on ${l.port}`);
        const at = proto === 'udp' ? '0.0.0.0' : link.serverAddress;
        assert.deepEqual([...new Set(seen)], [`${at}:${l.port}`], `${l.wire} (${proto})`);
      }
      const h3 = listeners.find((l) => l.wire === 'h3')!;
      assert.deepEqual(await h3Get(link.serverAddress, h3.port, certs!.path.caPem, 2), [200, 200]);
    } finally {
      await inLink?.close();
      await link.close();
    }
  });

  test('a peer over a veth pair to this host gets nothing from the h3 listener', {
    skip: nsSkip,
  }, async () => {
    const h3 = origins!.settings.flatMap((s) => s.listeners).find((l) => l.wire === 'h3')!;
    quiet(['netns', 'del', PEER]);
    quiet(['link', 'del', HOST_DEV]);
    try {
      execFileSync('ip', ['netns', 'add', PEER]);
      execFileSync('ip', [
        'link',
        'add',
        HOST_DEV,
        'type',
        'veth',
        'peer',
        'name',
        `xp${tag}p`,
        'netns',
        PEER,
      ]);
      execFileSync('ip', ['addr', 'add', `${HOST_ADDR}/30`, 'dev', HOST_DEV]);
      execFileSync('ip', ['link', 'set', HOST_DEV, 'up']);
      execFileSync('ip', ['-n', PEER, 'addr', 'add', `${PEER_ADDR}/30`, 'dev', `xp${tag}p`]);
      execFileSync('ip', ['-n', PEER, 'link', 'set', `xp${tag}p`, 'up']);
      execFileSync('ip', ['-n', PEER, 'link', 'set', 'lo', 'up']);
      const got = await h3Get(HOST_ADDR, h3.port, certs!.path.caPem, 5, PEER);
      assert.equal(got.length, 5);
      assert.deepEqual(
        got.filter((s) => s === 200),
        [],
        `the peer got ${JSON.stringify(got)}`,
      );
    } finally {
      quiet(['netns', 'del', PEER]);
      quiet(['link', 'del', HOST_DEV]);
    }
  });
});

// A user's own server behind an emulated link (src/net/gateway.ts), as a user runs it: nginx — a
// server nobody here wrote — started by the test on 127.0.0.1 and, standing for another host, in a
// namespace of the test's reached over a veth pair; the fixture's HTTP/3 listener started as a
// separate process; and Ctrl-C into a linked comparison, sent to the whole process group as a
// terminal does.
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { CompareResult, RunResult } from '../../src/model/index.ts';
import { missingGatewayPrerequisite, readSysctl } from '../../src/net/index.ts';
import { findNginx } from '../../src/studies/nginx.ts';
import { h3SkipReason } from '../h3/helpers.ts';
import { testCerts } from '../helpers/certs.ts';
import { h2lab } from '../helpers/cli.ts';
import { freePort, haveNginx, type Nginx, startNginx } from '../helpers/nginx.ts';
import { netSkipReason } from './helpers.ts';

const skip =
  netSkipReason() ??
  missingGatewayPrerequisite() ??
  (haveNginx() ? undefined : 'nginx is not installed (Debian: apt-get install nginx)');
if (skip) console.log(`# gateway tests skipped: ${skip}`);
const h3Skip = await h3SkipReason();

const runs = (r: CompareResult): RunResult[] => r.cells.flatMap((c) => c.runs);
const readJson = <T>(p: string): T => JSON.parse(readFileSync(p, 'utf8')) as T;

/** What an h2lab process with this pid left on the host: namespaces, devices, nftables tables. */
function leftovers(pid: number): string[] {
  const out: string[] = [];
  const ns = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  out.push(...ns.split('\n').filter((l) => l.startsWith(`h2lab-${pid}-`)));
  const id = `h2l${pid.toString(36)}`;
  const links = execFileSync('ip', ['-o', 'link'], { encoding: 'utf8' });
  out.push(...links.split('\n').filter((l) => l.includes(id)));
  const tables = execFileSync('nft', ['list', 'tables'], { encoding: 'utf8' });
  out.push(...tables.split('\n').filter((l) => l.includes(`h2lab_${pid}_`)));
  return out;
}

let dir = '';
let nginx: Nginx | undefined;
let tlsPort = 0;

/** Runs `ip` with these arguments, ignoring a failure (something already gone). */
function quiet(args: string[]): void {
  try {
    execFileSync('ip', args, { stdio: 'ignore' });
  } catch {}
}

/**
 * What an earlier run of the remote-host test left when it died mid-way (its namespace, and the host
 * end of its veth pair holding 198.51.100.1): removed first, or the address would be taken twice.
 */
function removeStaleRemoteHosts(): void {
  for (const old of execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).split('\n')) {
    const name = old.split(' ')[0] ?? '';
    if (!name.startsWith('h2labtest-remote-')) continue;
    for (const p of execFileSync('ip', ['netns', 'pids', name], { encoding: 'utf8' }).split('\n'))
      if (p) quiet(['netns', 'exec', name, 'kill', '-9', p]);
    quiet(['netns', 'del', name]);
  }
  for (const line of execFileSync('ip', ['-o', '-4', 'addr'], { encoding: 'utf8' }).split('\n'))
    if (line.includes('198.51.100.1/30')) quiet(['link', 'del', line.split(/\s+/)[1]!]);
}

/**
 * "Another host": namespace `ns` over a veth pair (198.51.100.1 here, .2 there) running nginx, started
 * by the test (not by h2lab), TLS with h2 on `port`. Resolves once it accepts connections.
 */
async function startRemoteNginx(
  ns: string,
  hostDev: string,
  remoteDev: string,
  rdir: string,
  port: number,
): Promise<ChildProcess> {
  execFileSync('ip', ['netns', 'add', ns]);
  execFileSync('ip', ['link', 'add', hostDev, 'type', 'veth', 'peer', 'name', remoteDev]);
  execFileSync('ip', ['link', 'set', remoteDev, 'netns', ns]);
  execFileSync('ip', ['addr', 'add', '198.51.100.1/30', 'dev', hostDev]);
  execFileSync('ip', ['link', 'set', hostDev, 'up']);
  execFileSync('ip', ['-n', ns, 'addr', 'add', '198.51.100.2/30', 'dev', remoteDev]);
  execFileSync('ip', ['-n', ns, 'link', 'set', remoteDev, 'up']);
  execFileSync('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
  // nginx on the "remote host", started by the test (not by h2lab), TLS with h2.
  for (const d of ['logs', 'tmp']) mkdirSync(join(rdir, d), { recursive: true });
  const conf = `${process.getuid?.() === 0 ? 'user root;\n' : ''}worker_processes 1;
pid ${join(rdir, 'nginx.pid')};
error_log ${join(rdir, 'error.log')} warn;
events { worker_connections 256; }
http { access_log off; client_body_temp_path ${join(rdir, 'tmp')};
  server { listen 198.51.100.2:${port} ssl http2; ssl_certificate ${join(dir, 'server.pem')};
    ssl_certificate_key ${join(dir, 'server.key')}; root ${join(dir, 'www')}; } }
`;
  writeFileSync(join(rdir, 'nginx.conf'), conf);
  const remote = spawn(
    'ip',
    ['netns', 'exec', ns, findNginx()!, '-p', rdir, '-c', join(rdir, 'nginx.conf'), '-g', 'daemon off;'],
    { stdio: 'ignore' },
  );
  const deadline = Date.now() + 10_000;
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const s = net.connect({ host: '198.51.100.2', port }, () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (up) break;
    assert.ok(Date.now() < deadline, 'nginx in the remote namespace did not start');
    await new Promise((res) => setTimeout(res, 100));
  }
  return remote;
}

/** One run against the remote host: its path and its connections as the client's kernel saw them. */
function assertRemoteRun(run: RunResult): void {
  const link = run.environment.link!;
  assert.equal(link.gateway?.placement, 'remote');
  assert.equal(link.gateway?.serverPinned, false, 'a remote server keeps its own TCP settings');
  const path = run.environment.path!;
  assert.equal(path.placement, 'remote');
  const tcp = run.connections.tcp!;
  assert.equal(tcp.server, undefined, "a remote server's sockets are out of reach");
  const conns = tcp.client!.perConnection;
  assert.equal(conns.length, run.transport.name === 'h1' ? 6 : 1, run.transport.name);
  for (const c of conns) {
    // The recorded RTT is the path's plus the link's.
    assert.ok(c.rttMs >= 100 + path.baseRttMinMs * 0.5, `${run.transport.name} RTT ${c.rttMs}`);
    assert.ok(c.cwndSegments > 0);
    assert.equal(c.congestionControl, 'cubic');
  }
  assert.ok(run.counts.ok > 0, `${run.transport.name}: ${JSON.stringify(run.counts)}`);
}

/** A remote host behind the link: the path's RTT recorded, each connection's own window, forwarding put back. */
async function remoteHostBehindLink(): Promise<void> {
  const ns = `h2labtest-remote-${process.pid}`;
  const hostDev = `h2t${process.pid.toString(36)}h`;
  const remoteDev = `h2t${process.pid.toString(36)}r`;
  const forwardBefore = readSysctl('net.ipv4.ip_forward');
  let remote: ChildProcess | undefined;
  const rdir = join(dir, 'remote');
  const port = 8443;
  removeStaleRemoteHosts();
  try {
    remote = await startRemoteNginx(ns, hostDev, remoteDev, rdir, port);
    const out = join(dir, 'remote-out');
    let pid = 0;
    const r = await h2lab(
      [
        'compare',
        `https://198.51.100.2:${port}/`,
        '-k',
        '--paths',
        '/10k.bin',
        '--rtt',
        '100ms',
        '--loss',
        '1%',
        '--cc',
        'cubic',
        '--protocols',
        'h1,h2',
        '--concurrency',
        '8',
        '--runs',
        '2',
        '--warmup-runs',
        '0',
        '--duration',
        '1s',
        '--out',
        out,
      ],
      { timeoutMs: 120_000, onStart: (c) => (pid = c.pid ?? 0) },
    );
    assert.equal(r.code, 0, r.stderr);
    const result = readJson<CompareResult>(join(out, 'results.json'));
    for (const run of runs(result)) assertRemoteRun(run);
    const text = r.stdout.replace(/\s+/g, ' ');
    assert.match(text, /198\.51\.100\.2:\d+ on another host, base RTT/);
    assert.match(text, /on h2lab's end only \(the remote server keeps its own\)/);
    assert.deepEqual(leftovers(pid), []);
    assert.equal(readSysctl('net.ipv4.ip_forward'), forwardBefore, 'forwarding put back');
  } finally {
    remote?.kill('SIGTERM');
    for (const p of execFileSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).split('\n')) {
      try {
        if (p) process.kill(Number(p), 'SIGKILL');
      } catch {
        // Gone since the listing (nginx's workers exit with their master).
      }
    }
    quiet(['netns', 'del', ns]);
    if (existsSync(`/sys/class/net/${hostDev}`)) quiet(['link', 'del', hostDev]);
  }
}

/** Ctrl-C, sent to the process group as a terminal does, 5 s into a comparison through a link. */
async function interruptLinkedComparison(): Promise<void> {
  const out = join(dir, 'interrupted');
  let pid = 0;
  let signalledAt = 0;
  const r = await h2lab(
    [
      'compare',
      `https://127.0.0.1:${tlsPort}/`,
      '-k',
      '--paths',
      '/10k.bin',
      '--rtt',
      '50ms',
      '--concurrency',
      '1,8',
      '--runs',
      '5',
      '--duration',
      '300ms',
      '--out',
      out,
    ],
    {
      timeoutMs: 60_000,
      processGroup: true,
      onStart: (c) => {
        pid = c.pid ?? 0;
        setTimeout(() => {
          signalledAt = performance.now();
          // As a terminal does: the whole foreground process group (relay, watchers included).
          process.kill(-pid, 'SIGINT');
        }, 5000);
      },
    },
  );
  const tookMs = performance.now() - signalledAt;
  assert.equal(r.code, 130, r.stderr);
  assert.ok(tookMs <= 5000, `exited ${tookMs.toFixed(0)} ms after SIGINT`);
  assert.doesNotMatch(r.stderr, /ERR_IPC_CHANNEL_CLOSED|\n\s+at /);
  assert.deepEqual(leftovers(pid), []);
  const result = readJson<CompareResult>(join(out, 'results.json'));
  assert.equal(result.status, 'interrupted');
  assert.ok(runs(result).length >= 1, 'the runs finished before the signal are kept');
  assert.ok(existsSync(join(out, 'report.html')));
  assert.ok(existsSync(join(out, 'report.md')));
}

describe('a server h2lab did not start, behind a link', { skip }, () => {
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'h2lab-gateway-'));
    const certs = await testCerts({ hosts: ['127.0.0.1', 'localhost', '198.51.100.2'] });
    writeFileSync(join(dir, 'server.pem'), certs.serverPem);
    writeFileSync(join(dir, 'server.key'), certs.serverKeyPem);
    mkdirSync(join(dir, 'www'));
    writeFileSync(join(dir, 'www', '10k.bin'), Buffer.alloc(10 * 1024, 7));
    tlsPort = await freePort();
    nginx = await startNginx(
      dir,
      `ssl_certificate ${join(dir, 'server.pem')};
  ssl_certificate_key ${join(dir, 'server.key')};
  server { listen 127.0.0.1:${tlsPort} ssl http2; root ${join(dir, 'www')}; }`,
      [tlsPort],
    );
  });
  after(async () => {
    await nginx?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('nginx on 127.0.0.1: a burst through 200 ms / 10 Mbit/s records the path and names the mechanism with the kernel numbers of both ends', async () => {
    const out = join(dir, 'local');
    let pid = 0;
    const r = await h2lab(
      [
        'compare',
        `https://127.0.0.1:${tlsPort}/`,
        '-k',
        '--paths',
        '/10k.bin',
        '--burst',
        '32',
        '--rtt',
        '200ms',
        '--bandwidth',
        '10mbit',
        '--protocols',
        'h1,h2',
        '--runs',
        '3',
        '--out',
        out,
      ],
      { timeoutMs: 120_000, onStart: (c) => (pid = c.pid ?? 0) },
    );
    assert.equal(r.code, 0, r.stderr);
    const result = readJson<CompareResult>(join(out, 'results.json'));
    assert.equal(result.target.embedded, false);
    for (const run of runs(result)) {
      const link = run.environment.link!;
      assert.equal(link.rttMs, 200);
      assert.equal(link.rateBitsPerSec, 10_000_000);
      assert.equal(link.gateway?.placement, 'loopback');
      assert.equal(link.gateway?.serverPinned, true);
      const path = run.environment.path!;
      assert.equal(path.target, `127.0.0.1:${tlsPort}`);
      assert.ok(path.baseRttMs < 5, `base RTT ${path.baseRttMs} ms on loopback`);
      // TCP, TLS and the request each cross the link: nothing can answer within 2 round trips.
      const first = run.burst?.firstResponseMs ?? 0;
      assert.ok(first >= 400, `first response after ${first} ms through 200 ms`);
      // Both ends' TCP from the kernel: h2lab's sockets, and nginx's own read as they closed.
      const tcp = run.connections.tcp!;
      const want = run.transport.name === 'h1' ? 6 : 1;
      assert.equal(tcp.client?.connections, want, `${run.transport.name} client sockets`);
      assert.equal(tcp.server?.connections, want, `${run.transport.name} server sockets (nginx's)`);
      assert.ok((tcp.server?.rttMs.median ?? 0) >= 200, `nginx's RTT ${tcp.server?.rttMs.median}`);
    }
    // The terminal's lines wrap at 80 columns: match the words, not the layout.
    const text = r.stdout.replace(/\s+/g, ' ');
    assert.match(text, /path\s+127\.0\.0\.1:\d+ on this host's loopback, base RTT/);
    assert.match(text, /to 127\.0\.0\.1 through a gateway \(NAT\)/);
    assert.match(text, /What bounds a burst of 32 at 200 ms RTT/);
    assert.doesNotMatch(text, /loopback, so it hardly matters/);
    assert.deepEqual(leftovers(pid), []);
  });

  test(
    'a remote host (a namespace over a veth pair): RTT = base + link, each connection with its own congestion window, forwarding put back',
    remoteHostBehindLink,
  );

  test('h3 through a link to the fixture server started as a separate process', {
    skip: h3Skip,
  }, async () => {
    const server = spawn(
      process.execPath,
      [...process.execArgv, 'src/cli/main.ts', 'serve', '--port', '0', '--tls-port', '0', '--h3'],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let text = '';
        server.stdout!.setEncoding('utf8').on('data', (d: string) => {
          text += d;
          const m = /listening (https:\/\/\S+) \(h3\)/.exec(text);
          if (m) resolve(m[1]!);
        });
        server.once('exit', (code) => reject(new Error(`serve exited ${code}: ${text}`)));
      });
      const out = join(dir, 'h3.json');
      const r = await h2lab(
        [
          'bench',
          `${url}/bytes/1024`,
          '-p',
          'h3',
          '-k',
          '-n',
          '40',
          '-c',
          '4',
          '--rtt',
          '50ms',
          '--json',
          out,
          '-q',
        ],
        { timeoutMs: 90_000 },
      );
      assert.equal(r.code, 0, r.stderr);
      const result = readJson<RunResult>(out);
      assert.equal(result.counts.ok, 40);
      assert.equal(result.environment.link?.gateway?.placement, 'loopback');
      // QUIC crossed the link too: no request can be answered within one round trip of 50 ms.
      assert.ok(result.latencyMs.min >= 50, `min latency ${result.latencyMs.min} ms`);
    } finally {
      server.kill('SIGTERM');
    }
  });

  test(
    'Ctrl-C 5 s into a linked comparison: exit 130 within 5 s, nothing left on the host, the finished runs and the reports written',
    interruptLinkedComparison,
  );
});

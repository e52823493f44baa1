// What a link to a server h2lab did not start opens on the host (src/net/gateway.ts), tested as a
// neighbour of the host would: namespaces of the test play the host h2lab runs on, a neighbour whose
// default route is that host, and another host holding the target. h2lab runs inside the "host"
// namespace, so nothing here touches the machine's own forwarding or firewall.
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { RunResult } from '../../src/model/index.ts';
import { missingGatewayPrerequisite } from '../../src/net/index.ts';
import { type CliRun, h2lab } from '../helpers/cli.ts';
import { netSkipReason } from './helpers.ts';

const skip = netSkipReason() ?? missingGatewayPrerequisite();
if (skip) console.log(`# exposure tests skipped: ${skip}`);

const tag = process.pid.toString(36);
const HOST = `h2labtest-host-${tag}`;
const NEIGHBOUR = `h2labtest-nb-${tag}`;
const REMOTE = `h2labtest-rm-${tag}`;
const REACH = fileURLToPath(new URL('./fixtures/reach.mjs', import.meta.url));
/** The host's side of the neighbour's and the remote host's veth pairs, and theirs. */
const NB_HOST = '10.201.0.1';
const NB_ADDR = '10.201.0.2';
const RM_HOST = '10.201.0.5';
const RM_ADDR = '10.201.0.6';
const SECRET_PORT = 9999;
const TARGET_PORT = 8080;

// stderr kept from the test's output: `ip` warns about veth peers in namespaces it cannot name.
const sh = (cmd: string, args: string[]): string =>
  execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const inNs = (ns: string, cmd: string, args: string[]): string =>
  sh('ip', ['netns', 'exec', ns, cmd, ...args]);
const sysctl = (ns: string, kv: string): string => inNs(ns, 'sysctl', ['-q', '-w', kv]);

/** Deletes a namespace and ends what runs inside it. */
function removeNamespace(ns: string): void {
  try {
    for (const p of sh('ip', ['netns', 'pids', ns]).split('\n').filter(Boolean)) {
      try {
        process.kill(Number(p), 'SIGKILL');
      } catch {}
    }
    sh('ip', ['netns', 'del', ns]);
  } catch {}
}

/** Namespace `ns` joined to the host namespace by a /30 veth pair; its default route is the host. */
function attach(ns: string, dev: string, hostAddr: string, addr: string): void {
  sh('ip', ['netns', 'add', ns]);
  sh('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
  sh('ip', ['link', 'add', `${dev}h`, 'netns', HOST, 'type', 'veth', 'peer', 'name', `${dev}x`, 'netns', ns]);
  sh('ip', ['-n', HOST, 'addr', 'add', `${hostAddr}/30`, 'dev', `${dev}h`]);
  sh('ip', ['-n', HOST, 'link', 'set', `${dev}h`, 'up']);
  sh('ip', ['-n', ns, 'addr', 'add', `${addr}/30`, 'dev', `${dev}x`]);
  sh('ip', ['-n', ns, 'link', 'set', `${dev}x`, 'up']);
  sh('ip', ['-n', ns, 'route', 'add', 'default', 'via', hostAddr]);
}

/** reach.mjs serving `body` on address:port (TCP and UDP) inside `ns`, once it listens. */
async function serve(ns: string, address: string, port: number, body: string): Promise<ChildProcess> {
  const child = spawn(
    'ip',
    ['netns', 'exec', ns, process.execPath, REACH, 'serve', address, String(port), body],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`reach.mjs serve exited ${code}`)));
  });
  return child;
}

/**
 * What `ns` (the neighbour by default) gets from address:port over `proto`: the body, or
 * "unreached: …". A namespace h2lab made inside the host namespace is named in the mount namespace
 * of the h2lab process that made it (`ip netns exec` gives each its own): `mountsOf` is its pid.
 */
function probe(
  proto: 'tcp' | 'udp',
  address: string,
  port: number,
  where: { ns?: string; mountsOf?: number } = {},
): Promise<string> {
  const argv = [
    'ip',
    'netns',
    'exec',
    where.ns ?? NEIGHBOUR,
    process.execPath,
    REACH,
    proto,
    address,
    String(port),
  ];
  if (where.mountsOf !== undefined) argv.unshift('nsenter', '-t', String(where.mountsOf), '-m');
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.once('exit', () => resolve(out.trim()));
  });
}

/** Every IPv4 forwarding switch of the host namespace but those of h2lab's own devices. */
function forwarding(): string {
  return inNs(HOST, 'sysctl', ['-a', '-r', '^net\\.ipv4\\.(ip_forward|conf\\..*\\.forwarding)$'])
    .split('\n')
    .filter((l) => l && !/\.h2l/.test(l))
    .sort()
    .join('\n');
}

/** h2lab's nftables tables in the host namespace. */
const h2labTables = (): string[] =>
  inNs(HOST, 'nft', ['list', 'tables'])
    .split('\n')
    .filter((l) => l.includes('h2lab_'));

/**
 * The link of a run inside the host namespace, once its gateway is up: the address its client
 * dials, and the host's end of the gateway's veth pair. Waits up to 30 s.
 */
async function linkUp(pid: number): Promise<{ linkAddress: string; gatewayHost: string; namespace: string }> {
  const id = `h2l${pid.toString(36)}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const addrs = sh('ip', ['-n', HOST, '-4', '-o', 'addr', 'show']);
    const link = new RegExp(`${id}\\w*c\\s+inet \\S+ peer (\\S+)/`).exec(addrs)?.[1];
    const gatewayHost = new RegExp(`${id}\\w*g\\s+inet (\\S+) peer`).exec(addrs)?.[1];
    const namespace = sh('ip', ['netns', 'list'])
      .split('\n')
      .map((l) => l.split(' ')[0] ?? '')
      .find((n) => n.startsWith(`h2lab-${pid}-`));
    if (link && gatewayHost && namespace && h2labTables().some((t) => t.includes(`h2lab_${pid}_`)))
      return { linkAddress: link, gatewayHost, namespace };
    assert.ok(Date.now() < deadline, `no gateway of run ${pid} in ${HOST} within 30 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** `bench URL` inside the host namespace for `duration` through a 20 ms link. */
function benchInHost(
  url: string,
  duration: string,
  out: string,
  onStart: (c: ChildProcess) => void,
): Promise<CliRun> {
  return h2lab(['bench', url, '-p', 'h1', '-c', '2', '-d', duration, '--rtt', '20ms', '--json', out, '-q'], {
    netns: HOST,
    timeoutMs: 90_000,
    onStart,
  });
}

/** A 30 s run to the remote target, SIGKILLed as soon as its gateway is up. */
async function killedOnceUp(out: string): Promise<void> {
  let pid = 0;
  let child: ChildProcess | undefined;
  const run = benchInHost(`http://${RM_ADDR}:${TARGET_PORT}/`, '30s', out, (c) => {
    pid = c.pid ?? 0;
    child = c;
  });
  await linkUp(pid);
  child!.kill('SIGKILL');
  await run;
}

function assertServed(r: CliRun, out: string): void {
  assert.equal(r.code, 0, r.stderr);
  const result = JSON.parse(readFileSync(out, 'utf8')) as RunResult;
  assert.ok(result.counts.ok > 0, JSON.stringify(result.counts));
  assert.equal(result.counts.failed ?? 0, 0, JSON.stringify(result.counts));
}

describe('what a link to a server h2lab did not start exposes on the host', { skip }, () => {
  let dir = '';
  const servers: ChildProcess[] = [];
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'h2lab-exposure-'));
    for (const ns of [NEIGHBOUR, REMOTE, HOST]) removeNamespace(ns);
    sh('ip', ['netns', 'add', HOST]);
    sh('ip', ['-n', HOST, 'link', 'set', 'lo', 'up']);
    attach(NEIGHBOUR, `xn${tag}`, NB_HOST, NB_ADDR);
    attach(REMOTE, `xr${tag}`, RM_HOST, RM_ADDR);
  });
  after(() => {
    for (const s of servers) s.kill('SIGKILL');
    for (const ns of [NEIGHBOUR, REMOTE, HOST]) removeNamespace(ns);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => {
    // What a test's runs left is swept by its own assertions; a failed one must not spoil the next.
    for (const s of servers.splice(0)) s.kill('SIGKILL');
  });

  test('a loopback target on a forwarding host: the neighbour reaches neither a loopback-only service nor the target through the link', async () => {
    sysctl(HOST, 'net.ipv4.ip_forward=1');
    servers.push(await serve(HOST, '127.0.0.1', SECRET_PORT, 'secret'));
    servers.push(await serve(HOST, '127.0.0.1', TARGET_PORT, 'target'));
    // The neighbour does reach the host itself: the probes below can succeed.
    servers.push(await serve(HOST, NB_HOST, SECRET_PORT, 'host'));
    assert.equal(await probe('tcp', NB_HOST, SECRET_PORT), 'host');
    const out = join(dir, 'loopback.json');
    let pid = 0;
    const running = benchInHost(`http://127.0.0.1:${TARGET_PORT}/`, '8s', out, (c) => (pid = c.pid ?? 0));
    const { linkAddress, gatewayHost, namespace } = await linkUp(pid);
    // All at once, while the run is still going (each takes up to 2 s).
    const fromLink = { ns: namespace, mountsOf: pid };
    const probes = {
      secretTcp: probe('tcp', linkAddress, SECRET_PORT),
      secretUdp: probe('udp', linkAddress, SECRET_PORT),
      targetTcp: probe('tcp', linkAddress, TARGET_PORT),
      targetUdp: probe('udp', linkAddress, TARGET_PORT),
      gatewaySecret: probe('tcp', gatewayHost, SECRET_PORT),
      // From inside the link's namespace: the host's end of its veth pair leads to the target's port only.
      fromLinkSecret: probe('tcp', gatewayHost, SECRET_PORT, fromLink),
      fromLinkSecretUdp: probe('udp', gatewayHost, SECRET_PORT, fromLink),
    };
    const seen = Object.fromEntries(
      await Promise.all(Object.entries(probes).map(async ([k, v]) => [k, await v] as const)),
    );
    const r = await running;
    for (const [what, got] of Object.entries(seen))
      assert.match(got, /^unreached/, `${what}: ${got} (all: ${JSON.stringify(seen)})`);
    assertServed(r, out);
    assert.deepEqual(h2labTables(), []);
  });

  test('a remote target, two runs overlapping: nobody else routes through the host either way, and forwarding is as it was', async () => {
    sysctl(HOST, 'net.ipv4.ip_forward=0');
    const before = forwarding();
    servers.push(await serve(REMOTE, RM_ADDR, TARGET_PORT, 'remote'));
    const neighbour = await serve(NEIGHBOUR, NB_ADDR, TARGET_PORT, 'neighbour');
    servers.push(neighbour);
    // A datagram forwarded one way is an exposure too, even when the reply cannot come back.
    let neighbourSaw = '';
    neighbour.stdout!.on('data', (d: string) => (neighbourSaw += d));
    const outs = [join(dir, 'remote-a.json'), join(dir, 'remote-b.json')];
    let pidA = 0;
    let pidB = 0;
    const a = benchInHost(`http://${RM_ADDR}:${TARGET_PORT}/`, '8s', outs[0]!, (c) => (pidA = c.pid ?? 0));
    await linkUp(pidA);
    const b = benchInHost(`http://${RM_ADDR}:${TARGET_PORT}/`, '3s', outs[1]!, (c) => (pidB = c.pid ?? 0));
    await linkUp(pidB);
    // Both ways: the neighbour towards the remote host, and the remote host (on the device whose
    // forwarding the runs switched on) towards the neighbour.
    const seen = await Promise.all([
      probe('tcp', RM_ADDR, TARGET_PORT),
      probe('udp', RM_ADDR, TARGET_PORT),
      probe('tcp', NB_ADDR, TARGET_PORT, { ns: REMOTE }),
      probe('udp', NB_ADDR, TARGET_PORT, { ns: REMOTE }),
    ]);
    const [neighbourTcp, neighbourUdp, remoteTcp, remoteUdp] = seen.map((x) =>
      x.startsWith('unreached') ? 'unreached' : x,
    );
    const during = {
      ipForward: inNs(HOST, 'sysctl', ['-n', 'net.ipv4.ip_forward']).trim(),
      neighbourTcp,
      neighbourUdp,
      remoteTcp,
      remoteUdp,
      remoteUdpDelivered: neighbourSaw.includes(`udp from ${RM_ADDR}`),
    };
    const [ra, rb] = await Promise.all([a, b]);
    assert.deepEqual(
      { ...during, forwardingAfter: forwarding(), tables: h2labTables() },
      {
        ipForward: '0',
        neighbourTcp: 'unreached',
        neighbourUdp: 'unreached',
        remoteTcp: 'unreached',
        remoteUdp: 'unreached',
        remoteUdpDelivered: false,
        forwardingAfter: before,
        tables: [],
      },
    );
    assertServed(ra, outs[0]!);
    assertServed(rb, outs[1]!);
  });

  test('two remote-target runs, the second SIGKILLed mid-way: the first still served, and forwarding put back when it ends', async () => {
    sysctl(HOST, 'net.ipv4.ip_forward=0');
    const before = forwarding();
    servers.push(await serve(REMOTE, RM_ADDR, TARGET_PORT, 'remote'));
    const out = join(dir, 'survivor.json');
    let pidA = 0;
    const a = benchInHost(`http://${RM_ADDR}:${TARGET_PORT}/`, '6s', out, (c) => (pidA = c.pid ?? 0));
    await linkUp(pidA);
    await killedOnceUp(join(dir, 'killed.json'));
    assertServed(await a, out);
    // The first run was the last live one out: it put forwarding back, the killed one counting for nothing.
    assert.equal(forwarding(), before);
    const clean = await h2lab(['net', 'clean'], { netns: HOST, timeoutMs: 30_000 });
    assert.equal(clean.code, 0, clean.stderr);
    assert.deepEqual({ forwarding: forwarding(), tables: h2labTables() }, { forwarding: before, tables: [] });
  });

  test('a remote-target run SIGKILLed alone: `net clean` puts forwarding back and says so', async () => {
    sysctl(HOST, 'net.ipv4.ip_forward=0');
    const before = forwarding();
    servers.push(await serve(REMOTE, RM_ADDR, TARGET_PORT, 'remote'));
    await killedOnceUp(join(dir, 'alone.json'));
    assert.notEqual(forwarding(), before, 'the killed run left forwarding on');
    const clean = await h2lab(['net', 'clean'], { netns: HOST, timeoutMs: 30_000 });
    assert.equal(clean.code, 0, clean.stderr);
    assert.match(clean.stdout, new RegExp(`forwarding on xr${tag}h put back to 0`), clean.stdout);
    assert.deepEqual({ forwarding: forwarding(), tables: h2labTables() }, { forwarding: before, tables: [] });
  });
});
